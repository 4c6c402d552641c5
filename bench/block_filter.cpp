// The block filter alone (src/simd/block_filter.hpp), every level this processor runs side by
// side on the same calls: 4 queries of one cell against the 9 column runs of 3 cells each that
// the column search gives a block (cells of edge r), on W1-like cells (a jittered lattice of
// spacing 1 with r = 2: 8 points per cell, runs of 24) and W2-like cells (uniform density 1, r =
// 1.928: Poisson 7.17 points per cell, runs of 10-35). Both in count mode (a count search: no
// rows) and with rows stored. A third case sets W2's runs to their mean length, so that every run
// loop has the same trip count: its time against W2's is what the runs' varying lengths cost
// (their loops' mispredicted exits). Each call has its own candidates (about 3.5 KB): the default
// 4096 calls are held in L3 between passes, 256 fit a 1 MiB L2. Prints nanoseconds per call and
// per query and candidate vector of 8 (the AVX2 width), and each level's speed against scalar.
// Exits 1 when a level's neighbor counts (sure candidates, plus border ones decided in double),
// in count mode or with rows, differ from a double brute force (checked in untimed passes).
//
//   block_filter [calls] [repeats]   (defaults 4096 200)
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../src/float_band.hpp"
#include "../src/simd/block_filter.hpp"
#include "spatialhash/types.hpp"

namespace {

using spatialhash::Simd;
using spatialhash::detail::BlockFilterFn;
using spatialhash::detail::BlockOutput;
using spatialhash::detail::CandidateRuns;
using spatialhash::detail::FloatBand;
using spatialhash::detail::QueryBlock;
using spatialhash::detail::SoaView;

constexpr int kQueries = spatialhash::detail::kBlockQueries;

/// Filter calls over one set of candidates (structure of arrays, candidate j's id is j).
struct Calls {
  double radius = 0;
  std::array<std::vector<float>, 3> axis;
  std::vector<std::uint32_t> ids;
  std::vector<CandidateRuns> runs;
  std::vector<QueryBlock<3>> queries;
  /// Candidate vectors of 8 over all calls' runs.
  std::size_t vectors8() const {
    std::size_t total = 0;
    for (const CandidateRuns& r : runs) {
      for (int i = 0; i < r.count; ++i) total += (r.run[i].end - r.run[i].begin + 7) / 8;
    }
    return total;
  }
  SoaView<3> view() const { return {{axis[0].data(), axis[1].data(), axis[2].data()}, ids.data()}; }
};

/// `count` calls, each 27 cells of edge `radius` around a centre cell, 3 runs a column along z.
/// `lattice`: each cell holds 8 sites of a lattice of spacing radius / 2 jittered by +-0.05;
/// otherwise a Poisson number of uniform points (mean `per_cell`), the centre at least 4.
Calls make_calls(std::size_t count, double radius, bool lattice, double per_cell,
                 std::mt19937_64& rng) {
  Calls calls;
  calls.radius = radius;
  std::poisson_distribution<int> poisson(per_cell);
  std::uniform_real_distribution<double> unit(0.0, 1.0), jitter(-0.05, 0.05);
  for (std::size_t c = 0; c < count; ++c) {
    CandidateRuns runs;
    std::uint32_t centre = 0;
    for (int dx = -1; dx <= 1; ++dx) {
      for (int dy = -1; dy <= 1; ++dy) {
        const auto begin = static_cast<std::uint32_t>(calls.ids.size());
        for (int dz = -1; dz <= 1; ++dz) {
          if (dx == 0 && dy == 0 && dz == 0) centre = static_cast<std::uint32_t>(calls.ids.size());
          const std::array<int, 3> cell{dx, dy, dz};
          const int points =
              lattice ? 8 : std::max(poisson(rng), cell == std::array{0, 0, 0} ? 4 : 0);
          for (int p = 0; p < points; ++p) {
            for (int k = 0; k < 3; ++k) {
              const double within =
                  lattice ? (0.25 + 0.5 * ((p >> k) & 1)) + jitter(rng) / radius : unit(rng);
              calls.axis[k].push_back(static_cast<float>((cell[k] + 1 + within) * radius));
            }
            calls.ids.push_back(static_cast<std::uint32_t>(calls.ids.size()));
          }
        }
        runs.add(begin, static_cast<std::uint32_t>(calls.ids.size()));
      }
    }
    QueryBlock<3> block;
    block.count = kQueries;
    for (int q = 0; q < kQueries; ++q) {
      for (int k = 0; k < 3; ++k) block.position[q][k] = calls.axis[k][centre + q];
      block.skip[q] = centre + static_cast<std::uint32_t>(q);
    }
    calls.runs.push_back(runs);
    calls.queries.push_back(block);
  }
  // The filters' whole-register stores and loads stay inside the arrays.
  for (auto& a : calls.axis) a.resize(a.size() + 16, 0.0f);
  calls.ids.resize(calls.ids.size() + 16, 0);
  return calls;
}

/// The same calls with every run given the runs' mean length: a shorter run takes in the
/// candidates after it, a longer one is cut (the brute force counts the same runs).
Calls with_equal_runs(Calls calls) {
  std::size_t total = 0, runs = 0;
  for (const CandidateRuns& r : calls.runs) {
    total += r.size();
    runs += static_cast<std::size_t>(r.count);
  }
  const auto mean = static_cast<std::uint32_t>((total + runs / 2) / runs);
  const auto last = static_cast<std::uint32_t>(calls.ids.size() - 16);
  for (CandidateRuns& r : calls.runs) {
    for (int i = 0; i < r.count; ++i) r.run[i].end = std::min(r.run[i].begin + mean, last);
  }
  return calls;
}

/// Whether candidate j lies within the calls' radius of `position`, decided in double.
bool within_radius(const Calls& calls, std::uint32_t j, const std::array<float, 3>& position) {
  double d2 = 0;
  for (int k = 0; k < 3; ++k) {
    const double d = double{calls.axis[k][j]} - double{position[k]};
    d2 += d * d;
  }
  return d2 <= calls.radius * calls.radius;
}

/// Every query's neighbors (itself excluded) by brute force over its call's runs.
std::vector<std::uint32_t> brute_force_counts(const Calls& calls) {
  std::vector<std::uint32_t> counts;
  for (std::size_t c = 0; c < calls.runs.size(); ++c) {
    const CandidateRuns& runs = calls.runs[c];
    const QueryBlock<3>& block = calls.queries[c];
    for (int q = 0; q < block.count; ++q) {
      std::uint32_t found = 0;
      for (int i = 0; i < runs.count; ++i) {
        for (std::uint32_t j = runs.run[i].begin; j < runs.run[i].end; ++j) {
          found += j != block.skip[q] && within_radius(calls, j, block.position[q]);
        }
      }
      counts.push_back(found);
    }
  }
  return counts;
}

/// Rows of one filter call, the filter's band and a row stride with room for every call.
struct FilterScratch {
  FloatBand band;
  std::size_t stride = 0;
  std::vector<std::uint32_t> sure, border;

  explicit FilterScratch(const Calls& calls)
      : band(spatialhash::detail::make_float_band(calls.radius, 4.0 * calls.radius, 3)) {
    std::size_t longest = 0;
    for (const CandidateRuns& r : calls.runs) longest = std::max<std::size_t>(longest, r.size());
    stride = longest + spatialhash::detail::kFilterSlack;
    sure.resize(stride * kQueries);
    border.resize(stride * kQueries);
  }
  /// The output of a call: rows, or counts alone (a count search).
  BlockOutput output(bool rows) {
    return BlockOutput{rows ? sure.data() : nullptr, border.data(), stride};
  }
};

/// Every query's neighbors by `filter` (count mode, or with rows): its sure candidates plus its
/// border ones decided in double. Untimed.
std::vector<std::uint32_t> filter_counts(const Calls& calls, BlockFilterFn<3> filter, bool rows) {
  FilterScratch scratch(calls);
  const SoaView<3> view = calls.view();
  std::vector<std::uint32_t> counts;
  for (std::size_t c = 0; c < calls.runs.size(); ++c) {
    BlockOutput out = scratch.output(rows);
    filter(view, calls.runs[c], calls.queries[c], scratch.band, out);
    for (int q = 0; q < kQueries; ++q) {
      std::uint32_t found = out.sure_count[q];
      for (std::uint32_t b = 0; b < out.border_count[q]; ++b) {
        const std::uint32_t j = scratch.border[static_cast<std::size_t>(q) * scratch.stride + b];
        found += within_radius(calls, j, calls.queries[c].position[q]);
      }
      counts.push_back(found);
    }
  }
  return counts;
}

struct Timing {
  double count_ns = 1e300, rows_ns = 1e300;
};

/// The fastest of `repeats` passes over every call, in count mode and with rows, in ns per call.
Timing time_filter(const Calls& calls, BlockFilterFn<3> filter, int repeats) {
  FilterScratch scratch(calls);
  const SoaView<3> view = calls.view();
  Timing timing;
  for (int pass = 0; pass < repeats; ++pass) {
    for (const bool rows : {false, true}) {
      const auto start = std::chrono::steady_clock::now();
      for (std::size_t c = 0; c < calls.runs.size(); ++c) {
        BlockOutput out = scratch.output(rows);
        filter(view, calls.runs[c], calls.queries[c], scratch.band, out);
      }
      const double ns =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
              .count() /
          static_cast<double>(calls.runs.size());
      double& best = rows ? timing.rows_ns : timing.count_ns;
      best = std::min(best, ns);
    }
  }
  return timing;
}

int run(int argc, char** argv) {
  const std::size_t count = argc > 1 ? std::stoul(argv[1]) : 4096;
  const int repeats = argc > 2 ? std::stoi(argv[2]) : 200;
  if (count == 0 || repeats < 1) throw std::invalid_argument("calls and repeats must be positive");
  struct Level {
    const char* name;
    Simd simd;
  };
  std::vector<Level> levels{{"scalar", Simd::scalar}};
  if (spatialhash::simd_available(Simd::avx2)) levels.push_back({"AVX2", Simd::avx2});
  if (spatialhash::simd_available(Simd::avx512)) levels.push_back({"AVX-512", Simd::avx512});
  std::mt19937_64 rng(1);
  const Calls w1 = make_calls(count, 2.0, true, 8.0, rng);
  const Calls w2 = make_calls(count, 1.928, false, 7.17, rng);
  const Calls w2_equal = with_equal_runs(w2);
  struct Case {
    const char* name;
    const Calls* calls;
  };
  const std::array<Case, 3> cases{
      {{"W1-like", &w1}, {"W2-like", &w2}, {"W2 equal runs", &w2_equal}}};
  std::printf(
      "block filter alone, %zu calls of %d queries, fastest of %d passes (ns per call; "
      "per q.v.: per query and vector of 8 candidates)\n",
      count, kQueries, repeats);
  std::printf("%-14s %-8s %9s %11s %9s %9s %9s %9s %9s\n", "case", "level", "cand/call", "count ns",
              "per q.v.", "x scalar", "rows ns", "per q.v.", "x scalar");
  bool agree = true;
  for (const Case& c : cases) {
    const std::vector<std::uint32_t> expected = brute_force_counts(*c.calls);
    double candidates = 0;
    for (const CandidateRuns& r : c.calls->runs) candidates += r.size();
    candidates /= static_cast<double>(count);
    const double query_vectors =
        kQueries * static_cast<double>(c.calls->vectors8()) / static_cast<double>(count);
    Timing scalar;
    for (const Level& level : levels) {
      const BlockFilterFn<3> filter = spatialhash::detail::best_block_filter<3>(level.simd);
      const Timing t = time_filter(*c.calls, filter, repeats);
      if (level.simd == Simd::scalar) scalar = t;
      const bool same = filter_counts(*c.calls, filter, false) == expected &&
                        filter_counts(*c.calls, filter, true) == expected;
      agree = agree && same;
      std::printf("%-14s %-8s %9.1f %11.1f %9.2f %8.2fx %9.1f %9.2f %8.2fx%s\n", c.name, level.name,
                  candidates, t.count_ns, t.count_ns / query_vectors, scalar.count_ns / t.count_ns,
                  t.rows_ns, t.rows_ns / query_vectors, scalar.rows_ns / t.rows_ns,
                  same ? "" : "  DIFFERS FROM BRUTE FORCE");
    }
  }
  return agree ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "block_filter: %s\n", e.what());
    return 2;
  }
}
