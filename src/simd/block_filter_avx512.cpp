// The AVX-512 block filter (see block_filter.hpp). This file alone is compiled with -mavx512f;
// best_block_filter() calls it only on processors that report AVX-512F.
#include <immintrin.h>

#include <algorithm>
#include <bit>

#include "block_filter.hpp"

namespace spatialhash::detail {
namespace {

/// The filter for exactly Q queries, fully unrolled over them: per-query row cursors live in
/// registers. Whole vectors of 16 candidates first, then one masked vector for the rest, so that
/// the main loop's compares need no lane mask.
template <int Dim, int Q, bool kStoreSure>
void filter_queries(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                    const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  __m512 position[Q][Dim];
  __m512i skip[Q];
  for (int q = 0; q < Q; ++q) {
    for (int k = 0; k < Dim; ++k) position[q][k] = _mm512_set1_ps(queries.position[q][k]);
    skip[q] = _mm512_set1_epi32(static_cast<int>(queries.skip[q]));
  }
  RowCursors<Q> rows(queries, out);
  const __m512 lo = _mm512_set1_ps(band.lo), hi = _mm512_set1_ps(band.hi);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  // Candidates j .. j + 15, of which the lanes of `valid` exist.
  const auto filter_vector = [&](std::uint32_t j, __mmask16 valid) {
    __m512 candidate[Dim];
    for (int k = 0; k < Dim; ++k) candidate[k] = _mm512_maskz_loadu_ps(valid, points.axis[k] + j);
    // A count search reads ids only for border candidates (rare).
    const auto load_ids = [&] { return _mm512_maskz_loadu_epi32(valid, points.ids + j); };
    const __m512i ids = kStoreSure ? load_ids() : _mm512_setzero_si512();
    const bool check_skip = rows.may_skip_from(j);
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
        kept &= rows.after ? _mm512_cmpgt_epu32_mask(index, skip[q])
                           : _mm512_cmpneq_epi32_mask(index, skip[q]);
      }
      const __mmask16 is_sure = _mm512_mask_cmp_ps_mask(kept, d2, lo, _CMP_LE_OQ);
      const __mmask16 is_border = kept & static_cast<__mmask16>(~is_sure);
      const auto sure_found = std::popcount(static_cast<unsigned>(is_sure));
      if constexpr (kStoreSure) {
        // Compress in a register, then one plain store (compress-to-memory is slow on some cores).
        _mm512_storeu_si512(rows.sure[q], _mm512_maskz_compress_epi32(is_sure, ids));
        rows.sure[q] += sure_found;
      } else {
        rows.sure_count[q] += static_cast<std::uint32_t>(sure_found);
      }
      if (is_border) {
        _mm512_storeu_si512(rows.border[q],
                            _mm512_maskz_compress_epi32(is_border, kStoreSure ? ids : load_ids()));
        rows.border[q] += std::popcount(static_cast<unsigned>(is_border));
      }
    }
  };
  std::uint32_t j = begin;
  for (; j < end && end - j >= 16; j += 16) filter_vector(j, __mmask16(0xFFFF));
  if (j < end) filter_vector(j, static_cast<__mmask16>((1u << (end - j)) - 1u));
  rows.store_counts(out);
}

}  // namespace

template <int Dim>
void block_filter_avx512(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                         const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  for_filter_variant(queries, out, [&]<int Q, bool kStoreSure>() {
    filter_queries<Dim, Q, kStoreSure>(points, begin, end, queries, band, out);
  });
}

template void block_filter_avx512<2>(const SoaView<2>&, std::uint32_t, std::uint32_t,
                                     const QueryBlock<2>&, FloatBand, BlockOutput&);
template void block_filter_avx512<3>(const SoaView<3>&, std::uint32_t, std::uint32_t,
                                     const QueryBlock<3>&, FloatBand, BlockOutput&);

}  // namespace spatialhash::detail
