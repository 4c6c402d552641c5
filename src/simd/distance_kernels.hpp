// Distance kernels: the distances of one neighbor row (the with_distances option of the list,
// cross and pair queries), distances[k] = the distance from a point to its neighbor ids[k], in
// double, as the neighbor rule defines it (exact.hpp: each coordinate widened to double, the
// differences squared and summed axis by axis, then a correctly rounded square root), so that every
// kernel returns the same doubles as the scalar one.
//
// The square root is what makes a distance slow, and the vector kernels take 8 (AVX-512) or 4
// (AVX2) at a time: on a Zen 5, `sqrtpd` takes 1.17 ns per root on 2 lanes, `vsqrtpd` 0.30 ns
// on 8. Each neighbor's coordinates are one unaligned load, widened to a vector of doubles; the
// vectors of 8 (or 4) neighbors are then transposed in registers into one vector per axis.
// Gathers were slower on that core (0.36-0.78 ns per element). `bench/row_distances`, same core:
// AVX-512 1.6-2.9x the scalar kernel on W1's and W3's rows (docs/benchmarks.md). A row's
// last partial vector overlaps the one before it (the same values written twice) or, in rows
// shorter than a vector, repeats the row's last neighbor in the unused lanes (AVX-512, with a
// masked store) or goes to the scalar kernel (AVX2: AMD microcodes masked stores).
//
// A 3D neighbor's load reads one element past its coordinates: beyond the caller's array for the
// last point of the view alone, so a vector of neighbors that holds that point is measured by the
// scalar kernel instead.
#pragma once

#include <array>
#include <cstdint>

#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// distances[k] = the distance between `from` and point ids[k] of `points`, for k < length
/// (ids < points.count).
template <int Dim, class T>
using RowDistancesFn = void (*)(const PointsView<Dim, T>& points,
                                const std::array<double, Dim>& from, const index_t* ids,
                                std::uint32_t length, double* distances);

template <int Dim, class T>
void row_distances_scalar(const PointsView<Dim, T>& points, const std::array<double, Dim>& from,
                          const index_t* ids, std::uint32_t length, double* distances);
template <int Dim, class T>
void row_distances_avx2(const PointsView<Dim, T>& points, const std::array<double, Dim>& from,
                        const index_t* ids, std::uint32_t length, double* distances);
template <int Dim, class T>
void row_distances_avx512(const PointsView<Dim, T>& points, const std::array<double, Dim>& from,
                          const index_t* ids, std::uint32_t length, double* distances);

/// The fastest distance kernel this build and processor run, at or below `limit`.
template <int Dim, class T>
RowDistancesFn<Dim, T> best_row_distances(Simd limit = Simd::automatic);

/// Instantiates the distance kernel `kernel` (row_distances_scalar, _avx2, _avx512) for every
/// dimension and coordinate type, each in the file that defines it.
#define SPATIALHASH_INSTANTIATE_ROW_DISTANCES(kernel)                                         \
  template void kernel<2, float>(const PointsView<2, float>&, const std::array<double, 2>&,   \
                                 const index_t*, std::uint32_t, double*);                     \
  template void kernel<2, double>(const PointsView<2, double>&, const std::array<double, 2>&, \
                                  const index_t*, std::uint32_t, double*);                    \
  template void kernel<3, float>(const PointsView<3, float>&, const std::array<double, 3>&,   \
                                 const index_t*, std::uint32_t, double*);                     \
  template void kernel<3, double>(const PointsView<3, double>&, const std::array<double, 3>&, \
                                  const index_t*, std::uint32_t, double*);

}  // namespace spatialhash::detail
