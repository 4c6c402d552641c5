// sort_rows: orders every row of a neighbor list (CSR or NeighborRows) by neighbor index (the
// `sorted` option of the list queries), carrying distances along. Rows are independent, so
// threads share them out.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// Rows up to this length are sorted by rank: an entry's place is the number of entries of its
/// row that order before it. That is branch-free, and faster than std::sort on the short rows that
/// neighbor lists have (W1, 1M points, 2 threads: the sort went from 178 to ~60 ms; see
/// docs/benchmarks.md).
inline constexpr std::size_t kRankSortMax = 64;

/// Sorts each of `rows` rows by neighbor index, carrying distances along: row i is the
/// row_length(i) entries of `indices` (and of `distances` unless it is empty) from row_begin(i).
template <class RowBegin, class RowLength>
void sort_rows(std::size_t rows, RowBegin row_begin, RowLength row_length, index_t* all_indices,
               double* all_distances, int threads) {
  const auto n = static_cast<std::int64_t>(rows);
  const bool with_distances = all_distances != nullptr;
#pragma omp parallel num_threads(threads)
  {
    std::vector<std::pair<index_t, double>> row;
    std::array<index_t, kRankSortMax> ids;
    std::array<double, kRankSortMax> distances;
    std::array<std::uint32_t, kRankSortMax> ranks;
#pragma omp for schedule(dynamic, 1024)
    for (std::int64_t i = 0; i < n; ++i) {
      const std::size_t begin = row_begin(i);
      const std::size_t length = row_length(i);
      index_t* indices = all_indices + begin;
      double* row_distances = with_distances ? all_distances + begin : nullptr;
      if (length <= kRankSortMax) {
        std::copy(indices, indices + length, ids.begin());
        if (with_distances) std::copy(row_distances, row_distances + length, distances.begin());
        // Neighbor indices within a row are distinct, so the ranks are a permutation; `placed`
        // checks that (one bit per rank) and falls back to std::sort if a row ever repeats one.
        std::uint64_t placed = 0;
        for (std::size_t k = 0; k < length; ++k) {
          const index_t id = ids[k];
          std::uint32_t rank = 0;
          for (std::size_t j = 0; j < length; ++j) rank += ids[j] < id ? 1u : 0u;
          ranks[k] = rank;
          placed |= std::uint64_t{1} << rank;
        }
        const std::uint64_t all =
            length == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << length) - 1;
        if (placed == all) {
          for (std::size_t k = 0; k < length; ++k) {
            indices[ranks[k]] = ids[k];
            if (with_distances) row_distances[ranks[k]] = distances[k];
          }
          continue;
        }
      }
      if (!with_distances) {
        std::sort(indices, indices + length);
        continue;
      }
      row.clear();
      for (std::size_t k = 0; k < length; ++k) row.emplace_back(indices[k], row_distances[k]);
      std::sort(row.begin(), row.end());
      for (std::size_t k = 0; k < length; ++k) {
        indices[k] = row[k].first;
        row_distances[k] = row[k].second;
      }
    }
  }
}

/// Sorts every row of `lists` by neighbor index, carrying distances along.
inline void sort_rows(NeighborLists& lists, int threads) {
  sort_rows(
      lists.size(), [&](std::int64_t i) { return lists.offsets[i]; },
      [&](std::int64_t i) { return lists.count(static_cast<std::size_t>(i)); },
      lists.indices.data(), lists.distances.empty() ? nullptr : lists.distances.data(), threads);
}

/// Sorts every row of `rows` by neighbor index, carrying distances along.
inline void sort_rows(NeighborRows& rows, int threads) {
  sort_rows(
      rows.size(), [&](std::int64_t i) { return rows.start[i]; },
      [&](std::int64_t i) { return std::size_t{rows.count[i]}; }, rows.indices.data(),
      rows.distances.empty() ? nullptr : rows.distances.data(), threads);
}

}  // namespace spatialhash::detail
