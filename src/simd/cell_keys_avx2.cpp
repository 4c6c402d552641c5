// The AVX2 key pass (see cell_keys.hpp): 4 points per step. This file alone is compiled with
// -mavx2 -mfma; best_cell_keys() calls it only on processors that report both.
#include <immintrin.h>

#include "../morton.hpp"
#include "cell_keys.hpp"

namespace spatialhash::detail {
namespace {

/// spread_bits_2 / spread_bits_3 (morton.hpp) on 4 lanes.
template <int Dim>
inline __m256i spread_bits(__m256i x) {
  const auto& steps = Dim == 2 ? kSpreadSteps2 : kSpreadSteps3;
  x = _mm256_and_si256(
      x, _mm256_set1_epi64x(static_cast<long long>(Dim == 2 ? kSpreadInput2 : kSpreadInput3)));
  for (const SpreadStep& step : steps) {
    x = _mm256_and_si256(_mm256_or_si256(x, _mm256_sll_epi64(x, _mm_cvtsi32_si128(step.shift))),
                         _mm256_set1_epi64x(static_cast<long long>(step.mask)));
  }
  return x;
}

/// Axis k of the 4 points starting at `first` (lane j: point first + j), as doubles.
template <class T>
inline __m256d load_axis(const T* first, __m128i offsets) {
  if constexpr (sizeof(T) == sizeof(double)) {
    // The masked forms: GCC 12's unmasked ones start from an undefined register, which
    // -Wmaybe-uninitialized reports.
    return _mm256_mask_i32gather_pd(_mm256_setzero_pd(), first, offsets,
                                    _mm256_castsi256_pd(_mm256_set1_epi64x(-1)), sizeof(double));
  } else {
    return _mm256_cvtps_pd(_mm_mask_i32gather_ps(
        _mm_setzero_ps(), first, offsets, _mm_castsi128_ps(_mm_set1_epi32(-1)), sizeof(float)));
  }
}

}  // namespace

template <int Dim, class T>
void cell_keys_avx2(const CellKeyInput<Dim, T>& input, std::size_t begin, std::size_t end,
                    std::uint64_t* keys, std::uint32_t* order) {
  constexpr std::size_t kStep = 4;
  // Gathers index 32-bit element offsets from the step's first point: fine while 3 strides fit.
  if (input.stride > (std::size_t{1} << 28)) {
    cell_keys_scalar(input, begin, end, keys, order);
    return;
  }
  const auto stride = static_cast<int>(input.stride);
  const __m128i offsets = _mm_setr_epi32(0, stride, 2 * stride, 3 * stride);
  const __m128i lane = _mm_setr_epi32(0, 1, 2, 3);
  const __m128i shift = _mm_cvtsi32_si128(input.shift);
  const __m256d inv_cell = _mm256_set1_pd(input.inv_cell);
  std::size_t i = begin;
  for (; i + kStep <= end; i += kStep) {
    const T* first = input.data + i * input.stride;
    __m256i key = _mm256_setzero_si256();
    __m256i slab = _mm256_setzero_si256();
    __m256d on_lattice = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    for (int k = 0; k < Dim; ++k) {
      // The same double operations as the scalar pass: (x - origin) * inv_cell, then floor.
      const __m256d x = load_axis(first + k, offsets);
      const __m256d u = _mm256_mul_pd(_mm256_sub_pd(x, _mm256_set1_pd(input.origin[k])), inv_cell);
      __m256d floor = _mm256_floor_pd(u);
      if (input.queries) {
        const __m256d inside =
            _mm256_and_pd(_mm256_cmp_pd(x, _mm256_set1_pd(input.lower[k]), _CMP_GE_OQ),
                          _mm256_cmp_pd(x, _mm256_set1_pd(input.upper[k]), _CMP_LE_OQ));
        on_lattice = _mm256_and_pd(on_lattice, inside);
        // max returns its second operand when the first is NaN: NaN becomes 0.
        floor = _mm256_max_pd(floor, _mm256_setzero_pd());
        floor = _mm256_min_pd(floor, _mm256_set1_pd(input.last_cell[k]));
      }
      if (k == Dim - 1 && input.slab_bits > 0) {
        const __m256d slabs = _mm256_set1_pd(static_cast<double>(1 << input.slab_bits));
        const __m256d scaled = _mm256_floor_pd(_mm256_mul_pd(u, slabs));
        slab = _mm256_cvtepu32_epi64(
            _mm256_cvttpd_epi32(_mm256_sub_pd(scaled, _mm256_mul_pd(floor, slabs))));
      }
      // Cells are below 2^30: the signed conversion is exact.
      const __m128i cell = _mm_srl_epi32(_mm256_cvttpd_epi32(floor), shift);
      const __m256i spread = spread_bits<Dim>(_mm256_cvtepu32_epi64(cell));
      key = _mm256_or_si256(key, _mm256_sll_epi64(spread, _mm_cvtsi32_si128(k)));
    }
    key = _mm256_or_si256(_mm256_sll_epi64(key, _mm_cvtsi32_si128(input.slab_bits)), slab);
    if (input.queries) {
      key = _mm256_and_si256(_mm256_add_epi64(key, _mm256_set1_epi64x(1)),
                             _mm256_castpd_si256(on_lattice));
    }
    const __m128i index = _mm_add_epi32(_mm_set1_epi32(static_cast<int>(i)), lane);
    if (order != nullptr) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(keys + i), key);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(order + i), index);
    } else {
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(keys + i),
          _mm256_or_si256(_mm256_slli_epi64(key, 32), _mm256_cvtepu32_epi64(index)));
    }
  }
  cell_keys_scalar(input, i, end, keys, order);
}

SPATIALHASH_INSTANTIATE_CELL_KEYS(cell_keys_avx2)

}  // namespace spatialhash::detail
