// The periodic oracle: brute force over explicit images, in double, written without library code.
// It takes points already wrapped into the box (tests wrap with spatialhash::wrap_into, which
// test_periodic.cpp checks on its own against an independent formula).
#pragma once

#include <algorithm>
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

namespace periodic_oracle {

/// An orthorhombic box: edge L[k] on periodic axes (periodic[k]), open elsewhere.
template <int Dim>
struct Box {
  std::array<double, Dim> edge{};
  std::array<bool, Dim> periodic{};
};

/// Every image shift to try: components in {-1, 0, 1} on periodic axes, 0 on open ones.
template <int Dim>
std::vector<std::array<int, 3>> shifts(const Box<Dim>& box) {
  std::vector<std::array<int, 3>> result;
  const int span[3] = {box.periodic[0] ? 1 : 0, box.periodic[1] ? 1 : 0,
                       Dim == 3 && box.periodic[Dim - 1] ? 1 : 0};
  for (int a = -span[0]; a <= span[0]; ++a)
    for (int b = -span[1]; b <= span[1]; ++b)
      for (int c = -span[2]; c <= span[2]; ++c) result.push_back({a, b, c});
  return result;
}

/// Squared distance between p and q + s * L, each image coordinate rounded to double first.
template <int Dim>
double image_distance_squared(const double* p, const double* q, const std::array<int, 3>& s,
                              const Box<Dim>& box) {
  double sum = 0.0;
  for (int k = 0; k < Dim; ++k) {
    const double image = q[k] + s[k] * box.edge[k];
    const double d = p[k] - image;
    sum += d * d;
  }
  return sum;
}

/// A pair i < j with the shift of j's image and the squared distance.
struct PairImage {
  std::size_t first, second;
  std::array<int, 3> shift;
  double distance_squared;
  friend auto operator<=>(const PairImage&, const PairImage&) = default;
};

/// Every pair i < j with an image of j within r of i, sorted. `ambiguous` counts pairs with more
/// than one such image (must stay 0 when r < L / 2).
template <int Dim>
std::vector<PairImage> pairs(const std::vector<double>& wrapped, const Box<Dim>& box, double r,
                             std::size_t* ambiguous = nullptr) {
  const std::size_t n = wrapped.size() / Dim;
  const auto all = shifts(box);
  std::vector<PairImage> result;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      int found = 0;
      for (const auto& s : all) {
        const double d2 = image_distance_squared<Dim>(&wrapped[i * Dim], &wrapped[j * Dim], s, box);
        if (d2 <= r * r) {
          if (found++ == 0) result.push_back({i, j, s, d2});
        }
      }
      if (found > 1 && ambiguous) ++*ambiguous;
    }
  }
  std::sort(result.begin(), result.end());
  return result;
}

/// Sorted full neighbor lists.
template <int Dim>
std::vector<std::vector<std::size_t>> lists(const std::vector<double>& wrapped, const Box<Dim>& box,
                                            double r) {
  std::vector<std::vector<std::size_t>> result(wrapped.size() / Dim);
  for (const PairImage& p : pairs<Dim>(wrapped, box, r)) {
    result[p.first].push_back(p.second);
    result[p.second].push_back(p.first);
  }
  for (auto& row : result) std::sort(row.begin(), row.end());
  return result;
}

/// Sorted indices j with an image within r of the (wrapped) center.
template <int Dim>
std::vector<std::size_t> ball(const std::vector<double>& wrapped, const Box<Dim>& box,
                              const std::array<double, Dim>& center, double r) {
  std::vector<std::size_t> result;
  const auto all = shifts(box);
  for (std::size_t j = 0; j < wrapped.size() / Dim; ++j) {
    for (const auto& s : all) {
      if (image_distance_squared<Dim>(center.data(), &wrapped[j * Dim], s, box) <= r * r) {
        result.push_back(j);
        break;
      }
    }
  }
  return result;
}

}  // namespace periodic_oracle
