// How fast the build's key pass runs (src/simd/cell_keys.hpp: each point's cell as a Morton code,
// the first pass of the default engine's build): every level this processor runs (scalar, AVX2,
// AVX-512) side by side on the same uniform random points, in 2D and 3D, float and double, once
// packed (stride Dim: the vector kernels load whole vectors and split them into axes with
// permutes) and once padded to stride Dim + 1 (the vector kernels gather each axis). Prints
// nanoseconds per point (fastest and median of the repeats, one thread) and each level's speed-up
// over the scalar pass; exits 1 when two levels disagree on any key.
//
//   cell_keys [points] [repeats]   (defaults 1000000 15)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../src/simd/cell_keys.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using spatialhash::Simd;
using spatialhash::detail::best_cell_keys;
using spatialhash::detail::CellKeyInput;

/// Fastest and median milliseconds of `repeats` runs of run().
template <class Run>
std::pair<double, double> time_of(int repeats, Run run) {
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2]};
}

/// One table: the points of dimension Dim and type T at `stride`, every level. False when two
/// levels disagree.
template <int Dim, class T>
bool compare_levels(std::size_t n, std::size_t stride, int repeats) {
  std::mt19937_64 rng(7);
  // About 7 points per cell of edge 1 (the benchmark's W2 density at r = 1.93 in 3D).
  const double side = Dim == 3 ? std::cbrt(double(n) / 7.0) : std::sqrt(double(n) / 7.0);
  std::uniform_real_distribution<double> uniform(0.0, side);
  std::vector<T> data(n * stride, T(0));
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) data[i * stride + k] = static_cast<T>(uniform(rng));
  }
  CellKeyInput<Dim, T> input{data.data(), stride, {}, 1.0, 0};
  std::vector<std::uint64_t> reference, keys(n);
  double scalar_ms = 0;
  std::printf("%dD %-6s stride %zu (%s):\n", Dim, sizeof(T) == 4 ? "float" : "double", stride,
              stride == std::size_t{Dim} ? "packed: vector loads" : "padded: gathers");
  const std::pair<Simd, const char*> levels[] = {
      {Simd::scalar, "scalar"}, {Simd::avx2, "avx2"}, {Simd::avx512, "avx512"}};
  for (const auto& [level, name] : levels) {
    if (!spatialhash::simd_available(level)) continue;
    const auto keys_of = best_cell_keys<Dim, T>(level);
    const auto [fastest, median] =
        time_of(repeats, [&] { keys_of(input, 0, n, keys.data(), nullptr); });
    if (level == Simd::scalar) {
      reference = keys;
      scalar_ms = fastest;
    } else if (keys != reference) {
      std::printf("  %s disagrees with the scalar pass\n", name);
      return false;
    }
    std::printf("  %-8s fastest %6.2f ns/point, median %6.2f ns/point  (%.2fx scalar)\n", name,
                fastest * 1e6 / double(n), median * 1e6 / double(n), scalar_ms / fastest);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::size_t n = argc > 1 ? std::stoul(argv[1]) : 1000000;
    const int repeats = argc > 2 ? std::stoi(argv[2]) : 15;
    if (n < 1 || repeats < 1) throw std::invalid_argument("points and repeats must be positive");
    std::printf("cell_keys: %zu points, %d repeats, one thread\n", n, repeats);
    bool agree = true;
    agree = compare_levels<3, float>(n, 3, repeats) && agree;
    agree = compare_levels<3, float>(n, 4, repeats) && agree;
    agree = compare_levels<3, double>(n, 3, repeats) && agree;
    agree = compare_levels<2, float>(n, 2, repeats) && agree;
    agree = compare_levels<2, double>(n, 2, repeats) && agree;
    std::printf(agree ? "every level agrees\n" : "levels disagree\n");
    return agree ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cell_keys: %s\n", e.what());
    return 2;
  }
}
