// What periodic boundaries cost: the same uniform points indexed with and without a periodic box
// (same engine, same radius), timed for build, pairs (callback and list), counts, full and half
// neighbor lists, and cross queries at as many random positions (each result freed inside its
// timing), with the ratio.
// The periodic index finds more pairs (those across the faces); the figures are per pair too.
//
//   spatialhash_bench_periodic [n] [neighbors per point] [threads]   (defaults 1000000 30 0)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <numbers>
#include <optional>
#include <random>
#include <vector>

#include "spatialhash/spatialhash.hpp"

namespace {

using Clock = std::chrono::steady_clock;

/// Median of `repeats` runs of f, in milliseconds.
template <class F>
double median_ms(int repeats, F&& f) {
  std::vector<double> times;
  for (int k = 0; k < repeats; ++k) {
    const auto start = Clock::now();
    f();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// The operations timed, in the table's order.
constexpr const char* kOperations[] = {"build", "pairs cb",   "pair list", "counts",
                                       "lists", "half lists", "cross"};
constexpr int kOperationCount = std::size(kOperations);

struct Figures {
  double ms[kOperationCount];
  std::size_t pairs;
};

Figures measure(const std::vector<float>& xyz, double r,
                const std::optional<spatialhash::PeriodicBox<3>>& box, int threads) {
  const spatialhash::Options options{.threads = threads};
  auto make = [&] {
    return box ? spatialhash::Index<3, float>(xyz, r, *box, options)
               : spatialhash::Index<3, float>(xyz, r, options);
  };
  Figures f{};
  f.ms[0] = median_ms(5, [&] { (void)make(); });
  const auto index = make();
  std::size_t pairs = 0;
  f.ms[1] = median_ms(5, [&] {
    pairs = 0;
    index.for_each_pair_batch([&](std::span<const spatialhash::PairHit> b) { pairs += b.size(); });
  });
  f.pairs = pairs;
  f.ms[2] = median_ms(5, [&] { (void)index.pairs(); });
  f.ms[3] = median_ms(5, [&] { (void)index.neighbor_counts(); });
  f.ms[4] = median_ms(5, [&] { (void)index.neighbor_lists(); });
  f.ms[5] = median_ms(5, [&] { (void)index.neighbor_lists({.half = true}); });
  // As many cross queries as points, uniform over the box (and one edge around it).
  std::mt19937_64 g(2);
  std::uniform_real_distribution<double> u(-r, 1.0 + r);
  std::vector<double> queries(xyz.size());
  for (double& q : queries) q = u(g);
  const spatialhash::PointsView<3, double> positions(queries.data(), queries.size() / 3);
  f.ms[6] = median_ms(5, [&] { (void)index.cross(positions); });
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const double neighbors = argc > 2 ? std::atof(argv[2]) : 30.0;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 0;
  const double edge = 1.0;
  // Radius for the requested mean number of neighbors at this density.
  const double r = std::cbrt(neighbors / n * 3.0 / (4.0 * std::numbers::pi)) * edge;
  std::mt19937_64 g(1);
  std::uniform_real_distribution<float> u(0.0f, static_cast<float>(edge));
  std::vector<float> xyz(3 * n);
  for (float& x : xyz) x = u(g);
  const spatialhash::PeriodicBox<3> box{{0, 0, 0}, {edge, edge, edge}, {true, true, true}};

  const Figures open = measure(xyz, r, std::nullopt, threads);
  const Figures periodic = measure(xyz, r, box, threads);
  std::printf(
      "n = %zu uniform float points in a unit cube, r = %.5g (%.0f neighbors/point), "
      "default engine, threads = %d (0: all)\n",
      n, r, neighbors, threads);
  std::printf("%-14s", "");
  for (const char* op : kOperations) std::printf(" %11s", op);
  std::printf(" %14s\n", "pairs found");
  for (const auto& [name, f] : {std::pair{"open", open}, std::pair{"periodic", periodic}}) {
    std::printf("%-14s", name);
    for (double ms : f.ms) std::printf(" %11.1f", ms);
    std::printf(" %14zu\n", f.pairs);
  }
  std::printf("%-14s", "ratio p/o");
  for (int k = 0; k < kOperationCount; ++k) std::printf(" %11.2f", periodic.ms[k] / open.ms[k]);
  std::printf(" %14.3f\n", static_cast<double>(periodic.pairs) / static_cast<double>(open.pairs));
  return 0;
}
