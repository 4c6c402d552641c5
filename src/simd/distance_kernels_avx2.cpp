// The AVX2 distance kernel (see distance_kernels.hpp): 4 neighbors per step. This file alone is
// compiled with -mavx2 -mfma (no multiply-add is formed: the library is compiled with
// -ffp-contract=off); best_row_distances() calls it only on processors that report both.
#include <immintrin.h>

#include "distance_kernels.hpp"

namespace spatialhash::detail {
namespace {

constexpr std::uint32_t kLanes = 4;

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

/// The distances from `from` to the 4 points of `lane`, lane j in lane j (a 4 x 4 transpose).
template <int Dim, class T>
inline __m256d distances_of(const PointsView<Dim, T>& points, const __m256d (&from)[Dim],
                            const index_t* lane) {
  const auto point = [&](int j) {
    return load_point<Dim>(points.data + std::size_t{lane[j]} * points.stride);
  };
  const __m256d p0 = point(0), p1 = point(1), p2 = point(2), p3 = point(3);
  // {x0, x1, z0, z1}, {y0, y1, w0, w1}, and the same for points 2 and 3.
  const __m256d low01 = _mm256_unpacklo_pd(p0, p1), high01 = _mm256_unpackhi_pd(p0, p1);
  const __m256d low23 = _mm256_unpacklo_pd(p2, p3), high23 = _mm256_unpackhi_pd(p2, p3);
  __m256d axis[3];
  axis[0] = _mm256_permute2f128_pd(low01, low23, 0x20);    // low halves: x
  axis[1] = _mm256_permute2f128_pd(high01, high23, 0x20);  // y
  axis[2] = _mm256_permute2f128_pd(low01, low23, 0x31);    // high halves: z (3D)
  // The neighbor rule's operations in its order (exact.hpp): sum of squares axis by axis.
  __m256d sum = _mm256_setzero_pd();
  for (int k = 0; k < Dim; ++k) {
    const __m256d difference = _mm256_sub_pd(axis[k], from[k]);
    sum = _mm256_add_pd(sum, _mm256_mul_pd(difference, difference));
  }
  return _mm256_sqrt_pd(sum);
}

}  // namespace

template <int Dim, class T>
void row_distances_avx2(const PointsView<Dim, T>& points, const std::array<double, Dim>& from,
                        const index_t* ids, std::uint32_t length, double* distances) {
  // Rows shorter than a vector: AMD microcodes masked stores.
  if (length < kLanes) {
    row_distances_scalar<Dim, T>(points, from, ids, length, distances);
    return;
  }
  __m256d from_lanes[Dim];
  for (int k = 0; k < Dim; ++k) from_lanes[k] = _mm256_set1_pd(from[static_cast<std::size_t>(k)]);
  // 3D loads read past the last point's coordinates: vectors holding it go to the scalar kernel.
  const __m128i last_lanes = _mm_set1_epi32(static_cast<int>(points.count - 1));
  const auto measure = [&](std::uint32_t at) {
    if constexpr (Dim == 3) {
      const __m128i lane_ids = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ids + at));
      if (_mm_movemask_epi8(_mm_cmpeq_epi32(lane_ids, last_lanes)) != 0) {
        row_distances_scalar<Dim, T>(points, from, ids + at, kLanes, distances + at);
        return;
      }
    }
    _mm256_storeu_pd(distances + at, distances_of<Dim, T>(points, from_lanes, ids + at));
  };
  std::uint32_t at = 0;
  for (; at + kLanes <= length; at += kLanes) measure(at);
  // The last partial vector overlaps the one before: the same values written again.
  if (at < length) measure(length - kLanes);
}

SPATIALHASH_INSTANTIATE_ROW_DISTANCES(row_distances_avx2)

}  // namespace spatialhash::detail
