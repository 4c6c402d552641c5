// The scalar row sort (see row_sort.hpp) and the run-time choice of row sort.
#include "row_sort.hpp"

#include <algorithm>
#include <array>

namespace spatialhash::detail {

bool row_sort_scalar(index_t* ids, double* distances, std::size_t length) {
  std::array<index_t, kRankSortMax> keys;
  std::array<double, kRankSortMax> distance_copy;
  std::array<unsigned, kRankSortMax> ranks;
  std::copy(ids, ids + length, keys.begin());
  if (distances != nullptr) std::copy(distances, distances + length, distance_copy.begin());
  for (std::size_t k = 0; k < length; ++k) {
    unsigned rank = 0;
    for (std::size_t j = 0; j < length; ++j) rank += keys[j] < keys[k] ? 1u : 0u;
    ranks[k] = rank;
  }
  return place_by_rank(keys.data(), distance_copy.data(), ranks.data(), length, ids, distances);
}

void sort_row(RowSortFn kernel, index_t* ids, std::size_t length) {
  if (length <= kRankSortMax && kernel(ids, nullptr, length)) return;
  std::sort(ids, ids + length);
}

RowSortFn best_row_sort(Simd limit) {
#ifdef SPATIALHASH_HAVE_AVX512
  if (limit == Simd::automatic || limit == Simd::avx512) {
    if (simd_available(Simd::avx512)) return &row_sort_avx512;
  }
#endif
#ifdef SPATIALHASH_HAVE_AVX2
  if (limit != Simd::scalar && simd_available(Simd::avx2)) return &row_sort_avx2;
#endif
  (void)limit;
  return &row_sort_scalar;
}

}  // namespace spatialhash::detail
