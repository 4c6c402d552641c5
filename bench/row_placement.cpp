// How neighbor-list rows are best written into the caller's CSR arrays: the placement step of
// the default engine (src/engines/collect_rows.hpp) on its own. Rows of a synthetic search sit
// one after another in a buffer, in search order; each is copied to its row's place in a fresh
// output (rows in a shuffled order, as for shuffled input), once with ordinary stores
// (copy_exact) and once with non-temporal stores for the rows' whole cache lines
// (copy_streaming), alternating, on all threads. Prints the median and fastest time of each and
// their ratio; exits 1 when the two outputs differ.
//
//   row_placement [points] [mean row length] [repeats]   (defaults 1000000 131 15: W3-like rows;
//                                                         28 is W1-like)
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

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 1000000;
  double mean = 131.0;
  int repeats = 15;
  try {
    if (argc > 1) n = std::stoull(argv[1]);
    if (argc > 2) mean = std::stod(argv[2]);
    if (argc > 3) repeats = std::stoi(argv[3]);
  } catch (const std::exception&) {
    n = 0;  // not a number: the usage below
  }
  if (argc > 4 || n == 0 || n > 100000000 || !(mean >= 1.0 && mean <= 10000.0) || repeats < 1) {
    std::fprintf(stderr,
                 "usage: row_placement [points 1..1e8] [mean row length 1..1e4] [repeats >= 1]\n");
    return 2;
  }
  const Rows rows = make_rows(n, mean);
  std::vector<double> times[2];
  ResultVector<std::uint32_t> outputs[2];
  for (int r = 0; r < repeats; ++r) {
    for (int streaming = 0; streaming < 2; ++streaming) {
      times[streaming].push_back(place(rows, streaming == 1, outputs[streaming]));
    }
  }
  if (outputs[0] != outputs[1]) {
    std::fprintf(stderr, "row_placement: the two placements differ\n");
    return 1;
  }
  double median[2];
  for (int s = 0; s < 2; ++s) {
    std::sort(times[s].begin(), times[s].end());
    median[s] = times[s][times[s].size() / 2];
    std::printf("%-22s median %8.2f ms  fastest %8.2f ms\n",
                s == 0 ? "ordinary stores" : "non-temporal lines", median[s], times[s][0]);
  }
  std::printf("%zu rows, %.1f ids per row (%.0f MB): non-temporal lines %.2fx as fast (medians)\n",
              n, static_cast<double>(rows.total) / static_cast<double>(n),
              static_cast<double>(rows.total) * 4e-6, median[0] / median[1]);
  return 0;
}
