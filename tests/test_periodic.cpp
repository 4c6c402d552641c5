// Periodic boxes: every engine, 2D and 3D, float and double, against the explicit-image brute
// force (check_periodic.hpp) on the edge cases of issue 6: subsets of periodic axes, points far
// outside the box, boxes only 2.1 r wide, exact ties across the faces, the seam itself; plus the
// wrapping formula, the refusals and update() with drifting points; and, for the default engine,
// every result of a larger index on two threads, and the gap fills that finish its pair list
// (src/gap_fills.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "../src/gap_fills.hpp"
#include "../src/simd/pair_fold.hpp"
#include "check_periodic.hpp"
#include "engine_cases.hpp"
#include "expect_error.hpp"

namespace {

using spatialhash::Index;
using spatialhash::Options;
using spatialhash::PeriodicBox;

template <int Dim>
PeriodicBox<Dim> cube(double lower, double upper, std::array<bool, Dim> periodic) {
  PeriodicBox<Dim> box;
  box.lower.fill(lower);
  box.upper.fill(upper);
  box.periodic = periodic;
  return box;
}

template <int Dim>
std::array<bool, Dim> all_periodic() {
  std::array<bool, Dim> p;
  p.fill(true);
  return p;
}

/// n points uniform in the box on periodic axes and in [lower - 3, upper + 3) on open ones.
template <int Dim>
std::vector<double> uniform_in(const PeriodicBox<Dim>& box, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<double> xyz;
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) {
      const double slack = box.periodic[k] ? 0.0 : 3.0;
      xyz.push_back(
          std::uniform_real_distribution<double>(box.lower[k] - slack, box.upper[k] + slack)(g));
    }
  }
  return xyz;
}

/// The same points moved by random whole numbers of box edges (-5 .. 5) on periodic axes.
template <int Dim>
std::vector<double> displaced(const PeriodicBox<Dim>& box, std::vector<double> xyz,
                              std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<int> boxes(-5, 5);
  for (std::size_t i = 0; i < xyz.size(); ++i) {
    const int k = static_cast<int>(i % Dim);
    if (box.periodic[k]) xyz[i] += boxes(g) * (box.upper[k] - box.lower[k]);
  }
  return xyz;
}

/// A full lattice of spacing `a` filling [lower, upper) with upper - lower a multiple of a.
template <int Dim>
std::vector<double> lattice(double lower, double a, int per_axis) {
  std::vector<double> xyz;
  const int zs = Dim == 3 ? per_axis : 1;
  for (int z = 0; z < zs; ++z)
    for (int y = 0; y < per_axis; ++y)
      for (int x = 0; x < per_axis; ++x) {
        const int idx[3] = {x, y, z};
        for (int k = 0; k < Dim; ++k) xyz.push_back(lower + idx[k] * a);
      }
  return xyz;
}

template <int Dim>
std::vector<PeriodicCase<Dim>> periodic_cases() {
  std::vector<PeriodicCase<Dim>> cases;
  const auto box = cube<Dim>(-1.5, 3.5, all_periodic<Dim>());
  cases.push_back({"uniform", box, uniform_in(box, 400, 1), 0.6});
  // Subsets of periodic axes: the open ones hold points beyond the (ignored) bounds.
  std::array<bool, Dim> mixed{}, other{};
  for (int k = 0; k < Dim; ++k) mixed[k] = k % 2 == 0, other[k] = k % 2 == 1;
  const auto mixed_box = cube<Dim>(0.0, 4.0, mixed), other_box = cube<Dim>(0.0, 4.0, other);
  cases.push_back({"periodic_x_z", mixed_box, uniform_in(mixed_box, 400, 2), 0.7});
  cases.push_back({"periodic_y", other_box, uniform_in(other_box, 400, 3), 0.7});
  // Far outside, negative included: results are those of the wrapped points.
  cases.push_back({"outside", box, displaced(box, uniform_in(box, 300, 4), 5), 0.6});
  // Boxes only 2.1 r wide: every stencil wraps onto itself, most points have several ghosts.
  const auto narrow = cube<Dim>(0.0, 2.1, all_periodic<Dim>());
  cases.push_back({"narrow", narrow, uniform_in(narrow, 120, 6), 1.0});
  // Ties: a lattice of spacing 0.25 filling [-1, 1): pairs at exactly r across every face.
  const auto unit = cube<Dim>(-1.0, 1.0, all_periodic<Dim>());
  cases.push_back({"lattice_r2a", unit, lattice<Dim>(-1.0, 0.25, 8), 0.5});
  cases.push_back({"lattice_ra", unit, lattice<Dim>(-1.0, 0.25, 8), 0.25});
  // The seam: points exactly on the faces, just inside and just outside them.
  std::vector<double> seam = uniform_in(unit, 60, 7);
  for (double x : {-1.0, 1.0, std::nextafter(1.0, 0.0), std::nextafter(-1.0, -2.0), 3.0, -3.0,
                   -1e-30, 1.0 + 1e-12}) {
    for (int k = 0; k < Dim; ++k) seam.push_back(k == 0 ? x : 0.9);
  }
  cases.push_back({"seam", unit, seam, 0.45});
  return cases;
}

class Periodic : public ::testing::TestWithParam<Options> {};

/// One thread: these many small queries are the oracle comparison, and idle OpenMP workers
/// spinning on a busy 2-core CI machine made them 8x slower. Threads are covered by the update
/// and lattice tests (default threads) and by every engine's own tests.
template <int Dim, class T>
void check_all(Options options) {
  options.threads = 1;
  for (const auto& c : periodic_cases<Dim>()) {
    SCOPED_TRACE(c.name);
    check_periodic<Dim, T>(options, c);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST_P(Periodic, Matches2DFloat) {
  check_all<2, float>(GetParam());
}
TEST_P(Periodic, Matches2DDouble) {
  check_all<2, double>(GetParam());
}
TEST_P(Periodic, Matches3DFloat) {
  check_all<3, float>(GetParam());
}
TEST_P(Periodic, Matches3DDouble) {
  check_all<3, double>(GetParam());
}

/// Coordinates that are exact in float (multiples of 1/16, box edge 8) moved by whole boxes
/// wrap back exactly, so the index must give identical results, shifts included.
template <int Dim, class T>
void check_outside_equals_wrapped(const Options& options) {
  const auto box = cube<Dim>(-2.0, 6.0, all_periodic<Dim>());
  std::mt19937_64 g(11);
  std::uniform_int_distribution<int> sixteenths(-32, 95);
  std::vector<T> inside;
  for (int i = 0; i < 300 * Dim; ++i) inside.push_back(static_cast<T>(sixteenths(g) / 16.0));
  const std::vector<double> far_d =
      displaced(box, std::vector<double>(inside.begin(), inside.end()), 12);
  const std::vector<T> far(far_d.begin(), far_d.end());
  ASSERT_NE(far, inside);
  const Index<Dim, T> a(std::span<const T>(inside), 1.0, box, options);
  const Index<Dim, T> b(std::span<const T>(far), 1.0, box, options);
  const auto want = pairs_by_callback(a, spatialhash::kIndexRadius);
  ASSERT_FALSE(want.empty());
  ASSERT_EQ(pairs_by_callback(b, spatialhash::kIndexRadius), want);
  ASSERT_EQ(b.neighbor_counts(), a.neighbor_counts());
}

TEST_P(Periodic, OutsideEqualsWrapped) {
  check_outside_equals_wrapped<2, float>(GetParam());
  check_outside_equals_wrapped<3, float>(GetParam());
  check_outside_equals_wrapped<3, double>(GetParam());
}

/// In a full periodic lattice every point sees the same neighborhood: its count equals the
/// number of nonzero integer vectors v with |v| a <= r, counted here by enumeration.
template <int Dim, class T>
void check_lattice_counts(const Options& options) {
  const auto box = cube<Dim>(-1.0, 1.0, all_periodic<Dim>());
  const std::vector<double> xyz = lattice<Dim>(-1.0, 0.25, 8);
  const std::vector<T> coords(xyz.begin(), xyz.end());
  for (int steps : {1, 2, 3}) {
    const double r = 0.25 * steps;
    std::size_t expected = 0;
    for (int x = -steps; x <= steps; ++x)
      for (int y = -steps; y <= steps; ++y)
        for (int z = (Dim == 3 ? -steps : 0); z <= (Dim == 3 ? steps : 0); ++z)
          if (x * x + y * y + z * z <= steps * steps && (x | y | z) != 0) ++expected;
    const Index<Dim, T> index(std::span<const T>(coords), r, box, options);
    for (auto count : index.neighbor_counts()) ASSERT_EQ(count, expected) << "r = " << r;
  }
}

TEST_P(Periodic, LatticeCountsAreTranslationInvariant) {
  check_lattice_counts<2, float>(GetParam());
  check_lattice_counts<3, double>(GetParam());
}

/// Points drift out of the box over several update() steps, never wrapped by the caller.
template <int Dim, class T>
void check_drift(const Options& options) {
  const auto box = cube<Dim>(0.0, 3.0, all_periodic<Dim>());
  const double r = 0.5;
  std::vector<double> xyz = uniform_in(box, 250, 21);
  std::vector<T> coords(xyz.begin(), xyz.end());
  Index<Dim, T> index(std::span<const T>(coords), r, box, options);
  std::mt19937_64 g(22);
  std::normal_distribution<double> step(0.0, 0.4);
  for (int t = 0; t < 4; ++t) {
    for (double& x : xyz) x += step(g) + (t == 2 ? 7.0 : 0.0);  // one step jumps boxes away
    coords.assign(xyz.begin(), xyz.end());
    index.update(std::span<const T>(coords));
    const auto wrapped = wrapped_coords<Dim>(coords, box);
    const auto want = periodic_oracle::pairs<Dim>(wrapped, oracle_box(box), r);
    ASSERT_EQ(pairs_by_callback(index, spatialhash::kIndexRadius), want) << "step " << t;
    // The full lists too: the ghost count changes from step to step, and an inner cell_list then
    // rebuilds into the arrays it kept (the images' count differs), where others are made anew.
    const auto lists = index.neighbor_lists({.sorted = true});
    const auto want_lists = lists_of_pairs(want, xyz.size() / Dim);
    ASSERT_EQ(lists.size(), want_lists.size());
    for (std::size_t i = 0; i < want_lists.size(); ++i) {
      const std::vector<std::size_t> row(lists.indices.begin() + lists.offsets[i],
                                         lists.indices.begin() + lists.offsets[i + 1]);
      ASSERT_EQ(row, want_lists[i]) << "step " << t << ", list of point " << i;
    }
  }
  // A failed update leaves the index answering for the points it had.
  const auto before = pairs_by_callback(index, spatialhash::kIndexRadius);
  std::vector<T> bad = coords;
  bad[Dim * 7 + 1] = std::numeric_limits<T>::quiet_NaN();
  expect_error([&] { index.update(std::span<const T>(bad)); }, "point 7");
  ASSERT_EQ(pairs_by_callback(index, spatialhash::kIndexRadius), before);
}

TEST_P(Periodic, UpdateWithDriftingPoints) {
  check_drift<2, double>(GetParam());
  check_drift<3, float>(GetParam());
}

/// Two points whose distance across the face rounds to either side of r depending on which one
/// is imaged (w_a + L and w_b - L round differently): the rule decides from the smaller index, in
/// pairs and lists alike, so the lists stay symmetric. Both orders, found by a search in double.
/// The lists then hold a row longer or shorter than the inner engine's view of it.
TEST_P(Periodic, TieAcrossAFaceIsDecidedFromTheSmallerIndex) {
  const auto box = cube<2>(0.0, 1.0, all_periodic<2>());
  for (const auto& [a, b, r] : std::vector<std::array<double, 3>>{
           {0.70095973559571423, 0.00038494610807679084, 0.29942521051236248},
           {0.63379328354217901, 0.0067593218543279977, 0.37296603831214897}}) {
    const double via_b = (a - (b + 1.0)) * (a - (b + 1.0));  // a first: b is imaged
    const double via_a = (b - (a - 1.0)) * (b - (a - 1.0));  // b first: a is imaged
    ASSERT_NE(via_b <= r * r, via_a <= r * r) << "not a tie that depends on the side";
    // With points away from the faces around them (before and after), whose rows a tie that
    // changes a row's length must move.
    for (const auto& xy : {std::vector<double>{0.5, 0.5, a, 0.5, b, 0.5, 0.45, 0.55, 0.55, 0.45},
                           std::vector<double>{0.5, 0.5, b, 0.5, a, 0.5, 0.45, 0.55, 0.55, 0.45}}) {
      Options options = GetParam();
      options.threads = 1;  // five points: spare the OpenMP start-up
      check_periodic<2, double>(options, PeriodicCase<2>{"tie", box, xy, r});
      if (HasFatalFailure()) return;
    }
  }
}

/// The same far from the origin, where the two sides round apart by far more: boxes straddling
/// 2^20 (counts decided by the rule inside the default engine's search) and 2^30 (past that
/// search's bound: counts from the cross query). Within one binade adding the edge rounds
/// nothing; across the power of two one side rounds. Ties found by a search in double.
TEST_P(Periodic, TiesFarFromTheOriginAreDecidedFromTheSmallerIndex) {
  for (const double lower : {0x1p20 - 0.5, 0x1p30 - 0.5}) {
    const auto box = cube<2>(lower, lower + 1.0, all_periodic<2>());
    std::mt19937_64 g(7);
    std::uniform_real_distribution<double> near_upper(lower + 0.6, lower + 0.75),
        near_lower(lower, lower + 0.05);
    int found = 0;
    for (int attempt = 0; attempt < 10000 && found < 2; ++attempt) {
      const double a = near_upper(g), b = near_lower(g);
      const double via_b = (a - (b + 1.0)) * (a - (b + 1.0));
      const double via_a = (b - (a - 1.0)) * (b - (a - 1.0));
      double r = std::sqrt(std::min(via_a, via_b));
      while (r * r < std::min(via_a, via_b)) r = std::nextafter(r, 1.0);
      if ((via_b <= r * r) == (via_a <= r * r)) continue;
      ++found;
      for (const auto& xy :
           {std::vector<double>{lower + 0.5, lower + 0.5, a, lower + 0.5, b, lower + 0.5},
            std::vector<double>{lower + 0.5, lower + 0.5, b, lower + 0.5, a, lower + 0.5}}) {
        Options options = GetParam();
        options.threads = 1;
        check_periodic<2, double>(options, PeriodicCase<2>{"far tie", box, xy, r});
        if (HasFatalFailure()) return;
      }
    }
    ASSERT_EQ(found, 2) << "no ties found at " << lower;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, Periodic, ::testing::ValuesIn(engine_cases()), engine_case_label);

/// The default engine's pair list is cut from the inner engine's in place, chunk by chunk (4096
/// pairs each): 4000 points on two threads make about twenty chunks, whose gaps are filled from
/// the chunks past the final length. Pairs with their distances, counts, half lists with
/// distances and full lists, against the oracle; and the counts of an engine without a float
/// band (hashed_grid), which take gains and losses filed by thread and bucket instead of the
/// default engine's rule.
TEST(PeriodicLarge, EveryResultOnTwoThreads) {
  const auto box = cube<2>(0.0, 10.0, all_periodic<2>());
  const std::vector<double> xy = uniform_in(box, 4000, 31);
  const double r = 0.55;  // about 38 neighbors
  Options options;
  options.threads = 2;
  const Index<2, double> index(std::span<const double>(xy), r, box, options);
  const auto want = periodic_oracle::pairs<2>(wrapped_coords<2>(xy, box), oracle_box(box), r);
  ASSERT_GT(want.size(), 16u * 4096) << "too few pairs for many chunks";
  const auto list = index.pairs({.with_distances = true});
  ASSERT_EQ(list.pairs.size(), want.size());
  ASSERT_EQ(list.distances.size(), want.size());
  std::vector<std::tuple<std::size_t, std::size_t, double>> got, expected;
  for (std::size_t k = 0; k < list.pairs.size(); ++k) {
    got.emplace_back(list.pairs[k].first, list.pairs[k].second, list.distances[k]);
  }
  for (const auto& p : want) {
    expected.emplace_back(p.first, p.second, std::sqrt(p.distance_squared));
  }
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got, expected);
  const auto counts = index.neighbor_counts();
  const auto rows = lists_of_pairs(want, xy.size() / 2);
  for (std::size_t i = 0; i < rows.size(); ++i) ASSERT_EQ(counts[i], rows[i].size()) << i;
  Options bucketed = options;
  bucketed.engine = spatialhash::Engine::hashed_grid;
  const auto bucketed_counts =
      Index<2, double>(std::span<const double>(xy), r, box, bucketed).neighbor_counts();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(bucketed_counts[i], rows[i].size()) << "hashed_grid, point " << i;
  }
  // Half lists: nearly every imaged row changes length, and the rows move in place in runs.
  const auto half = index.neighbor_lists({.with_distances = true, .half = true});
  ASSERT_EQ(half.size(), rows.size());
  got.clear();
  for (std::size_t i = 0; i < half.size(); ++i) {
    for (std::size_t k = half.offsets[i]; k < half.offsets[i + 1]; ++k) {
      const std::size_t j = half.indices[k];
      got.emplace_back(std::min(i, j), std::max(i, j), half.distances[k]);
    }
  }
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got, expected);
  const auto full = index.neighbor_lists({.sorted = true});
  ASSERT_EQ(full.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::vector<std::size_t> row(full.indices.begin() + full.offsets[i],
                                       full.indices.begin() + full.offsets[i + 1]);
    ASSERT_EQ(row, rows[i]) << "list of point " << i;
  }
}

/// Boxes only 2.1 r wide, on two threads: most of the inner engine's points are ghosts, so most
/// of its pairs are dropped (the pair array's gaps are wide), and the half lists' rows move far.
/// Every result against the oracle (check_periodic.hpp).
TEST(PeriodicLarge, NarrowBoxesOnTwoThreads) {
  Options options;
  options.threads = 2;
  const auto narrow2 = cube<2>(0.0, 2.1, all_periodic<2>());
  check_periodic<2, double>(options, {"narrow 2D", narrow2, uniform_in(narrow2, 500, 51), 1.0});
  if (HasFatalFailure()) return;
  const auto narrow3 = cube<3>(0.0, 2.1, all_periodic<3>());
  check_periodic<3, float>(options, {"narrow 3D", narrow3, uniform_in(narrow3, 300, 52), 1.0});
}

/// Boxes straddling 2^20, on two threads: across the faces the two sides of every pair round
/// differently (one image lands past the power of two), so the default engine's count search
/// decides many borderline pairs by the periodic rule. In float the coordinates lie on a grid of
/// 1/8 there: many pairs at exactly the radius.
TEST(PeriodicLarge, FarFromTheOriginOnTwoThreads) {
  Options options;
  options.threads = 2;
  const auto far2 = cube<2>(0x1p20 - 0.5, 0x1p20 + 0.5, all_periodic<2>());
  check_periodic<2, double>(options, {"far 2D", far2, uniform_in(far2, 2000, 53), 0.05});
  if (HasFatalFailure()) return;
  const auto far3 = cube<3>(0x1p20 - 2.0, 0x1p20 + 2.0, all_periodic<3>());
  check_periodic<3, float>(options, {"far 3D float", far3, uniform_in(far3, 1500, 54), 0.5});
}

// ---- The gap fills that finish the periodic pair list (src/gap_fills.hpp) -----------------

/// Chunks of every length pattern with random entries kept at their fronts: the fills, run
/// forwards and backwards, leave exactly the kept entries below the final length, each copy
/// from past it into a gap below it, at most a chunk long.
TEST(GapFills, CloseEveryGapInAnyOrder) {
  std::mt19937_64 g(41);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t chunk = std::uniform_int_distribution<std::size_t>(1, 9)(g);
    const std::size_t chunks = std::uniform_int_distribution<std::size_t>(0, 12)(g);
    const std::size_t last = std::uniform_int_distribution<std::size_t>(1, chunk)(g);
    const int mode = trial % 4;  // 0: random, 1: all kept, 2: none kept, 3: all or none
    std::vector<std::size_t> kept(chunks);
    std::vector<long> values;  // -1 for a gap
    std::vector<long> want;
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t length = c + 1 == chunks ? last : chunk;
      const bool all = mode == 1 || (mode == 3 && g() % 2 == 0);
      kept[c] = mode == 0 ? std::uniform_int_distribution<std::size_t>(0, length)(g)
                : all     ? length
                          : 0;
      for (std::size_t k = 0; k < length; ++k) {
        values.push_back(k < kept[c] ? static_cast<long>(values.size()) : -1);
        if (k < kept[c]) want.push_back(values.back());
      }
    }
    const std::size_t size = want.size();
    const auto fills = spatialhash::detail::gap_fills(kept, chunk, size);
    for (const auto& f : fills) {
      ASSERT_LE(f.count, chunk);
      ASSERT_GE(f.from, size);
      ASSERT_LE(f.to + f.count, size);
      for (std::size_t k = 0; k < f.count; ++k) {
        ASSERT_EQ(values[f.to + k], -1) << "copies onto a kept entry";
        ASSERT_NE(values[f.from + k], -1) << "copies a gap";
      }
    }
    std::vector<long> forwards = values, backwards = values;
    for (const auto& f : fills) {
      std::copy_n(forwards.begin() + f.from, f.count, forwards.begin() + f.to);
    }
    for (auto f = fills.rbegin(); f != fills.rend(); ++f) {
      std::copy_n(backwards.begin() + f->from, f->count, backwards.begin() + f->to);
    }
    ASSERT_EQ(forwards, backwards);
    std::vector<long> front(forwards.begin(), forwards.begin() + size);
    std::sort(front.begin(), front.end());
    ASSERT_EQ(front, want) << "trial " << trial;
  }
}

// Rows of a CSR array, some of which change length, moved in place as the periodic lists move
// them (move_rows): the runs of rows between changed ones, in segments (independent_segments)
// that run one after the other in either order, as threads may, each by move_runs_in_place, and
// the runs set aside between segments copied out first and written last. Every row must land
// where the new lengths put it. Changes of one sign for a while (the runs then move far: few cuts
// without setting runs aside) and of either sign, 1 to 4 segments.
TEST(GapFills, RunsMoveInSegmentsInAnyOrder) {
  using spatialhash::detail::EntryMove;
  std::mt19937_64 g(43);
  std::size_t cut_somewhere = 0, set_aside = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t rows = std::uniform_int_distribution<std::size_t>(1, 400)(g);
    const int parts = 1 + trial % 4;
    const bool drifting = trial % 3 == 0;
    std::vector<std::size_t> old_length(rows), new_length(rows);
    std::vector<bool> changed(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      old_length[i] = std::uniform_int_distribution<std::size_t>(0, 12)(g);
      changed[i] = g() % 10 == 0;
      std::size_t length = old_length[i];
      if (changed[i]) {
        const std::size_t grow = std::uniform_int_distribution<std::size_t>(0, 3)(g);
        const bool up = drifting ? i < rows / 2 : g() % 2 == 0;
        length = up ? length + grow : length - std::min(length, grow);
      }
      new_length[i] = length;
    }
    std::vector<std::size_t> old_offset(rows + 1, 0), new_offset(rows + 1, 0);
    for (std::size_t i = 0; i < rows; ++i) {
      old_offset[i + 1] = old_offset[i] + old_length[i];
      new_offset[i + 1] = new_offset[i] + new_length[i];
    }
    // Entry e of row i is i * 100 + e; the array has room for either layout.
    std::vector<long> values(std::max(old_offset[rows], new_offset[rows]), -1);
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t e = 0; e < old_length[i]; ++e) {
        values[old_offset[i] + e] = static_cast<long>(i * 100 + e);
      }
    }
    std::vector<long> want(new_offset[rows]);
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t e = 0; e < new_length[i]; ++e) {
        want[new_offset[i] + e] = static_cast<long>(i * 100 + e);
      }
    }
    // The runs of unchanged rows that move.
    std::vector<EntryMove> moves;
    for (std::size_t i = 0; i < rows;) {
      if (changed[i]) {
        ++i;
        continue;
      }
      std::size_t end = i;
      while (end < rows && !changed[end]) ++end;
      const std::size_t count = old_offset[end] - old_offset[i];
      if (count != 0 && old_offset[i] != new_offset[i]) {
        moves.push_back(EntryMove{old_offset[i], new_offset[i], count});
      }
      i = end;
    }
    const auto cut = spatialhash::detail::independent_segments(moves, parts);
    ASSERT_GE(cut.segments.size(), 1u);
    ASSERT_LE(cut.segments.size(), static_cast<std::size_t>(parts));
    // The segments and the runs set aside cover every run once, in order.
    std::vector<std::size_t> covered;
    std::size_t aside = 0;
    for (const auto& [first, end] : cut.segments) {
      while (aside < cut.aside.size() && cut.aside[aside] < first)
        covered.push_back(cut.aside[aside++]);
      for (std::size_t k = first; k < end; ++k) covered.push_back(k);
    }
    while (aside < cut.aside.size()) covered.push_back(cut.aside[aside++]);
    std::vector<std::size_t> every(moves.size());
    std::iota(every.begin(), every.end(), std::size_t{0});
    ASSERT_EQ(covered, every) << "trial " << trial;
    cut_somewhere += cut.segments.size() > 1;
    set_aside += !cut.aside.empty();
    for (const bool forwards : {true, false}) {
      std::vector<long> moved = values;
      std::vector<long> saved;
      for (const std::size_t k : cut.aside) {
        const EntryMove& m = moves[k];
        saved.insert(saved.end(), moved.begin() + static_cast<std::ptrdiff_t>(m.from),
                     moved.begin() + static_cast<std::ptrdiff_t>(m.from + m.count));
      }
      const auto move = [&](const EntryMove& m) {
        const auto from = moved.begin() + static_cast<std::ptrdiff_t>(m.from);
        const auto to = moved.begin() + static_cast<std::ptrdiff_t>(m.to);
        if (m.to < m.from) {
          std::copy(from, from + static_cast<std::ptrdiff_t>(m.count), to);
        } else {
          std::copy_backward(from, from + static_cast<std::ptrdiff_t>(m.count),
                             to + static_cast<std::ptrdiff_t>(m.count));
        }
      };
      for (std::size_t s = 0; s < cut.segments.size(); ++s) {
        const auto& [first, end] = cut.segments[forwards ? s : cut.segments.size() - 1 - s];
        spatialhash::detail::move_runs_in_place(
            std::span<const EntryMove>(moves).subspan(first, end - first), move);
      }
      std::size_t at = 0;
      for (const std::size_t k : cut.aside) {
        const EntryMove& m = moves[k];
        for (std::size_t e = 0; e < m.count; ++e) moved[m.to + e] = saved[at++];
      }
      // The changed rows are written from elsewhere (staged): here, from `want`.
      for (std::size_t i = 0; i < rows; ++i) {
        if (!changed[i]) continue;
        for (std::size_t e = 0; e < new_length[i]; ++e) {
          moved[new_offset[i] + e] = want[new_offset[i] + e];
        }
      }
      moved.resize(new_offset[rows]);
      ASSERT_EQ(moved, want) << "trial " << trial << (forwards ? ", forwards" : ", backwards");
    }
  }
  // Both kinds of cut happen.
  EXPECT_GT(cut_somewhere, 50u);
  EXPECT_GT(set_aside, 10u);
}

// The pair fold (src/simd/pair_fold.hpp), every level this processor runs, against the rule
// written out here: pairs (a, b), a < b, among 300 points and 200 images (each of a random
// point), in runs of points' pairs, pairs with images and images' pairs (lengths 0 to 40, so both
// the vector steps with and without images and the scalar tail run, and the kept pairs move down
// from anywhere), with and without distances, which must move with their pairs.
TEST(PairFold, EveryLevelKeepsAndMapsWhatTheRuleSays) {
  using spatialhash::Pair;
  using spatialhash::Simd;
  constexpr spatialhash::index_t kFirst = 300, kImages = 200;
  std::mt19937_64 g(47);
  std::vector<spatialhash::index_t> origin(kImages);
  for (auto& o : origin) o = static_cast<spatialhash::index_t>(g() % kFirst);
  std::size_t levels = 0;
  for (const Simd level : {Simd::scalar, Simd::avx2, Simd::avx512}) {
    if (!spatialhash::simd_available(level)) continue;
    ++levels;
    const spatialhash::detail::PairFoldFn fold = spatialhash::detail::best_pair_fold(level);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<Pair> pairs;
      const int runs = static_cast<int>(g() % 8);
      for (int r = 0; r < runs; ++r) {
        const int kind = static_cast<int>(g() % 4);  // points, with images, images, mixed
        const std::size_t length = g() % 41;
        for (std::size_t k = 0; k < length; ++k) {
          const auto point = [&] { return static_cast<spatialhash::index_t>(g() % kFirst); };
          const auto image = [&] {
            return kFirst + static_cast<spatialhash::index_t>(g() % kImages);
          };
          const int which = kind == 3 ? static_cast<int>(g() % 3) : kind;
          spatialhash::index_t a = which == 2 ? image() : point();
          spatialhash::index_t b = which == 0 ? point() : image();
          if (a == b) continue;
          pairs.push_back(Pair{std::min(a, b), std::max(a, b)});
        }
      }
      std::vector<double> distances(pairs.size());
      for (std::size_t k = 0; k < distances.size(); ++k)
        distances[k] = 0.5 + static_cast<double>(k);
      std::vector<Pair> want;
      std::vector<double> want_distances;
      for (std::size_t k = 0; k < pairs.size(); ++k) {
        const Pair p = pairs[k];
        if (p.second < kFirst) {
          want.push_back(p);
        } else if (p.first < kFirst && p.first < origin[p.second - kFirst]) {
          want.push_back(Pair{p.first, origin[p.second - kFirst]});
        } else {
          continue;
        }
        want_distances.push_back(distances[k]);
      }
      for (const bool with_distances : {false, true}) {
        SCOPED_TRACE(std::string(level == Simd::avx512
                                     ? "avx512"
                                     : (level == Simd::avx2 ? "avx2" : "scalar")) +
                     ", trial " + std::to_string(trial) + (with_distances ? ", distances" : ""));
        std::vector<Pair> folded = pairs;
        std::vector<double> moved = distances;
        const std::size_t kept = fold(folded.data(), with_distances ? moved.data() : nullptr,
                                      folded.size(), kFirst, origin.data());
        folded.resize(kept);
        ASSERT_EQ(folded, want);
        if (with_distances) {
          moved.resize(kept);
          ASSERT_EQ(moved, want_distances);
        } else {
          ASSERT_EQ(moved, distances);  // untouched
        }
      }
    }
  }
  EXPECT_GE(levels, 1u);
}

// ---- The wrapping formula, against an independent one in long double ----------------------

TEST(PeriodicWrap, MatchesIndependentFormula) {
  std::mt19937_64 g(31);
  const std::vector<std::pair<double, double>> boxes = {
      {0.0, 1.0}, {-1.5, 3.5}, {596700.0, 596710.0}, {-1e-3, 2e-3}, {0.1, 0.7}};
  for (const auto& [lower, upper] : boxes) {
    const double edge = upper - lower;
    for (double span : {0.5, 3.0, 1e3, 1e9}) {
      std::uniform_real_distribution<double> u(lower - span * edge, upper + span * edge);
      for (int s = 0; s < 2000; ++s) {
        const double x = u(g);
        const double w = spatialhash::wrap_coordinate(x, lower, upper);
        ASSERT_GE(w, lower);
        ASSERT_LT(w, upper);
        if (x >= lower && x < upper) {
          ASSERT_EQ(w, x) << "a point inside the box moved";
        }
        // Independent: the residue in long double, compared modulo the edge.
        const long double e = edge;
        long double ref = std::fmod(static_cast<long double>(x) - lower, e);
        if (ref < 0) ref += e;
        long double diff = std::fabs((static_cast<long double>(w) - lower) - ref);
        diff = std::min(diff, e - diff);  // a residue near e and one near 0 are the same point
        const double tolerance = 8 * std::numeric_limits<double>::epsilon() *
                                 (std::fabs(x) + std::fabs(lower) + std::fabs(upper));
        ASSERT_LE(static_cast<double>(diff), tolerance)
            << "x = " << x << " in [" << lower << ", " << upper << ")";
      }
    }
  }
}

TEST(PeriodicWrap, JustBelowEverySeam) {
  // x one ulp on either side of lower + m L: where (x - lower) / L rounds onto an integer, the
  // first estimate lands just outside the box and must be corrected.
  int on_seam = 0;
  for (const auto& [lower, upper] : std::vector<std::pair<double, double>>{
           {0.0, 3.0}, {0.0, 0.1}, {-0.3, 0.4}, {1.0, 8.7}, {-5.0, -4.9}}) {
    const double edge = upper - lower;
    for (int m = -2000; m <= 2000; ++m) {
      for (double toward : {-1e300, 1e300}) {
        const double x = std::nextafter(lower + m * edge, toward);
        const double w = spatialhash::wrap_coordinate(x, lower, upper);
        ASSERT_GE(w, lower) << x;
        ASSERT_LT(w, upper) << x;
        const double residue = std::fmod(x - lower, edge);
        const double near_seam = std::min(std::fabs(residue), edge - std::fabs(residue));
        if (near_seam < 1e-9 * edge) {
          ++on_seam;
          // An image of a point next to the seam lies next to lower or next to upper.
          ASSERT_TRUE(w - lower < 1e-9 * edge || upper - w < 1e-9 * edge) << x;
        }
      }
    }
  }
  EXPECT_GT(on_seam, 1000);
}

TEST(PeriodicWrap, SeamAndFaces) {
  EXPECT_EQ(spatialhash::wrap_coordinate(1.0, 0.0, 1.0), 0.0);
  EXPECT_EQ(spatialhash::wrap_coordinate(0.0, 0.0, 1.0), 0.0);
  EXPECT_EQ(spatialhash::wrap_coordinate(-1.0, 0.0, 1.0), 0.0);
  EXPECT_EQ(spatialhash::wrap_coordinate(2.25, 0.0, 1.0), 0.25);
  EXPECT_EQ(spatialhash::wrap_coordinate(-0.75, 0.0, 1.0), 0.25);
  // 1 - 1e-20 rounds to 1, the same point as 0: the result must be 0, never 1.
  EXPECT_EQ(spatialhash::wrap_coordinate(-1e-20, 0.0, 1.0), 0.0);
  const double below = std::nextafter(0.0, -1.0);
  EXPECT_LT(spatialhash::wrap_coordinate(below, 0.0, 1.0), 1.0);
  const double huge = spatialhash::wrap_coordinate(1e300, -1.0, 1.0);
  EXPECT_TRUE(huge >= -1.0 && huge < 1.0);
  // x - lower overflows: still a coordinate in the box.
  EXPECT_EQ(spatialhash::wrap_coordinate(1.7e308, -1e308, 0.0), -1e308);
  const auto w = spatialhash::wrap_into(cube<3>(0.0, 2.0, {true, false, true}), {-0.5, -7.0, 4.5});
  EXPECT_EQ(w, (std::array<double, 3>{1.5, -7.0, 0.5}));  // the open axis stays
}

// ---- Refusals -----------------------------------------------------------------------------

TEST(PeriodicErrors, RadiusAtOrAboveHalfTheEdgeNamesTheAxis) {
  const std::vector<double> xyz = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
  PeriodicBox<3> box = cube<3>(0.0, 2.0, all_periodic<3>());
  box.upper[1] = 1.0;
  expect_error([&] { Index<3, double>(xyz, 0.5, box); },
               "radius 0.5 is not below half the box edge 1 on axis 1 (y)");
  expect_error([&] { Index<3, double>(xyz, 0.6, box); }, "axis 1 (y)");
  expect_error([&] { Index<3, double>(xyz, 0.5 * (1 - 1e-14), box); }, "axis 1 (y)");
  EXPECT_NO_THROW((Index<3, double>(xyz, 0.5 * (1 - 1e-9), box)));
  box.periodic[1] = false;  // the same bounds on an open axis are ignored
  EXPECT_NO_THROW((Index<3, double>(xyz, 0.9, box)));
  box.upper[2] = 1.2;
  expect_error([&] { Index<3, double>(xyz, 0.9, box); }, "on axis 2 (z)");
}

TEST(PeriodicErrors, BadBoxesNameTheAxis) {
  const std::vector<float> xy = {0.1f, 0.2f, 0.3f, 0.4f};
  PeriodicBox<2> box = cube<2>(0.0, 1.0, all_periodic<2>());
  box.upper[0] = 0.0;
  expect_error([&] { Index<2, float>(xy, 0.1, box); }, "not above the lower bound 0 on axis 0 (x)");
  box = cube<2>(0.0, 1.0, all_periodic<2>());
  box.lower[1] = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { Index<2, float>(xy, 0.1, box); }, "not finite on axis 1 (y)");
  box.lower[1] = -std::numeric_limits<double>::max();
  box.upper[1] = std::numeric_limits<double>::max();
  expect_error([&] { Index<2, float>(xy, 0.1, box); }, "not finite on axis 1 (y)");
}

TEST(PeriodicErrors, BadPointsAndQueries) {
  std::vector<double> xy = {0.1, 0.2, 0.3, 0.4, 0.5, std::numeric_limits<double>::infinity()};
  const auto box = cube<2>(0.0, 1.0, all_periodic<2>());
  expect_error([&] { Index<2, double>(xy, 0.1, box); }, "point 2 has a non-finite y");
  xy[5] = 0.6;
  Index<2, double> index(xy, 0.1, box);
  expect_error([&] { index.ball({0.5, std::nan("")}, 0.1); }, "non-finite");
  expect_error([&] { (void)index.pairs({.radius = 0.2}); }, "exceeds the index radius");
  const std::vector<double> fewer = {0.1, 0.2};
  expect_error([&] { index.update(fewer); }, "update() got 1 points");
}

}  // namespace
