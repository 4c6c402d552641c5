// The AVX2 key pass (see cell_keys.hpp): 4 points per step. This file alone is compiled with
// -mavx2 -mfma; best_cell_keys() calls it only on processors that report both.
#include <immintrin.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

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

/// Axis k of the 4 points starting at `first` (lane j: point first + j), as doubles, at any
/// stride.
template <class T>
inline __m256d gather_axis(const T* first, __m128i offsets) {
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

/// One vector of 4 coordinates per axis.
template <int Dim>
struct Axes {
  __m256d axis[Dim];
};

/// The Dim axes of the 4 points whose elements start at `at` when they are packed (stride Dim):
/// 4 * Dim consecutive elements, read with whole-vector loads that never read past them and split
/// into axes with shuffles and blends, as doubles. Gathers cost 2.3x as much on a Zen 4 (the key
/// pass on 1M float points in 3D, one thread: 6.6 ns per point gathered, 2.9 loaded;
/// bench/cell_keys.cpp).
template <int Dim, class T>
inline Axes<Dim> load_packed(const T* at) {
  Axes<Dim> axes;
  if constexpr (sizeof(T) == sizeof(float) && Dim == 2) {
    const __m128 a = _mm_loadu_ps(at), b = _mm_loadu_ps(at + 4);  // x0 y0 x1 y1, x2 y2 x3 y3
    axes.axis[0] = _mm256_cvtps_pd(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
    axes.axis[1] = _mm256_cvtps_pd(_mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
  } else if constexpr (sizeof(T) == sizeof(float)) {
    // a = x0 y0 z0 x1, b = y1 z1 x2 y2, c = z2 x3 y3 z3.
    const __m128 a = _mm_loadu_ps(at), b = _mm_loadu_ps(at + 4), c = _mm_loadu_ps(at + 8);
    const __m128 x =
        _mm_shuffle_ps(a, _mm_shuffle_ps(b, c, _MM_SHUFFLE(1, 1, 2, 2)), _MM_SHUFFLE(2, 0, 3, 0));
    const __m128 y =
        _mm_shuffle_ps(_mm_shuffle_ps(a, b, _MM_SHUFFLE(0, 0, 1, 1)),
                       _mm_shuffle_ps(b, c, _MM_SHUFFLE(2, 2, 3, 3)), _MM_SHUFFLE(2, 0, 2, 0));
    const __m128 z =
        _mm_shuffle_ps(_mm_shuffle_ps(a, b, _MM_SHUFFLE(1, 1, 2, 2)),
                       _mm_shuffle_ps(c, c, _MM_SHUFFLE(3, 3, 0, 0)), _MM_SHUFFLE(2, 0, 2, 0));
    axes.axis[0] = _mm256_cvtps_pd(x);
    axes.axis[1] = _mm256_cvtps_pd(y);
    axes.axis[2] = _mm256_cvtps_pd(z);
  } else if constexpr (Dim == 2) {
    // a = x0 y0 x1 y1, b = x2 y2 x3 y3: unpacking gives x0 x2 x1 x3, put in order.
    const __m256d a = _mm256_loadu_pd(at), b = _mm256_loadu_pd(at + 4);
    axes.axis[0] = _mm256_permute4x64_pd(_mm256_unpacklo_pd(a, b), _MM_SHUFFLE(3, 1, 2, 0));
    axes.axis[1] = _mm256_permute4x64_pd(_mm256_unpackhi_pd(a, b), _MM_SHUFFLE(3, 1, 2, 0));
  } else {
    // a = x0 y0 z0 x1, b = y1 z1 x2 y2, c = z2 x3 y3 z3: each axis's four elements blended into
    // one register (one from each lane position), then put in order.
    const __m256d a = _mm256_loadu_pd(at), b = _mm256_loadu_pd(at + 4), c = _mm256_loadu_pd(at + 8);
    // x0 c1 b2 a3 -> x0 x1 x2 x3 (x1 = a3, x2 = b2, x3 = c1).
    axes.axis[0] = _mm256_permute4x64_pd(_mm256_blend_pd(_mm256_blend_pd(a, b, 0b0100), c, 0b0010),
                                         _MM_SHUFFLE(1, 2, 3, 0));
    // b0 a1 c2 b3 = y1 y0 y3 y2.
    axes.axis[1] = _mm256_permute4x64_pd(_mm256_blend_pd(_mm256_blend_pd(a, b, 0b1001), c, 0b0100),
                                         _MM_SHUFFLE(2, 3, 0, 1));
    // c0 b1 a2 c3 = z2 z1 z0 z3.
    axes.axis[2] = _mm256_permute4x64_pd(_mm256_blend_pd(_mm256_blend_pd(a, b, 0b0010), c, 0b1001),
                                         _MM_SHUFFLE(3, 0, 1, 2));
  }
  return axes;
}

/// Where the key pass puts the keys of a step of 4 points from point i: into `keys` with the
/// points' indices in `order`, or as packed records (order null; cell_keys.hpp).
class KeyStore {
 public:
  KeyStore(std::uint64_t* keys, std::uint32_t* order) : keys_(keys), order_(order) {}
  template <int Dim>
  void operator()(std::size_t i, const Axes<Dim>& /*axes*/, __m256i key) const {
    const __m128i index = _mm_add_epi32(_mm_set1_epi32(static_cast<int>(i)), lane_);
    if (order_ != nullptr) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(keys_ + i), key);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(order_ + i), index);
    } else {
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(keys_ + i),
          _mm256_or_si256(_mm256_slli_epi64(key, 32), _mm256_cvtepu32_epi64(index)));
    }
  }

 private:
  std::uint64_t* keys_;
  std::uint32_t* order_;
  __m128i lane_ = _mm_setr_epi32(0, 1, 2, 3);
};

/// Where update()'s key pass puts a step's keys (KeyChanges): each compared with the key its point
/// had, the points' coordinates relative to the frame converted to floats (the scalar pass's
/// double subtraction, then the same rounding), and the count and differing bits gathered until
/// count().
template <int Dim>
class KeyChangeStore {
 public:
  explicit KeyChangeStore(const KeyChanges<Dim>& out) : out_(out) {
    for (int k = 0; k < Dim; ++k) origin_[k] = _mm256_set1_pd(out.origin[k]);
  }
  void operator()(std::size_t i, const Axes<Dim>& axes, __m256i key) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out_.keys + i), key);
    const __m256i was = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out_.was + i));
    const __m256i same = _mm256_cmpeq_epi64(key, was);
    differing_ = _mm256_or_si256(differing_, _mm256_xor_si256(key, was));
    const auto kept = static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(same)));
    changed_ += static_cast<std::size_t>(4 - std::popcount(kept));
    for (int j = 0; j < 4; ++j) out_.changed[i + j] = ((kept >> j) & 1u) != 0 ? 0 : 1;
    for (int k = 0; k < Dim; ++k) {
      _mm_storeu_ps(out_.relative[k] + i, _mm256_cvtpd_ps(_mm256_sub_pd(axes.axis[k], origin_[k])));
    }
  }
  KeyChangeCount count() const {
    std::array<std::uint64_t, 4> lanes;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes.data()), differing_);
    std::uint64_t bits = 0;
    for (const std::uint64_t lane : lanes) bits |= lane;
    return {changed_, bits};
  }

 private:
  KeyChanges<Dim> out_;
  __m256d origin_[Dim];
  __m256i differing_ = _mm256_setzero_si256();
  std::size_t changed_ = 0;
};

/// The key pass over [begin, end) in steps of 4 points, each step's keys handed to `store` as
/// store(i, axes, keys) (KeyStore, KeyChangeStore), the rest left to the caller; the points packed
/// (stride Dim, load_packed) or not (gathered). `input` is the caller's, copied: the stores then
/// cannot alias it, and its fields stay in registers. Returns where the steps stopped.
template <bool kPacked, bool kColumns, int Dim, class T, class Store>
std::size_t keys_in_steps(const CellKeyInput<Dim, T> input, std::size_t begin, std::size_t end,
                          Store& store) {
  constexpr std::size_t kStep = 4;
  const auto stride = static_cast<int>(input.stride);
  const __m128i offsets = _mm_setr_epi32(0, stride, 2 * stride, 3 * stride);
  const __m128i shift = _mm_cvtsi32_si128(input.shift);
  const __m256d inv_cell = _mm256_set1_pd(input.inv_cell);
  std::size_t i = begin;
  for (; i + kStep <= end; i += kStep) {
    const T* first = input.data + i * input.stride;
    Axes<Dim> axes;
    if constexpr (kPacked) {
      axes = load_packed<Dim>(first);
    } else {
      for (int k = 0; k < Dim; ++k) axes.axis[k] = gather_axis(first + k, offsets);
    }
    __m256i key = _mm256_setzero_si256();
    __m256i slab = _mm256_setzero_si256();
    __m256d on_lattice = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    for (int k = 0; k < Dim; ++k) {
      // The same double operations as the scalar pass: (x - origin) * inv_cell, then floor.
      const __m256d x = axes.axis[k];
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
      const __m256i wide = _mm256_cvtepu32_epi64(cell);
      if constexpr (kColumns) {
        // (x, y) interleaved; z appended below the code after the loop.
        if (k < 2) {
          key = _mm256_or_si256(key, _mm256_sll_epi64(spread_bits<2>(wide), _mm_cvtsi32_si128(k)));
        } else {
          key =
              _mm256_or_si256(_mm256_sll_epi64(key, _mm_cvtsi32_si128(input.column_z_bits)), wide);
        }
      } else {
        const __m256i spread = spread_bits<Dim>(wide);
        key = _mm256_or_si256(key, _mm256_sll_epi64(spread, _mm_cvtsi32_si128(k)));
      }
    }
    key = _mm256_or_si256(_mm256_sll_epi64(key, _mm_cvtsi32_si128(input.slab_bits)), slab);
    if (input.queries) {
      key = _mm256_and_si256(_mm256_add_epi64(key, _mm256_set1_epi64x(1)),
                             _mm256_castpd_si256(on_lattice));
    }
    store(i, axes, key);
  }
  return i;
}

}  // namespace

template <int Dim, class T>
void cell_keys_avx2(const CellKeyInput<Dim, T>& input, std::size_t begin, std::size_t end,
                    std::uint64_t* keys, std::uint32_t* order) {
  // Gathers index 32-bit element offsets from the step's first point: fine while 3 strides fit.
  if (input.stride > (std::size_t{1} << 28)) {
    cell_keys_scalar(input, begin, end, keys, order);
    return;
  }
  KeyStore store(keys, order);
  const std::size_t rest = run_key_steps(input, [&](auto packed, auto columns) {
    return keys_in_steps<decltype(packed)::value, decltype(columns)::value>(input, begin, end,
                                                                            store);
  });
  cell_keys_scalar(input, rest, end, keys, order);
}

template <int Dim, class T>
KeyChangeCount key_changes_avx2(const CellKeyInput<Dim, T>& input, std::size_t begin,
                                std::size_t end, const KeyChanges<Dim>& out) {
  if (input.stride > (std::size_t{1} << 28)) return key_changes_scalar(input, begin, end, out);
  KeyChangeStore<Dim> store(out);
  return key_changes_in_steps(input, end, out, store, [&](auto packed, auto columns) {
    return keys_in_steps<decltype(packed)::value, decltype(columns)::value>(input, begin, end,
                                                                            store);
  });
}

SPATIALHASH_INSTANTIATE_CELL_KEYS(cell_keys_avx2)
SPATIALHASH_INSTANTIATE_KEY_CHANGES(key_changes_avx2)

}  // namespace spatialhash::detail
