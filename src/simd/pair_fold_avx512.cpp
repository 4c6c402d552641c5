// The AVX-512 pair fold (see pair_fold.hpp): 8 pairs per step, each a 64-bit lane (first in the
// low half). This file alone is compiled with -mavx512f; best_pair_fold() calls it only on
// processors that report it.
#include <immintrin.h>

#include "pair_fold.hpp"

namespace spatialhash::detail {
namespace {

// The zero-masked forms of shifts and widenings: GCC 12's unmasked ones start from an undefined
// register, which -Wmaybe-uninitialized reports.
constexpr __mmask8 kAll = 0xFF;

}  // namespace

std::size_t pair_fold_avx512(Pair* pairs, double* distances, std::size_t count, index_t first,
                             const index_t* origin) {
  static_assert(sizeof(Pair) == 8, "a pair is one 64-bit lane");
  const __m512i firsts = _mm512_set1_epi64(static_cast<long long>(first));
  const __m512i low_half = _mm512_set1_epi64(0xffffffffLL);
  std::size_t kept = 0;
  std::size_t k = 0;
  for (; k + 8 <= count; k += 8) {
    const __m512i p = _mm512_loadu_si512(pairs + k);
    const __m512i second = _mm512_maskz_srli_epi64(kAll, p, 32);
    const __mmask8 image = _mm512_cmpge_epu64_mask(second, firsts);
    if (image == 0) {  // all kept as they are
      if (kept != k) {
        _mm512_storeu_si512(pairs + kept, p);
        if (distances != nullptr)
          _mm512_storeu_pd(distances + kept, _mm512_loadu_pd(distances + k));
      }
      kept += 8;
      continue;
    }
    const __m512i low = _mm512_and_si512(p, low_half);
    // The images' points (the other lanes load nothing).
    const __m256i points32 = _mm512_mask_i64gather_epi32(
        _mm256_setzero_si256(), image, _mm512_sub_epi64(second, firsts), origin, 4);
    const __m512i points = _mm512_maskz_cvtepu32_epi64(kAll, points32);
    const __m512i mapped = _mm512_mask_blend_epi64(image, second, points);
    const __mmask8 keep =
        static_cast<__mmask8>(~image) | _mm512_mask_cmplt_epu64_mask(image, low, points);
    const __m512i folded = _mm512_or_si512(_mm512_maskz_slli_epi64(kAll, mapped, 32), low);
    // Kept pairs to the front: they land at or below the ones this step read.
    _mm512_mask_compressstoreu_epi64(pairs + kept, keep, folded);
    if (distances != nullptr) {
      _mm512_mask_compressstoreu_pd(distances + kept, keep, _mm512_loadu_pd(distances + k));
    }
    kept += static_cast<std::size_t>(__builtin_popcount(keep));
  }
  return pair_fold_tail(pairs, distances, k, count, kept, first, origin);
}

}  // namespace spatialhash::detail
