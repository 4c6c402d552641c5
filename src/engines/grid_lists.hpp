// Parallel neighbor counts and full neighbor lists for the engines that keep their points sorted
// by cell (dense_grid, hashed_grid). The generic versions (engine_generic.cpp) run pairs() twice on
// one thread; these give every point its own row, filled by whichever thread owns the point, so
// no two threads ever write the same element and the result does not depend on the thread count.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "../threads.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// `visit(a, emit)` must call `emit(j, d2)` once for every neighbor j (self excluded) of the point
/// stored at sorted position a; ids[a] is that point's id. Every thread works on its own copy of
/// `visit`, so a visitor may cache state between calls (such as the ranges of the last cell).
template <class Visit>
void grid_neighbor_counts(std::span<const index_t> ids, std::span<index_t> counts, int threads,
                          const Visit& visit) {
  const auto n = static_cast<std::int64_t>(ids.size());
  parallel_region(n > 4096 ? threads : 1, [&] {
    Visit local = visit;
#pragma omp for schedule(dynamic, 512)
    for (std::int64_t a = 0; a < n; ++a) {
      index_t count = 0;
      local(a, [&count](index_t, double) { ++count; });
      counts[ids[a]] = count;
    }
  });
}

/// Full lists (CSR) from the same visitor: counts, prefix sums, then each row filled in parallel.
template <class Visit>
void grid_neighbor_lists(std::span<const index_t> ids, bool with_distances, int threads,
                         const Visit& visit, NeighborLists& lists) {
  const std::size_t n = ids.size();
  std::vector<index_t> counts(n);
  grid_neighbor_counts(ids, counts, threads, visit);
  lists.offsets.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) lists.offsets[i + 1] = lists.offsets[i] + counts[i];
  lists.indices.resize(lists.offsets[n]);
  lists.distances.resize(with_distances ? lists.offsets[n] : 0);
  const auto sn = static_cast<std::int64_t>(n);
  parallel_region(sn > 4096 ? threads : 1, [&] {
    Visit local = visit;
#pragma omp for schedule(dynamic, 512)
    for (std::int64_t a = 0; a < sn; ++a) {
      std::size_t out = lists.offsets[ids[a]];
      local(a, [&](index_t j, double d2) {
        lists.indices[out] = j;
        if (with_distances) lists.distances[out] = std::sqrt(d2);
        ++out;
      });
    }
  });
}

}  // namespace spatialhash::detail
