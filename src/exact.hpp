// The neighbor rule, in one place. Every engine decides membership with these functions (or, on
// a fast path, re-decides borderline candidates with them), so all engines agree bit for bit.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>

#include "spatialhash/points.hpp"

namespace spatialhash::detail {

/// Squared distance in double precision, summed x, then y, then z, no fused multiply-add (the
/// library is compiled with -ffp-contract=off). This is the definition of "distance".
template <int Dim, class T>
inline double distance_squared(const PointsView<Dim, T>& points, std::size_t i, std::size_t j) {
  double sum = 0.0;
  for (int k = 0; k < Dim; ++k) {
    const double d = points.coord(i, k) - points.coord(j, k);
    sum += d * d;
  }
  return sum;
}

template <int Dim, class T>
inline double distance_squared(const PointsView<Dim, T>& points, std::size_t i,
                               const std::type_identity_t<std::array<double, Dim>>& position) {
  double sum = 0.0;
  for (int k = 0; k < Dim; ++k) {
    const double d = points.coord(i, k) - position[k];
    sum += d * d;
  }
  return sum;
}

}  // namespace spatialhash::detail
