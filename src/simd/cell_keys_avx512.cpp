// The AVX-512 key pass (see cell_keys.hpp): 8 points per step. This file alone is compiled with
// -mavx512f; best_cell_keys() calls it only on processors that report AVX-512F.
#include <immintrin.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../morton.hpp"
#include "cell_keys.hpp"

namespace spatialhash::detail {
namespace {

// The zero-masked forms throughout: GCC 12's unmasked ones start from an undefined register,
// which -Wmaybe-uninitialized reports.
constexpr __mmask8 kAll = 0xFF;

/// spread_bits_2 / spread_bits_3 (morton.hpp) on 8 lanes.
template <int Dim>
inline __m512i spread_bits(__m512i x) {
  const auto& steps = Dim == 2 ? kSpreadSteps2 : kSpreadSteps3;
  x = _mm512_and_si512(
      x, _mm512_set1_epi64(static_cast<long long>(Dim == 2 ? kSpreadInput2 : kSpreadInput3)));
  for (const SpreadStep& step : steps) {
    x = _mm512_and_si512(
        _mm512_or_si512(x, _mm512_maskz_sll_epi64(kAll, x, _mm_cvtsi32_si128(step.shift))),
        _mm512_set1_epi64(static_cast<long long>(step.mask)));
  }
  return x;
}

/// One vector of 8 coordinates per axis.
template <int Dim>
struct Axes {
  __m512d axis[Dim];
};

/// Splits 8 packed points (stride Dim: 8 * Dim consecutive elements) into their Dim axes, as
/// doubles, with whole-vector loads that never read past those elements and two-register
/// permutes; the index registers are made once, before the loop. Gathers cost 2.7x as much on a
/// Zen 4 (the key pass on 1M float points in 3D, one thread: 5.4 ns per point gathered, 2.0
/// loaded; bench/cell_keys.cpp).
template <int Dim, class T>
class PackedAxes {
  static constexpr bool kFloat = sizeof(T) == sizeof(float);
  using Lane = std::conditional_t<kFloat, std::int32_t, std::int64_t>;
  static constexpr int kLanes = 64 / sizeof(T);

 public:
  PackedAxes() {
    for (int k = 0; k < Dim; ++k) {
      // Lane j of axis k is element Dim * j + k. Floats: a table of two registers (16 lanes
      // each) holds all 24. Doubles in 3D: elements 16-23 lie in a third register, which a
      // second permute takes them from (index 8 + their lane there), keeping the other lanes.
      std::array<Lane, kLanes> first{}, second{};
      for (int j = 0; j < kLanes; ++j) {
        const int element = Dim * (j % 8) + k;
        const bool in_third = !kFloat && element >= 16;
        first[static_cast<std::size_t>(j)] = in_third ? 0 : element;
        second[static_cast<std::size_t>(j)] = in_third ? 8 + element - 16 : j;
      }
      first_[k] = _mm512_loadu_si512(first.data());
      second_[k] = _mm512_loadu_si512(second.data());
    }
  }

  /// The axes of the 8 points whose elements start at `at`.
  Axes<Dim> load(const T* at) const {
    Axes<Dim> axes;
    if constexpr (kFloat) {
      const __m512 low = _mm512_loadu_ps(at);
      __m512 high = _mm512_setzero_ps();
      // In 3D the 8 floats after the first 16, by a masked load that reads nothing past them.
      if constexpr (Dim == 3) high = _mm512_maskz_loadu_ps(0x00FF, at + 16);
      for (int k = 0; k < Dim; ++k) {
        const __m512 axis = _mm512_permutex2var_ps(low, first_[k], high);
        // The low 8 lanes (a zero-masked extract: GCC 12's cast starts from an undefined register).
        const __m256 low_half =
            _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0x0F, _mm512_castps_pd(axis), 0));
        axes.axis[k] = _mm512_maskz_cvtps_pd(kAll, low_half);
      }
    } else {
      const __m512d a = _mm512_loadu_pd(at), b = _mm512_loadu_pd(at + 8);
      for (int k = 0; k < Dim; ++k) {
        axes.axis[k] = _mm512_permutex2var_pd(a, first_[k], b);
        if constexpr (Dim == 3) {
          axes.axis[k] = _mm512_permutex2var_pd(axes.axis[k], second_[k], _mm512_loadu_pd(at + 16));
        }
      }
    }
    return axes;
  }

 private:
  __m512i first_[Dim], second_[Dim];
};

/// Axis k of the 8 points starting at `first` (lane j: point first + j), as doubles, at any
/// stride.
template <class T>
inline __m512d gather_axis(const T* first, __m256i offsets) {
  if constexpr (sizeof(T) == sizeof(double)) {
    return _mm512_mask_i32gather_pd(_mm512_setzero_pd(), kAll, offsets, first, sizeof(double));
  } else {
    return _mm512_maskz_cvtps_pd(kAll, _mm256_i32gather_ps(first, offsets, sizeof(float)));
  }
}

/// Where the key pass puts the keys of a step of 8 points from point i: into `keys` with the
/// points' indices in `order`, or as packed records (order null; cell_keys.hpp).
class KeyStore {
 public:
  KeyStore(std::uint64_t* keys, std::uint32_t* order) : keys_(keys), order_(order) {}
  template <int Dim>
  void operator()(std::size_t i, const Axes<Dim>& /*axes*/, __m512i key) const {
    const __m256i index = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(i)), lane_);
    if (order_ != nullptr) {
      _mm512_storeu_si512(keys_ + i, key);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(order_ + i), index);
    } else {
      _mm512_storeu_si512(keys_ + i, _mm512_or_si512(_mm512_maskz_slli_epi64(kAll, key, 32),
                                                     _mm512_maskz_cvtepu32_epi64(kAll, index)));
    }
  }

 private:
  std::uint64_t* keys_;
  std::uint32_t* order_;
  __m256i lane_ = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
};

/// Where update()'s key pass puts a step's keys (KeyChanges): each compared with the key its point
/// had, the points' coordinates relative to the frame converted to floats (the scalar pass's
/// double subtraction, then the same rounding), and the count and differing bits gathered until
/// count().
template <int Dim>
class KeyChangeStore {
 public:
  explicit KeyChangeStore(const KeyChanges<Dim>& out) : out_(out) {
    for (int k = 0; k < Dim; ++k) origin_[k] = _mm512_set1_pd(out.origin[k]);
  }
  void operator()(std::size_t i, const Axes<Dim>& axes, __m512i key) {
    _mm512_storeu_si512(out_.keys + i, key);
    const __m512i was = _mm512_loadu_si512(out_.was + i);
    const __mmask8 changed = _mm512_cmpneq_epi64_mask(key, was);
    differing_ = _mm512_or_si512(differing_, _mm512_xor_si512(key, was));
    changed_ += static_cast<std::size_t>(std::popcount(static_cast<unsigned>(changed)));
    // One byte per point: 1 where it changed (vpmovqb of the mask's lanes set to 1).
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out_.changed + i),
                     _mm512_maskz_cvtepi64_epi8(kAll, _mm512_maskz_set1_epi64(changed, 1)));
    for (int k = 0; k < Dim; ++k) {
      _mm256_storeu_ps(out_.relative[k] + i,
                       _mm512_maskz_cvtpd_ps(kAll, _mm512_sub_pd(axes.axis[k], origin_[k])));
    }
  }
  KeyChangeCount count() const {
    std::array<std::uint64_t, 8> lanes;
    _mm512_storeu_si512(lanes.data(), differing_);
    std::uint64_t bits = 0;
    for (const std::uint64_t lane : lanes) bits |= lane;
    return {changed_, bits};
  }

 private:
  KeyChanges<Dim> out_;
  __m512d origin_[Dim];
  __m512i differing_ = _mm512_setzero_si512();
  std::size_t changed_ = 0;
};

/// The key pass over [begin, end) in steps of 8 points, each step's keys handed to `store` as
/// store(i, axes, keys) (KeyStore, KeyChangeStore), the rest left to the caller; the points
/// packed (stride Dim, loaded by PackedAxes) or not (gathered). `input` is the caller's, copied:
/// the stores then cannot alias it, and its fields stay in registers.
template <bool kPacked, bool kColumns, int Dim, class T, class Store>
std::size_t keys_in_steps(const CellKeyInput<Dim, T> input, std::size_t begin, std::size_t end,
                          Store& store) {
  constexpr std::size_t kStep = 8;
  const auto stride = static_cast<int>(input.stride);
  const __m256i offsets =
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(stride));
  const PackedAxes<Dim, T> packed;
  const __m128i shift = _mm_cvtsi32_si128(input.shift);
  const __m512d inv_cell = _mm512_set1_pd(input.inv_cell);
  std::size_t i = begin;
  for (; i + kStep <= end; i += kStep) {
    const T* first = input.data + i * input.stride;
    Axes<Dim> axes;
    if constexpr (kPacked) {
      axes = packed.load(first);
    } else {
      for (int k = 0; k < Dim; ++k) axes.axis[k] = gather_axis(first + k, offsets);
    }
    __m512i key = _mm512_setzero_si512();
    __m512i slab = _mm512_setzero_si512();
    __mmask8 on_lattice = kAll;
    for (int k = 0; k < Dim; ++k) {
      // The same double operations as the scalar pass: (x - origin) * inv_cell, then floor.
      const __m512d x = axes.axis[k];
      const __m512d u = _mm512_mul_pd(_mm512_sub_pd(x, _mm512_set1_pd(input.origin[k])), inv_cell);
      __m512d floor =
          _mm512_maskz_roundscale_pd(kAll, u, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
      if (input.queries) {
        on_lattice &= _mm512_cmp_pd_mask(x, _mm512_set1_pd(input.lower[k]), _CMP_GE_OQ) &
                      _mm512_cmp_pd_mask(x, _mm512_set1_pd(input.upper[k]), _CMP_LE_OQ);
        // max returns its second operand when the first is NaN: NaN becomes 0.
        floor = _mm512_maskz_max_pd(kAll, floor, _mm512_setzero_pd());
        floor = _mm512_maskz_min_pd(kAll, floor, _mm512_set1_pd(input.last_cell[k]));
      }
      if (k == Dim - 1 && input.slab_bits > 0) {
        const __m512d slabs = _mm512_set1_pd(static_cast<double>(1 << input.slab_bits));
        const __m512d scaled = _mm512_maskz_roundscale_pd(
            kAll, _mm512_mul_pd(u, slabs), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        slab = _mm512_maskz_cvtepu32_epi64(
            kAll,
            _mm512_maskz_cvttpd_epu32(kAll, _mm512_sub_pd(scaled, _mm512_mul_pd(floor, slabs))));
      }
      const __m256i cell = _mm256_srl_epi32(_mm512_maskz_cvttpd_epu32(kAll, floor), shift);
      const __m512i wide = _mm512_maskz_cvtepu32_epi64(kAll, cell);
      if constexpr (kColumns) {
        // (x, y) interleaved; z appended below the code after the loop.
        if (k < 2) {
          key = _mm512_or_si512(
              key, _mm512_maskz_sll_epi64(kAll, spread_bits<2>(wide), _mm_cvtsi32_si128(k)));
        } else {
          key = _mm512_or_si512(
              _mm512_maskz_sll_epi64(kAll, key, _mm_cvtsi32_si128(input.column_z_bits)), wide);
        }
      } else {
        const __m512i spread = spread_bits<Dim>(wide);
        key = _mm512_or_si512(key, _mm512_maskz_sll_epi64(kAll, spread, _mm_cvtsi32_si128(k)));
      }
    }
    key = _mm512_or_si512(_mm512_maskz_sll_epi64(kAll, key, _mm_cvtsi32_si128(input.slab_bits)),
                          slab);
    if (input.queries) key = _mm512_maskz_add_epi64(on_lattice, key, _mm512_set1_epi64(1));
    store(i, axes, key);
  }
  return i;
}

}  // namespace

template <int Dim, class T>
void cell_keys_avx512(const CellKeyInput<Dim, T>& input, std::size_t begin, std::size_t end,
                      std::uint64_t* keys, std::uint32_t* order) {
  // Gathers index 32-bit element offsets from the step's first point: fine while 7 strides fit.
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
KeyChangeCount key_changes_avx512(const CellKeyInput<Dim, T>& input, std::size_t begin,
                                  std::size_t end, const KeyChanges<Dim>& out) {
  if (input.stride > (std::size_t{1} << 28)) return key_changes_scalar(input, begin, end, out);
  KeyChangeStore<Dim> store(out);
  return key_changes_in_steps(input, end, out, store, [&](auto packed, auto columns) {
    return keys_in_steps<decltype(packed)::value, decltype(columns)::value>(input, begin, end,
                                                                            store);
  });
}

SPATIALHASH_INSTANTIATE_CELL_KEYS(cell_keys_avx512)
SPATIALHASH_INSTANTIATE_KEY_CHANGES(key_changes_avx512)

}  // namespace spatialhash::detail
