// Bounding box of a point set and the cell lattice statistics reported by `stats`.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace spatialhash::cli {

/// Lower and upper corner of the points, per axis (zero for no points).
template <int Dim>
struct Box {
  std::array<double, Dim> lower{};
  std::array<double, Dim> upper{};
  double extent(int k) const { return upper[k] - lower[k]; }
  double diagonal() const {
    double sum = 0.0;
    for (int k = 0; k < Dim; ++k) sum += extent(k) * extent(k);
    return std::sqrt(sum);
  }
};

template <int Dim, class T>
Box<Dim> bounding_box(std::span<const T> coords) {
  Box<Dim> box;
  const std::size_t n = coords.size() / Dim;
  if (n == 0) return box;
  box.lower.fill(std::numeric_limits<double>::infinity());
  box.upper.fill(-std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) {
      const double x = coords[i * Dim + k];
      box.lower[k] = std::min(box.lower[k], x);
      box.upper[k] = std::max(box.upper[k], x);
    }
  }
  return box;
}

/// Occupancy of the lattice the library searches: cubic cells of edge r(1 + 2^-18) anchored at
/// the lower corner of the bounding box (see the design notes in spatialhash.hpp).
struct CellStats {
  double edge = 0.0;
  double total = 0.0;      ///< cells of the lattice over the bounding box
  std::uint64_t used = 0;  ///< cells holding at least one point
};

template <int Dim, class T>
CellStats cell_stats(std::span<const T> coords, const Box<Dim>& box, double radius) {
  CellStats stats;
  stats.edge = radius * (1.0 + 0x1p-18);
  const double inv_cell = 1.0 / stats.edge;  // the library's arithmetic, so cells match its own
  const std::size_t n = coords.size() / Dim;
  std::array<std::uint64_t, Dim> dims{};
  stats.total = 1.0;
  for (int k = 0; k < Dim; ++k) {
    const double cells = std::floor(box.extent(k) * inv_cell) + 1.0;
    stats.total *= cells;
    dims[k] = cells < 0x1p62 ? static_cast<std::uint64_t>(cells) : 0;
  }
  const auto cell = [&](std::size_t i, int k) {
    return static_cast<std::int64_t>(std::floor((coords[i * Dim + k] - box.lower[k]) * inv_cell));
  };
  if (stats.total < 0x1p63) {
    // Row-major cell number, one 64-bit key per point.
    std::vector<std::uint64_t> keys(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t key = 0;
      for (int k = 0; k < Dim; ++k) key = key * dims[k] + static_cast<std::uint64_t>(cell(i, k));
      keys[i] = key;
    }
    std::sort(keys.begin(), keys.end());
    stats.used = static_cast<std::uint64_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
  } else {
    std::vector<std::array<std::int64_t, Dim>> keys(n);
    for (std::size_t i = 0; i < n; ++i) {
      for (int k = 0; k < Dim; ++k) keys[i][k] = cell(i, k);
    }
    std::sort(keys.begin(), keys.end());
    stats.used = static_cast<std::uint64_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
  }
  return stats;
}

}  // namespace spatialhash::cli
