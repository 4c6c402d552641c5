// bench/ab_inprocess.sh's driver: two builds of spatialhash in one process (see
// ab_inprocess_side.cpp), timed repetition by repetition on one workload, their order swapped
// every round, so that both meet the same machine from moment to moment. Prints, per operation,
// the minimum and median of each side and their ratios (before / after: above 1, AFTER is
// faster). Exits 1 when the two sides find different numbers of neighbors or a run throws, 2 on
// bad arguments. Before every timed run, memory is warmed up as spatialhash_bench warms it
// (warm_up_memory): on a VM whose host takes back memory the guest freed, a side that touches
// more memory than the other would otherwise pay the host's first touch, which a process on
// its own machine never meets (W3, 1M points, 2 threads: lists written into place measured
// 1.38x faster than the buffers unwarmed, 1.3x slower in spatialhash_bench; docs/benchmarks.md).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "measure.hpp"
#include "workloads.hpp"

double ab_before_run(const float* points, std::size_t n, int dim, double radius, int threads,
                     int op, std::uint64_t& entries);
double ab_after_run(const float* points, std::size_t n, int dim, double radius, int threads, int op,
                    std::uint64_t& entries);

namespace {

constexpr int kOps = 9;
constexpr std::array<const char*, kOps> kOpNames = {
    "counts (search)", "build + rows", "build + lists", "pairs (search)", "pairs + dist.",
    "build",           "update, same", "update, moved", "ball each"};

/// Per side (0: before, 1: after) and operation: every repetition's milliseconds, and the
/// neighbors the last one found.
struct Figures {
  std::array<std::array<std::vector<double>, kOps>, 2> ms;
  std::array<std::array<std::uint64_t, kOps>, 2> entries{};
};

Figures run_rounds(const bench::Workload& workload, int threads, long rounds) {
  const std::vector<float> coords(workload.coords.begin(), workload.coords.end());
  Figures figures;
  for (long round = 0; round < rounds; ++round) {
    for (int turn = 0; turn < 2; ++turn) {
      const auto side = static_cast<std::size_t>((round + turn) % 2);
      const auto run = side == 0 ? &ab_before_run : &ab_after_run;
      for (int op = 0; op < kOps; ++op) {
        std::uint64_t found = 0;
        bench::warm_up_memory(bench::warm_memory_bytes(workload.size()));
        figures.ms[side][op].push_back(
            run(coords.data(), workload.size(), workload.dim, workload.radius, threads, op, found));
        figures.entries[side][op] = found;
      }
    }
  }
  return figures;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: %s WORKLOAD POINTS THREADS ROUNDS [shuffled|sorted]\n", argv[0]);
    return 2;
  }
  const std::string order_name = argc == 6 ? argv[5] : "shuffled";
  if (order_name != "shuffled" && order_name != "sorted") {
    std::fprintf(stderr, "ORDER must be shuffled or sorted, not '%s'\n", order_name.c_str());
    return 2;
  }
  const auto order = order_name == "sorted" ? bench::Order::sorted : bench::Order::shuffled;
  const std::string key = argv[1];
  const long points = std::atol(argv[2]), threads = std::atol(argv[3]), rounds = std::atol(argv[4]);
  if (points < 1 || threads < 1 || rounds < 1) {
    std::fprintf(stderr, "POINTS, THREADS and ROUNDS must be positive integers\n");
    return 2;
  }
  bench::Workload workload;
  try {
    workload = bench::make_workload(key, static_cast<std::size_t>(points), 1);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
  bench::apply_order(workload, order, 1);
  Figures figures;
  try {
    figures = run_rounds(workload, static_cast<int>(threads), rounds);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "a run failed: %s\n", error.what());
    return 1;
  }
  std::printf("%s, %zu points %s, %ld threads, %ld rounds; ms, minimum / median; before / after\n",
              key.c_str(), workload.size(), order_name.c_str(), threads, rounds);
  bool agree = true;
  for (int op = 0; op < kOps; ++op) {
    for (auto& side : figures.ms) std::sort(side[op].begin(), side[op].end());
    const auto low = [&](int side) { return figures.ms[side][op].front(); };
    const auto median = [&](int side) {
      return figures.ms[side][op][figures.ms[side][op].size() / 2];
    };
    std::printf("  %-16s before %8.2f / %8.2f   after %8.2f / %8.2f   ratio %.3f / %.3f\n",
                kOpNames[op], low(0), median(0), low(1), median(1), low(0) / low(1),
                median(0) / median(1));
    if (figures.entries[0][op] != figures.entries[1][op]) {
      std::printf("  %s: before found %llu neighbors, after %llu\n", kOpNames[op],
                  static_cast<unsigned long long>(figures.entries[0][op]),
                  static_cast<unsigned long long>(figures.entries[1][op]));
      agree = false;
    }
  }
  return agree ? 0 : 1;
}
