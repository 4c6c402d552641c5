// Incremental update vs fresh build of the cell_hash engine: 1M jittered-lattice particles
// (spacing 1, r = 2) all move by 1-5% of r per step, as in a simulation time step. Prints, per
// step and as medians, the time of Index::update() and of building a new Index on the same moved
// points. Only the points whose cell changed are moved by update(); when more than 1/8 of them
// did (typical of the first step here: the lattice starts at the smallest coordinate, so every
// other plane of particles sits right on a cell border), it rebuilds.
//
//   update_vs_rebuild [side=100] [steps=7] [dim=3]     (side^dim particles)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>

#include "spatialhash/spatialhash.hpp"

namespace {

using Clock = std::chrono::steady_clock;

/// Wall and process CPU time of one call. CPU time is the steadier figure on a busy machine
/// (the library runs these single-threaded).
struct Timing {
  double wall_ms, cpu_ms;
};
template <class F>
Timing timed(F f) {
  const auto wall = Clock::now();
  const std::clock_t cpu = std::clock();
  f();
  return {std::chrono::duration<double, std::milli>(Clock::now() - wall).count(),
          1000.0 * static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <int Dim>
int run(int side, int steps) {
  const double spacing = 1.0, radius = 2.0 * spacing;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> jitter(-0.05, 0.05), step(0.01 * radius, 0.05 * radius);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<float> xyz;
  const int sz = Dim == 3 ? side : 1;
  for (int z = 0; z < sz; ++z)
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x) {
        const int idx[3] = {x, y, z};
        for (int k = 0; k < Dim; ++k)
          xyz.push_back(static_cast<float>(idx[k] * spacing + jitter(rng)));
      }
  const std::size_t n = xyz.size() / Dim;
  // One thread: cell_hash builds and updates single-threaded anyway; this keeps the (parallel)
  // input validation from adding idle-spinning worker threads to the CPU time.
  const spatialhash::Options options{.engine = spatialhash::Engine::cell_hash, .threads = 1};
  spatialhash::Index<Dim, float> index(std::span<const float>(xyz), radius, options);

  std::vector<double> update_ms, build_ms, update_cpu, build_cpu;
  std::size_t checksum = 0;
  for (int s = 0; s < steps; ++s) {
    // Every particle moves by 1-5% of r in a random direction.
    for (std::size_t i = 0; i < n; ++i) {
      double dir[Dim], norm = 0.0;
      for (int k = 0; k < Dim; ++k) norm += (dir[k] = normal(rng)) * dir[k];
      const double length = step(rng) / std::sqrt(norm);
      for (int k = 0; k < Dim; ++k) {
        xyz[i * Dim + k] = static_cast<float>(xyz[i * Dim + k] + dir[k] * length);
      }
    }
    const Timing u = timed([&] { index.update(std::span<const float>(xyz)); });
    update_ms.push_back(u.wall_ms);
    update_cpu.push_back(u.cpu_ms);
    const Timing f = timed([&] {
      spatialhash::Index<Dim, float> fresh(std::span<const float>(xyz), radius, options);
      checksum += fresh.size();
    });
    build_ms.push_back(f.wall_ms);
    build_cpu.push_back(f.cpu_ms);
  }
  // One sanity check that the updated index answers like the fresh one (outside the timings).
  spatialhash::Index<Dim, float> fresh(std::span<const float>(xyz), radius, options);
  const auto a = index.neighbor_counts(), b = fresh.neighbor_counts();
  if (a != b) {
    std::fprintf(stderr, "updated and fresh index disagree\n");
    return 1;
  }
  std::printf(
      "cell_hash %dD, %zu particles (spacing 1, r = 2), every particle moved 1-5%% of r per "
      "step\n",
      Dim, n);
  std::printf("            update() wall / cpu    fresh build wall / cpu   (ms)\n");
  for (int s = 0; s < steps; ++s) {
    std::printf("  step %2d   %8.2f / %8.2f       %8.2f / %8.2f\n", s + 1, update_ms[s],
                update_cpu[s], build_ms[s], build_cpu[s]);
  }
  const double u = median(update_ms), f = median(build_ms);
  const double uc = median(update_cpu), fc = median(build_cpu);
  std::printf("  median    %8.2f / %8.2f       %8.2f / %8.2f\n", u, uc, f, fc);
  std::printf("  ratio build/update (medians): %.2fx wall, %.2fx cpu\n", f / u, fc / uc);
  return checksum == static_cast<std::size_t>(steps) * n ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int side = argc > 1 ? std::atoi(argv[1]) : 100;
  const int steps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 7;
  const int dim = argc > 3 ? std::atoi(argv[3]) : 3;
  return dim == 2 ? run<2>(side, steps) : run<3>(side, steps);
}
