// The AVX2 block filter (see block_filter.hpp), for x86-64 processors without AVX-512. This file
// alone is compiled with -mavx2 -mfma; best_block_filter() calls it only on processors that
// report both. AVX2 has no compress instruction: the kept lanes are packed to the front with a
// permutation looked up by mask (8 lanes, 256 masks).
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>

#include "block_filter.hpp"

namespace spatialhash::detail {
namespace {

/// For each 8-bit mask, the lane indices of its set bits, first to last, then zeros.
constexpr std::array<std::array<std::int32_t, 8>, 256> make_pack_table() {
  std::array<std::array<std::int32_t, 8>, 256> table{};
  for (int mask = 0; mask < 256; ++mask) {
    int at = 0;
    for (int lane = 0; lane < 8; ++lane) {
      if (mask & (1 << lane)) table[mask][at++] = lane;
    }
  }
  return table;
}
constexpr auto kPackTable = make_pack_table();

/// Stores the lanes of `ids` selected by `mask` to `out`, packed; returns how many.
inline std::uint32_t pack_store(std::uint32_t* out, __m256i ids, unsigned mask) {
  const __m256i permutation =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kPackTable[mask].data()));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm256_permutevar8x32_epi32(ids, permutation));
  return static_cast<std::uint32_t>(std::popcount(mask));
}

/// The filter for exactly Q queries, fully unrolled over them, by the AVX-512 filter's scheme
/// (block_filter_avx512.cpp): one compare per query and vector, the kept lanes stored as sure, and
/// the vector looked at again only when the unsigned maximum of the kept distances' bits says
/// some kept lane lies above band.lo (border, or NaN); only vectors that hold a candidate some
/// query skips pay for the skip test. Whole vectors of 8 candidates with plain loads first, then
/// one masked vector for the rest.
template <int Dim, int Q, bool kStoreSure>
void filter_queries(const SoaView<Dim>& points, const CandidateRuns& runs,
                    const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  __m256 position[Q][Dim];
  for (int q = 0; q < Q; ++q) {
    for (int k = 0; k < Dim; ++k) position[q][k] = _mm256_set1_ps(queries.position[q][k]);
  }
  std::array<std::uint32_t*, Q> sure = start_rows<Q, kStoreSure>(out);
  std::array<std::uint32_t, Q> sure_count{};
  const bool after = queries.after;
  // Local copies: the row stores may alias `points` as far as the compiler knows.
  std::array<const float*, Dim> axis = points.axis;
  const std::uint32_t* const candidate_ids = points.ids;
  const __m256 lo = _mm256_set1_ps(band.lo), hi = _mm256_set1_ps(band.hi);
  const __m256i border_from = _mm256_set1_epi32(static_cast<int>(border_from_bits(band)));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  // Candidates j .. j + 7, of which the first `left` exist (all of them when left >= 8);
  // kMaySkip: some query may skip one of them. GCC 12 inlines this lambda at for_each_vector's
  // two call sites; given more it made it an out-of-line call, 20-25% slower
  // (docs/benchmarks.md, fifty-eighth session).
  const auto filter_vector = [&]<bool kMaySkip>(std::uint32_t j, std::uint32_t left) {
    const bool whole = left >= 8;
    const __m256i valid_lanes = _mm256_cmpgt_epi32(
        _mm256_set1_epi32(static_cast<int>(std::min<std::uint32_t>(left, 8))), lane);
    __m256 candidate[Dim];
    for (int k = 0; k < Dim; ++k) {
      candidate[k] =
          whole ? _mm256_loadu_ps(axis[k] + j) : _mm256_maskload_ps(axis[k] + j, valid_lanes);
    }
    // A count search reads ids only for border candidates (rare).
    const auto load_ids = [&] {
      const auto* at = reinterpret_cast<const __m256i*>(candidate_ids + j);
      return whole ? _mm256_loadu_si256(at)
                   : _mm256_maskload_epi32(reinterpret_cast<const int*>(at), valid_lanes);
    };
    const __m256i ids = kStoreSure ? load_ids() : _mm256_setzero_si256();
    __m256 d2[Q];
    unsigned kept[Q];
    __m256i kept_max = _mm256_setzero_si256();
    for (int q = 0; q < Q; ++q) {
      // A fused multiply-add rounds less than a product and a sum, so the band still holds.
      d2[q] = _mm256_setzero_ps();
      for (int k = 0; k < Dim; ++k) {
        const __m256 d = _mm256_sub_ps(candidate[k], position[q][k]);
        d2[q] = _mm256_fmadd_ps(d, d, d2[q]);
      }
      // Not-greater-than, unordered: NaN distances stay candidates (borderline).
      __m256 kept_lanes = _mm256_cmp_ps(d2[q], hi, _CMP_NGT_UQ);
      if (kMaySkip) {
        const __m256i index = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(j)), lane);
        const __m256i skip = _mm256_set1_epi32(static_cast<int>(queries.skip[q]));
        // The lanes to drop: index <= skip (unsigned) with `after`, index == skip without.
        const __m256i dropped = after ? _mm256_cmpeq_epi32(_mm256_max_epu32(index, skip), skip)
                                      : _mm256_cmpeq_epi32(index, skip);
        kept_lanes = _mm256_andnot_ps(_mm256_castsi256_ps(dropped), kept_lanes);
      }
      if (!whole) kept_lanes = _mm256_and_ps(kept_lanes, _mm256_castsi256_ps(valid_lanes));
      kept[q] = static_cast<unsigned>(_mm256_movemask_ps(kept_lanes));
      kept_max = _mm256_max_epu32(kept_max, _mm256_castps_si256(_mm256_and_ps(d2[q], kept_lanes)));
    }
    // Some lane of kept_max >= border_from: max(kept_max, border_from) equals kept_max there.
    const bool any_border = _mm256_movemask_epi8(_mm256_cmpeq_epi32(
                                _mm256_max_epu32(kept_max, border_from), kept_max)) != 0;
    for (int q = 0; q < Q; ++q) {
      unsigned is_sure = kept[q];
      if (any_border) {
        is_sure = kept[q] &
                  static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(d2[q], lo, _CMP_LE_OQ)));
        const unsigned is_border = kept[q] & ~is_sure;
        if (is_border != 0) {
          out.border_count[q] += pack_store(
              out.border + static_cast<std::size_t>(q) * out.stride + out.border_count[q],
              kStoreSure ? ids : load_ids(), is_border);
        }
      }
      if constexpr (kStoreSure) {
        sure[q] += pack_store(sure[q], ids, is_sure);
      } else {
        sure_count[q] += static_cast<std::uint32_t>(std::popcount(is_sure));
      }
    }
  };
  for_each_vector<8>(runs, SkippedRange(queries), filter_vector);
  store_sure_counts<Q, kStoreSure>(sure, sure_count, out);
}

}  // namespace

template <int Dim>
void block_filter_avx2(const SoaView<Dim>& points, const CandidateRuns& runs,
                       const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  for_filter_variant(queries, out, [&]<int Q, bool kStoreSure>() {
    filter_queries<Dim, Q, kStoreSure>(points, runs, queries, band, out);
  });
}

template void block_filter_avx2<2>(const SoaView<2>&, const CandidateRuns&, const QueryBlock<2>&,
                                   FloatBand, BlockOutput&);
template void block_filter_avx2<3>(const SoaView<3>&, const CandidateRuns&, const QueryBlock<3>&,
                                   FloatBand, BlockOutput&);

}  // namespace spatialhash::detail
