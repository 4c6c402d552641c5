// Neighbor lists larger than the row-buffer budget, and lists with ListOptions::low_memory, which
// the default engine writes into the output itself and compacts in place
// (src/engines/collect_rows_in_place.hpp), driven through the engine with a tiny budget (or
// low_memory) and small regions (many buckets of caller rows): clustered points in random order
// and in an order sorted along x (rows of one bucket then share a density, and their cell
// populations must size the regions), 2D and 3D, float and double, 1 and 2 threads (with rows
// sorted by index), every row against the double brute force. Regions without a margin make rows
// spill; regions half their share mostly make the engine give up and count first instead: the
// same lists either way, and the storage tells which path ran (the regions' margins stay in its
// capacity; counting first sizes it exactly).
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

/// The default engine over `coords` (interleaved, Dim per point), driven directly so that the
/// tests set the request's internal budget and tuning.
template <int Dim, class T>
auto cell_list_engine(const std::vector<T>& coords, double radius, int threads) {
  return spatialhash::detail::make_engine(
      spatialhash::Engine::cell_list,
      spatialhash::detail::make_context(spatialhash::interleaved<Dim, T>(coords), radius, threads));
}

/// Checks every row of `lists` against the brute force's `want` (rows sorted by index when
/// `sorted_rows`, else compared as sets) and that the index array holds nothing more; sets
/// `entries` to the number of entries.
void expect_rows(const spatialhash::NeighborLists& lists,
                 const std::vector<std::vector<std::size_t>>& want, bool sorted_rows,
                 std::size_t& entries) {
  entries = 0;
  ASSERT_EQ(lists.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    std::vector<std::size_t> row(lists.indices.begin() + lists.offsets[i],
                                 lists.indices.begin() + lists.offsets[i + 1]);
    if (sorted_rows) {
      ASSERT_TRUE(std::is_sorted(row.begin(), row.end())) << "row " << i;
    } else {
      std::sort(row.begin(), row.end());
    }
    ASSERT_EQ(row, want[i]) << "row " << i;
    entries += row.size();
  }
  EXPECT_EQ(lists.indices.size(), entries);
}

TEST(ListsInPlace, ListsAboveTheBudgetMatchTheOracle) {
  int counted_first = 0;  // cases that gave up and counted first
  for_each_dim_type([&]<int Dim, class T>() {
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
          // 1 thread: through ListOptions::low_memory, within the budget; 2 threads: over a tiny
          // budget, rows sorted by index (ListOptions::sorted).
          const bool low_memory = threads == 1;
          const bool sorted_rows = threads == 2;
          SCOPED_TRACE(std::to_string(Dim) + "D " + (sizeof(T) == 4 ? "float" : "double") +
                       (sorted ? ", sorted along x" : ", random order") + ", " +
                       std::to_string(threads) + " threads, margin " + std::to_string(margin) +
                       (sorted_rows ? ", sorted rows" : ", low_memory"));
          const auto engine = cell_list_engine<Dim>(coords, cloud.radius, threads);
          spatialhash::NeighborLists lists;
          engine->neighbor_lists(
              {.radius = cloud.radius,
               .low_memory = low_memory,
               .row_buffer_bytes =
                   low_memory ? spatialhash::detail::ListRequest{}.row_buffer_bytes : 4,
               .in_place = {.region_entries = 2048, .margin = margin, .chunk = 256},
               .sorted = sorted_rows},
              lists);
          std::size_t entries = 0;
          ASSERT_NO_FATAL_FAILURE(expect_rows(lists, want, sorted_rows, entries));
          // Written in place: the regions' margins stay in the capacity; counted first: exact.
          if (margin >= 0.0) {
            EXPECT_GT(lists.indices.capacity(), entries);
          }
          if (lists.indices.capacity() == entries) ++counted_first;
          EXPECT_GT(entries, 20 * n);  // long rows: many buckets' worth of regions
        }
      }
    }
  });
  // Regions half their share do not always overflow (the gap absorbs some), but most do.
  EXPECT_GT(counted_first, 0);
}

// Lists of many points (ListRequest::in_place_from_rows, 1.5M by default) are written in place
// within the budget and without low_memory; below that count they go through the row buffers.
// Driven with the count set around n: the same lists as the brute force either way, and the
// storage tells which path ran (in place, the regions' margins stay in the capacity; buffered
// rows are placed into storage sized exactly).
TEST(ListsInPlace, ManyPointsAreWrittenInPlaceWithinTheBudget) {
  for_each_dim_type([&]<int Dim, class T>() {
    constexpr std::size_t n = 5000;
    const datasets::Dataset cloud = datasets::clustered<Dim>(n, Dim == 2 ? 0.35 : 0.6, 5);
    const auto want = oracle::lists<Dim>(cloud.xyz, cloud.radius);
    const std::vector<T> coords(cloud.xyz.begin(), cloud.xyz.end());
    for (const int threads : {1, 2}) {
      for (const std::size_t from_rows : {n, n + 1}) {
        const bool in_place = from_rows <= n;
        SCOPED_TRACE(std::to_string(Dim) + "D " + (sizeof(T) == 4 ? "float" : "double") + ", " +
                     std::to_string(threads) + " threads, " + (in_place ? "in place" : "buffered"));
        const auto engine = cell_list_engine<Dim>(coords, cloud.radius, threads);
        spatialhash::NeighborLists lists;
        // Small regions, as in the test above: many buckets, as on millions of points.
        engine->neighbor_lists(
            {.radius = cloud.radius,
             .in_place_from_rows = from_rows,
             .in_place = {.region_entries = 2048, .margin = 0.125, .chunk = 256}},
            lists);
        std::size_t entries = 0;
        ASSERT_NO_FATAL_FAILURE(expect_rows(lists, want, false, entries));
        if (in_place) {
          EXPECT_GT(lists.indices.capacity(), entries);
        } else {
          EXPECT_EQ(lists.indices.capacity(), entries);
        }
      }
    }
  });
}

}  // namespace
