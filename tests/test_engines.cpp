// Every engine x {2D, 3D} x {float, double} against the double-precision brute-force oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <utility>

#include "../src/simd/row_sort.hpp"
#include "../src/sort_rows.hpp"
#include "check_against_oracle.hpp"
#include "datasets.hpp"
#include "engine_cases.hpp"
#include "expect_row_layout.hpp"
#include "sanitized_build.hpp"

namespace {

using spatialhash::Engine;

class EngineTest : public ::testing::TestWithParam<spatialhash::Options> {
 protected:
  /// Runs `check` for every dimension and coordinate type.
  template <class Make>
  void for_all(Make make_dataset) {
    run<2, float>(make_dataset.template operator()<2>());
    run<2, double>(make_dataset.template operator()<2>());
    run<3, float>(make_dataset.template operator()<3>());
    run<3, double>(make_dataset.template operator()<3>());
  }
  template <int Dim, class T>
  void run(const datasets::Dataset& d) {
    SCOPED_TRACE(d.name + " dim=" + std::to_string(Dim) + " " +
                 (std::is_same_v<T, float> ? "float" : "double") +
                 " r=" + std::to_string(d.radius));
    check_against_oracle<Dim, T>(GetParam(), d);
  }
};

TEST_P(EngineTest, Uniform) {
  for_all([]<int D>() { return datasets::uniform<D>(1500, 10.0, D == 2 ? 0.5 : 1.2, 1); });
}
TEST_P(EngineTest, Clustered) {
  for_all([]<int D>() { return datasets::clustered<D>(1500, 0.4, 2); });
}
TEST_P(EngineTest, JitteredLattice) {
  for_all([]<int D>() { return datasets::lattice<D>(D == 2 ? 36 : 11, 1.0, 0.05, 2.0, 3); });
}
TEST_P(EngineTest, ExactLatticeRadiusMultipleOfSpacing) {
  // Pairs at exactly distance r: the rule keeps them (d2 <= r2).
  for_all([]<int D>() { return datasets::lattice<D>(D == 2 ? 30 : 10, 0.5, 0.0, 1.0, 4); });
  for_all([]<int D>() { return datasets::lattice<D>(D == 2 ? 30 : 10, 1.0, 0.0, 1.0, 4); });
  for_all([]<int D>() { return datasets::lattice<D>(D == 2 ? 30 : 10, 0.1, 0.0, 0.3, 4); });
}
TEST_P(EngineTest, ExactLatticeRadiusSqrt2TimesSpacing) {
  for_all(
      []<int D>() { return datasets::lattice<D>(D == 2 ? 30 : 10, 1.0, 0.0, std::sqrt(2.0), 5); });
  for_all([]<int D>() {
    return datasets::lattice<D>(D == 2 ? 30 : 10, 0.1, 0.0, std::sqrt(3.0) * 0.1, 5);
  });
}
TEST_P(EngineTest, LatticeOffsetNegative) {
  for_all([]<int D>() { return datasets::lattice<D>(D == 2 ? 30 : 10, 0.25, 0.0, 0.5, 6, -3.0); });
}
TEST_P(EngineTest, Duplicates) {
  for_all([]<int D>() { return datasets::duplicates<D>(400, 1.0, 7); });
}
TEST_P(EngineTest, AllPointsInOneCell) {
  // Rows longer than the longest sorting network (256 with AVX-512, 64 with AVX2); 150 points
  // under the sanitizers, whose build has no AVX-512 (this test, quadratic, took 20 s there).
  for_all([]<int D>() { return datasets::one_cell<D>(kSanitizedBuild ? 150 : 300, 1.0, 8); });
}
TEST_P(EngineTest, Collinear) {
  for_all([]<int D>() { return datasets::collinear<D>(800, 0.3, 9); });
}
TEST_P(EngineTest, FlatSet) {
  for_all([]<int D>() { return datasets::flat<D>(1000, 0.4, 10); });
}
TEST_P(EngineTest, LargeOffsetSurveyScan) {
  for_all([]<int D>() { return datasets::large_offset<D>(1500, 11); });
}
TEST_P(EngineTest, FarFromOriginTinyRadius) {
  for_all([]<int D>() { return datasets::far_tiny<D>(300, 12); });
}
TEST_P(EngineTest, HugeRadiusAllNeighbors) {
  for_all([]<int D>() { return datasets::uniform<D>(200, 10.0, 1e6, 13); });
}
TEST_P(EngineTest, EmptyAndSinglePoint) {
  for_all([]<int D>() { return datasets::Dataset{"empty", {}, 1.0}; });
  for_all([]<int D>() { return datasets::uniform<D>(1, 10.0, 1.0, 14); });
}
// Points of ManyBlocksOnAllThreads. Sanitized builds take a sixth: still several work blocks per
// thread (blocks of 256 points at the least), at a thirty-sixth of the brute-force oracle's cost
// (9000 points took 316 s of the sanitized tests' 1092 s on 2 cores, brute_force alone 103 s, and
// the CI run had reached 24 minutes; at 3000 a CI run on a slow host took 25 minutes again).
constexpr std::size_t kManyBlocksPoints = kSanitizedBuild ? 1500 : 9000;

TEST_P(EngineTest, ManyBlocksOnAllThreads) {
  // Large enough for several parallel work blocks and threaded builds (default: all cores); the
  // uniform box keeps its density whatever the count. brute_force, quadratic in every query form,
  // takes at most 3000 (still 11 blocks): at 9000 its case took 19.6 s, a quarter of the release
  // build's test_engines.
  const std::size_t n = GetParam().engine == Engine::brute_force
                            ? std::min<std::size_t>(kManyBlocksPoints, 3000)
                            : kManyBlocksPoints;
  for_all([n]<int D>() {
    const double side = (D == 2 ? 40.0 : 20.0) * std::pow(n / 9000.0, 1.0 / D);
    return datasets::uniform<D>(n, side, 1.0, 15);
  });
  for_all([n]<int D>() { return datasets::clustered<D>(n, 0.3, 16); });
}
TEST_P(EngineTest, RandomizedSeedsAndRadii) {
  // Property test: many seeds, radii from tiny to larger than the box (half of them under the
  // sanitizers: 32 s of their run's CPU time in all).
  const std::uint64_t seeds = kSanitizedBuild ? 6 : 12;
  for (std::uint64_t seed = 100; seed < 100 + seeds; ++seed) {
    std::mt19937_64 g(seed);
    const double radius = std::exp(std::uniform_real_distribution<double>(-4.0, 2.5)(g));
    const auto n = static_cast<std::size_t>(std::uniform_int_distribution<int>(0, 700)(g));
    for_all([&]<int D>() {
      return seed % 2 ? datasets::uniform<D>(n, 5.0, radius, seed)
                      : datasets::clustered<D>(n, radius, seed);
    });
  }
}

/// Batched cross queries of `queries` (interleaved 3D positions) against the points of `d`: rows
/// compared as sets with the oracle's balls, buffered, with low_memory, and as NeighborRows.
void check_cross(const spatialhash::Options& options, const datasets::Dataset& d,
                 const std::vector<double>& queries) {
  const std::size_t m = queries.size() / 3;
  const spatialhash::Index<3, double> index(std::span<const double>(d.xyz), d.radius, options);
  const spatialhash::PointsView<3, double> view(queries.data(), m);
  std::vector<std::vector<std::size_t>> wants(m);  // the oracle's rows, each checked 4 times
  for (std::size_t q = 0; q < m; ++q) {
    const std::array<double, 3> center{queries[3 * q], queries[3 * q + 1], queries[3 * q + 2]};
    wants[q] = oracle::ball<3>(d.xyz, center, d.radius);
  }
  for (const bool low_memory : {false, true}) {
    const auto lists = index.cross(view, {.low_memory = low_memory});
    ASSERT_EQ(lists.size(), m);
    for (std::size_t q = 0; q < m; ++q) {
      std::vector<std::size_t> row(lists.indices.begin() + lists.offsets[q],
                                   lists.indices.begin() + lists.offsets[q + 1]);
      std::sort(row.begin(), row.end());
      ASSERT_EQ(row, wants[q]) << d.name << " cross row " << q
                               << (low_memory ? " (low memory)" : "");
    }
  }
  const auto rows = index.cross_rows(view);
  expect_row_layout(rows, m);
  for (std::size_t q = 0; q < m; ++q) {
    const auto got = rows.row(q);
    std::vector<std::size_t> row(got.begin(), got.end());
    std::sort(row.begin(), row.end());
    ASSERT_EQ(row, wants[q]) << d.name << " cross_rows row " << q;
  }
  // The same queries with a stride of 4, each followed by a NaN that nothing may read (the
  // engines read double queries in place, whatever their layout), with distances: the rows as
  // the oracle's, each entry's distance the one the packed queries get.
  std::vector<double> padded;
  for (std::size_t q = 0; q < m; ++q) {
    padded.insert(padded.end(), queries.begin() + 3 * q, queries.begin() + 3 * q + 3);
    padded.push_back(std::numeric_limits<double>::quiet_NaN());
  }
  const spatialhash::PointsView<3, double> strided(padded.data(), m, 4);
  const auto sorted_entries = [](const spatialhash::NeighborLists& l, std::size_t q) {
    std::vector<std::pair<std::size_t, double>> entries;
    for (std::size_t e = l.offsets[q]; e < l.offsets[q + 1]; ++e) {
      entries.emplace_back(l.indices[e], l.distances[e]);
    }
    std::sort(entries.begin(), entries.end());
    return entries;
  };
  const auto packed_lists = index.cross(view, {.with_distances = true});
  const auto strided_lists = index.cross(strided, {.with_distances = true});
  ASSERT_EQ(strided_lists.size(), m);
  const auto strided_rows = index.cross_rows(strided);
  expect_row_layout(strided_rows, m);
  for (std::size_t q = 0; q < m; ++q) {
    const auto entries = sorted_entries(strided_lists, q);
    std::vector<std::size_t> row;
    for (const auto& [j, distance] : entries) row.push_back(j);
    ASSERT_EQ(row, wants[q]) << d.name << " strided cross row " << q;
    ASSERT_EQ(entries, sorted_entries(packed_lists, q)) << d.name << " strided distances " << q;
    const auto got = strided_rows.row(q);
    std::vector<std::size_t> rows_row(got.begin(), got.end());
    std::sort(rows_row.begin(), rows_row.end());
    ASSERT_EQ(rows_row, row) << d.name << " strided cross_rows row " << q;
  }
}

TEST_P(EngineTest, CrossManyQueries) {
  // Enough query positions for several parallel work units of a batched cross search, inside
  // the points' box, around it and far outside.
  const auto d = datasets::uniform<3>(6000, 12.0, 1.1, 21);
  std::mt19937_64 g(22);
  std::uniform_real_distribution<double> around(-3.0, 15.0);
  std::vector<double> queries;
  for (int q = 0; q < 5000; ++q) {
    for (int k = 0; k < 3; ++k) queries.push_back(q % 97 == 0 ? 1e6 : around(g));
  }
  check_cross(GetParam(), d, queries);
}

TEST_P(EngineTest, SurfaceShell) {
  // A lattice of mostly empty cells (a hash-table lattice with its occupancy bitmap, unless
  // the engine coarsens it), searched from the points and from positions spread over the
  // shell's box, most of them in the hollow or the corners: cross queries with one query in a
  // group of cells, or a few.
  // (A third of the points and queries under the sanitizers: this test took 48 s of their run's
  // CPU time, brute_force's case 12 s.)
  for_all([]<int D>() { return datasets::shell<D>(kSanitizedBuild ? 1000 : 3000, 12.0, 0.8, 23); });
  const int cross_points = kSanitizedBuild ? 2700 : 8000;  // and as many queries
  const auto d = datasets::shell<3>(cross_points, 20.0, 0.9, 24);
  std::mt19937_64 g(25);
  std::uniform_real_distribution<double> box(-21.0, 21.0);
  std::vector<double> queries;
  for (int q = 0; q < cross_points; ++q) {
    for (int k = 0; k < 3; ++k) queries.push_back(box(g));
  }
  check_cross(GetParam(), d, queries);
}

// cell_list's cross search leaves the queries with no point in their stencil out before it
// sorts the others, when they are more than an eighth of them, and otherwise sorts them first
// and skips them. Both ways, on a small lattice (keys packed with the query's index) and on a
// wide one (more than 32 key bits: keys and indices sorted as pairs), with several chunks of the
// key pass: queries near the points (jittered copies of them) mixed with ones across the box.
// Cells of edge r (cell_subdivision 1) keep the sparse lattice from being coarsened.
TEST(CrossOffTheLattice, FewOrManyQueriesWithoutNeighbors) {
  for (const double shell_radius : {15.0, 900.0}) {  // 2^6 and 2^12 cells along an axis
    const auto d = datasets::shell<3>(2500, shell_radius, 0.7, 31);
    for (const int near_percent : {95, 30}) {
      SCOPED_TRACE("shell radius " + std::to_string(shell_radius) + ", " +
                   std::to_string(near_percent) + "% of the queries near the points");
      std::mt19937_64 g(32);
      std::uniform_real_distribution<double> box(-shell_radius, shell_radius), jitter(-0.5, 0.5);
      std::uniform_int_distribution<std::size_t> point(0, 2499);
      std::uniform_int_distribution<int> percent(0, 99);
      std::vector<double> queries;
      for (int q = 0; q < 9000; ++q) {
        const bool near = percent(g) < near_percent;
        const std::size_t i = point(g);
        for (int k = 0; k < 3; ++k) queries.push_back(near ? d.xyz[3 * i + k] + jitter(g) : box(g));
      }
      for (const int threads : {1, 2}) {
        check_cross({.threads = threads, .cell_subdivision = 1}, d, queries);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineTest, ::testing::ValuesIn(engine_cases()),
                         engine_case_label);

// cell_list fills a resizable PairOutput in one search, sized from a sample of cells. Here every
// pair lies in one cell that the sample misses: blocks past the estimate must still land, after
// the resize, each slot once. The sample picks the cells holding evenly spaced sorted positions
// (at most 1024 samples, the first half a spacing in), so 80 copies of a point at the lower corner
// of the bounding box (the first cell in sorted order) among 256k lattice points, none within r
// of another, are missed whatever the lattice of cells: the estimate is 0 pairs, the truth 3160.
TEST(ResizablePairOutput, PairsBeyondTheEstimate) {
  std::vector<double> xyz;
  for (int i = 0; i < 80; ++i) xyz.insert(xyz.end(), {0.0, 0.0, 0.0});
  for (int x = 1; x <= 1000; ++x) {
    for (int y = 1; y <= 16; ++y) {
      for (int z = 1; z <= 16; ++z) xyz.insert(xyz.end(), {1.5 * x, 1.5 * y, 1.5 * z});
    }
  }
  const double r = 1.0;
  const auto want = oracle::pairs<3>(xyz, r);
  for (const spatialhash::Options& options : engine_cases()) {
    if (options.engine != Engine::cell_list) continue;
    SCOPED_TRACE(engine_case_label(::testing::TestParamInfo<spatialhash::Options>(options, 0)));
    const spatialhash::Index<3, double> index(std::span<const double>(xyz), r, options);
    ResizableRecorder out;
    index.pairs(out);
    ASSERT_GT(out.pairs.size(), out.allocated)
        << "the estimate covered every pair: this data no longer tests the overflow";
    ASSERT_EQ(out.checked_pairs(), want);
    // The same search with distances (pairs() into a PairList: each block's distances measured
    // with its pairs, the blocks past the estimate's too), against the double brute force.
    const auto list = index.pairs({.with_distances = true});
    ASSERT_EQ(list.pairs.size(), list.distances.size());
    std::vector<std::pair<std::size_t, std::size_t>> got;
    for (std::size_t k = 0; k < list.pairs.size(); ++k) {
      const auto [i, j] = list.pairs[k];
      const double d2 = oracle::distance_squared<3>(&xyz[3 * i], &xyz[3 * j]);
      ASSERT_EQ(list.distances[k], std::sqrt(d2)) << "pair " << i << "," << j;
      got.emplace_back(i, j);
    }
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, want);
  }
}

}  // namespace

namespace {

// sort_rows against std::sort of (index, distance) pairs, on rows of every length around the
// rank-sort limit, with distinct entries and with repeated ones (which take the fallback).
TEST(SortRows, MatchesStdSortWithAndWithoutRepeats) {
  std::mt19937_64 g(7);
  for (bool repeats : {false, true}) {
    for (bool with_distances : {false, true}) {
      spatialhash::NeighborLists lists;
      std::vector<std::vector<std::pair<spatialhash::index_t, double>>> want;
      for (std::size_t length = 0; length <= spatialhash::detail::kRankSortMax + 20; ++length) {
        std::vector<std::pair<spatialhash::index_t, double>> row;
        std::uniform_int_distribution<spatialhash::index_t> id(0, repeats ? 10 : 1000000);
        std::set<spatialhash::index_t> used;
        while (row.size() < length) {
          const spatialhash::index_t j = id(g);
          if (!repeats && !used.insert(j).second) continue;
          // Distances follow the index, so pairs that tie on the index sort the same either way.
          row.emplace_back(j, 0.5 * j);
        }
        for (const auto& [j, d] : row) {
          lists.indices.push_back(j);
          if (with_distances) lists.distances.push_back(d);
        }
        lists.offsets.push_back(lists.indices.size());
        std::sort(row.begin(), row.end());
        want.push_back(row);
      }
      spatialhash::detail::sort_rows(lists, 2);
      for (std::size_t i = 0; i < want.size(); ++i) {
        for (std::size_t k = 0; k < want[i].size(); ++k) {
          ASSERT_EQ(lists.indices[lists.offsets[i] + k], want[i][k].first) << "row " << i;
          if (with_distances) {
            ASSERT_EQ(lists.distances[lists.offsets[i] + k], want[i][k].second) << "row " << i;
          }
        }
      }
    }
  }
}

// Each row sort kernel (simd/row_sort.hpp) this processor runs against std::sort of (index,
// distance) pairs: every length up to kRankSortMax, indices over the whole uint32 range (AVX2
// compares signed lanes: the top bit must still order as unsigned), with and without distances,
// in place and from a row elsewhere (left as it was), nothing written outside the row; a row that
// repeats an index is refused, nothing written, by a rank sort, and sorted by a network.
TEST(RowSortKernels, EveryLevelMatchesStdSort) {
  using spatialhash::index_t;
  using spatialhash::Simd;
  std::mt19937_64 g(11);
  for (const Simd level : {Simd::scalar, Simd::avx2, Simd::avx512}) {
    if (!spatialhash::simd_available(level)) continue;
    SCOPED_TRACE("level " + std::to_string(static_cast<int>(level)));
    const spatialhash::detail::RowSortFn kernel = spatialhash::detail::best_row_sort(level);
    for (std::size_t length = 0; length <= spatialhash::detail::kRankSortMax; ++length) {
      for (const bool with_distances : {false, true}) {
        for (const bool in_place : {true, false}) {
          SCOPED_TRACE("length " + std::to_string(length) + (in_place ? " in place" : " copied") +
                       (with_distances ? " with distances" : ""));
          std::vector<std::pair<index_t, double>> want;
          std::set<index_t> used;
          std::uniform_int_distribution<index_t> id(0, 0xFFFFFFFEu);
          while (want.size() < length) {
            const index_t j = length % 3 == 0 ? id(g) : id(g) % 200;  // spread out and close
            if (used.insert(j).second) want.emplace_back(j, 0.25 * j + 1.0);
          }
          // The row is written between guard entries the kernel must leave alone (the vector
          // kernels store whole registers, the last one overlapping the one before). Copied, it
          // is read from `source` and the target's row starts as guard entries too.
          constexpr std::size_t kGuard = 16;
          constexpr index_t kGuardValue = 0x5A5A5A5Au;
          std::vector<index_t> guarded(length + 2 * kGuard, kGuardValue);
          std::vector<index_t> source;
          std::vector<double> distances;
          for (std::size_t k = 0; k < length; ++k) {
            if (in_place) guarded[kGuard + k] = want[k].first;
            source.push_back(want[k].first);
            distances.push_back(want[k].second);
          }
          const std::vector<index_t> source_before = source;
          index_t* const target = guarded.data() + kGuard;
          ASSERT_TRUE(kernel(in_place ? target : source.data(), target,
                             with_distances ? distances.data() : nullptr, length));
          for (std::size_t k = 0; k < kGuard; ++k) {
            ASSERT_EQ(guarded[k], kGuardValue) << "wrote before the row";
            ASSERT_EQ(guarded[kGuard + length + k], kGuardValue) << "wrote past the row";
          }
          EXPECT_EQ(source, source_before) << "changed the row it sorted from";
          const std::vector<index_t> ids(target, target + length);
          std::sort(want.begin(), want.end());
          for (std::size_t k = 0; k < length; ++k) {
            ASSERT_EQ(ids[k], want[k].first) << "#" << k;
            if (with_distances) {
              ASSERT_EQ(distances[k], want[k].second);
            }
          }
          if (length < 2) continue;
          // A repeated index: a rank sort (with distances, or the scalar kernel) refuses the row
          // and writes nothing; a network (the vector kernels without distances) sorts it.
          std::vector<index_t> repeated = ids;
          std::reverse(repeated.begin(), repeated.end());
          repeated[length / 2] = repeated[0];
          const std::vector<index_t> before = repeated;
          std::vector<index_t> copy_target(length, kGuardValue);
          index_t* const repeated_target = in_place ? repeated.data() : copy_target.data();
          const std::vector<index_t> target_before(repeated_target, repeated_target + length);
          std::vector<double> repeated_distances = distances;
          const bool network = level != Simd::scalar && !with_distances;
          EXPECT_EQ(kernel(repeated.data(), repeated_target,
                           with_distances ? repeated_distances.data() : nullptr, length),
                    network);
          std::vector<index_t> want_repeated = before;
          if (network) std::sort(want_repeated.begin(), want_repeated.end());
          if (!network) want_repeated = target_before;
          EXPECT_EQ(std::vector<index_t>(repeated_target, repeated_target + length), want_repeated);
          if (!in_place) {
            EXPECT_EQ(repeated, before) << "changed the row it sorted from";
          }
          EXPECT_EQ(repeated_distances, distances);
        }
      }
    }
  }
}

// The sorting networks (the vector kernels, rows without distances) against std::sort on many
// rows of every length they take (up to kRankSortMax, kNetworkMaxAvx512 with AVX-512): a network is
// a fixed sequence of compare-exchanges, and one misplaced or missing compare-exchange leaves only
// some inputs unsorted. Rows of 0s and 1s (a network that sorts every such row sorts every row), of
// a few values repeated, and of distinct indices over the whole uint32 range, the largest one (the
// networks' filler) included.
TEST(RowSortKernels, NetworksSortManyRows) {
  using spatialhash::index_t;
  using spatialhash::Simd;
  std::mt19937_64 g(13);
  for (const Simd level : {Simd::avx2, Simd::avx512}) {
    if (!spatialhash::simd_available(level)) continue;
    SCOPED_TRACE("level " + std::to_string(static_cast<int>(level)));
    const spatialhash::detail::RowSortFn kernel = spatialhash::detail::best_row_sort(level);
    const std::size_t longest = level == Simd::avx512 ? spatialhash::detail::kNetworkMaxAvx512
                                                      : spatialhash::detail::kRankSortMax;
    for (std::size_t length = 1; length <= longest; ++length) {
      for (int trial = 0; trial < 300; ++trial) {
        const int kind = trial % 3;  // 0: zeros and ones, 1: a few values, 2: any value
        std::uniform_int_distribution<index_t> id(0, 0xFFFFFFFFu);
        std::vector<index_t> row(length);
        for (index_t& v : row) {
          v = kind == 0 ? static_cast<index_t>(g() & 1) : kind == 1 ? id(g) % 5 : id(g);
        }
        if (kind == 2 && trial % 2 == 0) row[trial % length] = 0xFFFFFFFFu;
        std::vector<index_t> want = row;
        std::sort(want.begin(), want.end());
        std::vector<index_t> sorted(length + 16, 0x5A5A5A5Au);
        ASSERT_TRUE(kernel(row.data(), sorted.data(), nullptr, length));
        ASSERT_EQ(std::vector<index_t>(sorted.begin(), sorted.begin() + length), want)
            << "length " << length << " trial " << trial;
        ASSERT_EQ(sorted[length], 0x5A5A5A5Au) << "wrote past the row, length " << length;
      }
    }
  }
}

// sort_row (simd/row_sort.hpp) with each kernel this processor runs, against std::sort: rows
// around and past every boundary of its three ways (whole rows up to the kernel's longest run,
// kRankSortMax or kNetworkMaxAvx512; runs merged up to kMergeSortMax; std::sort beyond), indices
// over the whole uint32 range and close together, and rows that repeat an index (still sorted,
// repeats kept) within a run or across two; each from a row elsewhere and in place.
TEST(RowSortKernels, SortRowMatchesStdSortOnLongRows) {
  using spatialhash::index_t;
  using spatialhash::Simd;
  using spatialhash::detail::kMergeSortMax;
  using spatialhash::detail::kRankSortMax;
  std::mt19937_64 g(12);
  std::vector<std::size_t> lengths;
  for (std::size_t length = kRankSortMax - 2; length <= 4 * kRankSortMax + 2; ++length) {
    lengths.push_back(length);
  }
  for (std::size_t length :
       {std::size_t{300}, std::size_t{511}, std::size_t{777}, kMergeSortMax - 1, kMergeSortMax,
        kMergeSortMax + 1, std::size_t{3000}}) {
    lengths.push_back(length);
  }
  for (const Simd level : {Simd::scalar, Simd::avx2, Simd::avx512}) {
    if (!spatialhash::simd_available(level)) continue;
    SCOPED_TRACE("level " + std::to_string(static_cast<int>(level)));
    const spatialhash::detail::RowSortFn kernel = spatialhash::detail::best_row_sort(level);
    for (const std::size_t length : lengths) {
      for (int kind = 0; kind < 5; ++kind) {
        // kind 0: spread out, 1: close together, 2: a repeat within the first run, 3: a repeat
        // across runs (the first entry again at the end), 4: the largest index (what the merge
        // pads runs with) in the middle of the row.
        std::vector<index_t> ids;
        std::set<index_t> used;
        std::uniform_int_distribution<index_t> id(0, 0xFFFFFFFFu);
        while (ids.size() < length) {
          const index_t j = kind == 1 ? id(g) % (3 * length) : id(g);
          if (used.insert(j).second) ids.push_back(j);
        }
        if (kind == 2) ids[1] = ids[0];
        if (kind == 3) ids.back() = ids[0];
        if (kind == 4) ids[length / 2] = std::numeric_limits<index_t>::max();
        std::vector<index_t> want = ids;
        std::sort(want.begin(), want.end());
        // From a row elsewhere (left as it was), then in place.
        const std::vector<index_t> source = ids;
        std::vector<index_t> target(length, 0x5A5A5A5Au);
        spatialhash::detail::sort_row(kernel, source.data(), target.data(), length);
        ASSERT_EQ(target, want) << "length " << length << " kind " << kind << ", copied";
        ASSERT_EQ(source, ids) << "length " << length << " kind " << kind << ": source changed";
        spatialhash::detail::sort_row(kernel, ids.data(), ids.data(), length);
        ASSERT_EQ(ids, want) << "length " << length << " kind " << kind;
      }
    }
  }
}

}  // namespace
