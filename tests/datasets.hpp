// Deterministic test point sets, generated in double. Each is meant to stress one thing.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace datasets {

struct Dataset {
  std::string name;
  std::vector<double> xyz;  ///< interleaved, Dim values per point
  double radius;
};

inline std::mt19937_64 rng(std::uint64_t seed) {
  return std::mt19937_64(seed * 0x9E3779B97F4A7C15ull + 1);
}

template <int Dim>
Dataset uniform(std::size_t n, double box, double radius, std::uint64_t seed) {
  auto g = rng(seed);
  std::uniform_real_distribution<double> u(0.0, box);
  Dataset d{"uniform", {}, radius};
  for (std::size_t i = 0; i < n * Dim; ++i) d.xyz.push_back(u(g));
  return d;
}

template <int Dim>
Dataset clustered(std::size_t n, double radius, std::uint64_t seed) {
  auto g = rng(seed);
  std::uniform_real_distribution<double> center(-20.0, 20.0);
  std::uniform_real_distribution<double> width(0.2, 2.0);
  Dataset d{"clustered", {}, radius};
  const int blobs = 8;
  std::vector<double> centers, widths;
  for (int b = 0; b < blobs; ++b) {
    for (int k = 0; k < Dim; ++k) centers.push_back(center(g));
    widths.push_back(width(g));
  }
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    const int b = static_cast<int>(i % blobs);
    for (int k = 0; k < Dim; ++k) d.xyz.push_back(centers[b * Dim + k] + widths[b] * normal(g));
  }
  return d;
}

/// Lattice of `side`^Dim points with the given spacing, optionally jittered by +-jitter.
template <int Dim>
Dataset lattice(int side, double spacing, double jitter, double radius, std::uint64_t seed,
                double offset = 0.0) {
  auto g = rng(seed);
  std::uniform_real_distribution<double> u(-jitter, jitter);
  Dataset d{jitter > 0 ? "jittered_lattice" : "exact_lattice", {}, radius};
  const int sz = Dim == 3 ? side : 1;
  for (int z = 0; z < sz; ++z)
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x) {
        const int idx[3] = {x, y, z};
        for (int k = 0; k < Dim; ++k) {
          d.xyz.push_back(offset + idx[k] * spacing + (jitter > 0 ? u(g) : 0.0));
        }
      }
  return d;
}

/// Many points at a few identical positions.
template <int Dim>
Dataset duplicates(std::size_t n, double radius, std::uint64_t seed) {
  auto g = rng(seed);
  std::uniform_int_distribution<int> pick(0, 4);
  Dataset d{"duplicates", {}, radius};
  for (std::size_t i = 0; i < n; ++i) {
    const int p = pick(g);
    for (int k = 0; k < Dim; ++k) d.xyz.push_back(p * 0.75 * radius + k * 0.1);
  }
  return d;
}

template <int Dim>
Dataset one_cell(std::size_t n, double radius, std::uint64_t seed) {
  Dataset d = uniform<Dim>(n, radius * 0.5, radius, seed);
  d.name = "one_cell";
  return d;
}

template <int Dim>
Dataset collinear(std::size_t n, double radius, std::uint64_t seed) {
  auto g = rng(seed);
  std::uniform_real_distribution<double> u(0.0, 50.0);
  Dataset d{"collinear", {}, radius};
  for (std::size_t i = 0; i < n; ++i) {
    const double t = u(g);
    for (int k = 0; k < Dim; ++k) d.xyz.push_back(t * (k + 1) - 3.0);
  }
  return d;
}

/// Appends pair number `pair` of a near-radius set: p (rounded to T) and p + length u (rounded to
/// T), u a random unit vector, or the unit vector along one axis for every third pair (exactly
/// axis-aligned pairs).
template <int Dim, class T>
void add_pair_at_distance(Dataset& d, const std::array<double, Dim>& at, double length, int pair,
                          std::mt19937_64& g) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::array<double, Dim> p, dir;
  double norm = 0;
  for (int k = 0; k < Dim; ++k) {
    p[k] = static_cast<T>(at[k]);
    dir[k] = pair % 3 == 0 ? (k == pair / 3 % Dim) : normal(g);
    norm += dir[k] * dir[k];
  }
  for (int k = 0; k < Dim; ++k) d.xyz.push_back(p[k]);
  for (int k = 0; k < Dim; ++k) {
    d.xyz.push_back(static_cast<T>(p[k] + length * dir[k] / std::sqrt(norm)));
  }
}

/// A 3D set lying in the plane z = 7 (a 2D set embedded in 3D); in 2D a line.
template <int Dim>
Dataset flat(std::size_t n, double radius, std::uint64_t seed) {
  auto g = rng(seed);
  std::uniform_real_distribution<double> u(0.0, 10.0);
  Dataset d{"flat", {}, radius};
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim - 1; ++k) d.xyz.push_back(u(g));
    d.xyz.push_back(7.0);
  }
  return d;
}

/// A survey-scan-like set far from the origin: x ~ 596,700 with a 2 m radius.
template <int Dim>
Dataset large_offset(std::size_t n, std::uint64_t seed) {
  auto g = rng(seed);
  std::uniform_real_distribution<double> u(0.0, 40.0);
  Dataset d{"large_offset", {}, 2.0};
  const double base[3] = {596700.0, 5225000.0, 310.0};
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) d.xyz.push_back(base[k] + u(g));
  }
  return d;
}

/// Points near 1e9 with r = 1e-3.
template <int Dim>
Dataset far_tiny(std::size_t n, std::uint64_t seed) {
  auto g = rng(seed);
  std::uniform_real_distribution<double> u(0.0, 0.02);
  Dataset d{"far_tiny", {}, 1e-3};
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) d.xyz.push_back(1e9 + u(g) - (k == 1 ? 2e9 : 0.0));
  }
  return d;
}

/// Points on a sphere (a circle in 2D) of radius `shell_radius` around the origin, each moved
/// radially by up to +-0.02: a scanned surface, whose lattice is mostly empty cells around a
/// hollow.
template <int Dim>
Dataset shell(std::size_t n, double shell_radius, double radius, std::uint64_t seed) {
  auto g = rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> noise(-0.02, 0.02);
  Dataset d{"shell", {}, radius};
  for (std::size_t i = 0; i < n; ++i) {
    std::array<double, Dim> direction;
    double length = 0.0;
    do {
      length = 0.0;
      for (int k = 0; k < Dim; ++k) {
        direction[k] = normal(g);
        length += direction[k] * direction[k];
      }
    } while (length < 1e-12);
    const double scale = (shell_radius + noise(g)) / std::sqrt(length);
    for (int k = 0; k < Dim; ++k) d.xyz.push_back(direction[k] * scale);
  }
  return d;
}

}  // namespace datasets
