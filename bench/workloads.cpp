// Workload generators. Every generator draws from bench::Rng, so a seed fixes the points on every
// platform. Densities are chosen so that the neighbor count per point does not depend on n: the
// point sets grow in extent, not in density, as n grows.
#include "workloads.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <numeric>
#include <stdexcept>

#include "rng.hpp"

namespace bench {

namespace {

constexpr double kPi = std::numbers::pi;

/// Smallest s with s^dim >= n.
std::size_t lattice_side(std::size_t n, int dim) {
  auto side = static_cast<std::size_t>(std::floor(std::pow(static_cast<double>(n), 1.0 / dim)));
  const auto power = [dim](std::size_t s) {
    std::size_t p = 1;
    for (int k = 0; k < dim; ++k) p *= s;
    return p;
  };
  while (power(side) < n) ++side;
  while (side > 1 && power(side - 1) >= n) --side;
  return std::max<std::size_t>(side, 1);
}

/// The first n sites of a side^dim lattice of spacing 1 (x fastest), each jittered by +-jitter.
void jittered_lattice(Workload& w, std::size_t n, double jitter, Rng& rng) {
  const std::size_t side = lattice_side(n, w.dim);
  w.coords.reserve(n * w.dim);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rest = i;
    for (int k = 0; k < w.dim; ++k) {
      const auto site = static_cast<double>(rest % side);
      rest /= side;
      w.coords.push_back(site + rng.uniform(-jitter, jitter));
    }
  }
}

void uniform_box(Workload& w, std::size_t n, double side, Rng& rng) {
  w.coords.reserve(n * w.dim);
  for (std::size_t i = 0; i < n * w.dim; ++i) w.coords.push_back(rng.uniform(0.0, side));
}

/// W3: 100 Gaussian blobs with widths sigma_b = sigma_min * 10^(b/99) (exactly a tenfold range).
/// Blob b gets points in proportion to sigma_b^2, so its density scales as 1/sigma_b: a point in
/// the widest blob has about 30 neighbors, one in the narrowest about 300 (for r << sigma).
/// sigma_min scales with n^(1/3), so the density (and the neighbor counts) do not depend on n.
void clustered(Workload& w, std::size_t n, Rng& rng) {
  constexpr int kBlobs = 100;
  std::array<double, kBlobs> scale{};  // sigma_b / sigma_min
  double weight_sum = 0.0;
  for (int b = 0; b < kBlobs; ++b) {
    scale[b] = std::pow(10.0, b / (kBlobs - 1.0));
    weight_sum += scale[b] * scale[b];
  }
  // Mean neighbors of a point of a blob of m points and width s (r << s): the ball volume times
  // the mean density a point sees, m / (8 pi^1.5 s^3). With m_b = c s_b^2 and the ball volume 30
  // (r as in W2), the widest blob (s = 10 sigma_min) sees 30 neighbors when
  // c = 8 pi^1.5 * 10 sigma_min; summing m_b = n fixes sigma_min.
  const double c_over_sigma = 8.0 * std::pow(kPi, 1.5) * 10.0;  // c / sigma_min
  const double sigma_min = std::cbrt(static_cast<double>(n) / (c_over_sigma * weight_sum));
  // Centers uniform in a cube of 60 sigma_min (6 widest widths), drawn before any point and in
  // units of sigma_min, so that the blobs overlap alike at every n. (Drawn between the blobs'
  // points, they did not: 131, 124 and 163 mean neighbors at 100k, 1M and 4M.)
  std::array<std::array<double, 3>, kBlobs> center{};
  for (auto& c : center) {
    for (int k = 0; k < w.dim; ++k) c[k] = rng.uniform(0.0, 60.0);
  }
  w.coords.reserve(n * w.dim);
  std::size_t made = 0;
  double cumulative = 0.0;
  for (int b = 0; b < kBlobs; ++b) {
    cumulative += scale[b] * scale[b];
    const auto end =
        b == kBlobs - 1 ? n : static_cast<std::size_t>(std::llround(n * (cumulative / weight_sum)));
    const double sigma = sigma_min * scale[b];
    for (; made < end; ++made) {
      for (int k = 0; k < w.dim; ++k) {
        w.coords.push_back(sigma_min * center[b][k] + sigma * rng.normal());
      }
    }
  }
}

/// W5: a sphere of radius R with uniform surface density, each point pushed radially by up to
/// +-0.02 (scanner noise). With r = 1, n / (4 pi R^2) * pi r^2 = 30 neighbors gives R^2 = n / 120.
void sphere_shell(Workload& w, std::size_t n, Rng& rng) {
  const double big_r = std::sqrt(static_cast<double>(n) / 120.0);
  w.coords.reserve(n * 3);
  for (std::size_t i = 0; i < n; ++i) {
    std::array<double, 3> v{};
    double norm = 0.0;
    while (norm < 1e-12) {
      for (double& c : v) c = rng.normal();
      norm = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
    const double radius = big_r + rng.uniform(-0.02, 0.02);
    for (const double c : v) w.coords.push_back(radius * c / norm);
  }
}

/// Interleaves the low 21 (3D) or 32 (2D) bits of the cell coordinates.
std::uint64_t morton(const std::array<std::uint32_t, 3>& cell, int dim) {
  std::uint64_t code = 0;
  const int bits = dim == 3 ? 21 : 32;
  for (int bit = 0; bit < bits; ++bit) {
    for (int k = 0; k < dim; ++k) {
      code |= static_cast<std::uint64_t>((cell[k] >> bit) & 1u) << (bit * dim + k);
    }
  }
  return code;
}

}  // namespace

std::string_view order_name(Order order) {
  return order == Order::shuffled ? "shuffled" : "sorted";
}

std::vector<std::string> workload_keys() {
  return {"W1", "W2", "W3", "W4a", "W4b", "W5", "W6"};
}

std::vector<std::string> expand_workload_keys(const std::vector<std::string>& selection) {
  const std::vector<std::string> known = workload_keys();
  std::vector<std::string> keys;
  const auto add = [&keys](const std::string& key) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  };
  for (const std::string& s : selection) {
    if (s == "all") {
      for (const auto& k : known) add(k);
    } else if (s == "W4") {
      add("W4a");
      add("W4b");
    } else if (std::find(known.begin(), known.end(), s) != known.end()) {
      add(s);
    } else {
      throw std::invalid_argument("unknown workload '" + s +
                                  "' (valid: all, W1, W2, W3, W4, W4a, W4b, W5, W6)");
    }
  }
  // Report in canonical order whatever order they were asked in.
  std::vector<std::string> ordered;
  for (const auto& k : known) {
    if (std::find(keys.begin(), keys.end(), k) != keys.end()) ordered.push_back(k);
  }
  return ordered;
}

Workload make_workload(std::string_view key, std::size_t n, std::uint64_t seed) {
  Rng rng(derive_seed(seed, key, n));
  Workload w;
  w.key = std::string(key);
  // Radius giving `neighbors` expected neighbors at unit density: the ball volume equals it.
  const double r3d_30 = std::cbrt(30.0 * 3.0 / (4.0 * kPi));
  const double r2d_20 = std::sqrt(20.0 / kPi);
  if (key == "W1") {
    w.name = "SPH block";
    w.description = "cubic lattice, spacing 1, jitter +-0.05, r = 2 (~29 neighbors inside)";
    w.dim = 3;
    w.radius = 2.0;
    jittered_lattice(w, n, 0.05, rng);
  } else if (key == "W2") {
    w.name = "uniform";
    w.description = "uniform in a cube of side n^(1/3), r for 30 expected neighbors";
    w.dim = 3;
    w.radius = r3d_30;
    uniform_box(w, n, std::cbrt(static_cast<double>(n)), rng);
  } else if (key == "W3") {
    w.name = "clustered";
    w.description =
        "100 Gaussian blobs, widths x1..x10, points ~ width^2 (~30..300 neighbors), r as W2";
    w.dim = 3;
    w.radius = r3d_30;
    clustered(w, n, rng);
  } else if (key == "W4a") {
    w.name = "2D lattice";
    w.description = "square lattice, spacing 1, jitter +-0.05, r = 2.6 (20 neighbors inside)";
    w.dim = 2;
    w.radius = 2.6;
    jittered_lattice(w, n, 0.05, rng);
  } else if (key == "W4b") {
    w.name = "2D uniform";
    w.description = "uniform in a square of side n^(1/2), r for 20 expected neighbors";
    w.dim = 2;
    w.radius = r2d_20;
    uniform_box(w, n, std::sqrt(static_cast<double>(n)), rng);
  } else if (key == "W5") {
    w.name = "surface";
    w.description = "sphere shell R = sqrt(n/120), radial noise +-0.02, r = 1 (~30 neighbors)";
    w.dim = 3;
    w.radius = 1.0;
    sphere_shell(w, n, rng);
  } else if (key == "W6") {
    w.name = "sparse";
    w.description = "uniform in a cube of side n^(1/3), r for 0.5 expected neighbors";
    w.dim = 3;
    w.radius = std::cbrt(0.5 * 3.0 / (4.0 * kPi));
    uniform_box(w, n, std::cbrt(static_cast<double>(n)), rng);
  } else {
    throw std::invalid_argument("unknown workload '" + std::string(key) + "'");
  }
  return w;
}

void apply_order(Workload& w, Order order, std::uint64_t seed) {
  const std::size_t n = w.size();
  const auto dim = static_cast<std::size_t>(w.dim);
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  if (order == Order::shuffled) {
    Rng rng(derive_seed(seed, "shuffle:" + w.key, n));
    for (std::size_t i = n; i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
  } else {
    std::array<double, 3> lo{};
    for (std::size_t k = 0; k < dim; ++k) lo[k] = w.coords[k];
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < dim; ++k) lo[k] = std::min(lo[k], w.coords[i * dim + k]);
    }
    const std::uint32_t max_cell = w.dim == 3 ? (1u << 21) - 1 : 0xFFFFFFFFu;
    std::vector<std::uint64_t> keys(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::array<std::uint32_t, 3> cell{};
      for (std::size_t k = 0; k < dim; ++k) {
        const double c = std::floor((w.coords[i * dim + k] - lo[k]) / w.radius);
        cell[k] = static_cast<std::uint32_t>(std::clamp(c, 0.0, static_cast<double>(max_cell)));
      }
      keys[i] = morton(cell, w.dim);
    }
    std::stable_sort(perm.begin(), perm.end(),
                     [&keys](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  }
  std::vector<double> reordered(w.coords.size());
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < dim; ++k) reordered[i * dim + k] = w.coords[perm[i] * dim + k];
  }
  w.coords = std::move(reordered);
}

std::vector<double> ball_queries(const Workload& w, std::size_t count, std::uint64_t seed) {
  const auto dim = static_cast<std::size_t>(w.dim);
  std::array<double, 3> lo{}, hi{};
  for (std::size_t k = 0; k < dim; ++k) lo[k] = hi[k] = w.coords.empty() ? 0.0 : w.coords[k];
  for (std::size_t i = 0; i < w.size(); ++i) {
    for (std::size_t k = 0; k < dim; ++k) {
      lo[k] = std::min(lo[k], w.coords[i * dim + k]);
      hi[k] = std::max(hi[k], w.coords[i * dim + k]);
    }
  }
  Rng rng(derive_seed(seed, "queries:" + w.key, w.size()));
  std::vector<double> queries;
  queries.reserve(count * dim);
  for (std::size_t q = 0; q < count; ++q) {
    for (std::size_t k = 0; k < dim; ++k) queries.push_back(rng.uniform(lo[k], hi[k]));
  }
  return queries;
}

}  // namespace bench
