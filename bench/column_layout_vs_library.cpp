// The column layout's searches (column_layout.hpp: a prototype of a gather-free layout for the
// default engine) timed against the library on the same points, same threads, same process,
// round after round: the count search against neighbor_counts(), the rows against
// neighbor_rows() and the CSR lists against neighbor_lists(), each into fresh output, on indexes
// built outside the timing (the prototype's serial build is timed apart). Then every point is
// checked against the library: its exact count must lie between the prototype's count and that
// count plus the band candidates of its block of four queries, and its row and its list row must
// hold the library's neighbors; exit 1 otherwise.
//
//   column_layout [workload] [points] [threads] [repeats]   (defaults W1 1M 0 9; threads 0: all
//                                                            cores; W1, W2, W3 or W5, shuffled)
//
// Exits 77 (CTest: skipped) on a processor without AVX-512 F, BW, VL and DQ.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "column_layout.hpp"
#include "report.hpp"
#include "spatialhash/spatialhash.hpp"
#include "workloads.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

/// Median and fastest of a set of times.
std::pair<double, double> summarize(const std::vector<double>& ms) {
  return {bench::median(ms), *std::min_element(ms.begin(), ms.end())};
}

/// Whether two rows hold the same neighbors (in any order); a and b are scratch.
bool same_neighbors(std::span<const spatialhash::index_t> got,
                    std::span<const spatialhash::index_t> expected, std::vector<std::uint32_t>& a,
                    std::vector<std::uint32_t>& b) {
  a.assign(got.begin(), got.end());
  b.assign(expected.begin(), expected.end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

/// Row i of CSR lists.
std::span<const spatialhash::index_t> row_of(const spatialhash::NeighborLists& lists,
                                             std::size_t i) {
  return {lists.indices.data() + lists.offsets[i], lists.offsets[i + 1] - lists.offsets[i]};
}

/// Prints one timed pair: the prototype's and the library's median and fastest, and the ratio.
void print_pair(const char* what, const std::vector<double>& column_ms,
                const std::vector<double>& library_ms) {
  const auto [column_median, column_fastest] = summarize(column_ms);
  const auto [library_median, library_fastest] = summarize(library_ms);
  std::printf("  %-10s %7.2f ms %7.2f ms   %7.2f ms %7.2f ms   %5.2fx   %5.2fx\n", what,
              column_median, column_fastest, library_median, library_fastest,
              library_median / column_median, library_fastest / column_fastest);
}

int run(const bench::Workload& workload, int threads, int repeats) {
  namespace column = bench::column;
  const std::vector<float> points(workload.coords.begin(), workload.coords.end());
  const std::size_t n = workload.size();
  const auto build_start = Clock::now();
  const column::Layout layout = column::build_layout(points, workload.radius);
  const double build_ms = ms_since(build_start);
  const spatialhash::Index<3, float> index(std::span<const float>(points), workload.radius,
                                           spatialhash::Options{.threads = threads});
  const column::Band band = column::band_for(workload.radius);
  std::vector<double> counts_ms, library_counts_ms, rows_ms, library_rows_ms, lists_ms,
      library_lists_ms;
  std::vector<std::uint32_t> counts, banded(n);
  std::vector<spatialhash::index_t> exact;
  spatialhash::NeighborRows rows, library_rows;
  spatialhash::NeighborLists lists, library_lists;
  column::Totals totals;
  for (int r = 0; r < repeats; ++r) {
    counts = {};
    std::fill(banded.begin(), banded.end(), 0u);  // the check's, not the search's: untimed
    auto start = Clock::now();
    counts.resize(n);
    totals = column::count_columns(layout, band, threads, counts, banded);
    counts_ms.push_back(ms_since(start));
    exact = {};
    start = Clock::now();
    exact = index.neighbor_counts();
    library_counts_ms.push_back(ms_since(start));
    // The rows' shared array sized as the library sizes its own: the entries with a quarter more
    // and a chunk per thread (the library estimates them from a sample).
    const std::size_t capacity = static_cast<std::size_t>(
        totals.below + totals.in_band + totals.below / 4 + (std::size_t{1} << 16) * threads);
    rows = {};
    start = Clock::now();
    column::rows_columns(layout, workload.radius, band, threads, capacity, rows);
    rows_ms.push_back(ms_since(start));
    library_rows = {};
    start = Clock::now();
    library_rows = index.neighbor_rows();
    library_rows_ms.push_back(ms_since(start));
    // Fresh lists each round, as the benchmark's rebuild_lists.
    lists = {};
    start = Clock::now();
    column::lists_columns(layout, workload.radius, band, threads, capacity, lists);
    lists_ms.push_back(ms_since(start));
    library_lists = {};
    start = Clock::now();
    library_lists = index.neighbor_lists();
    library_lists_ms.push_back(ms_since(start));
  }
  std::vector<std::uint32_t> a, b;
  for (std::size_t i = 0; i < n; ++i) {
    if (exact[i] < counts[i] || exact[i] > counts[i] + banded[i]) {
      std::fprintf(stderr,
                   "column_layout: point %zu has %u neighbors, the prototype counts %u (+%u in "
                   "the band)\n",
                   i, exact[i], counts[i], banded[i]);
      return 1;
    }
    if (!same_neighbors(row_of(lists, i), row_of(library_lists, i), a, b)) {
      std::fprintf(stderr,
                   "column_layout: point %zu: the prototype's list row differs from the "
                   "library's\n",
                   i);
      return 1;
    }
    if (!same_neighbors(rows.row(i), library_rows.row(i), a, b)) {
      std::fprintf(stderr,
                   "column_layout: point %zu: the prototype's row (%u) differs from the "
                   "library's (%u)\n",
                   i, rows.count[i], library_rows.count[i]);
      return 1;
    }
  }
  const std::uint64_t exact_total = std::accumulate(exact.begin(), exact.end(), std::uint64_t{0});
  std::printf(
      "column_layout: %s, %zu points, %d threads, %d repetitions; lattice %d x %d x %d, "
      "prototype build %.1f ms (serial)\n",
      workload.key.c_str(), n, threads, repeats, layout.dims[0], layout.dims[1], layout.dims[2],
      build_ms);
  std::printf("  %-10s %21s   %21s   %15s\n", "", "column layout", "library", "library/column");
  std::printf("  %-10s %10s %10s   %10s %10s   %7s %7s\n", "", "median", "fastest", "median",
              "fastest", "median", "fastest");
  print_pair("counts", counts_ms, library_counts_ms);
  print_pair("rows", rows_ms, library_rows_ms);
  print_pair("lists", lists_ms, library_lists_ms);
  std::printf(
      "  entries: library %llu, prototype %llu below the band + %llu inside it; every point's "
      "count and row agree\n",
      static_cast<unsigned long long>(exact_total), static_cast<unsigned long long>(totals.below),
      static_cast<unsigned long long>(totals.in_band));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const bench::SideBySideArgs args = bench::parse_side_by_side_args(argc, argv);
    if (!has_avx512()) {
      std::printf("column_layout: no AVX-512 (F, BW, VL, DQ) on this processor; skipped\n");
      return 77;
    }
    const int threads = args.threads == 0 ? omp_get_num_procs() : args.threads;
    bench::Workload workload = bench::make_workload(args.workload, args.points, 1);
    if (workload.dim != 3) {
      throw std::invalid_argument("workload " + args.workload + " is not 3D");
    }
    bench::apply_order(workload, bench::Order::shuffled, 1);
    return run(workload, threads, args.repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "column_layout: %s\nusage: column_layout [W1|W2|W3|W5] [points: 2 ..= 2^30] "
                 "[threads: 0 ..= 4096] [repeats: 1 ..= 10000]\n",
                 e.what());
    return 2;
  }
}
