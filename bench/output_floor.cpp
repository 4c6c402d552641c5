// How far rebuild + neighbor lists is from the memory floor. The floor is what any engine must do
// to hand over new lists: allocate the CSR arrays (offsets and indices, the sizes of the real
// result) in fresh memory, as the library does (huge pages advised), and write every entry once on
// the same threads. Seven things are timed in turn, round after round, so that all of them see
// the same moods of a shared machine: the floor; the floor with the indices written first into a
// fresh buffer and then copied into place, the memory traffic of the default engine's design
// (per-thread buffers, then placement); the engine's index build alone; the count search alone
// (neighbor_counts() on an index built outside the timing: the search's arithmetic, nothing
// written per neighbor); build + neighbor_lists() into fresh lists (the benchmark's
// rebuild_lists); build + neighbor_lists() refilling the last repetition's lists (step_lists: no
// fresh pages); and build + neighbor_rows() into fresh rows (rebuild_rows: each row written once,
// where the search put it). Prints the median and fastest of each, the lists' ratio to the floor,
// and what the differences of medians put on each part of a fresh list. Exits 1 when two
// repetitions, or the lists, the rows and the counts, disagree on the number of entries.
//
//   output_floor [workload] [points] [threads] [repeats]   (defaults W1 1M 0 9; threads 0: all
//                                                           cores; workloads and sizes as
//                                                           spatialhash_bench: W1, W2, W3, W4a,
//                                                           W4b, W5, shuffled; 20k, 1M, 250000)
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../src/growable_buffer.hpp"
#include "report.hpp"
#include "spatialhash/spatialhash.hpp"
#include "workloads.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using spatialhash::detail::sized_for_overwrite;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Median and fastest of a set of times.
struct Summary {
  double median = 0, fastest = 0;
};

Summary summarize(const std::vector<double>& ms) {
  return {bench::median(ms), *std::min_element(ms.begin(), ms.end())};
}

/// The floor: `rows` + 1 offsets and `entries` indices in fresh memory, each written once. With
/// `through_buffer`, the indices are first written into a fresh buffer of their size and then
/// copied into place, as the default engine's per-thread buffers are (sequentially here: the
/// memory traffic of its design, without its scattered placement or its search).
double time_floor(std::size_t rows, std::size_t entries, int threads, bool through_buffer,
                  spatialhash::NeighborLists& kept) {
  kept = {};  // the previous repetition's arrays are freed before the clock starts
  const auto start = Clock::now();
  spatialhash::NeighborLists out;
  const auto signed_rows = static_cast<std::int64_t>(rows);
  const auto signed_entries = static_cast<std::int64_t>(entries);
  // Any values will do (counters: no division, so the loops are bound by memory).
  spatialhash::ResultVector<spatialhash::index_t> buffer;
  if (through_buffer) {
    sized_for_overwrite(buffer, entries);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t j = 0; j < signed_entries; ++j) {
      buffer[static_cast<std::size_t>(j)] = static_cast<spatialhash::index_t>(j);
    }
  }
  sized_for_overwrite(out.offsets, rows + 1);
  sized_for_overwrite(out.indices, entries);
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i <= signed_rows; ++i) {
      out.offsets[static_cast<std::size_t>(i)] = static_cast<std::size_t>(i);
    }
#pragma omp for schedule(static)
    for (std::int64_t j = 0; j < signed_entries; ++j) {
      const auto at = static_cast<std::size_t>(j);
      out.indices[at] = through_buffer ? buffer[at] : static_cast<spatialhash::index_t>(j);
    }
  }
  buffer = {};  // the engine frees its buffers before it returns
  const double ms = ms_since(start);
  kept = std::move(out);
  return ms;
}

/// The number of entries of a list of counts (a neighbor_counts() result, or NeighborRows::count).
template <class Counts>
std::size_t total_of(const Counts& counts) {
  return std::accumulate(counts.begin(), counts.end(), std::size_t{0});
}

/// Prints one timed line: its name, median and fastest.
void print_line(const char* name, const Summary& s) {
  std::printf("  %-44s %7.2f ms %7.2f ms\n", name, s.median, s.fastest);
}

template <int Dim>
int run(const bench::Workload& workload, int threads, int repeats) {
  using Index = spatialhash::Index<Dim, float>;
  const std::vector<float> coords(workload.coords.begin(), workload.coords.end());
  const spatialhash::Options options{.threads = threads};
  const std::size_t n = workload.size();
  const auto build_index = [&] {
    return Index(std::span<const float>(coords), workload.radius, options);
  };
  // Build + lists into `kept`: fresh lists (the previous ones freed before the clock starts), or
  // with `refill` the previous repetition's lists filled again in place.
  const auto lists_once = [&](spatialhash::NeighborLists& kept, bool refill) {
    if (!refill) kept = {};
    const auto start = Clock::now();
    const Index index = build_index();
    index.neighbor_lists(kept);
    return ms_since(start);
  };
  const auto rows_once = [&](spatialhash::NeighborRows& kept) {
    kept = {};
    const auto start = Clock::now();
    const Index index = build_index();
    spatialhash::NeighborRows rows = index.neighbor_rows();
    const double ms = ms_since(start);
    kept = std::move(rows);
    return ms;
  };
  const Index counted = build_index();
  const auto counts_once = [&](std::vector<spatialhash::index_t>& kept) {
    kept = {};
    const auto start = Clock::now();
    std::vector<spatialhash::index_t> counts = counted.neighbor_counts();
    const double ms = ms_since(start);
    kept = std::move(counts);
    return ms;
  };
  spatialhash::NeighborLists kept_lists, kept_refilled, kept_floor;
  spatialhash::NeighborRows kept_rows;
  std::vector<spatialhash::index_t> kept_counts;
  lists_once(kept_lists, false);  // warm-up: threads started, sizes known
  lists_once(kept_refilled, false);
  const std::size_t entries = kept_lists.indices.size();
  std::vector<double> floor_ms, twice_ms, build_ms, counts_ms, lists_ms, refill_ms, rows_ms;
  for (int r = 0; r < repeats; ++r) {
    floor_ms.push_back(time_floor(n, entries, threads, false, kept_floor));
    twice_ms.push_back(time_floor(n, entries, threads, true, kept_floor));
    const auto start = Clock::now();
    {
      const Index index = build_index();
      build_ms.push_back(ms_since(start));
    }
    counts_ms.push_back(counts_once(kept_counts));
    lists_ms.push_back(lists_once(kept_lists, false));
    refill_ms.push_back(lists_once(kept_refilled, true));
    rows_ms.push_back(rows_once(kept_rows));
    const std::size_t found[] = {kept_lists.indices.size(), kept_refilled.indices.size(),
                                 total_of(kept_rows.count), total_of(kept_counts)};
    const char* names[] = {"fresh lists", "refilled lists", "rows", "counts"};
    for (int k = 0; k < 4; ++k) {
      if (found[k] == entries) continue;
      std::fprintf(stderr,
                   "output_floor: repetition %d: the %s hold %zu entries, the first lists %zu\n", r,
                   names[k], found[k], entries);
      return 1;
    }
  }
  const Summary floor = summarize(floor_ms), twice = summarize(twice_ms),
                build = summarize(build_ms), counts = summarize(counts_ms),
                lists = summarize(lists_ms), refill = summarize(refill_ms),
                rows = summarize(rows_ms);
  std::printf(
      "output_floor: %s, %zu points, %d threads, %d repetitions; lists: %zu entries (%.1f MB"
      " of indices, %.1f MB of offsets)\n",
      workload.key.c_str(), n, threads, repeats, entries, entries * 4.0 / 1e6, (n + 1) * 8.0 / 1e6);
  std::printf("  %-44s %10s %10s\n", "", "median", "fastest");
  print_line("floor: fresh CSR arrays written once", floor);
  print_line("the same through a fresh buffer", twice);
  print_line("index build", build);
  print_line("count search (index built outside)", counts);
  print_line("index build + neighbor_lists()", lists);
  print_line("index build + neighbor_lists() refilled", refill);
  print_line("index build + neighbor_rows()", rows);
  std::printf("  %-44s %7.2fx    %7.2fx\n", "lists / floor", lists.median / floor.median,
              lists.fastest / floor.fastest);
  // What the differences of medians put on each part of a fresh list (each an estimate: the
  // parts overlap, and the medians come from different repetitions).
  std::printf("  parts of a fresh list (differences of medians):\n");
  std::printf("  %-44s %7.2f ms\n", "build + count search + floor through a buffer",
              build.median + counts.median + twice.median);
  std::printf("  %-44s %7.2f ms\n", "lists - build - floor",
              lists.median - build.median - floor.median);
  std::printf("  %-44s %7.2f ms\n", "fresh pages (lists - refilled lists)",
              lists.median - refill.median);
  std::printf("  %-44s %7.2f ms\n", "CSR order (lists - rows)", lists.median - rows.median);
  // Unequal CPUs (a shared host) slow the multi-thread figures, whatever the code does.
  bench::print_cpu_speeds(stdout, "  cpus after the run:", bench::measure_cpu_speeds());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // Sizes as spatialhash_bench takes them (10k, 1M, 250000).
    const bench::SideBySideArgs args = bench::parse_side_by_side_args(argc, argv);
    const int threads = args.threads == 0 ? omp_get_num_procs() : args.threads;
    bench::Workload workload = bench::make_workload(args.workload, args.points, 1);
    bench::apply_order(workload, bench::Order::shuffled, 1);
    return workload.dim == 2 ? run<2>(workload, threads, args.repeats)
                             : run<3>(workload, threads, args.repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "output_floor: %s\nusage: output_floor [workload] [points: 2 ..= 2^30] "
                 "[threads: 0 ..= 4096] [repeats: 1 ..= 10000]\n",
                 e.what());
    return 2;
  }
}
