// The AVX-512 block filter (see block_filter.hpp). This file alone is compiled with -mavx512f;
// best_block_filter() calls it only on processors that report AVX-512F.
#include <immintrin.h>

#include <array>
#include <bit>

#include "block_filter.hpp"

namespace spatialhash::detail {
namespace {

/// The filter for exactly Q queries, fully unrolled over them: the sure rows' cursors live in
/// registers. Whole vectors of 16 candidates, then one masked vector for the rest; only vectors
/// that hold a candidate some query skips pay for the skip test.
///
/// One compare per query and vector: the kept lanes (float distance not above band.hi) go to the
/// sure rows as they are, and the vector is looked at again only when some kept lane of some
/// query lies above band.lo (a border candidate: rare, within a few float ulps of r^2). That is
/// found with one unsigned maximum per query of the kept distances' bits (for floats >= 0 the
/// bits order as the numbers do, and a NaN's bits lie above every number's, so NaN distances,
/// which count as border, are found too) and one compare per vector. Against a second compare
/// per query and the skip test on every vector up to the last skipped candidate, the filter's
/// time per block of 4 queries and 216 candidates went from 195 to 141 ns (Emerald Rapids VM;
/// docs/benchmarks.md, nineteenth session).
template <int Dim, int Q, bool kStoreSure>
void filter_queries(const SoaView<Dim>& points, const CandidateRuns& runs,
                    const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  __m512 position[Q][Dim];
  __m512i skip[Q];
  for (int q = 0; q < Q; ++q) {
    for (int k = 0; k < Dim; ++k) position[q][k] = _mm512_set1_ps(queries.position[q][k]);
    skip[q] = _mm512_set1_epi32(static_cast<int>(queries.skip[q]));
  }
  std::array<std::uint32_t*, Q> sure = start_rows<Q, kStoreSure>(out);
  std::array<std::uint32_t, Q> sure_count{};
  const bool after = queries.after;
  // Local copies: the row stores may alias `points` as far as the compiler knows.
  std::array<const float*, Dim> axis = points.axis;
  const std::uint32_t* const candidate_ids = points.ids;
  const __m512 lo = _mm512_set1_ps(band.lo), hi = _mm512_set1_ps(band.hi);
  const __m512i border_from = _mm512_set1_epi32(static_cast<int>(border_from_bits(band)));
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  // Candidates j .. j + 15, of which the first `left` exist (all of them when left is 16);
  // kMaySkip: some query may skip one of them (the others need no skip test).
  const auto filter_vector = [&]<bool kMaySkip>(std::uint32_t j, std::uint32_t left) {
    const auto valid = static_cast<__mmask16>(left >= 16 ? 0xFFFFu : (1u << left) - 1u);
    __m512 candidate[Dim];
    for (int k = 0; k < Dim; ++k) candidate[k] = _mm512_maskz_loadu_ps(valid, axis[k] + j);
    // A count search reads ids only for border candidates (rare).
    const auto load_ids = [&] { return _mm512_maskz_loadu_epi32(valid, candidate_ids + j); };
    const __m512i ids = kStoreSure ? load_ids() : _mm512_setzero_si512();
    __mmask16 allowed[Q];
    for (int q = 0; q < Q; ++q) allowed[q] = valid;
    if (kMaySkip) {
      const __m512i index = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(j)), lane);
      for (int q = 0; q < Q; ++q) {
        allowed[q] &= after ? _mm512_cmpgt_epu32_mask(index, skip[q])
                            : _mm512_cmpneq_epi32_mask(index, skip[q]);
      }
    }
    __m512 d2[Q];
    __mmask16 kept[Q];
    __m512i kept_max = _mm512_setzero_si512();
    for (int q = 0; q < Q; ++q) {
      // A fused multiply-add rounds less than a product and a sum, so the band still holds.
      d2[q] = _mm512_setzero_ps();
      for (int k = 0; k < Dim; ++k) {
        const __m512 d = _mm512_sub_ps(candidate[k], position[q][k]);
        d2[q] = _mm512_fmadd_ps(d, d, d2[q]);
      }
      // Not-greater-than, unordered: NaN distances stay candidates (borderline).
      kept[q] = _mm512_mask_cmp_ps_mask(allowed[q], d2[q], hi, _CMP_NGT_UQ);
      kept_max = _mm512_mask_max_epu32(kept_max, kept[q], kept_max, _mm512_castps_si512(d2[q]));
    }
    const bool any_border = _mm512_cmpge_epu32_mask(kept_max, border_from) != 0;
    for (int q = 0; q < Q; ++q) {
      __mmask16 is_sure = kept[q];
      if (any_border) {
        is_sure = _mm512_mask_cmp_ps_mask(kept[q], d2[q], lo, _CMP_LE_OQ);
        const __mmask16 is_border = kept[q] & static_cast<__mmask16>(~is_sure);
        _mm512_storeu_si512(
            out.border + static_cast<std::size_t>(q) * out.stride + out.border_count[q],
            _mm512_maskz_compress_epi32(is_border, kStoreSure ? ids : load_ids()));
        out.border_count[q] += static_cast<std::uint32_t>(std::popcount(unsigned{is_border}));
      }
      const auto sure_found = std::popcount(unsigned{is_sure});
      if constexpr (kStoreSure) {
        // Compress in a register, then one plain store (compress-to-memory is slow on some cores).
        _mm512_storeu_si512(sure[q], _mm512_maskz_compress_epi32(is_sure, ids));
        sure[q] += sure_found;
      } else {
        sure_count[q] += static_cast<std::uint32_t>(sure_found);
      }
    }
  };
  for_each_vector<16>(runs, SkippedRange(queries), filter_vector);
  store_sure_counts<Q, kStoreSure>(sure, sure_count, out);
}

}  // namespace

template <int Dim>
void block_filter_avx512(const SoaView<Dim>& points, const CandidateRuns& runs,
                         const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  for_filter_variant(queries, out, [&]<int Q, bool kStoreSure>() {
    filter_queries<Dim, Q, kStoreSure>(points, runs, queries, band, out);
  });
}

template void block_filter_avx512<2>(const SoaView<2>&, const CandidateRuns&, const QueryBlock<2>&,
                                     FloatBand, BlockOutput&);
template void block_filter_avx512<3>(const SoaView<3>&, const CandidateRuns&, const QueryBlock<3>&,
                                     FloatBand, BlockOutput&);

}  // namespace spatialhash::detail
