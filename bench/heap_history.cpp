// A build's speed against what the process's heap did before: the same builds, builds + lists,
// update() steps and neighbor counts of n uniform points (W2's density: about 30 neighbors) in two
// fresh processes, one that freed nothing large before (a plain program, or a Python script:
// glibc's mmap threshold at its start value) and one that freed a 24 MiB block first (which raises
// glibc's mmap and trim thresholds, so that the heap keeps and reuses freed memory: the state
// spatialhash_bench runs in). Medians of `repeats` repetitions after a first, untimed one; the
// ratio is plain / raised. The index's own arrays and its queries' work arrays of 2 MiB or more
// are mapped by the library itself (spatialhash/mapped_blocks.hpp), so from about 500k points
// builds and queries read the same in both states; smaller ones and results under 32 MiB come
// from glibc's heap. update() keeps its arrays and the layout it replaced, and writes the next
// layout into them whether it patches or rebuilds (its sample saw a point change cell), so from
// its second step it allocates nothing at any size. docs/benchmarks.md, sixty-ninth, seventieth,
// eighty-sixth and eighty-seventh sessions, has the figures.
//
//   heap_history [W2] [points] [threads, 0: all] [repeats]   (bench/report.hpp's side-by-side
//   arguments; the points are W2-like but generated here: make_workload frees large temporaries,
//   which would raise the thresholds of the "plain" process)
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "report.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  double ms = 0.0;
  std::size_t neighbors = 0;
};

/// What each repetition times.
enum class Step {
  build,        ///< a new index of the points
  build_lists,  ///< a new index and its neighbor lists
  update,       ///< one index's update() after the points moved a little (not timed)
  counts,       ///< one index's neighbor counts
};

/// Runs in a child process: sets up the heap state, then times `reps` steps after a first,
/// untimed one; returns the median.
Figures measure(bool raise_threshold, Step step, std::size_t n, int reps, int threads) {
  if (raise_threshold) {
    std::vector<char> block(std::size_t{24} << 20, 1);  // mapped by malloc, then freed
    if (block[12345] != 1) std::abort();
  }
  std::mt19937_64 g(1);
  const double side = std::cbrt(static_cast<double>(n));
  std::uniform_real_distribution<float> u(0.0f, static_cast<float>(side));
  std::vector<float> xyz(3 * n);
  for (float& x : xyz) x = u(g);
  const double radius = std::cbrt(30.0 / (4.0 / 3.0 * std::acos(-1.0)));
  const spatialhash::Options options{.threads = threads};
  // update(): every coordinate moves by its own step of up to 0.01 (cells are 1.93 wide: about
  // 0.8% of the points change cell, under the 2% above which update() rebuilds), forth on odd
  // repetitions and back on even ones, so that the points stay in their cube. Allocated before
  // the loop, as the index is.
  std::vector<float> moves(step == Step::update ? xyz.size() : 0);
  std::uniform_real_distribution<float> move(-0.01f, 0.01f);
  for (float& m : moves) m = move(g);
  std::optional<spatialhash::Index<3, float>> kept;  // update() and counts: one index
  if (step == Step::update || step == Step::counts) {
    kept.emplace(std::span<const float>(xyz), radius, options);
  }
  // Nothing allocated between the repetitions but what the library allocates: whether a small
  // block kept between two builds sits above the freed ones decides whether glibc trims its heap
  // (one kept 64-byte block per repetition turned 72 ms builds into 16 ms ones), and this program
  // shows the state a plain loop of builds finds, not one tuned by accident.
  std::vector<double> ms;
  ms.reserve(static_cast<std::size_t>(reps) + 1);
  Figures f;
  for (int rep = 0; rep <= reps; ++rep) {
    if (step == Step::update) {
      const float sign = rep % 2 == 0 ? 1.0f : -1.0f;
      for (std::size_t i = 0; i < xyz.size(); ++i) xyz[i] += sign * moves[i];
    }
    const auto start = Clock::now();
    if (step == Step::update) {
      kept->update(std::span<const float>(xyz));
    } else if (step == Step::counts) {
      const std::vector<spatialhash::index_t> counts = kept->neighbor_counts();
      f.neighbors = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
    } else {
      const spatialhash::Index<3, float> index(std::span<const float>(xyz), radius, options);
      if (step == Step::build_lists) {
        const spatialhash::NeighborLists found = index.neighbor_lists();
        f.neighbors = found.indices.size();
      }
    }
    if (rep > 0)
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  f.ms = bench::median(ms);
  return f;
}

/// Runs measure() in a fresh child process (its heap untouched by the parent) and returns its
/// figures through a pipe; exits the program if the child fails.
Figures in_child(bool raise_threshold, Step step, std::size_t n, int reps, int threads) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("heap_history: pipe");
    std::exit(1);
  }
  const pid_t child = fork();
  if (child < 0) {
    std::perror("heap_history: fork");
    std::exit(1);
  }
  if (child == 0) {
    close(fds[0]);
    const Figures f = measure(raise_threshold, step, n, reps, threads);
    const bool written = write(fds[1], &f, sizeof f) == static_cast<ssize_t>(sizeof f);
    _exit(written ? 0 : 1);
  }
  close(fds[1]);
  Figures f;
  const bool read_all = read(fds[0], &f, sizeof f) == static_cast<ssize_t>(sizeof f);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!read_all || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "heap_history: the measuring process failed\n");
    std::exit(1);
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  bench::SideBySideArgs args;
  try {
    args = bench::parse_side_by_side_args(argc, argv);
    if (argc > 1 && args.workload != "W2") {
      throw std::invalid_argument("the workload is W2 (uniform points), got '" + args.workload +
                                  "'");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "heap_history: %s\nusage: heap_history [W2] [points: 2 ..= 2^30] "
                 "[threads: 0 (all) ..= 4096] [repeats: 1 ..= 10000]\n",
                 e.what());
    return 2;
  }
  const std::size_t n = args.points;
  const int reps = args.repeats;
  const int threads = args.threads;
  // No OpenMP region and no large allocation in this process before the children fork. Each
  // figure comes from a process of its own: a process that once made lists has freed blocks that
  // glibc mapped, which raises its thresholds as the 24 MiB block does.
  const Figures plain_build = in_child(false, Step::build, n, reps, threads);
  const Figures raised_build = in_child(true, Step::build, n, reps, threads);
  const Figures plain_lists = in_child(false, Step::build_lists, n, reps, threads);
  const Figures raised_lists = in_child(true, Step::build_lists, n, reps, threads);
  const Figures plain_update = in_child(false, Step::update, n, reps, threads);
  const Figures raised_update = in_child(true, Step::update, n, reps, threads);
  const Figures plain_counts = in_child(false, Step::counts, n, reps, threads);
  const Figures raised_counts = in_child(true, Step::counts, n, reps, threads);
  std::printf("%zu uniform points (3D float, ~30 neighbors), %d repetitions, medians in ms\n", n,
              reps);
  std::printf("  %-28s %10s %10s %10s %10s\n", "heap state", "build", "+ lists", "update",
              "counts");
  std::printf("  %-28s %10.2f %10.2f %10.2f %10.2f\n", "plain (nothing freed)", plain_build.ms,
              plain_lists.ms, plain_update.ms, plain_counts.ms);
  std::printf("  %-28s %10.2f %10.2f %10.2f %10.2f\n", "raised (24 MiB freed first)",
              raised_build.ms, raised_lists.ms, raised_update.ms, raised_counts.ms);
  std::printf("  %-28s %9.2fx %9.2fx %9.2fx %9.2fx\n", "plain / raised",
              plain_build.ms / raised_build.ms, plain_lists.ms / raised_lists.ms,
              plain_update.ms / raised_update.ms, plain_counts.ms / raised_counts.ms);
  const std::size_t totals[] = {raised_lists.neighbors, plain_counts.neighbors,
                                raised_counts.neighbors};
  for (const std::size_t total : totals) {
    if (total != plain_lists.neighbors || total == 0) {
      std::printf("neighbor totals differ: %zu against %zu\n", plain_lists.neighbors, total);
      return 1;
    }
  }
  std::printf("neighbor totals agree: %zu\n", plain_lists.neighbors);
  return 0;
}
