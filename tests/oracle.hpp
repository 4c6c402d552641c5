// The independent oracle: double-precision brute force, written without any library code.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace oracle {

/// Squared distance of two points given as double arrays, summed x, y, z in that order.
template <int Dim>
double distance_squared(const double* a, const double* b) {
  double sum = 0.0;
  for (int k = 0; k < Dim; ++k) {
    const double d = a[k] - b[k];
    sum += d * d;
  }
  return sum;
}

/// Coordinates widened to double, interleaved.
template <class T>
std::vector<double> widen(const std::vector<T>& coords) {
  return std::vector<double>(coords.begin(), coords.end());
}

/// All pairs (i < j) with d2 <= r*r, lexicographically sorted: every one of the n(n-1)/2
/// comparisons. The reference for pairs() below.
template <int Dim>
std::vector<std::pair<std::size_t, std::size_t>> all_pairs(const std::vector<double>& xyz,
                                                           double r) {
  const std::size_t n = xyz.size() / Dim;
  std::vector<std::pair<std::size_t, std::size_t>> result;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      if (distance_squared<Dim>(&xyz[i * Dim], &xyz[j * Dim]) <= r * r) result.emplace_back(i, j);
    }
  }
  return result;
}

/// The same pairs as all_pairs(), with the comparisons that cannot pass skipped: points taken in
/// ascending order of their coordinate c on the axis of widest extent, each compared with the
/// next ones until fl((c_j - c_i)^2) > fl(r*r). That stop is exact, not a tolerance:
/// distance_squared adds non-negative rounded terms and rounding is monotone, so its sum is at
/// least each term, and the term of that axis only grows with c_j. Sets with a non-finite
/// coordinate (no order to sweep) get all_pairs().
template <int Dim>
std::vector<std::pair<std::size_t, std::size_t>> pairs(const std::vector<double>& xyz, double r) {
  const std::size_t n = xyz.size() / Dim;
  if (!std::all_of(xyz.begin(), xyz.end(), [](double x) { return std::isfinite(x); })) {
    return all_pairs<Dim>(xyz, r);
  }
  int axis = 0;
  double widest = -1.0;
  for (int k = 0; k < Dim && n > 0; ++k) {
    double lo = xyz[k], hi = xyz[k];
    for (std::size_t i = 0; i < n; ++i) {
      lo = std::min(lo, xyz[i * Dim + k]);
      hi = std::max(hi, xyz[i * Dim + k]);
    }
    if (hi - lo > widest) widest = hi - lo, axis = k;
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return xyz[a * Dim + axis] < xyz[b * Dim + axis];
  });
  std::vector<std::pair<std::size_t, std::size_t>> result;
  for (std::size_t s = 0; s < n; ++s) {
    const std::size_t i = order[s];
    for (std::size_t t = s + 1; t < n; ++t) {
      const std::size_t j = order[t];
      const double along = xyz[j * Dim + axis] - xyz[i * Dim + axis];
      if (along * along > r * r) break;
      const std::size_t lo = std::min(i, j), hi = std::max(i, j);
      if (distance_squared<Dim>(&xyz[lo * Dim], &xyz[hi * Dim]) <= r * r)
        result.emplace_back(lo, hi);
    }
  }
  std::sort(result.begin(), result.end());
  return result;
}

/// Sorted full neighbor list of every one of n points, from their pairs (i < j).
inline std::vector<std::vector<std::size_t>> lists_of_pairs(
    std::size_t n, const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  std::vector<std::vector<std::size_t>> result(n);
  for (auto [i, j] : pairs) {
    result[i].push_back(j);
    result[j].push_back(i);
  }
  for (auto& row : result) std::sort(row.begin(), row.end());
  return result;
}

/// Sorted full neighbor list of every point.
template <int Dim>
std::vector<std::vector<std::size_t>> lists(const std::vector<double>& xyz, double r) {
  return lists_of_pairs(xyz.size() / Dim, pairs<Dim>(xyz, r));
}

/// Sorted indices of the points within r of `center`.
template <int Dim>
std::vector<std::size_t> ball(const std::vector<double>& xyz, const std::array<double, Dim>& center,
                              double r) {
  std::vector<std::size_t> result;
  for (std::size_t i = 0; i < xyz.size() / Dim; ++i) {
    if (distance_squared<Dim>(&xyz[i * Dim], center.data()) <= r * r) result.push_back(i);
  }
  return result;
}

}  // namespace oracle
