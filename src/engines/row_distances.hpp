// The distances of neighbor rows, measured after the search (the with_distances option of the
// list queries): in double from the caller's points, as the neighbor rule decides (exact.hpp).
// Shared by cell_list's collectors (collect_rows.hpp, collect_rows_unordered.hpp).
//
// A row's neighbors are read either at the caller's indices, in the caller's points, or at
// positions of the index's sorted order, in a copy of the caller's points in that order
// (RowPositions). The copy is what makes the distances fast when the caller's order is not
// spatial: a row's neighbors then sit together in memory, where in a random order each one is
// a line of its own, in cache or not.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

#include "../simd/distance_kernels.hpp"
#include "chunk_copy.hpp"

namespace spatialhash::detail {

/// Rows of sorted positions: when `ids` is set, the rows of a search hold positions in the
/// index's sorted order instead of the caller's indices; position p is the caller's point ids[p],
/// and `sorted` holds the caller's coordinates in that order (copies of the same values, so the
/// distances measured from it are the same doubles). Slot t of the search is then the point at
/// position t. With `ids` null, rows hold the caller's indices.
template <int Dim, class T>
struct RowPositions {
  const index_t* ids = nullptr;
  PointsView<Dim, T> sorted;
};

/// Prefetches the coordinates of the points ids[0 .. length): the neighbors of the next row whose
/// distances are measured. They lie at random places in the caller's array (its order, not the
/// index's), so without it each row waited on its misses one after another; consecutive rows
/// share most of their neighbors, so the prefetches of the next row are mostly hits (1M uniform
/// points, 30 neighbors each, 2 threads: lists with distances 1.2-1.35x faster; 130 neighbors:
/// no change; docs/benchmarks.md).
template <int Dim, class T>
void prefetch_points(const PointsView<Dim, T>& points, const index_t* ids, std::uint32_t length) {
  for (std::uint32_t k = 0; k < length; ++k) {
    __builtin_prefetch(points.data + std::size_t{ids[k]} * points.stride);
  }
}

/// distances[k] = the distance from point `row` to point ids[k], for k < length, by `kernel`
/// (best_row_distances(): 8 or 4 square roots per instruction where the processor has AVX-512 or
/// AVX2, distance_kernels.hpp).
template <int Dim, class T>
void measure_row_distances(std::type_identity_t<RowDistancesFn<Dim, T>> kernel,
                           const PointsView<Dim, T>& points, index_t row, const index_t* ids,
                           std::uint32_t length, double* distances) {
  std::array<double, Dim> position;
  for (int k = 0; k < Dim; ++k) position[static_cast<std::size_t>(k)] = points.coord(row, k);
  kernel(points, position, ids, length, distances);
}

/// Places a row of sorted positions (RowPositions) found for the point at position `query`:
/// ids[k] = positions.ids[row[k]], written with non-temporal stores for whole lines as
/// copy_streaming writes them (call streaming_done() before other threads read them), and with
/// `distances` non-null, distances[k] = the distance between the two points, for k < length
/// (measured by `kernel`).
template <int Dim, class T>
void place_position_row(std::type_identity_t<RowDistancesFn<Dim, T>> kernel,
                        const RowPositions<Dim, T>& positions, std::uint32_t query,
                        const index_t* row, std::uint32_t length, index_t* ids, double* distances) {
  // Translated a run at a time into a stack buffer (nearly every row is a single run).
  constexpr std::uint32_t kRun = 256;
  index_t staged[kRun];
  for (std::uint32_t begin = 0; begin < length; begin += kRun) {
    const std::uint32_t count = std::min(kRun, length - begin);
    for (std::uint32_t k = 0; k < count; ++k) staged[k] = positions.ids[row[begin + k]];
    copy_streaming(ids + begin, staged, count);
  }
  if (distances != nullptr) {
    measure_row_distances(kernel, positions.sorted, query, row, length, distances);
  }
}

}  // namespace spatialhash::detail
