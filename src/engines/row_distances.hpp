// The distances of neighbor rows, measured after the search (the with_distances option of the
// list queries): in double from the caller's points, as the neighbor rule decides (exact.hpp).
// Shared by cell_list's collectors (collect_rows.hpp, collect_rows_unordered.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

#include "../exact.hpp"

namespace spatialhash::detail {

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

/// distances[k] = the distance from point `row` to point ids[k], for k < length.
template <int Dim, class T>
void measure_row_distances(const PointsView<Dim, T>& points, index_t row, const index_t* ids,
                           std::uint32_t length, double* distances) {
  for (std::uint32_t k = 0; k < length; ++k) {
    distances[k] = std::sqrt(distance_squared(points, row, ids[k]));
  }
}

}  // namespace spatialhash::detail
