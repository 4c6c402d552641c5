// SizedIndex: every query against a double-precision brute force written here (both size rules,
// 2D and 3D, float and double, levels on and off, several engines), exact ties at ri + rj and at
// max(ri, rj), a power-law spread of 100x, one huge particle among small ones, equal radii
// against Index, update(), and every refusal of bad input.
#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "oracle.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using spatialhash::Engine;
using spatialhash::SizedIndex;
using spatialhash::SizedOptions;
using spatialhash::SizeRule;

/// A neighbor pair (i < j) with its squared distance.
using Found = std::tuple<std::size_t, std::size_t, double>;

/// Points and radii in double; the test converts them to T and the oracle reads them back.
struct Particles {
  std::vector<double> xyz;
  std::vector<double> radii;
};

/// The brute-force oracle: all pairs i < j with d2 <= reach^2, reach = ri + rj or max(ri, rj).
template <int Dim>
std::vector<Found> brute_force(const std::vector<double>& xyz, const std::vector<double>& radii,
                               SizeRule rule) {
  std::vector<Found> result;
  for (std::size_t i = 0; i < radii.size(); ++i) {
    for (std::size_t j = i + 1; j < radii.size(); ++j) {
      const double d2 = oracle::distance_squared<Dim>(&xyz[i * Dim], &xyz[j * Dim]);
      const double reach =
          rule == SizeRule::sum ? radii[i] + radii[j] : std::max(radii[i], radii[j]);
      if (d2 <= reach * reach) result.emplace_back(i, j, d2);
    }
  }
  return result;
}

template <int Dim, class T>
std::string label(SizeRule rule, const SizedOptions& options) {
  return "dim=" + std::to_string(Dim) + (std::is_same_v<T, float> ? " float" : " double") +
         (rule == SizeRule::sum ? " sum" : " max") + (options.levels ? " levels" : " single") +
         " engine=" +
         std::string(spatialhash::engine_name(
             options.index.engine == Engine::automatic ? Engine::cell_list : options.index.engine));
}

/// Builds a SizedIndex on `p` converted to T and compares every query with the oracle.
template <int Dim, class T>
void check(const Particles& p, SizeRule rule, SizedOptions options = {}) {
  SCOPED_TRACE((label<Dim, T>(rule, options)));
  const std::vector<T> coords(p.xyz.begin(), p.xyz.end());
  const std::vector<T> radii(p.radii.begin(), p.radii.end());
  const std::vector<double> exact = oracle::widen(coords), exact_radii = oracle::widen(radii);
  const std::size_t n = radii.size();
  const auto want = brute_force<Dim>(exact, exact_radii, rule);

  const SizedIndex<Dim, T> index(std::span<const T>(coords), std::span<const T>(radii), rule,
                                 options);
  ASSERT_EQ(index.size(), n);

  // Pairs by callback: each once, first < second, exact squared distance.
  std::vector<Found> got;
  index.for_each_pair([&](auto i, auto j, double d2) { got.emplace_back(i, j, d2); });
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got, want);

  // Pairs as arrays, sorted, with distances.
  const auto list = index.pairs({.sorted = true, .with_distances = true});
  ASSERT_EQ(list.pairs.size(), want.size());
  ASSERT_EQ(list.distances.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(list.pairs[k].first, std::get<0>(want[k]));
    ASSERT_EQ(list.pairs[k].second, std::get<1>(want[k]));
    ASSERT_EQ(list.distances[k], std::sqrt(std::get<2>(want[k])));
  }
  // Unsorted pairs: the same set.
  auto unsorted = index.pairs().pairs;
  std::sort(unsorted.begin(), unsorted.end());
  ASSERT_EQ(unsorted, list.pairs);

  // Full lists (sorted, with distances) and counts.
  std::vector<std::vector<std::pair<std::size_t, double>>> want_rows(n);
  for (const auto& [i, j, d2] : want) {
    want_rows[i].emplace_back(j, std::sqrt(d2));
    want_rows[j].emplace_back(i, std::sqrt(d2));
  }
  for (auto& row : want_rows) std::sort(row.begin(), row.end());
  const auto lists = index.neighbor_lists({.sorted = true, .with_distances = true});
  const auto counts = index.neighbor_counts();
  ASSERT_EQ(lists.size(), n);
  ASSERT_EQ(counts.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::pair<std::size_t, double>> row;
    for (std::size_t k = lists.offsets[i]; k < lists.offsets[i + 1]; ++k) {
      row.emplace_back(lists.indices[k], lists.distances[k]);
    }
    ASSERT_EQ(row, want_rows[i]) << "list of point " << i;
    ASSERT_EQ(counts[i], want_rows[i].size()) << "count of point " << i;
  }
}

/// Runs `check` for both rules, levels on and off, float and double.
template <int Dim>
void check_all(const Particles& p, SizedOptions options = {}) {
  for (SizeRule rule : {SizeRule::sum, SizeRule::max}) {
    for (bool levels : {true, false}) {
      options.levels = levels;
      check<Dim, float>(p, rule, options);
      check<Dim, double>(p, rule, options);
    }
  }
}

/// n points uniform in a cube of side `box`, radii from a power law p(r) ~ r^-alpha on
/// [r_min, 100 r_min] (most small, a few large).
template <int Dim>
Particles power_law(std::size_t n, double box, double r_min, double alpha, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Particles p;
  const double lo = std::pow(r_min, 1 - alpha), hi = std::pow(100 * r_min, 1 - alpha);
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) p.xyz.push_back(u(g) * box);
    // Inverse transform sampling of the truncated power law.
    p.radii.push_back(std::pow(lo + u(g) * (hi - lo), 1 / (1 - alpha)));
  }
  return p;
}

/// Particles of radius 0.05 to 0.1 and one of radius 4 (about a quarter of the box).
template <int Dim>
Particles one_huge(std::uint64_t seed) {
  auto p = power_law<Dim>(2000, Dim == 3 ? 10.0 : 30.0, 0.05, 2.0, seed);
  for (double& r : p.radii) r = std::min(r, 0.1);
  p.radii[1234] = 4.0;
  return p;
}

TEST(SizedParticles, PowerLawSpanning100x) {
  const auto p2 = power_law<2>(1500, 40.0, 0.1, 2.5, 1);
  const auto r2 = std::minmax_element(p2.radii.begin(), p2.radii.end());
  EXPECT_GT(*r2.second / *r2.first, 20.0);  // the spread this test is about
  check_all<2>(p2);
  check_all<3>(power_law<3>(1500, 12.0, 0.1, 3.0, 2));
  // A coarser and a finer size class on the same points.
  check<3, double>(power_law<3>(1000, 12.0, 0.1, 3.0, 3), SizeRule::sum, {.level_ratio = 1.3});
  check<3, float>(power_law<3>(1000, 12.0, 0.1, 3.0, 3), SizeRule::max, {.level_ratio = 8.0});
}

TEST(SizedParticles, SeveralEngines) {
  const auto p = power_law<3>(800, 10.0, 0.1, 3.0, 4);
  const auto p2 = power_law<2>(800, 30.0, 0.1, 2.5, 4);
  for (Engine e :
       {Engine::hashed_grid, Engine::cell_hash, Engine::sorted_index, Engine::brute_force}) {
    for (SizeRule rule : {SizeRule::sum, SizeRule::max}) {
      check<3, float>(p, rule, {.index = {.engine = e}});
      check<2, double>(p2, rule, {.index = {.engine = e, .threads = 2}});
    }
  }
}

/// Dyadic lattice points (spacing 0.5) with dyadic radii: many distances equal ri + rj or
/// max(ri, rj) exactly, in float and in double, so a "<" for "<=" anywhere fails.
template <int Dim>
Particles exact_ties(std::uint64_t seed) {
  std::mt19937_64 g(seed);
  const double sum_radii[] = {0.0625, 0.125, 0.25, 0.375, 0.4375, 0.5, 1.0, 2.0};
  std::uniform_int_distribution<int> pick(0, 7);
  Particles p;
  const int side = Dim == 3 ? 8 : 20;
  const int sz = Dim == 3 ? side : 1;
  for (int z = 0; z < sz; ++z)
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x) {
        const int idx[3] = {x, y, z};
        for (int k = 0; k < Dim; ++k) p.xyz.push_back(0.5 * idx[k] + 3.0);
        p.radii.push_back(sum_radii[pick(g)]);
      }
  return p;
}

TEST(SizedParticles, ExactTiesAtTheReach) {
  for (std::uint64_t seed : {5, 6}) {
    const auto p2 = exact_ties<2>(seed);
    const auto p3 = exact_ties<3>(seed);
    // The ties exist: pairs at exactly ri + rj and at exactly max(ri, rj).
    std::size_t ties = 0;
    for (const auto& [i, j, d2] : brute_force<2>(p2.xyz, p2.radii, SizeRule::sum)) {
      const double s = p2.radii[i] + p2.radii[j];
      ties += d2 == s * s;
    }
    EXPECT_GT(ties, 10u);
    check_all<2>(p2);
    check_all<3>(p3);
  }
}

TEST(SizedParticles, EqualRadiiMatchIndexAtTwiceAndOnceTheRadius) {
  auto p = power_law<3>(1200, 8.0, 0.1, 3.0, 7);
  std::fill(p.radii.begin(), p.radii.end(), 0.3);
  check_all<3>(p);
  const SizedIndex<3, double> sum(std::span<const double>(p.xyz), std::span<const double>(p.radii),
                                  SizeRule::sum);
  const SizedIndex<3, double> max(std::span<const double>(p.xyz), std::span<const double>(p.radii),
                                  SizeRule::max);
  EXPECT_EQ(sum.levels(), 1u);
  const spatialhash::Index<3, double> twice(std::span<const double>(p.xyz), 0.6);
  const spatialhash::Index<3, double> once(std::span<const double>(p.xyz), 0.3);
  EXPECT_EQ(sum.pairs({.sorted = true}).pairs, twice.pairs({.sorted = true}).pairs);
  EXPECT_EQ(max.pairs({.sorted = true}).pairs, once.pairs({.sorted = true}).pairs);
  EXPECT_GT(once.pairs().pairs.size(), 100u);
}

TEST(SizedParticles, OneHugeParticleAmongSmallOnes) {
  for (SizeRule rule : {SizeRule::sum, SizeRule::max}) {
    const auto p = one_huge<3>(8);
    const SizedIndex<3, float> index(
        std::span<const float>(std::vector<float>(p.xyz.begin(), p.xyz.end())),
        std::span<const float>(std::vector<float>(p.radii.begin(), p.radii.end())), rule);
    EXPECT_EQ(index.levels(), 2u);
    check<3, float>(p, rule);
    check<3, double>(p, rule, {.levels = false});
    check<2, double>(one_huge<2>(8), rule);
  }
}

TEST(SizedParticles, SparseClustersAndBalancedLevels) {
  // Clusters 1e6 apart: the per-level grids must coarsen their cells (a dense lattice at the
  // radius would be huge) and still find every pair. Two levels of equal counts make the
  // cross-level search run from the smaller radii into the larger ones too.
  Particles p;
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 300; ++i) {
      for (int k = 0; k < 3; ++k) p.xyz.push_back(1e6 * c * (k + 1) + 20.0 * unit(rng));
      p.radii.push_back(i % 2 == 0 ? 0.5 + 0.5 * unit(rng) : 2.5 + 1.5 * unit(rng));
    }
  }
  for (SizeRule rule : {SizeRule::sum, SizeRule::max}) {
    check<3, double>(p, rule);
    check<3, float>(p, rule);
  }
}

TEST(SizedParticles, EmptyAndSinglePoint) {
  check_all<3>(Particles{});
  check_all<2>(Particles{{1.0, 2.0}, {0.5}});
  // Coincident points of very different sizes are neighbors under both rules.
  check_all<3>(Particles{{1, 1, 1, 1, 1, 1, 1, 1, 1}, {1e-3, 1.0, 1e3}});
}

TEST(SizedParticles, UpdateAfterMoving) {
  auto p = power_law<3>(1000, 10.0, 0.1, 3.0, 9);
  std::vector<double> coords = p.xyz;
  SizedIndex<3, double> index(std::span<const double>(coords), std::span<const double>(p.radii),
                              SizeRule::sum);
  std::mt19937_64 g(10);
  std::normal_distribution<double> step(0.0, 0.3);
  for (int s = 0; s < 3; ++s) {
    for (double& x : coords) x += step(g);
    index.update(std::span<const double>(coords));
    std::vector<Found> got;
    index.for_each_pair([&](auto i, auto j, double d2) { got.emplace_back(i, j, d2); });
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, brute_force<3>(coords, p.radii, SizeRule::sum)) << "step " << s;
  }
  // A failed update leaves the index answering for the points it had.
  const auto before = index.pairs({.sorted = true}).pairs;
  std::vector<double> bad = coords;
  bad[3 * 17 + 2] = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { index.update(std::span<const double>(bad)); }, "point 17");
  expect_error([&] { index.update(std::span<const double>(coords.data(), 30)); }, "update()");
  EXPECT_EQ(index.pairs({.sorted = true}).pairs, before);
  EXPECT_FALSE(before.empty());
}

TEST(SizedParticles, BadInputIsNamed) {
  const std::vector<double> xyz = {0, 0, 0, 1, 1, 1, 2, 2, 2};
  const auto build = [&](std::vector<double> radii, SizedOptions options = {}) {
    SizedIndex<3, double> index(std::span<const double>(xyz), std::span<const double>(radii),
                                SizeRule::sum, options);
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_error([&] { build({1, nan, 1}); }, "radius 1 must be finite and > 0");
  expect_error([&] { build({1, 1, 0}); }, "radius 2 must be finite and > 0");
  expect_error([&] { build({-1, 1, 1}); }, "radius 0 must be finite and > 0");
  expect_error([&] { build({1, inf, 1}); }, "radius 1 must be finite and > 0");
  expect_error([&] { build({1, 1}); }, "got 2 radii for 3 points");
  expect_error([&] { build({1, 1, 1, 1}); }, "got 4 radii for 3 points");
  expect_error([&] { build({1, 1, 1e308}); }, "radius 2 is 1e+308, outside the supported range");
  expect_error([&] { build({1, 1, 1}, {.level_ratio = 1.0}); }, "level_ratio");
  expect_error([&] { build({1, 1, 1}, {.level_ratio = nan}); }, "level_ratio");
  std::vector<float> coords = {0, 0, 0, 1, 1, std::numeric_limits<float>::infinity()};
  const std::vector<float> radii = {1, 1};
  expect_error(
      [&] {
        SizedIndex<3, float>(std::span<const float>(coords), std::span<const float>(radii),
                             SizeRule::max);
      },
      "point 1 has a non-finite z coordinate");
  coords.pop_back();
  expect_error(
      [&] {
        SizedIndex<3, float>(std::span<const float>(coords), std::span<const float>(radii),
                             SizeRule::max);
      },
      "not a multiple of the dimension");
}

// Extents at the ends of the double range: an extent that overflows is refused (it once made the
// level grids' coarsening loop spin forever, in the constructor and in update()), and a finite
// extent whose cell count overflows stays exact (a grid edge of infinity once made a cell NaN).
TEST(SizedParticles, ExtentsAtTheEndsOfTheDoubleRange) {
  const std::vector<double> radii = {1, 1, 10};
  const std::vector<double> overflowing = {-1e308, 0, 1e308, 0, 0, 0};
  for (const bool levels : {true, false}) {
    expect_error(
        [&] {
          SizedIndex<2, double>(std::span<const double>(overflowing),
                                std::span<const double>(radii), SizeRule::sum, {.levels = levels});
        },
        "the extent of the points along x overflows double precision");
  }
  std::vector<double> sane = {0, 0, 30, 0, 0, 5};
  SizedIndex<2, double> index(std::span<const double>(sane), std::span<const double>(radii),
                              SizeRule::sum);
  const auto before = index.pairs({.sorted = true}).pairs;
  EXPECT_EQ(before.size(), 1u);
  expect_error([&] { index.update(std::span<const double>(overflowing)); }, "overflows double");
  EXPECT_EQ(index.pairs({.sorted = true}).pairs, before);

  // Two size classes; the small one spans [1e308 - 1e300, 1e308] in y, far more cells of its
  // radius than a double counts, and a large particle sits near -DBL_MAX.
  const double top = 1e308 - 1e300;
  Particles far;
  far.xyz = {0, 1e308, 0, top, 0, -(std::numeric_limits<double>::max() - top), 1e300, 1e308};
  far.radii = {1e-100, 1e-100, 1.0, 1e150};
  // Levels only: one Index at the largest reach cannot hold this extent.
  check<2, double>(far, SizeRule::sum);
  check<2, double>(far, SizeRule::max);
}

// With one size class the particles are searched by an Index at the largest reach; a lattice
// that Index cannot hold is refused with a message that says which radius it was.
TEST(SizedParticles, OneSizeClassNamesTheIndexRadius) {
  const std::vector<double> xy = {0, 0, 1e9, 0, 0.15, 0};
  const std::vector<double> equal = {0.1, 0.1, 0.1};
  expect_error(
      [&] {
        SizedIndex<2, double>(std::span<const double>(xy), std::span<const double>(equal),
                              SizeRule::sum);
      },
      "searched by an Index of radius 0.2");
  // Unequal radii give several levels, whose grids coarsen instead: exact.
  check<2, double>(Particles{xy, {0.1, 0.1, 0.3}}, SizeRule::sum);
}

}  // namespace
