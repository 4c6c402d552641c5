// GridGeometry: the cell lattice every grid engine shares, and the arithmetic that keeps it exact.
//
// Invariant (the reason no pair is ever lost at a cell border): if two points differ by at most r
// along an axis, their computed cell coordinates along that axis differ by at most 1.
// Cell coordinates are u = floor((x - origin) * inv_cell) in double. Each of the three roundings
// (subtraction, reciprocal, product) is monotone and has relative error <= 2^-53, so for |u| < 2^31
// the computed u is within 3 * 2^-22 of the exact value, and two of them within 2^-19.4 of the
// exact difference. The cell edge is r * (1 + 2^-18), so two points within r have an exact
// difference <= 1 - 2^-18 + 2^-36, computed difference < 1, and floors at most 1 apart.
// The lattice therefore refuses more than 2^30 cells along an axis, and positions more than one
// cell outside the bounding box are never converted (they cannot have neighbors).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "spatialhash/points.hpp"

namespace spatialhash::detail {

/// Cell coordinates along each axis, relative to the lattice origin.
template <int Dim>
using Cell = std::array<std::int64_t, Dim>;

/// Whether two arrays of coordinates are equal, compared element by element: GCC 12 makes
/// std::array's operator== a call to memcmp, once per query in the cross search.
template <class Int, std::size_t Dim>
constexpr bool same_coords(const std::array<Int, Dim>& a, const std::array<Int, Dim>& b) {
  Int differ = 0;
  for (std::size_t k = 0; k < Dim; ++k) differ |= a[k] ^ b[k];
  return differ == 0;
}

/// Number of cells of the stencil of reach `reach` around a cell: (2 reach + 1)^Dim.
template <int Dim>
constexpr int stencil_size(int reach) {
  return Dim == 2 ? (2 * reach + 1) * (2 * reach + 1)
                  : (2 * reach + 1) * (2 * reach + 1) * (2 * reach + 1);
}

/// Offset of stencil cell t (0 <= t < stencil_size(reach)) from the center cell, x fastest;
/// every component in [-reach, reach], the center cell included.
template <int Dim>
constexpr Cell<Dim> stencil_offset(int t, int reach) {
  const int width = 2 * reach + 1;
  Cell<Dim> offset{};
  for (int k = 0; k < Dim; ++k, t /= width) offset[k] = t % width - reach;
  return offset;
}

template <int Dim>
struct GridGeometry {
  static constexpr double kCellMargin = 1.0 + 0x1p-18;
  static constexpr std::int64_t kMaxCellsPerAxis = std::int64_t{1} << 30;

  std::array<double, Dim> lower{};  ///< bounding box of the points
  std::array<double, Dim> upper{};
  std::array<double, Dim> origin{};  ///< lattice origin: cell 0 starts here (lower at build)
  double cell_size = 1.0;            ///< r / reach * kCellMargin
  /// Stencil half-width: points within r lie at most `reach` cells apart along each axis (the
  /// argument above, with cells of edge r / reach).
  int reach = 1;
  double inv_cell = 1.0;
  Cell<Dim> dims{};  ///< cells along each axis covering the bounding box

  /// Lattice of cells of edge (radius / reach) * kCellMargin covering the bounding box.
  /// Throws InvalidArgument if an axis would need more than kMaxCellsPerAxis cells.
  static GridGeometry make(const std::array<double, Dim>& lower,
                           const std::array<double, Dim>& upper, double radius, int reach = 1);

  /// Floor by truncation and a correction: the same value as std::floor for |u| < 2^63, without
  /// a libm call on baseline x86-64 (so the per-point key loops vectorize).
  std::int64_t cell_along(double x, int axis) const {
    const double u = (x - origin[axis]) * inv_cell;
    const auto t = static_cast<std::int64_t>(u);
    return t - static_cast<std::int64_t>(static_cast<double>(t) > u);
  }
  /// The same lattice over a new bounding box (points moved), if the box stays within
  /// kMaxCellsPerAxis cells of the origin so the invariant above still holds.
  bool rebound(const std::array<double, Dim>& new_lower, const std::array<double, Dim>& new_upper) {
    for (int k = 0; k < Dim; ++k) {
      const double limit = static_cast<double>(kMaxCellsPerAxis) - 2.0;
      if (!((new_upper[k] - origin[k]) * inv_cell < limit) ||
          !((origin[k] - new_lower[k]) * inv_cell < limit)) {
        return false;
      }
    }
    lower = new_lower;
    upper = new_upper;
    return true;
  }
  template <class T>
  Cell<Dim> cell_of(const PointsView<Dim, T>& points, std::size_t i) const {
    Cell<Dim> c;
    for (int k = 0; k < Dim; ++k) c[k] = cell_along(points.coord(i, k), k);
    return c;
  }
  /// False when `position` is farther than `reach` cell edges outside the bounding box along some
  /// axis: then nothing indexed is within r of it. Otherwise writes its cell to `cell`.
  bool cell_of_position(const std::array<double, Dim>& position, Cell<Dim>& cell) const {
    for (int k = 0; k < Dim; ++k) {
      const double margin = reach * cell_size;
      if (!(position[k] >= lower[k] - margin && position[k] <= upper[k] + margin)) {
        return false;
      }
      cell[k] = cell_along(position[k], k);
    }
    return true;
  }
  /// Total number of cells of the bounding-box lattice, as a double (it may exceed 2^64).
  double total_cells() const {
    double total = 1.0;
    for (int k = 0; k < Dim; ++k) total *= static_cast<double>(dims[k]);
    return total;
  }
};

}  // namespace spatialhash::detail
