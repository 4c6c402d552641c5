// How neighbor-list rows are best written into the caller's CSR arrays: the placement step of
// the default engine (src/engines/collect_rows.hpp) on its own. Rows of a synthetic search sit
// one after another in a buffer, in search order; each is copied to its row's place in a fresh
// output (rows in a shuffled order, as for shuffled input), once with ordinary stores
// (copy_exact) and once with non-temporal stores for the rows' whole cache lines
// (copy_streaming), alternating, on all threads; and once window by window of the output (the
// slots bucketed by the window of the output their row lands in, each window's rows read from
// their scattered places in the buffer and written within a window that fits the last-level
// cache, ordinary stores), its bucketing timed apart. Prints the median and fastest time of each
// and their ratios; exits 1 when the outputs differ.
//
//   row_placement [points] [mean row length] [repeats] [window MiB]
//       (defaults 1000000 131 15 16: W3-like rows; 28 is W1-like)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../src/engines/chunk_copy.hpp"
#include "../src/growable_buffer.hpp"
#include "spatialhash/types.hpp"

namespace {

using spatialhash::ResultVector;
using spatialhash::detail::sized_for_overwrite;

/// The rows of a synthetic search: slot t has length[t] ids at source[t] of `buffer` and goes to
/// row row_of[t], which starts at start[t] of the output.
struct Rows {
  std::vector<std::uint32_t> length;
  std::vector<std::size_t> source, start;
  std::vector<std::uint32_t> buffer;
  std::size_t total = 0;
};

Rows make_rows(std::size_t n, double mean) {
  std::mt19937_64 rng(1);
  Rows rows;
  rows.length.resize(n);
  // Lengths spread like a clustered search's (exponential, capped), at least one id.
  std::exponential_distribution<double> spread(1.0 / mean);
  for (auto& l : rows.length)
    l = static_cast<std::uint32_t>(std::min(8.0 * mean, 1.0 + spread(rng)));
  std::vector<std::uint32_t> row_of(n);
  std::iota(row_of.begin(), row_of.end(), 0u);
  std::shuffle(row_of.begin(), row_of.end(), rng);
  std::vector<std::size_t> offsets(n + 1, 0);
  for (std::size_t t = 0; t < n; ++t) offsets[row_of[t] + 1] = rows.length[t];
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  rows.total = offsets[n];
  rows.start.resize(n);
  rows.source.resize(n);
  std::size_t at = 0;
  for (std::size_t t = 0; t < n; ++t) {
    rows.start[t] = offsets[row_of[t]];
    rows.source[t] = at;
    at += rows.length[t];
  }
  rows.buffer.resize(rows.total + spatialhash::detail::kFilterSlack);
  for (auto& id : rows.buffer) id = static_cast<std::uint32_t>(rng());
  return rows;
}

/// Places every row into a fresh output, as collect_rows does; returns the milliseconds taken.
double place(const Rows& rows, bool streaming, ResultVector<std::uint32_t>& out) {
  out = {};
  const auto start = std::chrono::steady_clock::now();
  sized_for_overwrite(out, rows.total);
  const auto n = static_cast<std::int64_t>(rows.length.size());
  constexpr std::int64_t kAhead = 8;
#pragma omp parallel
  {
#pragma omp for schedule(dynamic, 4096)
    for (std::int64_t t = 0; t < n; ++t) {
      if (t + kAhead < n) __builtin_prefetch(out.data() + rows.start[t + kAhead], 1);
      std::uint32_t* target = out.data() + rows.start[t];
      const std::uint32_t* source = rows.buffer.data() + rows.source[t];
      if (streaming) {
        spatialhash::detail::copy_streaming(target, source, rows.length[t]);
      } else {
        spatialhash::detail::copy_exact(target, source, rows.length[t]);
      }
    }
    spatialhash::detail::streaming_done();
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Milliseconds of place_by_window(): the slots' bucketing by window, and the placement.
struct WindowTimes {
  double bucketing = 0.0, placing = 0.0;
};

/// Places every row into a fresh output window by window: the slots are bucketed by the window of
/// `window` ids their row starts in (a counting sort), then the threads take windows; within one,
/// rows are read at their scattered places in the buffer (the sources kAhead slots on prefetched)
/// and written into the window, which the last-level cache can hold while it fills.
WindowTimes place_by_window(const Rows& rows, std::size_t window,
                            ResultVector<std::uint32_t>& out) {
  out = {};
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = rows.length.size();
  const std::size_t windows = rows.total / window + 1;
  std::vector<std::uint32_t> first(windows + 1, 0), slots(n);
  for (std::size_t t = 0; t < n; ++t) ++first[rows.start[t] / window + 1];
  std::partial_sum(first.begin(), first.end(), first.begin());
  std::vector<std::uint32_t> at(first.begin(), first.end() - 1);
  for (std::size_t t = 0; t < n; ++t)
    slots[at[rows.start[t] / window]++] = static_cast<std::uint32_t>(t);
  const auto bucketed = std::chrono::steady_clock::now();
  sized_for_overwrite(out, rows.total);
  const auto signed_windows = static_cast<std::int64_t>(windows);
  constexpr std::uint32_t kAhead = 16;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t w = 0; w < signed_windows; ++w) {
    const std::uint32_t begin = first[static_cast<std::size_t>(w)];
    const std::uint32_t end = first[static_cast<std::size_t>(w) + 1];
    for (std::uint32_t i = begin; i < end; ++i) {
      if (i + kAhead < end) {
        const std::uint32_t ahead = slots[i + kAhead];
        const std::uint32_t* row = rows.buffer.data() + rows.source[ahead];
        for (std::uint32_t k = 0; k < rows.length[ahead]; k += 16) __builtin_prefetch(row + k);
      }
      const std::uint32_t t = slots[i];
      spatialhash::detail::copy_exact(out.data() + rows.start[t],
                                      rows.buffer.data() + rows.source[t], rows.length[t]);
    }
  }
  const auto done = std::chrono::steady_clock::now();
  return {std::chrono::duration<double, std::milli>(bucketed - start).count(),
          std::chrono::duration<double, std::milli>(done - bucketed).count()};
}

/// The median of `times` (sorted in place).
double median_of(std::vector<double>& times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 1000000;
  double mean = 131.0;
  int repeats = 15;
  int window_mib = 16;
  try {
    if (argc > 1) n = std::stoull(argv[1]);
    if (argc > 2) mean = std::stod(argv[2]);
    if (argc > 3) repeats = std::stoi(argv[3]);
    if (argc > 4) window_mib = std::stoi(argv[4]);
  } catch (const std::exception&) {
    n = 0;  // not a number: the usage below
  }
  if (argc > 5 || n == 0 || n > 100000000 || !(mean >= 1.0 && mean <= 10000.0) || repeats < 1 ||
      window_mib < 1 || window_mib > 4096) {
    std::fprintf(stderr,
                 "usage: row_placement [points 1..1e8] [mean row length 1..1e4] [repeats >= 1] "
                 "[window MiB 1..4096]\n");
    return 2;
  }
  const Rows rows = make_rows(n, mean);
  const std::size_t window = static_cast<std::size_t>(window_mib) << 18;  // ids of 4 bytes
  std::vector<double> times[3], bucketing;
  ResultVector<std::uint32_t> outputs[3];
  for (int r = 0; r < repeats; ++r) {
    for (int streaming = 0; streaming < 2; ++streaming) {
      times[streaming].push_back(place(rows, streaming == 1, outputs[streaming]));
    }
    const WindowTimes by_window = place_by_window(rows, window, outputs[2]);
    bucketing.push_back(by_window.bucketing);
    times[2].push_back(by_window.placing);
  }
  if (outputs[0] != outputs[1] || outputs[0] != outputs[2]) {
    std::fprintf(stderr, "row_placement: the placements differ\n");
    return 1;
  }
  double median[3];
  const char* names[3] = {"ordinary stores", "non-temporal lines", "window by window"};
  for (int s = 0; s < 3; ++s) {
    median[s] = median_of(times[s]);
    std::printf("%-22s median %8.2f ms  fastest %8.2f ms\n", names[s], median[s], times[s][0]);
  }
  std::printf("%-22s median %8.2f ms (not in the line above)\n", "  its bucketing",
              median_of(bucketing));
  std::printf(
      "%zu rows, %.1f ids per row (%.0f MB): non-temporal lines %.2fx as fast, window by "
      "window (%d MiB, bucketing left out) %.2fx as fast as ordinary stores (medians)\n",
      n, static_cast<double>(rows.total) / static_cast<double>(n),
      static_cast<double>(rows.total) * 4e-6, median[0] / median[1], window_mib,
      median[0] / median[2]);
  return 0;
}
