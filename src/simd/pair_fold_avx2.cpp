// The AVX2 pair fold (see pair_fold.hpp): 4 pairs per step, each a 64-bit lane (first in the
// low half), the kept ones moved to the front by a permutation from a table of 16. This file
// alone is compiled with -mavx2 -mfma; best_pair_fold() calls it only on processors that report
// both.
#include <immintrin.h>

#include <array>
#include <cstdint>

#include "pair_fold.hpp"

namespace spatialhash::detail {
namespace {

/// For each mask of kept lanes (bit j: lane j), the 32-bit permutation that moves the kept 64-bit
/// lanes to the front in order (the rest lane 0, unused: the table starts zeroed).
constexpr std::array<std::array<int, 8>, 16> kFront = [] {
  std::array<std::array<int, 8>, 16> table{};
  for (int mask = 0; mask < 16; ++mask) {
    int at = 0;
    for (int lane = 0; lane < 4; ++lane) {
      if ((mask >> lane & 1) == 0) continue;
      table[mask][2 * at] = 2 * lane;
      table[mask][2 * at + 1] = 2 * lane + 1;
      ++at;
    }
  }
  return table;
}();

}  // namespace

std::size_t pair_fold_avx2(Pair* pairs, double* distances, std::size_t count, index_t first,
                           const index_t* origin) {
  static_assert(sizeof(Pair) == 8, "a pair is one 64-bit lane");
  // Indices are below 2^32, so signed 64-bit comparisons of the zero-extended halves are exact.
  const __m256i firsts = _mm256_set1_epi64x(static_cast<long long>(first));
  const __m256i below_first = _mm256_set1_epi64x(static_cast<long long>(first) - 1);
  const __m256i low_half = _mm256_set1_epi64x(0xffffffffLL);
  const __m256i even_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  std::size_t kept = 0;
  std::size_t k = 0;
  for (; k + 4 <= count; k += 4) {
    const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pairs + k));
    const __m256i second = _mm256_srli_epi64(p, 32);
    const __m256i image = _mm256_cmpgt_epi64(second, below_first);
    const int image_bits = _mm256_movemask_pd(_mm256_castsi256_pd(image));
    if (image_bits == 0) {  // all kept as they are
      if (kept != k) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(pairs + kept), p);
        if (distances != nullptr)
          _mm256_storeu_pd(distances + kept, _mm256_loadu_pd(distances + k));
      }
      kept += 4;
      continue;
    }
    const __m256i low = _mm256_and_si256(p, low_half);
    // The images' points (the other lanes load nothing): the gather's mask is the low halves of
    // the image lanes' all-ones.
    const __m128i lanes = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(image, even_halves));
    const __m128i points32 =
        _mm256_mask_i64gather_epi32(_mm_setzero_si128(), reinterpret_cast<const int*>(origin),
                                    _mm256_sub_epi64(second, firsts), lanes, 4);
    const __m256i points = _mm256_cvtepu32_epi64(points32);
    const __m256i mapped = _mm256_blendv_epi8(second, points, image);
    const __m256i drop = _mm256_andnot_si256(_mm256_cmpgt_epi64(points, low), image);
    const int keep = ~_mm256_movemask_pd(_mm256_castsi256_pd(drop)) & 15;
    const __m256i order = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kFront[keep].data()));
    const __m256i folded = _mm256_or_si256(_mm256_slli_epi64(mapped, 32), low);
    // Kept pairs to the front, the whole vector stored: what lies past them is written over by
    // the next step or cut off at the end (every slot written lies below k + 4).
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(pairs + kept),
                        _mm256_permutevar8x32_epi32(folded, order));
    if (distances != nullptr) {
      const __m256 measured = _mm256_castpd_ps(_mm256_loadu_pd(distances + k));
      _mm256_storeu_pd(distances + kept,
                       _mm256_castps_pd(_mm256_permutevar8x32_ps(measured, order)));
    }
    kept += static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(keep)));
  }
  return pair_fold_tail(pairs, distances, k, count, kept, first, origin);
}

}  // namespace spatialhash::detail
