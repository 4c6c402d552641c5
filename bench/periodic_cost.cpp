// What periodic boundaries cost: the same uniform points indexed with and without a periodic box
// (same engine, same radius), timed for build, pairs (callback and list), counts, full and half
// neighbor lists, and cross queries at as many random positions (each result freed inside its
// timing), with the ratio. The two indexes take turns, repetition by repetition: on a shared
// machine whose speed drifts, a ratio of two runs made minutes apart was off by up to 1.5x.
// The periodic index finds more pairs (those across the faces); the figures are per pair too.
//
//   spatialhash_bench_periodic [n] [neighbors per point] [threads]   (defaults 1000000 30 0)
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <numbers>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "spatialhash/spatialhash.hpp"

namespace {

using Clock = std::chrono::steady_clock;

/// Milliseconds f took.
template <class F>
double time_ms(F&& f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The median of `times` (sorted here).
double median(std::vector<double>& times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// The operations timed, in the table's order.
constexpr const char* kOperations[] = {"build", "pairs cb",   "pair list", "counts",
                                       "lists", "half lists", "cross"};
constexpr int kOperationCount = std::size(kOperations);
constexpr int kRepeats = 7;

struct Figures {
  double ms[kOperationCount];
  std::size_t pairs;
};

/// One operation on `index`, the result freed inside the timing; the pairs found for "pairs cb".
std::size_t run(const spatialhash::Index<3, float>& index, int op,
                const spatialhash::PointsView<3, double>& positions) {
  std::size_t pairs = 0;
  switch (op) {
    case 1:
      index.for_each_pair_batch(
          [&](std::span<const spatialhash::PairHit> b) { pairs += b.size(); });
      break;
    case 2:
      (void)index.pairs();
      break;
    case 3:
      (void)index.neighbor_counts();
      break;
    case 4:
      (void)index.neighbor_lists();
      break;
    case 5:
      (void)index.neighbor_lists({.half = true});
      break;
    case 6:
      (void)index.cross(positions);
      break;
    default:
      break;
  }
  return pairs;
}

/// Every operation on the open and the periodic index, the two alternated repetition by
/// repetition (which goes first alternating too), so that a slow spell of the machine slows
/// both: the medians of kRepeats each.
std::pair<Figures, Figures> measure(const std::vector<float>& xyz, double r,
                                    const spatialhash::PeriodicBox<3>& box, int threads) {
  const spatialhash::Options options{.threads = threads};
  const auto make = [&](bool periodic) {
    return periodic ? spatialhash::Index<3, float>(xyz, r, box, options)
                    : spatialhash::Index<3, float>(xyz, r, options);
  };
  // As many cross queries as points, uniform over the box (and one edge around it).
  std::mt19937_64 g(2);
  std::uniform_real_distribution<double> u(-r, 1.0 + r);
  std::vector<double> queries(xyz.size());
  for (double& q : queries) q = u(g);
  const spatialhash::PointsView<3, double> positions(queries.data(), queries.size() / 3);
  const std::array<spatialhash::Index<3, float>, 2> indexes{make(false), make(true)};
  std::array<Figures, 2> figures{};
  for (int op = 0; op < kOperationCount; ++op) {
    std::array<std::vector<double>, 2> times;
    for (int rep = 0; rep < kRepeats; ++rep) {
      for (int turn = 0; turn < 2; ++turn) {
        const int which = (rep + turn) % 2;  // 0 open, 1 periodic
        times[which].push_back(time_ms([&] {
          if (op == 0) {
            (void)make(which == 1);
          } else {
            const std::size_t pairs = run(indexes[which], op, positions);
            if (op == 1) figures[which].pairs = pairs;
          }
        }));
      }
    }
    for (int which = 0; which < 2; ++which) figures[which].ms[op] = median(times[which]);
  }
  return {figures[0], figures[1]};
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

  const auto [open, periodic] = measure(xyz, r, box, threads);
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
