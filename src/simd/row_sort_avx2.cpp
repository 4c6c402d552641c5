// The AVX2 row sort (see row_sort.hpp): the ranks of 8 entries at a time, each compared with
// every entry of the row. This file alone is compiled with -mavx2 -mfma; best_row_sort() calls it
// only on processors that report both.
#include <immintrin.h>

#include <algorithm>

#include "row_sort.hpp"

namespace spatialhash::detail {

bool row_sort_avx2(index_t* ids, double* distances, std::size_t length) {
  // Keys with the sign bit flipped, so that AVX2's signed compare orders them as unsigned; room
  // for the last vector's lanes past the row (read, never placed).
  alignas(32) int flipped[kRankSortMax + 8] = {};
  alignas(32) unsigned ranks[kRankSortMax + 8];
  index_t keys[kRankSortMax];
  double distance_copy[kRankSortMax];
  std::copy(ids, ids + length, keys);
  if (distances != nullptr) std::copy(distances, distances + length, distance_copy);
  for (std::size_t k = 0; k < length; ++k) {
    flipped[k] = static_cast<int>(keys[k] ^ 0x80000000u);
  }
  for (std::size_t base = 0; base < length; base += 8) {
    const __m256i lanes = _mm256_load_si256(reinterpret_cast<const __m256i*>(flipped + base));
    // A true compare is -1: subtracting it counts. Two counters, as in the AVX-512 kernel.
    __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
    std::size_t j = 0;
    for (; j + 1 < length; j += 2) {
      even = _mm256_sub_epi32(even, _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32(flipped[j])));
      odd = _mm256_sub_epi32(odd, _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32(flipped[j + 1])));
    }
    if (j < length) {
      even = _mm256_sub_epi32(even, _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32(flipped[j])));
    }
    _mm256_store_si256(reinterpret_cast<__m256i*>(ranks + base), _mm256_add_epi32(even, odd));
  }
  return place_by_rank(keys, distance_copy, ranks, length, ids, distances);
}

}  // namespace spatialhash::detail
