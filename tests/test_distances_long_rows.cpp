// Lists with distances on long rows (64 neighbors per point or more on average), which the
// default engine searches as sorted positions and measures from a sorted copy of the points
// (src/engines/row_distances.hpp, RowPositions), as it does every unsorted list with
// distances: rows that span many cells and runs of the sorted copy. Every row and every
// distance against the double brute force, for CSR lists and NeighborRows, buffered and
// low_memory, on 1 and 2 threads, in float and double, 2D and 3D. One point set is a lattice
// whose points lie exactly at the radius from many others, so the double rule decides those
// candidates by position; the other is a shuffled uniform cloud.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "check_against_oracle.hpp"
#include "expect_row_layout.hpp"
#include "oracle.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

/// Points of the integer lattice [0, side)^Dim in a shuffled order.
template <int Dim>
std::vector<double> shuffled_lattice(int side, unsigned seed) {
  std::vector<std::array<double, Dim>> points;
  std::array<int, Dim> at{};
  while (true) {
    std::array<double, Dim> p;
    for (int k = 0; k < Dim; ++k) p[k] = at[k];
    points.push_back(p);
    int k = 0;
    while (k < Dim && ++at[k] == side) at[k++] = 0;
    if (k == Dim) break;
  }
  std::mt19937 rng(seed);
  std::shuffle(points.begin(), points.end(), rng);
  std::vector<double> coords;
  for (const auto& p : points) coords.insert(coords.end(), p.begin(), p.end());
  return coords;
}

/// n points uniform in [0, side)^Dim.
template <int Dim>
std::vector<double> uniform_cloud(std::size_t n, double side, unsigned seed) {
  std::vector<double> coords(Dim * n);
  std::mt19937 rng(seed);
  for (auto& c : coords) c = std::uniform_real_distribution<double>(0, side)(rng);
  return coords;
}

template <int Dim, class T>
void expect_long_rows_exact(const std::vector<double>& source, double r, const std::string& what) {
  SCOPED_TRACE(what);
  const std::vector<T> coords(source.begin(), source.end());
  const std::vector<double> exact = oracle::widen(coords);
  const std::size_t n = coords.size() / Dim;
  const auto want = oracle::lists<Dim>(exact, r);
  std::size_t entries = 0;
  for (const auto& row : want) entries += row.size();
  ASSERT_GE(entries, 64 * n) << "the rows are meant to be long";
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const spatialhash::Index<Dim, T> index(std::span<const T>(coords), r,
                                           spatialhash::Options{.threads = threads});
    for (const bool low_memory : {false, true}) {
      const auto lists = index.neighbor_lists({.with_distances = true, .low_memory = low_memory});
      ASSERT_EQ(lists.size(), n);
      ASSERT_EQ(lists.distances.size(), lists.indices.size());
      for (std::size_t i = 0; i < n; ++i) {
        expect_unsorted_row_with_distances<Dim>(
            exact, i, want[i], lists.indices.data(), lists.distances.data(), lists.offsets[i],
            lists.offsets[i + 1], low_memory ? "low-memory list" : "list");
      }
    }
    const auto rows = index.neighbor_rows({.with_distances = true});
    expect_row_layout(rows, n);
    for (std::size_t i = 0; i < n; ++i) {
      expect_unsorted_row_with_distances<Dim>(exact, i, want[i], rows.indices.data(),
                                              rows.distances.data(), rows.start[i],
                                              rows.start[i] + rows.count[i], "rows");
    }
  }
}

TEST(DistancesOnLongRows, LatticeWithPointsAtExactlyTheRadius3D) {
  // Within 3 of a lattice point: 122 others, 30 of them at exactly the radius.
  const auto coords = shuffled_lattice<3>(16, 1);
  expect_long_rows_exact<3, double>(coords, 3.0, "double");
  expect_long_rows_exact<3, float>(coords, 3.0, "float");
}

TEST(DistancesOnLongRows, LatticeWithPointsAtExactlyTheRadius2D) {
  // Within 5 of a lattice point: 80 others, 12 of them at exactly the radius.
  const auto coords = shuffled_lattice<2>(60, 2);
  expect_long_rows_exact<2, double>(coords, 5.0, "double");
  expect_long_rows_exact<2, float>(coords, 5.0, "float");
}

TEST(DistancesOnLongRows, ShuffledUniformCloud3D) {
  // 4000 points in a cube of side 10, r = 2: about 134 neighbors per point inside, fewer at
  // the faces.
  const auto coords = uniform_cloud<3>(4000, 10.0, 3);
  expect_long_rows_exact<3, double>(coords, 2.0, "double");
  expect_long_rows_exact<3, float>(coords, 2.0, "float");
}

}  // namespace
