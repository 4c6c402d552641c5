// The AVX-512 row sort (see row_sort.hpp): the ranks of 16 entries at a time, each compared with
// every entry of the row. This file alone is compiled with -mavx512f; best_row_sort() calls it
// only on processors that report AVX-512F.
#include <immintrin.h>

#include <algorithm>

#include "row_sort.hpp"

namespace spatialhash::detail {

bool row_sort_avx512(index_t* ids, double* distances, std::size_t length) {
  // Room for the last vector's lanes past the row (read, never placed).
  alignas(64) index_t keys[kRankSortMax + 16] = {};
  alignas(64) unsigned ranks[kRankSortMax + 16];
  double distance_copy[kRankSortMax];
  std::copy(ids, ids + length, keys);
  if (distances != nullptr) std::copy(distances, distances + length, distance_copy);
  const __m512i one = _mm512_set1_epi32(1);
  for (std::size_t base = 0; base < length; base += 16) {
    const __m512i lanes = _mm512_load_si512(keys + base);
    // Two counters, so that consecutive compares do not wait on one add.
    __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
    std::size_t j = 0;
    for (; j + 1 < length; j += 2) {
      const __m512i a = _mm512_set1_epi32(static_cast<int>(keys[j]));
      const __m512i b = _mm512_set1_epi32(static_cast<int>(keys[j + 1]));
      even = _mm512_mask_add_epi32(even, _mm512_cmplt_epu32_mask(a, lanes), even, one);
      odd = _mm512_mask_add_epi32(odd, _mm512_cmplt_epu32_mask(b, lanes), odd, one);
    }
    if (j < length) {
      const __m512i a = _mm512_set1_epi32(static_cast<int>(keys[j]));
      even = _mm512_mask_add_epi32(even, _mm512_cmplt_epu32_mask(a, lanes), even, one);
    }
    _mm512_store_si512(ranks + base, _mm512_add_epi32(even, odd));
  }
  return place_by_rank(keys, distance_copy, ranks, length, ids, distances);
}

}  // namespace spatialhash::detail
