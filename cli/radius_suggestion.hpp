// suggest_radius: the radius at which points have a wanted mean number of neighbors, measured on
// a sample of the points (all of them for up to kSample points, where it is exact).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <optional>
#include <queue>
#include <span>
#include <vector>

#include "bounding_box.hpp"
#include "errors.hpp"
#include "spatialhash/spatialhash.hpp"

namespace spatialhash::cli {

/// The answer of suggest_radius.
struct RadiusSuggestion {
  std::optional<double> radius;  ///< none when no radius reaches the target
  std::size_t sample = 0;        ///< points the mean was measured on
  double mean = 0.0;             ///< mean neighbors of the sample at `radius`
};

/// Smallest radius r with mean neighbors >= `target` over the sample (point j*n/s for j < s):
/// the ceil(target*s)-th smallest sample-to-point distance, rounded up to the first double whose
/// square reaches it, so the neighbor rule (d2 <= r*r) counts it. Each attempt searches with a
/// density guess and doubles it until enough distances are in range; only the smallest ones are
/// kept (a bounded heap), so memory is O(target * s).
template <int Dim, class T>
RadiusSuggestion suggest_radius(std::span<const T> coords, const Box<Dim>& box, double target,
                                Options options) {
  constexpr std::size_t kSample = 1000;
  RadiusSuggestion result;
  const std::size_t n = coords.size() / Dim;
  if (n < 2 || target > static_cast<double>(n - 1)) return result;
  const std::size_t s = std::min(n, kSample);
  result.sample = s;
  const auto need = static_cast<std::size_t>(std::ceil(target * static_cast<double>(s)));
  const auto position = [&](std::size_t j) {
    typename Index<Dim, T>::Position p;
    const std::size_t i = j * n / s;
    for (int k = 0; k < Dim; ++k) p[k] = static_cast<double>(coords[i * Dim + k]);
    return p;
  };

  // First guess: uniform density over the bounding box, mean = n/V * (ball volume).
  double volume = 1.0, largest = 0.0;
  for (int k = 0; k < Dim; ++k) {
    volume *= box.extent(k);
    largest = std::max(largest, box.extent(k));
  }
  const double ball = Dim == 2 ? std::numbers::pi : 4.0 / 3.0 * std::numbers::pi;
  double r = volume > 0.0 ? std::pow(target * volume / (static_cast<double>(n) * ball), 1.0 / Dim)
                          : largest / std::pow(static_cast<double>(n), 1.0 / Dim);
  if (!(r > 0.0) || !std::isfinite(r)) r = largest > 0.0 ? largest : 1.0;
  const double enough = 2.0 * box.diagonal() + std::numeric_limits<double>::min();

  for (int attempt = 0; attempt < 200; ++attempt, r *= 2.0) {
    std::optional<Index<Dim, T>> index;
    try {
      index.emplace(coords, r, options);
    } catch (const InvalidArgument&) {
      continue;  // too fine a lattice for the extent: try a larger radius
    }
    std::priority_queue<double> smallest;  // max-heap of the `need` smallest squared distances
    for (std::size_t j = 0; j < s; ++j) {
      const std::size_t self = j * n / s;
      index->for_each_in_ball_batch(position(j), kIndexRadius, [&](std::span<const Hit> batch) {
        for (const Hit& h : batch) {
          if (h.index == self) continue;
          if (smallest.size() < need) {
            smallest.push(h.distance_squared);
          } else if (h.distance_squared < smallest.top()) {
            smallest.pop();
            smallest.push(h.distance_squared);
          }
        }
      });
    }
    if (smallest.size() < need) {
      if (r > enough) return result;  // every pair was in range: the target is out of reach
      continue;
    }
    const double d2 = smallest.top();
    double radius = std::sqrt(d2);
    while (radius * radius < d2)
      radius = std::nextafter(radius, std::numeric_limits<double>::infinity());
    // The sample's true mean at that radius (ties at the threshold can push it above target).
    std::uint64_t hits = 0;
    if (radius > 0.0) {
      for (std::size_t j = 0; j < s; ++j) {
        const std::size_t self = j * n / s;
        index->for_each_in_ball(position(j), radius, [&](index_t i, double) { hits += i != self; });
      }
    }
    result.radius = radius;
    result.mean = static_cast<double>(hits) / static_cast<double>(s);
    return result;
  }
  return result;
}

}  // namespace spatialhash::cli
