// The AVX-512 row sort (see row_sort.hpp). Rows of at most 64 entries without distances (those
// the collectors sort as they store them) go through a bitonic sorting network in two registers
// (up to 32 entries) or four; the others are sorted by rank, 16 entries' ranks at a time, each
// compared with every entry of the row. This file alone is compiled with -mavx512f; best_row_sort()
// calls it only on processors that report AVX-512F.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "row_sort.hpp"

namespace spatialhash::detail {
namespace {

/// The most entries a network sorts: 64, lanes 16 r .. 16 r + 15 in register r (of 2 or 4).
constexpr std::size_t kNetworkMax = 64;

/// For the bitonic stage that compares lanes `distance` (< 16) apart within runs of `run` lanes
/// (ascending runs where (lane & run) == 0, descending where not), the lanes of register `reg`
/// that take the larger value of their pair: the upper lane of an ascending pair, the lower lane
/// of a descending one.
constexpr __mmask16 takes_max(int run, int distance, int reg) {
  unsigned mask = 0;
  for (int i = 0; i < 16; ++i) {
    const int lane = i + 16 * reg;
    const bool upper = (lane & distance) != 0;
    const bool descending = (lane & run) != 0;
    if (upper != descending) mask |= 1u << i;
  }
  return static_cast<__mmask16>(mask);
}

/// takes_max() of every register, computed at compile time.
template <int R, int Run, int Distance>
constexpr std::array<__mmask16, R> kMaxLanes = [] {
  std::array<__mmask16, R> masks{};
  for (int reg = 0; reg < R; ++reg) masks[reg] = takes_max(Run, Distance, reg);
  return masks;
}();

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

/// The row in R registers (a struct: std::array of a vector type drops its attributes).
template <int R>
struct Registers {
  __m512i lanes[R];
};

/// The stages of runs of `Run` lanes, distances `Distance` down to 1: whole registers against each
/// other for distances of 16 lanes or more, lanes within each register below.
template <int R, int Run, int Distance = Run / 2>
void merge(Registers<R>& registers) {
  __m512i* r = registers.lanes;
  if constexpr (Distance >= 16) {
    constexpr int step = Distance / 16;  // registers apart
    for (int a = 0; a < R; ++a) {
      if ((a & step) != 0) continue;  // a holds the lower lanes of its pairs
      const __m512i smaller = min_u32(r[a], r[a + step]);
      const __m512i larger = max_u32(r[a], r[a + step]);
      const bool descending = ((16 * a) & Run) != 0;
      r[a] = descending ? larger : smaller;
      r[a + step] = descending ? smaller : larger;
    }
  } else {
    for (int a = 0; a < R; ++a) r[a] = exchange<Distance>(r[a], kMaxLanes<R, Run, Distance>[a]);
  }
  if constexpr (Distance > 1) merge<R, Run, Distance / 2>(registers);
}

/// Sorts ids[0 .. length) (length <= 16 R, no distances) with the bitonic network in R registers,
/// the lanes past the row filled with the largest index. A network sorts repeated indices as well
/// as distinct ones (entries equal to the filler are indistinguishable from it): it never refuses
/// a row.
template <int R>
void network_sort(index_t* ids, std::size_t length) {
  const std::uint64_t lanes = length >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << length) - 1;
  const __m512i filler = _mm512_set1_epi32(-1);
  Registers<R> r;
  for (int a = 0; a < R; ++a) {
    r.lanes[a] =
        _mm512_mask_loadu_epi32(filler, static_cast<__mmask16>(lanes >> (16 * a)), ids + 16 * a);
  }
  merge<R, 2>(r);
  merge<R, 4>(r);
  merge<R, 8>(r);
  merge<R, 16>(r);
  merge<R, 32>(r);
  if constexpr (R == 4) merge<R, 64>(r);
  for (int a = 0; a < R; ++a) {
    _mm512_mask_storeu_epi32(ids + 16 * a, static_cast<__mmask16>(lanes >> (16 * a)), r.lanes[a]);
  }
}

}  // namespace

bool row_sort_avx512(index_t* ids, double* distances, std::size_t length) {
  if (distances == nullptr && length <= kNetworkMax) {
    if (length <= 32) {
      network_sort<2>(ids, length);
    } else {
      network_sort<4>(ids, length);
    }
    return true;
  }
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
