// The AVX-512 block filter (see block_filter.hpp). This file alone is compiled with -mavx512f;
// best_block_filter() calls it only on processors that report AVX-512F.
#include <immintrin.h>

#include <algorithm>
#include <bit>

#include "block_filter.hpp"

namespace spatialhash::detail {
namespace {

/// The filter for exactly Q queries, fully unrolled over them: per-query output pointers and
/// counts live in registers.
template <int Dim, int Q>
void filter_queries(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                    const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  __m512 position[Q][Dim];
  __m512i skip[Q];
  std::uint32_t* sure[Q];
  std::uint32_t* border[Q];
  std::uint32_t sure_count[Q], border_count[Q];
  // Candidates up to the largest skipped index need the skip test; the rest do not.
  std::uint32_t last_skipped = 0;
  bool any_skip = false;
  for (int q = 0; q < Q; ++q) {
    for (int k = 0; k < Dim; ++k) position[q][k] = _mm512_set1_ps(queries.position[q][k]);
    skip[q] = _mm512_set1_epi32(static_cast<int>(queries.skip[q]));
    if (queries.skip[q] != kSkipNone) {
      last_skipped = any_skip ? std::max(last_skipped, queries.skip[q]) : queries.skip[q];
      any_skip = true;
    }
    sure[q] = out.sure + static_cast<std::size_t>(q) * out.stride;
    border[q] = out.border + static_cast<std::size_t>(q) * out.stride;
    sure_count[q] = 0;
    border_count[q] = 0;
  }
  const __m512 lo = _mm512_set1_ps(band.lo), hi = _mm512_set1_ps(band.hi);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (std::uint32_t j = begin; j < end; j += 16) {
    const std::uint32_t left = end - j;
    const __mmask16 valid = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1u);
    __m512 candidate[Dim];
    for (int k = 0; k < Dim; ++k) candidate[k] = _mm512_maskz_loadu_ps(valid, points.axis[k] + j);
    const __m512i ids = _mm512_maskz_loadu_epi32(valid, points.ids + j);
    const bool check_skip = any_skip && j <= last_skipped;
    const __m512i index = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(j)), lane);
    for (int q = 0; q < Q; ++q) {
      // A fused multiply-add rounds less than a product and a sum, so the band still holds.
      __m512 d2 = _mm512_setzero_ps();
      for (int k = 0; k < Dim; ++k) {
        const __m512 d = _mm512_sub_ps(candidate[k], position[q][k]);
        d2 = _mm512_fmadd_ps(d, d, d2);
      }
      // Not-greater-than, unordered: NaN distances stay candidates (borderline).
      __mmask16 kept = _mm512_mask_cmp_ps_mask(valid, d2, hi, _CMP_NGT_UQ);
      if (check_skip) {
        kept &= queries.after ? _mm512_cmpgt_epu32_mask(index, skip[q])
                              : _mm512_cmpneq_epi32_mask(index, skip[q]);
      }
      const __mmask16 is_sure = _mm512_mask_cmp_ps_mask(kept, d2, lo, _CMP_LE_OQ);
      const __mmask16 is_border = kept & static_cast<__mmask16>(~is_sure);
      // Compress in a register, then one plain store (compress-to-memory is slow on some cores).
      _mm512_storeu_si512(sure[q] + sure_count[q], _mm512_maskz_compress_epi32(is_sure, ids));
      sure_count[q] += static_cast<std::uint32_t>(std::popcount(static_cast<unsigned>(is_sure)));
      if (is_border) {
        _mm512_storeu_si512(border[q] + border_count[q],
                            _mm512_maskz_compress_epi32(is_border, ids));
        border_count[q] +=
            static_cast<std::uint32_t>(std::popcount(static_cast<unsigned>(is_border)));
      }
    }
  }
  for (int q = 0; q < Q; ++q) {
    out.sure_count[q] = sure_count[q];
    out.border_count[q] = border_count[q];
  }
}

}  // namespace

template <int Dim>
void block_filter_avx512(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                         const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  static_assert(kBlockQueries == 4);
  switch (queries.count) {
    case 1:
      return filter_queries<Dim, 1>(points, begin, end, queries, band, out);
    case 2:
      return filter_queries<Dim, 2>(points, begin, end, queries, band, out);
    case 3:
      return filter_queries<Dim, 3>(points, begin, end, queries, band, out);
    default:
      return filter_queries<Dim, 4>(points, begin, end, queries, band, out);
  }
}

template void block_filter_avx512<2>(const SoaView<2>&, std::uint32_t, std::uint32_t,
                                     const QueryBlock<2>&, FloatBand, BlockOutput&);
template void block_filter_avx512<3>(const SoaView<3>&, std::uint32_t, std::uint32_t,
                                     const QueryBlock<3>&, FloatBand, BlockOutput&);

}  // namespace spatialhash::detail
