// Neighbor lists larger than the row-buffer budget, which the default engine writes into the
// output itself and compacts in place (src/engines/collect_rows_in_place.hpp), driven through
// the engine with a tiny budget and small regions (many buckets of caller rows): clustered
// points in random order and in an order sorted along x (rows of one bucket then share a
// density, and their cell populations must size the regions), 2D and 3D, float and double, 1
// and 2 threads, every row against the double brute force. Regions without a margin make rows
// spill; regions half their share make the engine give up and count first instead: the same
// lists either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../src/engine_base.hpp"
#include "datasets.hpp"
#include "for_each_dim_type.hpp"
#include "oracle.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

/// The points of `xyz` reordered by their first coordinate.
template <int Dim>
std::vector<double> sorted_along_x(const std::vector<double>& xyz) {
  const std::size_t n = xyz.size() / Dim;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return xyz[a * Dim] < xyz[b * Dim]; });
  std::vector<double> sorted;
  for (const std::size_t i : order) {
    sorted.insert(sorted.end(), xyz.begin() + i * Dim, xyz.begin() + (i + 1) * Dim);
  }
  return sorted;
}

TEST(ListsInPlace, ListsAboveTheBudgetMatchTheOracle) {
  for_each_dim_type([]<int Dim, class T>() {
    constexpr std::size_t n = 5000;
    const datasets::Dataset cloud = datasets::clustered<Dim>(n, Dim == 2 ? 0.35 : 0.6, 5);
    for (const bool sorted : {false, true}) {
      const std::vector<double> xyz = sorted ? sorted_along_x<Dim>(cloud.xyz) : cloud.xyz;
      const auto want = oracle::lists<Dim>(xyz, cloud.radius);
      const std::vector<T> coords(xyz.begin(), xyz.end());
      for (const int threads : {1, 2}) {
        // Regions as sized, regions without a margin (some rows spill), and regions half their
        // share (the rows cannot fit: the engine gives up and counts first).
        for (const double margin : {0.125, 0.0, -0.5}) {
          SCOPED_TRACE(std::to_string(Dim) + "D " + (sizeof(T) == 4 ? "float" : "double") +
                       (sorted ? ", sorted along x" : ", random order") + ", " +
                       std::to_string(threads) + " threads, margin " + std::to_string(margin));
          const auto engine = spatialhash::detail::make_engine(
              spatialhash::Engine::cell_list,
              spatialhash::detail::make_context(spatialhash::interleaved<Dim, T>(coords),
                                                cloud.radius, threads));
          spatialhash::NeighborLists lists;
          engine->neighbor_lists(
              {.radius = cloud.radius,
               .row_buffer_bytes = 4,
               .in_place = {.region_entries = 2048, .margin = margin, .chunk = 256}},
              lists);
          ASSERT_EQ(lists.size(), n);
          std::size_t entries = 0;
          for (std::size_t i = 0; i < n; ++i) {
            std::vector<std::size_t> row(lists.indices.begin() + lists.offsets[i],
                                         lists.indices.begin() + lists.offsets[i + 1]);
            std::sort(row.begin(), row.end());
            ASSERT_EQ(row, want[i]) << "row " << i;
            entries += row.size();
          }
          EXPECT_EQ(lists.indices.size(), entries);
          EXPECT_GT(entries, 20 * n);  // long rows: many buckets' worth of regions
        }
      }
    }
  });
}

}  // namespace
