// PeriodicBox: an orthorhombic simulation box with per-axis periodic boundaries, and the one
// wrapping formula every periodic query uses.
#pragma once

#include <array>
#include <type_traits>

namespace spatialhash {

/// An axis-aligned box [lower, upper) whose axes are each periodic or open. On a periodic axis k
/// the edge is L_k = upper[k] - lower[k] and a point at x is the same as one at x + m L_k for
/// every integer m (minimum-image convention); lower and upper must be finite with upper > lower
/// and the index radius below L_k / 2. On an open axis (periodic[k] false) lower and upper are
/// ignored: points may lie anywhere along it, as without a box.
template <int Dim>
struct PeriodicBox {
  static_assert(Dim == 2 || Dim == 3, "spatialhash supports 2D and 3D points");
  std::array<double, Dim> lower{};
  std::array<double, Dim> upper{};
  std::array<bool, Dim> periodic{};
};

/// The periodic image of x in [lower, upper) (requires upper > lower, both finite, x finite):
///   x itself when lower <= x < upper; otherwise w = x - floor((x - lower) / L) * L with
///   L = upper - lower, each operation rounded to double, and `lower` instead if rounding left
///   w outside [lower, upper) (x is then within rounding of a seam, where upper is lower).
/// The result always lies in [lower, upper) and differs from an exact image of x by at most a
/// few rounding errors of |x|. Indexes wrap with exactly this function.
double wrap_coordinate(double x, double lower, double upper);

/// Applies wrap_coordinate on every periodic axis of `box`; open axes are returned unchanged.
/// (Dim is deduced from the box only, so a braced point works: wrap_into(box, {x, y}).)
template <int Dim>
std::array<double, Dim> wrap_into(const PeriodicBox<Dim>& box,
                                  const std::type_identity_t<std::array<double, Dim>>& x);

}  // namespace spatialhash
