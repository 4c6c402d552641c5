// sized_vs_single_grid: particles of different sizes, levels of grids by size class against one
// grid sized for the largest particle, in the same run, through the same API (SizedIndex with
// SizedOptions::levels = true / false).
//
// Workload: n points uniform in a cube, radii from a power law p(r) ~ r^-alpha on [1, 100] (most
// small, a few large), density chosen so that a radius-1 particle overlaps about --overlaps
// other radius-1 particles. Timed: build + pairs() (every overlapping pair, SizeRule::sum), best
// of --reps. Both schemes must report the same pairs (count and an order-independent checksum);
// the single grid is O(n^2) here (its cells are 200 small radii wide), so it runs only up to
// --single-max points.
//
//   sized_vs_single_grid [--sizes 200k,1M] [--single-max 200k] [--reps 3] [--alpha 5]
//                        [--overlaps 10] [--ratio 2] [--rule sum|max] [--threads 0]
//                        [--engine cell_list]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <string>
#include <vector>

#include "rng.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

struct Args {
  std::vector<std::size_t> sizes{200'000, 1'000'000};
  std::size_t single_max = 200'000;
  int reps = 3;
  double alpha = 5.0;
  double overlaps = 10.0;
  double ratio = 2.0;
  spatialhash::SizeRule rule = spatialhash::SizeRule::sum;
  int threads = 0;
  spatialhash::Engine engine = spatialhash::Engine::automatic;
};

std::size_t parse_count(const std::string& s) {
  const char last = s.empty() ? '\0' : s.back();
  const double scale = last == 'k' ? 1e3 : (last == 'M' ? 1e6 : 1.0);
  return static_cast<std::size_t>(std::stod(scale == 1.0 ? s : s.substr(0, s.size() - 1)) * scale);
}

std::vector<std::size_t> parse_sizes(const std::string& s) {
  std::vector<std::size_t> sizes;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t comma = std::min(s.find(',', start), s.size());
    sizes.push_back(parse_count(s.substr(start, comma - start)));
    start = comma + 1;
  }
  return sizes;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "missing value after %s\n", flag.c_str());
      std::exit(2);
    }
    const std::string value = argv[++i];
    if (flag == "--sizes")
      a.sizes = parse_sizes(value);
    else if (flag == "--single-max")
      a.single_max = parse_count(value);
    else if (flag == "--reps")
      a.reps = std::max(1, std::stoi(value));
    else if (flag == "--alpha")
      a.alpha = std::stod(value);
    else if (flag == "--overlaps")
      a.overlaps = std::stod(value);
    else if (flag == "--ratio")
      a.ratio = std::stod(value);
    else if (flag == "--engine")
      a.engine = spatialhash::parse_engine(value);
    else if (flag == "--threads")
      a.threads = std::stoi(value);
    else if (flag == "--rule")
      a.rule = value == "max" ? spatialhash::SizeRule::max : spatialhash::SizeRule::sum;
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return a;
}

struct Workload {
  std::vector<float> xyz;
  std::vector<float> radii;
};

/// n points in a cube with power-law radii on [1, 100].
Workload make_workload(std::size_t n, const Args& args) {
  // Radius-1 particles overlap within distance 2: density * (4/3) pi 2^3 = overlaps.
  const double density = args.overlaps / (4.0 / 3.0 * std::numbers::pi * 8.0);
  const double side = std::cbrt(static_cast<double>(n) / density);
  bench::Rng rng(bench::derive_seed(1, "sized", n));
  const double lo = std::pow(1.0, 1 - args.alpha), hi = std::pow(100.0, 1 - args.alpha);
  Workload w;
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) w.xyz.push_back(static_cast<float>(rng.uniform(0.0, side)));
    w.radii.push_back(static_cast<float>(std::pow(rng.uniform(lo, hi), 1.0 / (1.0 - args.alpha))));
  }
  w.radii[0] = 100.0f;  // the spread is the full 100x at every size
  return w;
}

struct Outcome {
  double build_ms = 1e300, query_ms = 1e300;
  std::size_t pairs = 0;
  std::uint64_t checksum = 0;
  std::size_t levels = 0;
};

Outcome measure(const Workload& w, const Args& args, bool levels, int reps) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  Outcome best;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    const spatialhash::SizedIndex<3, float> index(
        std::span<const float>(w.xyz), std::span<const float>(w.radii), args.rule,
        {.index = {.engine = args.engine, .threads = args.threads},
         .levels = levels,
         .level_ratio = args.ratio});
    const auto t1 = Clock::now();
    const spatialhash::PairList list = index.pairs();
    const auto t2 = Clock::now();
    best.build_ms = std::min(best.build_ms, ms(t1 - t0));
    best.query_ms = std::min(best.query_ms, ms(t2 - t1));
    best.pairs = list.pairs.size();
    best.levels = index.levels();
    best.checksum = 0;
    for (const auto& p : list.pairs) {
      best.checksum += bench::mix64((std::uint64_t{p.first} << 32) | p.second);
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  std::printf(
      "particles of different sizes: 3D, float, radii ~ r^-%.2f on [1, 100], %.0f overlaps "
      "of radius-1 particles, rule %s, level ratio %.2f, best of %d\n",
      args.alpha, args.overlaps, args.rule == spatialhash::SizeRule::sum ? "sum" : "max",
      args.ratio, args.reps);
  int status = 0;
  for (const std::size_t n : args.sizes) {
    const Workload w = make_workload(n, args);
    const Outcome lv = measure(w, args, true, args.reps);
    std::printf("n=%zu  pairs=%zu (%.1f per point)\n", n, lv.pairs,
                2.0 * static_cast<double>(lv.pairs) / static_cast<double>(n));
    std::printf("  levels (%zu):     build %9.1f ms  pairs %10.1f ms  total %10.1f ms\n", lv.levels,
                lv.build_ms, lv.query_ms, lv.build_ms + lv.query_ms);
    if (n > args.single_max) {
      std::printf("  single grid:     skipped (n > --single-max %zu; it is O(n^2) here)\n",
                  args.single_max);
      continue;
    }
    // The single grid runs once when one run takes more than a few seconds.
    const Outcome first = measure(w, args, false, 1);
    const bool slow = first.build_ms + first.query_ms > 5000.0;
    const Outcome sg = slow ? first : measure(w, args, false, args.reps);
    std::printf("  single grid:     build %9.1f ms  pairs %10.1f ms  total %10.1f ms%s\n",
                sg.build_ms, sg.query_ms, sg.build_ms + sg.query_ms, slow ? "  (1 run)" : "");
    std::fflush(stdout);
    std::printf("  ratio single/levels: %.1fx\n",
                (sg.build_ms + sg.query_ms) / (lv.build_ms + lv.query_ms));
    const bool same = sg.pairs == lv.pairs && sg.checksum == lv.checksum;
    std::printf("  cross-check: %s (pairs %zu vs %zu)\n", same ? "same pairs" : "MISMATCH",
                lv.pairs, sg.pairs);
    if (!same) status = 1;
  }
  return status;
}
