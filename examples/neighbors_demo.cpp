// The README's main job: one million jittered-lattice particles (spacing 1, r = 2), all neighbor
// lists, and a short report; then the same lists as NeighborRows (each row where the search wrote
// it), which skips the pass that puts the rows in point order.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "spatialhash/spatialhash.hpp"

int main(int argc, char** argv) {
  const int side = argc > 1 ? std::atoi(argv[1]) : 100;  // side^3 particles
  const double spacing = 1.0, radius = 2.0 * spacing;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> jitter(-0.05f, 0.05f);
  std::vector<float> xyz;
  xyz.reserve(static_cast<std::size_t>(side) * side * side * 3);
  for (int z = 0; z < side; ++z)
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x) {
        xyz.push_back(static_cast<float>(x * spacing) + jitter(rng));
        xyz.push_back(static_cast<float>(y * spacing) + jitter(rng));
        xyz.push_back(static_cast<float>(z * spacing) + jitter(rng));
      }
  const auto start = std::chrono::steady_clock::now();
  spatialhash::Index<3, float> index(std::span<const float>(xyz), radius);
  const spatialhash::NeighborLists lists = index.neighbor_lists();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const std::size_t n = index.size();
  std::printf("points:              %zu (jittered lattice, spacing %.1f)\n", n, spacing);
  std::printf("radius:              %.1f\n", radius);
  std::printf("engine:              %s, %d threads\n",
              std::string(spatialhash::engine_name(index.engine())).c_str(), index.threads());
  std::printf("pairs found:         %zu\n", lists.indices.size() / 2);
  std::printf("neighbors per point: %.2f\n", n ? double(lists.indices.size()) / double(n) : 0.0);
  std::printf("time (build + lists): %.1f ms\n", ms);
  const auto rows_start = std::chrono::steady_clock::now();
  const spatialhash::Index<3, float> rebuilt(std::span<const float>(xyz), radius);
  const spatialhash::NeighborRows rows = rebuilt.neighbor_rows();
  const double rows_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - rows_start)
          .count();
  std::size_t entries = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) entries += rows.row(i).size();
  const bool agree = entries == lists.indices.size();
  std::printf("time (build + rows):  %.1f ms (%zu entries, %s)\n", rows_ms, entries,
              agree ? "as many as the lists" : "NOT as many as the lists");
  return agree ? 0 : 1;
}
