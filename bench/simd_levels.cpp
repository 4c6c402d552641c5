// What each SIMD level of the default engine is worth: the same points indexed with
// Options::simd capped at AVX-512, AVX2 and scalar (the levels this machine runs), timed for
// neighbor counts, pairs and neighbor lists, with each level's time relative to scalar. Every
// level must report the same totals (the program exits 1 otherwise).
//
//   simd_levels [n] [threads] [repeats]   (defaults 1000000 0 5; W2-like uniform points, 30
//                                          neighbors each)
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "spatialhash/spatialhash.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  double counts_ms = 0, pairs_ms = 0, lists_ms = 0;
  std::size_t pairs = 0, entries = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
  const int repeats = std::max(1, argc > 3 ? std::atoi(argv[3]) : 5);
  const double side = std::cbrt(static_cast<double>(n));
  const double r = std::cbrt(30.0 * 3.0 / (4.0 * std::numbers::pi));
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(0.0, side);
  std::vector<float> xyz(3 * n);
  for (float& x : xyz) x = static_cast<float>(u(g));

  using spatialhash::Simd;
  const std::vector<std::pair<Simd, const char*>> levels = {
      {Simd::avx512, "avx512"}, {Simd::avx2, "avx2"}, {Simd::scalar, "scalar"}};
  std::printf("simd levels of cell_list: %zu uniform points, r = %.4f, threads %d, median of %d\n",
              n, r, threads, repeats);
  std::printf("%-8s %12s %12s %12s   (x = scalar time / this time)\n", "level", "counts ms",
              "pairs ms", "lists ms");
  std::vector<spatialhash::Index<3, float>> indexes;
  std::vector<const char*> names;
  for (const auto& [level, name] : levels) {
    if (!spatialhash::simd_available(level)) continue;
    indexes.emplace_back(xyz, r, spatialhash::Options{.threads = threads, .simd = level});
    names.push_back(name);
  }
  // Interleaved: each repetition runs every level in turn, so machine noise hits them alike.
  std::vector<std::array<std::vector<double>, 3>> times(indexes.size());
  std::vector<Figures> figures(indexes.size());
  const auto timed = [](auto&& f) {
    const auto start = Clock::now();
    f();
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  for (int rep = 0; rep < repeats; ++rep) {
    for (std::size_t k = 0; k < indexes.size(); ++k) {
      const auto& index = indexes[k];
      times[k][0].push_back(timed([&] { (void)index.neighbor_counts(); }));
      times[k][1].push_back(timed([&] { figures[k].pairs = index.pairs().pairs.size(); }));
      times[k][2].push_back(
          timed([&] { figures[k].entries = index.neighbor_lists().indices.size(); }));
    }
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (std::size_t k = 0; k < indexes.size(); ++k) {
    figures[k].counts_ms = median(times[k][0]);
    figures[k].pairs_ms = median(times[k][1]);
    figures[k].lists_ms = median(times[k][2]);
  }
  const Figures& scalar = figures.back();
  bool agree = true;
  for (std::size_t k = 0; k < figures.size(); ++k) {
    const Figures& f = figures[k];
    std::printf("%-8s %8.1f (%4.2fx) %7.1f (%4.2fx) %7.1f (%4.2fx)\n", names[k], f.counts_ms,
                scalar.counts_ms / f.counts_ms, f.pairs_ms, scalar.pairs_ms / f.pairs_ms,
                f.lists_ms, scalar.lists_ms / f.lists_ms);
    agree = agree && f.pairs == scalar.pairs && f.entries == scalar.entries;
  }
  std::printf("pairs %zu, list entries %zu: %s\n", scalar.pairs, scalar.entries,
              agree ? "every level agrees" : "LEVELS DISAGREE");
  return agree ? 0 : 1;
}
