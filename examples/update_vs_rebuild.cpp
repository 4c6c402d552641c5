// Moving points: Index::update() vs building a new Index, and sorted vs shuffled particles.
//
// Part 1, for the engines cell_list (default) and cell_hash, on two data sets of n points in 3D
// with r = 2 (about 33 neighbors per point):
//   W1       a jittered cubic lattice of spacing 1 (jitter +-0.05), in random index order
//   uniform  uniform random points at the same density
// one motion step moves every point by exactly 1%, 2% or 5% of r in a random direction; then
// update() is timed against constructing a fresh Index on the same points, and
// update + neighbor_lists (what a simulation does per step) against rebuild + neighbor_lists.
// Each figure is the best of `reps` steps (each rep is a new step of the same motion); the ratio
// is rebuild / update. The neighbor totals of the two paths are cross-checked.
//
// Part 2: an SPH-like density sum over the neighbor lists, rho_i = sum_j W(|x_i - x_j|), on the
// W1 points in random index order and after hilbert_order + apply_permutation; the ratio is
// shuffled / sorted (best of reps), for the sum alone and for neighbor_lists alone.
//
// Part 3, for the default engine on the uniform points: in each step a given share of the
// points jumps to random places (the rest stay), and update() is timed against a fresh Index,
// alternating which goes first; medians of reps steps. This is where update() stops paying
// (the limits kUpdateLimits of src/engines/cell_list.hpp).
//
//   update_vs_rebuild [n=1000000] [reps=5] [threads=0 (all cores)]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "spatialhash/spatialhash.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using spatialhash::Engine;
using spatialhash::Index;

constexpr double kRadius = 2.0;

template <class F>
double milliseconds(F f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// n points of a jittered cubic lattice of spacing 1, in random index order.
std::vector<double> lattice_points(std::size_t n, std::mt19937_64& g) {
  const auto side = static_cast<std::size_t>(std::ceil(std::cbrt(static_cast<double>(n))));
  std::uniform_real_distribution<double> jitter(-0.05, 0.05);
  std::vector<std::size_t> sites(side * side * side);
  std::iota(sites.begin(), sites.end(), std::size_t{0});
  std::shuffle(sites.begin(), sites.end(), g);
  std::vector<double> xyz;
  xyz.reserve(3 * n);
  for (std::size_t p = 0; p < n; ++p) {
    std::size_t rest = sites[p];
    for (int k = 0; k < 3; ++k, rest /= side) {
      xyz.push_back(static_cast<double>(rest % side) + jitter(g));
    }
  }
  return xyz;
}

/// n uniform random points at density 1.
std::vector<double> uniform_points(std::size_t n, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(0.0, std::cbrt(static_cast<double>(n)));
  std::vector<double> xyz(3 * n);
  for (double& x : xyz) x = u(g);
  return xyz;
}

/// Moves every point by exactly `length` in a random direction.
void move_all(std::vector<double>& xyz, double length, std::mt19937_64& g) {
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t i = 0; i < xyz.size(); i += 3) {
    double d[3], norm = 0.0;
    for (double& c : d) {
      c = normal(g);
      norm += c * c;
    }
    const double scale = length / std::sqrt(norm);
    for (int k = 0; k < 3; ++k) xyz[i + k] += d[k] * scale;
  }
}

struct Best {
  double update = 1e300, rebuild = 1e300, update_lists = 1e300, rebuild_lists = 1e300;
};

/// Part 1 for one data set, engine and step length. Returns false if the paths disagree.
bool compare_update(const char* data_name, std::vector<double> xyz, Engine engine,
                    double step_fraction, int reps, int threads, std::mt19937_64& g) {
  const spatialhash::Options options{.engine = engine, .threads = threads};
  Index<3, double> index(std::span<const double>(xyz), kRadius, options);
  Best best;
  bool agree = true;
  for (int rep = 0; rep < reps; ++rep) {
    move_all(xyz, step_fraction * kRadius, g);
    best.update =
        std::min(best.update, milliseconds([&] { index.update(std::span<const double>(xyz)); }));
    best.rebuild =
        std::min(best.rebuild, milliseconds([&] {
                   Index<3, double> fresh(std::span<const double>(xyz), kRadius, options);
                 }));
    // A simulation step: re-index, then the neighbor lists. Another step of motion first, so
    // that update() has work to do again.
    move_all(xyz, step_fraction * kRadius, g);
    std::size_t updated_total = 0, rebuilt_total = 0;
    best.update_lists = std::min(best.update_lists, milliseconds([&] {
                                   index.update(std::span<const double>(xyz));
                                   updated_total = index.neighbor_lists().indices.size();
                                 }));
    best.rebuild_lists =
        std::min(best.rebuild_lists, milliseconds([&] {
                   Index<3, double> fresh(std::span<const double>(xyz), kRadius, options);
                   rebuilt_total = fresh.neighbor_lists().indices.size();
                 }));
    agree = agree && updated_total == rebuilt_total && updated_total > 0;
  }
  std::printf("  %-8s %-10s %3.0f%%   %8.2f %8.2f %6.2fx   %8.2f %8.2f %6.2fx  %s\n", data_name,
              std::string(spatialhash::engine_name(engine)).c_str(), 100.0 * step_fraction,
              best.update, best.rebuild, best.rebuild / best.update, best.update_lists,
              best.rebuild_lists, best.rebuild_lists / best.update_lists,
              agree ? "totals agree" : "TOTALS DIFFER");
  return agree;
}

/// rho_i = sum over neighbors j of m (1 - d^2/r^2)^3 (a smooth kernel), reading neighbor positions.
double density_sum(const std::vector<double>& xyz, const spatialhash::NeighborLists& lists,
                   std::vector<double>& rho, int threads) {
  const auto n = static_cast<std::int64_t>(lists.size());
  const double inv_r2 = 1.0 / (kRadius * kRadius);
  double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) {
    double sum = 1.0;  // self
    const double* p = &xyz[3 * i];
    for (std::size_t k = lists.offsets[i]; k < lists.offsets[i + 1]; ++k) {
      const double* q = &xyz[3 * static_cast<std::size_t>(lists.indices[k])];
      const double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
      const double w = 1.0 - (dx * dx + dy * dy + dz * dz) * inv_r2;
      sum += w * w * w;
    }
    rho[i] = sum;
    total += sum;
  }
  return total;
}

/// Part 2: the density loop and the neighbor search on shuffled vs Hilbert-sorted particles.
bool compare_order(std::size_t n, int reps, int threads, std::mt19937_64& g) {
  const std::vector<double> shuffled = lattice_points(n, g);
  double sort_ms = 0.0;
  std::vector<double> sorted;
  sort_ms = milliseconds([&] {
    const auto perm = spatialhash::hilbert_order<3, double>(
        spatialhash::interleaved<3, double>(shuffled), kRadius, threads);
    sorted = spatialhash::apply_permutation<double>(shuffled, perm, 3);
  });
  double best_lists[2] = {1e300, 1e300}, best_sum[2] = {1e300, 1e300}, totals[2] = {0, 0};
  const std::vector<double>* sets[2] = {&shuffled, &sorted};
  for (int rep = 0; rep < reps; ++rep) {
    for (int s = 0; s < 2; ++s) {
      const std::vector<double>& xyz = *sets[s];
      Index<3, double> index(std::span<const double>(xyz), kRadius, {.threads = threads});
      spatialhash::NeighborLists lists;
      best_lists[s] =
          std::min(best_lists[s], milliseconds([&] { lists = index.neighbor_lists(); }));
      std::vector<double> rho(n);
      best_sum[s] = std::min(best_sum[s], milliseconds([&] {
                               totals[s] = density_sum(xyz, lists, rho, index.threads());
                             }));
    }
  }
  std::printf("\nSPH-like density sum over neighbor lists, W1 %zu points (best of %d, ms)\n", n,
              reps);
  std::printf("  hilbert_order + apply_permutation: %.2f ms (once)\n", sort_ms);
  std::printf("                      shuffled    sorted   shuffled/sorted\n");
  std::printf("  density sum       %9.2f %9.2f   %6.2fx\n", best_sum[0], best_sum[1],
              best_sum[0] / best_sum[1]);
  std::printf("  neighbor_lists    %9.2f %9.2f   %6.2fx\n", best_lists[0], best_lists[1],
              best_lists[0] / best_lists[1]);
  const bool agree = std::abs(totals[0] - totals[1]) <= 1e-9 * std::abs(totals[0]);
  std::printf("  density totals %s (%.6f vs %.6f)\n", agree ? "agree" : "DIFFER", totals[0],
              totals[1]);
  return agree;
}

/// Part 3: update() vs rebuild when a share of the points jumps. Returns false if they disagree.
bool compare_jumps(std::size_t n, int reps, int threads, std::mt19937_64& g) {
  std::vector<double> xyz = uniform_points(n, g);
  std::uniform_real_distribution<double> inside(0.0, std::cbrt(static_cast<double>(n)));
  const spatialhash::Options options{.threads = threads};
  Index<3, double> index(std::span<const double>(xyz), kRadius, options);
  std::printf(
      "\nupdate() vs a fresh Index when a share of the uniform points jumps (median of %d)\n",
      reps);
  std::printf("  jumping   update  rebuild  ratio\n");
  bool agree = true;
  for (double share : {0.0, 0.01, 0.05, 0.1, 0.15, 0.2, 0.3}) {
    std::vector<double> update_ms, rebuild_ms;
    for (int rep = 0; rep < reps; ++rep) {
      const auto jumping = static_cast<std::size_t>(share * static_cast<double>(n));
      for (std::size_t k = 0; k < jumping; ++k) {
        const std::size_t i = g() % n;
        for (int a = 0; a < 3; ++a) xyz[3 * i + a] = inside(g);
      }
      const auto update = [&] { index.update(std::span<const double>(xyz)); };
      const auto rebuild = [&] {
        Index<3, double> fresh(std::span<const double>(xyz), kRadius, options);
      };
      if (rep % 2 == 0) update_ms.push_back(milliseconds(update));
      rebuild_ms.push_back(milliseconds(rebuild));
      if (rep % 2 == 1) update_ms.push_back(milliseconds(update));
    }
    const Index<3, double> fresh(std::span<const double>(xyz), kRadius, options);
    agree = agree && index.neighbor_lists().offsets == fresh.neighbor_lists().offsets;
    std::sort(update_ms.begin(), update_ms.end());
    std::sort(rebuild_ms.begin(), rebuild_ms.end());
    const double u = update_ms[update_ms.size() / 2], r = rebuild_ms[rebuild_ms.size() / 2];
    std::printf("  %5.0f%%  %8.2f %8.2f %6.2fx\n", 100.0 * share, u, r, r / u);
  }
  std::printf("  row lengths after update() %s a fresh Index's\n", agree ? "equal" : "DIFFER FROM");
  return agree;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const int threads = argc > 3 ? std::max(0, std::atoi(argv[3])) : 0;
  std::mt19937_64 g(42);
  std::printf(
      "update() vs a fresh Index, 3D, %zu points, r = 2, %d threads (0: all cores), "
      "best of %d steps (ms)\n",
      n, threads, reps);
  std::printf(
      "  data     engine     step    update  rebuild  ratio   upd+lists reb+lists  ratio\n");
  bool ok = true;
  for (const char* data : {"W1", "uniform"}) {
    const std::vector<double> xyz =
        std::string(data) == "W1" ? lattice_points(n, g) : uniform_points(n, g);
    for (Engine engine : {Engine::cell_list, Engine::cell_hash}) {
      for (double step : {0.01, 0.02, 0.05}) {
        ok = compare_update(data, xyz, engine, step, reps, threads, g) && ok;
      }
    }
  }
  ok = compare_order(n, reps, threads, g) && ok;
  ok = compare_jumps(n, reps, threads, g) && ok;
  return ok ? 0 : 1;
}
