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

/// The filter for exactly Q queries, fully unrolled over them (see block_filter_avx512.cpp):
/// whole vectors of 8 candidates with plain loads first, then one masked vector for the rest.
template <int Dim, int Q, bool kStoreSure>
void filter_queries(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                    const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  __m256 position[Q][Dim];
  for (int q = 0; q < Q; ++q) {
    for (int k = 0; k < Dim; ++k) position[q][k] = _mm256_set1_ps(queries.position[q][k]);
  }
  RowCursors<Q> rows(queries, out);
  const __m256 lo = _mm256_set1_ps(band.lo), hi = _mm256_set1_ps(band.hi);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  // Candidates j .. j + 7, of which the first `left` exist (all of them when left >= 8).
  const auto filter_vector = [&](std::uint32_t j, std::uint32_t left) {
    const bool whole = left >= 8;
    const __m256i valid_lanes = _mm256_cmpgt_epi32(
        _mm256_set1_epi32(static_cast<int>(std::min<std::uint32_t>(left, 8))), lane);
    __m256 candidate[Dim];
    for (int k = 0; k < Dim; ++k) {
      candidate[k] = whole ? _mm256_loadu_ps(points.axis[k] + j)
                           : _mm256_maskload_ps(points.axis[k] + j, valid_lanes);
    }
    // A count search reads ids only for border candidates (rare).
    const auto load_ids = [&] {
      const auto* at = reinterpret_cast<const __m256i*>(points.ids + j);
      return whole ? _mm256_loadu_si256(at)
                   : _mm256_maskload_epi32(reinterpret_cast<const int*>(at), valid_lanes);
    };
    const __m256i ids = kStoreSure ? load_ids() : _mm256_setzero_si256();
    const unsigned valid = whole ? 0xFFu : (1u << left) - 1u;
    const bool check_skip = rows.may_skip_from(j);
    for (int q = 0; q < Q; ++q) {
      // A fused multiply-add rounds less than a product and a sum, so the band still holds.
      __m256 d2 = _mm256_setzero_ps();
      for (int k = 0; k < Dim; ++k) {
        const __m256 d = _mm256_sub_ps(candidate[k], position[q][k]);
        d2 = _mm256_fmadd_ps(d, d, d2);
      }
      // Not-greater-than, unordered: NaN distances stay candidates (borderline).
      unsigned kept =
          valid & static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(d2, hi, _CMP_NGT_UQ)));
      if (check_skip) {
        for (unsigned bit = 0; bit < 8; ++bit) {
          const std::uint32_t index = j + bit;
          const bool skipped = rows.after ? index <= queries.skip[q] : index == queries.skip[q];
          if (skipped) kept &= ~(1u << bit);
        }
      }
      const unsigned is_sure =
          kept & static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(d2, lo, _CMP_LE_OQ)));
      const unsigned is_border = kept & ~is_sure;
      if constexpr (kStoreSure) {
        rows.sure[q] += pack_store(rows.sure[q], ids, is_sure);
      } else {
        rows.sure_count[q] += static_cast<std::uint32_t>(std::popcount(is_sure));
      }
      if (is_border) {
        rows.border[q] += pack_store(rows.border[q], kStoreSure ? ids : load_ids(), is_border);
      }
    }
  };
  std::uint32_t j = begin;
  for (; j < end && end - j >= 8; j += 8) filter_vector(j, 8);
  if (j < end) filter_vector(j, end - j);
  rows.store_counts(out);
}

}  // namespace

template <int Dim>
void block_filter_avx2(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                       const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  for_filter_variant(queries, out, [&]<int Q, bool kStoreSure>() {
    filter_queries<Dim, Q, kStoreSure>(points, begin, end, queries, band, out);
  });
}

template void block_filter_avx2<2>(const SoaView<2>&, std::uint32_t, std::uint32_t,
                                   const QueryBlock<2>&, FloatBand, BlockOutput&);
template void block_filter_avx2<3>(const SoaView<3>&, std::uint32_t, std::uint32_t,
                                   const QueryBlock<3>&, FloatBand, BlockOutput&);

}  // namespace spatialhash::detail
