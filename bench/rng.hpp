// Deterministic random numbers for the workloads. std::mt19937_64 is fully specified by the
// standard, but the standard distributions are not (libstdc++ and libc++ draw differently), so the
// distributions here are our own: the same seed gives the same points everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <string_view>

namespace bench {

/// The splitmix64 finalizer: a cheap, well-mixing 64-bit bijection.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// A seed derived from the run's base seed, a name and a size, so every (workload, n) pair gets
/// its own independent stream.
inline std::uint64_t derive_seed(std::uint64_t base, std::string_view name, std::uint64_t n) {
  std::uint64_t h = mix64(base);
  for (const char c : name) h = mix64(h ^ static_cast<unsigned char>(c));
  return mix64(h ^ n);
}

/// A seeded generator with portable distributions.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(mix64(seed)) {}

  /// Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [0, bound), unbiased (rejection of the short last block); bound > 0.
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % bound);
    std::uint64_t x = engine_();
    while (x >= limit) x = engine_();
    return x % bound;
  }
  /// Standard normal (Box-Muller; one value per call, simple rather than fast).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace bench
