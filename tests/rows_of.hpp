// rows_of: neighbor lists as nested vectors, the oracle's form (tests/oracle.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "spatialhash/spatialhash.hpp"

/// The rows of `lists` as nested vectors (sorted when the lists were asked sorted).
inline std::vector<std::vector<std::size_t>> rows_of(const spatialhash::NeighborLists& lists) {
  std::vector<std::vector<std::size_t>> rows(lists.size());
  for (std::size_t i = 0; i < lists.size(); ++i) {
    rows[i].assign(lists.indices.begin() + lists.offsets[i],
                   lists.indices.begin() + lists.offsets[i + 1]);
  }
  return rows;
}
