// sort_rows: orders every row of a CSR neighbor list by neighbor index (the `sorted` option of
// the list queries), carrying distances along. Rows are independent, so threads share them out.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// Sorts every row of `lists` by neighbor index, carrying distances along.
inline void sort_rows(NeighborLists& lists, int threads) {
  const auto n = static_cast<std::int64_t>(lists.size());
  const bool with_distances = !lists.distances.empty();
#pragma omp parallel num_threads(threads)
  {
    std::vector<std::pair<index_t, double>> row;
#pragma omp for schedule(dynamic, 1024)
    for (std::int64_t i = 0; i < n; ++i) {
      const std::size_t begin = lists.offsets[i], end = lists.offsets[i + 1];
      auto* indices = lists.indices.data();
      if (!with_distances) {
        std::sort(indices + begin, indices + end);
        continue;
      }
      row.clear();
      for (std::size_t k = begin; k < end; ++k) row.emplace_back(indices[k], lists.distances[k]);
      std::sort(row.begin(), row.end());
      for (std::size_t k = begin; k < end; ++k) {
        indices[k] = row[k - begin].first;
        lists.distances[k] = row[k - begin].second;
      }
    }
  }
}

}  // namespace spatialhash::detail
