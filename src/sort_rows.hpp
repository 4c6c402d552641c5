// sort_rows: orders every row of a neighbor list (CSR or NeighborRows) by neighbor index (the
// `sorted` option of the list queries), carrying distances along. Rows are independent, so
// threads share them out.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "engines/chunk_copy.hpp"
#include "simd/row_sort.hpp"
#include "spatialhash/types.hpp"
#include "threads.hpp"

namespace spatialhash::detail {

/// Stores a row the search reported, ids[0 .. length), at `target`: sorted by index with `kernel`
/// when `sorted` (straight from the search's output: a copy first cost a stall, the sort's loads
/// waiting on the copy's stores), else copied in whole chunks (copy_in_chunks: `target` needs
/// room for kCopyChunk - 1 entries past the row, and `ids` as many readable).
inline void store_row(const index_t* ids, std::size_t length, index_t* target, bool sorted,
                      RowSortFn kernel) {
  if (sorted) {
    sort_row(kernel, ids, target, length);
  } else {
    copy_in_chunks(target, ids, length);
  }
}

/// Sorts each of `rows` rows by neighbor index, carrying distances along: row i is the
/// row_length(i) entries of `indices` (and of `distances` unless it is empty) from row_begin(i).
/// Rows without distances go to sort_row (simd/row_sort.hpp); rows with distances of up to
/// kRankSortMax entries to the best row sort kernel, longer ones, and any with a repeated index,
/// to std::sort of (index, distance) pairs. (cell_list sorts its rows as it stores them instead:
/// EngineBase::sorts_rows.)
template <class RowBegin, class RowLength>
void sort_rows(std::size_t rows, RowBegin row_begin, RowLength row_length, index_t* all_indices,
               double* all_distances, int threads) {
  const auto n = static_cast<std::int64_t>(rows);
  const bool with_distances = all_distances != nullptr;
  const RowSortFn row_sort = best_row_sort();
  parallel_region(threads, [&] {
    std::vector<std::pair<index_t, double>> row;
#pragma omp for schedule(dynamic, 1024)
    for (std::int64_t i = 0; i < n; ++i) {
      const std::size_t begin = row_begin(i);
      const std::size_t length = row_length(i);
      index_t* indices = all_indices + begin;
      if (!with_distances) {
        sort_row(row_sort, indices, indices, length);
        continue;
      }
      double* row_distances = all_distances + begin;
      if (length <= kRankSortMax && row_sort(indices, indices, row_distances, length)) continue;
      row.clear();
      for (std::size_t k = 0; k < length; ++k) row.emplace_back(indices[k], row_distances[k]);
      std::sort(row.begin(), row.end());
      for (std::size_t k = 0; k < length; ++k) {
        indices[k] = row[k].first;
        row_distances[k] = row[k].second;
      }
    }
  });
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
