// expect_row_layout: the shape every NeighborRows must have, whatever its rows hold.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "spatialhash/spatialhash.hpp"

/// Checks the shape of NeighborRows over n points: n rows, each inside `indices`, no two
/// overlapping, every entry outside the rows kNoNeighbor (its distance NaN), and `distances`
/// either empty or as long as `indices`.
inline void expect_row_layout(const spatialhash::NeighborRows& rows, std::size_t n) {
  ASSERT_EQ(rows.start.size(), n);
  ASSERT_EQ(rows.count.size(), n);
  ASSERT_TRUE(rows.distances.empty() || rows.distances.size() == rows.indices.size());
  std::vector<char> covered(rows.indices.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_LE(rows.start[i] + rows.count[i], rows.indices.size()) << "row " << i;
    for (std::size_t k = rows.start[i]; k < rows.start[i] + rows.count[i]; ++k) {
      ASSERT_EQ(covered[k], 0) << "entry " << k << " is in two rows (the second: " << i << ")";
      covered[k] = 1;
    }
  }
  for (std::size_t k = 0; k < covered.size(); ++k) {
    if (covered[k] != 0) continue;
    ASSERT_EQ(rows.indices[k], spatialhash::kNoNeighbor) << "entry " << k << " is in no row";
    if (!rows.distances.empty()) {
      ASSERT_TRUE(std::isnan(rows.distances[k])) << "entry " << k;
    }
  }
}
