// The AVX-512 row sort (see row_sort.hpp). Rows of at most 32 entries without distances (those
// the collectors sort as they store them) go through a bitonic sorting network in two registers;
// the others are sorted by rank, 16 entries' ranks at a time, each compared with every entry of
// the row. This file alone is compiled with -mavx512f; best_row_sort() calls it only on
// processors that report AVX-512F.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "row_sort.hpp"

namespace spatialhash::detail {
namespace {

/// The entries a network sorts: 32, lanes 0-15 in one register and 16-31 in the other.
constexpr std::size_t kNetworkMax = 32;

/// For the bitonic stage that compares lanes `distance` apart within runs of `run` lanes
/// (ascending runs where (lane & run) == 0, descending where not), the lanes of register `half`
/// (0: lanes 0-15, 1: lanes 16-31) that take the larger value of their pair: the upper lane of
/// an ascending pair, the lower lane of a descending one.
constexpr __mmask16 takes_max(int run, int distance, int half) {
  unsigned mask = 0;
  for (int i = 0; i < 16; ++i) {
    const int lane = i + 16 * half;
    const bool upper = (lane & distance) != 0;
    const bool descending = (lane & run) != 0;
    if (upper != descending) mask |= 1u << i;
  }
  return static_cast<__mmask16>(mask);
}

/// Every lane: the masked forms of the intrinsics below with all lanes set, which compile to the
/// same instructions. GCC 12's unmasked forms pass _mm512_undefined_epi32() through, which its
/// -Wmaybe-uninitialized reports (an error with -Werror).
constexpr __mmask16 kAll = 0xFFFF;

__m512i min_u32(__m512i a, __m512i b) {
  return _mm512_mask_min_epu32(a, kAll, a, b);
}
__m512i max_u32(__m512i a, __m512i b) {
  return _mm512_mask_max_epu32(a, kAll, a, b);
}

/// One compare-exchange stage within a register: each lane against the lane `distance` (< 16)
/// away, keeping the smaller or the larger value as `max_lanes` says.
template <int Distance>
__m512i exchange(__m512i x, __mmask16 max_lanes) {
  const __m512i partner_lane =
      _mm512_xor_si512(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                       _mm512_set1_epi32(Distance));
  const __m512i partner = _mm512_mask_permutexvar_epi32(x, kAll, partner_lane, x);
  return _mm512_mask_blend_epi32(max_lanes, min_u32(x, partner), max_u32(x, partner));
}

/// The stages of runs of `Run` lanes within each register, distances Run / 2 down to 1.
template <int Run, int Distance = Run / 2>
void merge_within(__m512i& low, __m512i& high) {
  low = exchange<Distance>(low, takes_max(Run, Distance, 0));
  high = exchange<Distance>(high, takes_max(Run, Distance, 1));
  if constexpr (Distance > 1) merge_within<Run, Distance / 2>(low, high);
}

/// Sorts ids[0 .. length) (length <= kNetworkMax, no distances) with the bitonic network, the
/// lanes past the row filled with the largest index. Returns false, leaving the row unchanged,
/// when it repeats an index (as the rank kernels do).
bool network_sort(index_t* ids, std::size_t length) {
  const auto lanes = length >= kNetworkMax ? ~std::uint32_t{0} : (std::uint32_t{1} << length) - 1;
  const auto low_lanes = static_cast<__mmask16>(lanes);
  const auto high_lanes = static_cast<__mmask16>(lanes >> 16);
  const __m512i filler = _mm512_set1_epi32(-1);
  __m512i low = _mm512_mask_loadu_epi32(filler, low_lanes, ids);
  __m512i high = _mm512_mask_loadu_epi32(filler, high_lanes, ids + 16);
  merge_within<2>(low, high);
  merge_within<4>(low, high);
  merge_within<8>(low, high);
  merge_within<16>(low, high);
  // Runs of 32: the two registers against each other, then within each.
  const __m512i smaller = min_u32(low, high);
  high = max_u32(low, high);
  low = smaller;
  merge_within<32, 8>(low, high);
  // Equal neighbours within the row: a repeated index.
  const __mmask16 low_repeats =
      _mm512_cmpeq_epi32_mask(low, _mm512_mask_alignr_epi32(low, kAll, high, low, 1));
  const __mmask16 high_repeats =
      _mm512_cmpeq_epi32_mask(high, _mm512_mask_alignr_epi32(high, kAll, low, high, 1));
  const std::uint32_t repeats = std::uint32_t{low_repeats} | std::uint32_t{high_repeats} << 16;
  if ((repeats & (lanes >> 1)) != 0) return false;
  _mm512_mask_storeu_epi32(ids, low_lanes, low);
  _mm512_mask_storeu_epi32(ids + 16, high_lanes, high);
  return true;
}

}  // namespace

bool row_sort_avx512(index_t* ids, double* distances, std::size_t length) {
  if (distances == nullptr && length <= kNetworkMax) return network_sort(ids, length);
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
