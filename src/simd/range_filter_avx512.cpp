// The AVX-512 range filter (see range_filter.hpp). This file alone is compiled with -mavx512f;
// best_range_filter() calls it only on processors that report AVX-512F.
#include <immintrin.h>

#include <bit>

#include "range_filter.hpp"

namespace spatialhash::detail {

template <int Dim>
void range_filter_avx512(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                         const std::array<float, Dim>& query, FloatBand band, std::uint32_t exclude,
                         FilterOutput& out) {
  __m512 q[Dim];
  for (int k = 0; k < Dim; ++k) q[k] = _mm512_set1_ps(query[k]);
  const __m512 lo = _mm512_set1_ps(band.lo), hi = _mm512_set1_ps(band.hi);
  const __m512i excluded = _mm512_set1_epi32(static_cast<int>(exclude));
  for (std::uint32_t j = begin; j < end; j += 16) {
    const std::uint32_t left = end - j;
    const __mmask16 valid = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1u);
    __m512 d2 = _mm512_setzero_ps();
    for (int k = 0; k < Dim; ++k) {
      const __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(valid, points.axis[k] + j), q[k]);
      d2 = _mm512_add_ps(d2, _mm512_mul_ps(d, d));
    }
    // Not-greater-than, unordered: NaN distances stay candidates (borderline).
    __mmask16 candidate = _mm512_mask_cmp_ps_mask(valid, d2, hi, _CMP_NGT_UQ);
    const __m512i index = _mm512_maskz_loadu_epi32(valid, points.ids + j);
    candidate &= static_cast<__mmask16>(~_mm512_cmpeq_epi32_mask(index, excluded));
    const __mmask16 sure = _mm512_mask_cmp_ps_mask(candidate, d2, lo, _CMP_LE_OQ);
    const __mmask16 border = candidate & static_cast<__mmask16>(~sure);
    // Compress in a register, then one plain store (compress-to-memory is slow on some cores).
    _mm512_storeu_si512(out.sure + out.sure_count, _mm512_maskz_compress_epi32(sure, index));
    out.sure_count += static_cast<std::size_t>(std::popcount(static_cast<unsigned>(sure)));
    if (border) {
      _mm512_storeu_si512(out.border + out.border_count,
                          _mm512_maskz_compress_epi32(border, index));
      out.border_count += static_cast<std::size_t>(std::popcount(static_cast<unsigned>(border)));
    }
  }
}

template void range_filter_avx512<2>(const SoaView<2>&, std::uint32_t, std::uint32_t,
                                     const std::array<float, 2>&, FloatBand, std::uint32_t,
                                     FilterOutput&);
template void range_filter_avx512<3>(const SoaView<3>&, std::uint32_t, std::uint32_t,
                                     const std::array<float, 3>&, FloatBand, std::uint32_t,
                                     FilterOutput&);

}  // namespace spatialhash::detail
