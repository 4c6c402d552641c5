// The independent oracle: double-precision brute force, written without any library code.
#pragma once

#include <algorithm>
#include <array>
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

/// All pairs (i < j) with d2 <= r*r, lexicographically sorted.
template <int Dim>
std::vector<std::pair<std::size_t, std::size_t>> pairs(const std::vector<double>& xyz, double r) {
  const std::size_t n = xyz.size() / Dim;
  std::vector<std::pair<std::size_t, std::size_t>> result;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      if (distance_squared<Dim>(&xyz[i * Dim], &xyz[j * Dim]) <= r * r) result.emplace_back(i, j);
    }
  }
  return result;
}

/// Sorted full neighbor list of every point.
template <int Dim>
std::vector<std::vector<std::size_t>> lists(const std::vector<double>& xyz, double r) {
  const std::size_t n = xyz.size() / Dim;
  std::vector<std::vector<std::size_t>> result(n);
  for (auto [i, j] : pairs<Dim>(xyz, r)) {
    result[i].push_back(j);
    result[j].push_back(i);
  }
  for (auto& row : result) std::sort(row.begin(), row.end());
  return result;
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
