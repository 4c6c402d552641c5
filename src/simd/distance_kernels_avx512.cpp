// The AVX-512 distance kernel (see distance_kernels.hpp): 8 neighbors per step. This file alone
// is compiled with -mavx512f; best_row_distances() calls it only on processors that report
// AVX-512F.
#include <immintrin.h>

#include <algorithm>

#include "distance_kernels.hpp"

namespace spatialhash::detail {
namespace {

constexpr std::uint32_t kLanes = 8;

// The zero-masked forms throughout: GCC 12's unmasked ones start from an undefined register,
// which -Wmaybe-uninitialized reports.
constexpr __mmask8 kAll = 0xFF;

/// The coordinates of the point at `p` as doubles in lanes 0 .. Dim-1 (a 3D point's load reads
/// one element past them: see distance_kernels.hpp).
template <int Dim, class T>
inline __m256d load_point(const T* p) {
  if constexpr (Dim == 2 && sizeof(T) == sizeof(float)) {
    return _mm256_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  } else if constexpr (Dim == 2) {
    return _mm256_zextpd128_pd256(_mm_loadu_pd(p));
  } else if constexpr (sizeof(T) == sizeof(float)) {
    return _mm256_cvtps_pd(_mm_loadu_ps(p));
  } else {
    return _mm256_loadu_pd(p);
  }
}

/// Points `first` and `second` in the low and high halves.
template <int Dim, class T>
inline __m512d load_two(const PointsView<Dim, T>& points, index_t first, index_t second) {
  const __m256d low = load_point<Dim>(points.data + std::size_t{first} * points.stride);
  const __m256d high = load_point<Dim>(points.data + std::size_t{second} * points.stride);
  return _mm512_maskz_insertf64x4(kAll, _mm512_castpd256_pd512(low), high, 1);
}

/// The distances from `from` to the 8 points of `lane`, lane j in lane j: the points are loaded
/// in pairs (0, 2), (1, 3), (4, 6), (5, 7), so that unpacking pairs of those vectors and then
/// picking 128-bit blocks leaves each axis in lane order.
template <int Dim, class T>
inline __m512d distances_of(const PointsView<Dim, T>& points, const __m512d (&from)[Dim],
                            const index_t* lane) {
  const __m512d a = load_two(points, lane[0], lane[2]);
  const __m512d b = load_two(points, lane[1], lane[3]);
  const __m512d c = load_two(points, lane[4], lane[6]);
  const __m512d d = load_two(points, lane[5], lane[7]);
  // Per 128-bit block: {x, x} or {z, z} of two points (low), {y, y} or {w, w} (high).
  const __m512d low_ab = _mm512_maskz_unpacklo_pd(kAll, a, b),
                low_cd = _mm512_maskz_unpacklo_pd(kAll, c, d);
  const __m512d high_ab = _mm512_maskz_unpackhi_pd(kAll, a, b),
                high_cd = _mm512_maskz_unpackhi_pd(kAll, c, d);
  __m512d axis[3];
  axis[0] = _mm512_maskz_shuffle_f64x2(kAll, low_ab, low_cd, 0x88);  // blocks 0, 2 of each: x
  axis[1] = _mm512_maskz_shuffle_f64x2(kAll, high_ab, high_cd, 0x88);
  axis[2] = _mm512_maskz_shuffle_f64x2(kAll, low_ab, low_cd, 0xDD);  // blocks 1, 3: z (3D)
  // The neighbor rule's operations in its order (exact.hpp): sum of squares axis by axis.
  __m512d sum = _mm512_setzero_pd();
  for (int k = 0; k < Dim; ++k) {
    const __m512d difference = _mm512_sub_pd(axis[k], from[k]);
    sum = _mm512_add_pd(sum, _mm512_mul_pd(difference, difference));
  }
  return _mm512_maskz_sqrt_pd(kAll, sum);
}

}  // namespace

template <int Dim, class T>
void row_distances_avx512(const PointsView<Dim, T>& points, const std::array<double, Dim>& from,
                          const index_t* ids, std::uint32_t length, double* distances) {
  __m512d from_lanes[Dim];
  for (int k = 0; k < Dim; ++k) from_lanes[k] = _mm512_set1_pd(from[static_cast<std::size_t>(k)]);
  // 3D loads read past the last point's coordinates: vectors holding it go to the scalar kernel.
  const index_t last = static_cast<index_t>(points.count - 1);
  if (length < kLanes) {
    if (length == 0) return;
    if constexpr (Dim == 3) {
      if (std::find(ids, ids + length, last) != ids + length) {
        row_distances_scalar<Dim, T>(points, from, ids, length, distances);
        return;
      }
    }
    // The row's last neighbor repeated in the unused lanes, which the store leaves out.
    std::array<index_t, kLanes> lane;
    for (std::uint32_t j = 0; j < kLanes; ++j) lane[j] = ids[std::min(j, length - 1)];
    _mm512_mask_storeu_pd(distances, static_cast<__mmask8>((1u << length) - 1),
                          distances_of<Dim, T>(points, from_lanes, lane.data()));
    return;
  }
  const __m512i last_lanes = _mm512_set1_epi32(static_cast<int>(last));
  const auto measure = [&](std::uint32_t at) {
    if constexpr (Dim == 3) {
      const __m512i lane_ids = _mm512_maskz_loadu_epi32(0xFF, ids + at);  // lanes 0-7
      if (_mm512_mask_cmpeq_epi32_mask(0xFF, lane_ids, last_lanes) != 0) {
        row_distances_scalar<Dim, T>(points, from, ids + at, kLanes, distances + at);
        return;
      }
    }
    _mm512_storeu_pd(distances + at, distances_of<Dim, T>(points, from_lanes, ids + at));
  };
  std::uint32_t at = 0;
  for (; at + kLanes <= length; at += kLanes) measure(at);
  // The last partial vector overlaps the one before: the same values written again.
  if (at < length) measure(length - kLanes);
}

SPATIALHASH_INSTANTIATE_ROW_DISTANCES(row_distances_avx512)

}  // namespace spatialhash::detail
