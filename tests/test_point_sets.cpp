// PointSets: every set pair's neighbor lists and callbacks against a double-precision brute force
// written here (2D and 3D, float and double, several engines): the SPH fluid + boundary table
// (boundary sees nothing), an asymmetric table, empty sets, a set of one point, duplicate points
// across sets, update(), and bad set ids and inactive pairs refused by name.
#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "oracle.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using spatialhash::Engine;
using spatialhash::PointSets;
using spatialhash::SetPoint;

using Rows = std::vector<std::vector<std::size_t>>;

/// Oracle: for each point of `a`, the sorted indices of the points of `b` within r (a point is
/// not its own neighbor when a and b are the same set).
template <int Dim>
Rows brute_force(const std::vector<double>& a, const std::vector<double>& b, double r, bool same) {
  Rows rows(a.size() / Dim);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < b.size() / Dim; ++j) {
      if (same && i == j) continue;
      if (oracle::distance_squared<Dim>(&a[i * Dim], &b[j * Dim]) <= r * r) rows[i].push_back(j);
    }
  }
  return rows;
}

Rows rows_of(const spatialhash::NeighborLists& lists) {
  Rows rows(lists.size());
  for (std::size_t i = 0; i < lists.size(); ++i) {
    rows[i].assign(lists.indices.begin() + lists.offsets[i],
                   lists.indices.begin() + lists.offsets[i + 1]);
  }
  return rows;
}

template <int Dim>
std::vector<double> uniform(std::size_t n, double box, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, box);
  std::vector<double> xyz(n * Dim);
  for (double& x : xyz) x = u(g);
  return xyz;
}

/// Checks every active pair of `sets` (built on `coords`) against the oracle, through the
/// per-pair lists, the per-pair callback, the all-pairs lists and the all-pairs callback; and
/// that inactive pairs are refused by the per-pair queries and empty in the all-pairs ones.
template <int Dim, class T>
void check(const PointSets<Dim, T>& sets, const std::vector<std::vector<T>>& coords) {
  const std::size_t m = coords.size();
  ASSERT_EQ(sets.size(), m);
  std::vector<std::vector<double>> exact;
  for (const auto& c : coords) exact.push_back(oracle::widen(c));
  const double r = sets.radius();
  const auto all = sets.neighbor_lists({.sorted = true});
  std::vector<Rows> by_all_callback(m * m);
  for (std::size_t a = 0; a < m; ++a) {
    for (std::size_t b = 0; b < m; ++b) by_all_callback[a * m + b].resize(exact[a].size() / Dim);
  }
  sets.for_each_neighbor([&](SetPoint p, SetPoint q, double d2) {
    EXPECT_EQ(d2, oracle::distance_squared<Dim>(&exact[p.set][p.index * Dim],
                                                &exact[q.set][q.index * Dim]));
    by_all_callback[p.set * m + q.set][p.index].push_back(q.index);
  });
  for (std::size_t a = 0; a < m; ++a) {
    for (std::size_t b = 0; b < m; ++b) {
      SCOPED_TRACE("pair (" + std::to_string(a) + ", " + std::to_string(b) + ")");
      Rows& callback_all = by_all_callback[a * m + b];
      for (auto& row : callback_all) std::sort(row.begin(), row.end());
      const Rows none(exact[a].size() / Dim);
      if (!sets.is_active(a, b)) {
        EXPECT_FALSE(all.active[a * m + b]);
        EXPECT_EQ(rows_of(all.between(a, b)), none);
        EXPECT_EQ(callback_all, none);
        expect_error([&] { (void)sets.neighbor_lists(a, b); }, "is not active");
        expect_error([&] { sets.for_each_neighbor(a, b, [](auto, auto, double) {}); },
                     "is not active");
        continue;
      }
      const Rows want = brute_force<Dim>(exact[a], exact[b], r, a == b);
      EXPECT_TRUE(all.active[a * m + b]);
      EXPECT_EQ(rows_of(sets.neighbor_lists(a, b, {.sorted = true})), want);
      EXPECT_EQ(rows_of(all.between(a, b)), want);
      EXPECT_EQ(callback_all, want);
      Rows by_callback(want.size());
      sets.for_each_neighbor(a, b, [&](auto i, auto j, double d2) {
        EXPECT_EQ(d2, oracle::distance_squared<Dim>(&exact[a][i * Dim], &exact[b][j * Dim]));
        by_callback[i].push_back(j);
      });
      for (auto& row : by_callback) std::sort(row.begin(), row.end());
      EXPECT_EQ(by_callback, want);
      // A smaller radius through ListOptions.
      EXPECT_EQ(rows_of(sets.neighbor_lists(a, b, {.radius = r / 2, .sorted = true})),
                brute_force<Dim>(exact[a], exact[b], r / 2, a == b));
    }
  }
}

/// Fluid and boundary (a wall of points at the bottom of the fluid box), SPH style.
template <int Dim, class T>
void fluid_and_boundary(Engine engine) {
  SCOPED_TRACE("dim=" + std::to_string(Dim) + (std::is_same_v<T, float> ? " float " : " double ") +
               std::string(spatialhash::engine_name(engine)));
  const auto fluid_d = uniform<Dim>(700, 6.0, 1);
  auto wall_d = uniform<Dim>(300, 6.0, 2);
  for (std::size_t i = 0; i < wall_d.size(); i += Dim) wall_d[i + Dim - 1] *= 0.05;
  const std::vector<std::vector<T>> coords = {std::vector<T>(fluid_d.begin(), fluid_d.end()),
                                              std::vector<T>(wall_d.begin(), wall_d.end())};
  PointSets<Dim, T> sets(0.6, {.engine = engine});
  const auto fluid = sets.add_set(std::span<const T>(coords[0]));
  const auto boundary = sets.add_set(std::span<const T>(coords[1]));
  EXPECT_EQ(fluid, 0u);
  EXPECT_EQ(boundary, 1u);
  EXPECT_TRUE(sets.is_active(boundary, fluid));  // the default: everything active
  check(sets, coords);
  sets.activate(boundary, fluid, false);
  sets.activate(boundary, boundary, false);
  EXPECT_TRUE(sets.is_active(fluid, boundary));
  check(sets, coords);
  // The fluid near the wall does see boundary points.
  EXPECT_GT(sets.neighbor_lists(fluid, boundary).indices.size(), 100u);
}

TEST(PointSets, FluidAndBoundary) {
  fluid_and_boundary<2, float>(Engine::automatic);
  fluid_and_boundary<2, double>(Engine::automatic);
  fluid_and_boundary<3, float>(Engine::automatic);
  fluid_and_boundary<3, double>(Engine::automatic);
  fluid_and_boundary<3, float>(Engine::hashed_grid);
  fluid_and_boundary<2, double>(Engine::cell_hash);
  fluid_and_boundary<3, double>(Engine::brute_force);
}

TEST(PointSets, AsymmetricTableEmptySetsOnePointAndDuplicates) {
  // Four sets: a cloud, an empty set, a single point, and copies of some cloud points (so points
  // of different sets coincide: distance 0, neighbors across sets).
  const auto cloud_d = uniform<3>(500, 4.0, 3);
  std::vector<double> copies(cloud_d.begin(), cloud_d.begin() + 3 * 40);
  const std::vector<std::vector<float>> coords = {
      std::vector<float>(cloud_d.begin(), cloud_d.end()),
      {},
      {2.0f, 2.0f, 2.0f},
      std::vector<float>(copies.begin(), copies.end())};
  PointSets<3, float> sets(0.5);
  for (const auto& c : coords) sets.add_set(std::span<const float>(c));
  check(sets, coords);
  sets.activate(0, 3, false);  // 3 sees 0, 0 does not see 3
  sets.activate(2, 2, false);
  sets.activate(1, 0, false);
  check(sets, coords);
  const auto dup = sets.neighbor_lists(3, 0, {.sorted = true});
  for (std::size_t i = 0; i < 40; ++i) {  // each copy finds its original
    EXPECT_TRUE(std::binary_search(dup.indices.begin() + dup.offsets[i],
                                   dup.indices.begin() + dup.offsets[i + 1], i));
  }
  sets.activate(0, 3);  // on again
  check(sets, coords);
}

TEST(PointSets, UpdateAfterMoving) {
  auto a = uniform<2>(400, 5.0, 4), b = uniform<2>(300, 5.0, 5);
  PointSets<2, double> sets(0.4);
  sets.add_set(std::span<const double>(a));
  sets.add_set(std::span<const double>(b));
  for (double& x : a) x += 0.7;  // moved in place
  sets.update();
  check<2, double>(sets, {a, b});
  const auto c = uniform<2>(300, 5.0, 6);  // set 1 replaced by new memory
  sets.update(1, spatialhash::PointsView<2, double>(c.data(), 300));
  check<2, double>(sets, {a, c});
  expect_error([&] { sets.update(1, spatialhash::PointsView<2, double>(c.data(), 299)); },
               "update()");
  check<2, double>(sets, {a, c});
}

TEST(PointSets, BadIdsAndArgumentsAreNamed) {
  const std::vector<double> xyz = {0, 0, 0, 1, 1, 1};
  expect_error([] { PointSets<3, double>(0.0); }, "radius must be finite and > 0");
  expect_error([] { (void)PointSets<3, double>(std::numeric_limits<double>::quiet_NaN()); },
               "radius");
  PointSets<3, double> sets(1.0);
  sets.add_set(std::span<const double>(xyz));
  expect_error([&] { (void)sets.neighbor_lists(0, 1); },
               "second set id 1 is out of range (1 sets)");
  expect_error([&] { (void)sets.neighbor_lists(2, 0); }, "first set id 2 is out of range");
  expect_error([&] { sets.activate(0, 5); }, "second set id 5");
  expect_error([&] { (void)sets.is_active(7, 0); }, "first set id 7");
  expect_error([&] { (void)sets.set_size(3); }, "set id 3 is out of range");
  expect_error([&] { sets.update(1, {}); }, "set id 1 is out of range");
  expect_error([&] { sets.for_each_neighbor(0, 9, [](auto, auto, double) {}); }, "set id 9");
  const std::vector<double> bad = {0, 0, 0, 1, std::numeric_limits<double>::infinity(), 1};
  expect_error([&] { sets.add_set(std::span<const double>(bad)); }, "point 1");
  expect_error([&] { sets.add_set(std::span<const double>(xyz.data(), 5)); }, "multiple");
  EXPECT_EQ(sets.size(), 1u);  // failed adds add nothing
  EXPECT_EQ(sets.set_size(0), 2u);
  expect_error([&] { (void)sets.neighbor_lists(0, 0, {.radius = 2.0}); }, "exceeds");
}

}  // namespace
