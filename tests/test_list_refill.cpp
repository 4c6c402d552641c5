// Neighbor lists refilled in place, as a simulation refills them every step
// (Index::neighbor_lists(NeighborLists&, ...)): the lists kept from one call to the next, with the
// row buffers the default engine keeps in them (ListScratch), match the double-precision oracle at
// every step while the points move, their number grows and shrinks, the thread count, radius and
// options change; so do cross queries refilled the same way (Index::cross(queries,
// NeighborLists&, ...)); and the kept memory follows ListScratch's rules.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "oracle.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using spatialhash::Engine;
using spatialhash::Index;
using spatialhash::ListOptions;
using spatialhash::NeighborLists;

/// `n` points uniform in a box of `side` per axis.
template <int Dim, class T>
std::vector<T> uniform_points(std::size_t n, double side, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(0.0, side);
  std::vector<T> coords(n * Dim);
  for (T& c : coords) c = static_cast<T>(u(g));
  return coords;
}

/// Every point moved by up to `step` per axis.
template <class T>
void jiggle(std::vector<T>& coords, double step, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(-step, step);
  for (T& c : coords) c = static_cast<T>(c + u(g));
}

/// The lists (sorted rows) equal the oracle's at radius r, and their distances, when present,
/// are the double-precision distances of the caller's points (`exact`, widened to double).
template <int Dim>
void expect_oracle(const NeighborLists& lists, const std::vector<double>& exact, double r,
                   bool with_distances) {
  const auto want = oracle::lists<Dim>(exact, r);
  ASSERT_EQ(lists.size(), want.size());
  ASSERT_EQ(lists.distances.size(), with_distances ? lists.indices.size() : 0);
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(lists.count(i), want[i].size()) << "row " << i;
    for (std::size_t k = 0; k < want[i].size(); ++k) {
      const std::size_t at = lists.offsets[i] + k;
      ASSERT_EQ(lists.indices[at], want[i][k]) << "row " << i << " #" << k;
      if (with_distances) {
        const double d =
            std::sqrt(oracle::distance_squared<Dim>(&exact[i * Dim], &exact[want[i][k] * Dim]));
        ASSERT_DOUBLE_EQ(lists.distances[at], d) << "row " << i << " #" << k;
      }
    }
  }
}

template <int Dim, class T>
void refill_through_a_simulation() {
  SCOPED_TRACE("dim " + std::to_string(Dim) + (sizeof(T) == 4 ? " float" : " double"));
  constexpr double r = 1.0;
  // About 20 neighbors per point.
  const double density = Dim == 3 ? 20.0 / (4.0 / 3.0 * M_PI) : 20.0 / M_PI;
  const auto side_for = [&](std::size_t n) {
    return std::pow(static_cast<double>(n) / density, 1.0 / Dim);
  };
  std::mt19937_64 g(Dim * 100 + sizeof(T));
  constexpr std::size_t kMany = 6000, kFew = 900;
  std::vector<T> coords = uniform_points<Dim, T>(kMany, side_for(kMany), g);
  NeighborLists lists, cross;
  // Each refill of the lists also refills `cross`: the neighbors of a second set of positions
  // (half near the points, half anywhere around them), checked against the oracle's balls.
  const auto refill = [&](const Index<Dim, T>& index, const ListOptions& options) {
    index.neighbor_lists(lists, options);
    const double radius = options.radius > 0 ? options.radius : r;
    const std::vector<double> exact = oracle::widen(coords);
    expect_oracle<Dim>(lists, exact, radius, options.with_distances);
    std::vector<double> queries(coords.begin(), coords.end());
    std::uniform_real_distribution<double> nudge(-0.5 * r, 0.5 * r),
        anywhere(-r, side_for(index.size()) + r);
    for (std::size_t q = 0; q < queries.size() / Dim; ++q) {
      for (int k = 0; k < Dim; ++k) {
        double& x = queries[q * Dim + k];
        x = q % 2 == 0 ? x + nudge(g) : anywhere(g);
      }
    }
    index.cross(spatialhash::PointsView<Dim, double>(queries.data(), queries.size() / Dim), cross,
                options);
    ASSERT_EQ(cross.size(), queries.size() / Dim);
    ASSERT_EQ(cross.distances.size(), options.with_distances ? cross.indices.size() : 0);
    for (std::size_t q = 0; q < cross.size(); ++q) {
      std::array<double, Dim> center;
      for (int k = 0; k < Dim; ++k) center[k] = queries[q * Dim + k];
      const std::vector<std::size_t> want = oracle::ball<Dim>(exact, center, radius);
      ASSERT_EQ(std::vector<std::size_t>(cross.indices.begin() + cross.offsets[q],
                                         cross.indices.begin() + cross.offsets[q + 1]),
                want)
          << "cross row " << q;
      for (std::size_t k = 0; options.with_distances && k < want.size(); ++k) {
        ASSERT_DOUBLE_EQ(
            cross.distances[cross.offsets[q] + k],
            std::sqrt(oracle::distance_squared<Dim>(&exact[want[k] * Dim], center.data())))
            << "cross row " << q << " #" << k;
      }
    }
    EXPECT_EQ(cross.scratch.bytes() > 0, lists.scratch.bytes() > 0);
  };
  {
    Index<Dim, T> index(std::span<const T>(coords), r, {.engine = Engine::cell_list, .threads = 2});
    // Filled for the first time: nothing kept.
    refill(index, {.sorted = true});
    EXPECT_EQ(lists.scratch.bytes(), 0u);
    // Refilled after the points moved: the buffers are kept.
    jiggle(coords, 0.3 * r, g);
    index.update(std::span<const T>(coords));
    refill(index, {.sorted = true});
    EXPECT_GT(lists.scratch.bytes(), 0u);
    jiggle(coords, 0.3 * r, g);
    index.update(std::span<const T>(coords));
    refill(index, {.sorted = true, .with_distances = true});
    EXPECT_GT(lists.scratch.bytes(), 0u);
  }
  // Far fewer points (the kept buffers are much larger than the search needs), then many again
  // on one thread (one buffer instead of two).
  coords = uniform_points<Dim, T>(kFew, side_for(kFew), g);
  refill(Index<Dim, T>(std::span<const T>(coords), r, {.engine = Engine::cell_list, .threads = 2}),
         {.sorted = true});
  coords = uniform_points<Dim, T>(kMany, side_for(kMany), g);
  {
    Index<Dim, T> index(std::span<const T>(coords), r, {.engine = Engine::cell_list, .threads = 1});
    refill(index, {.sorted = true});
    EXPECT_GT(lists.scratch.bytes(), 0u);
    // A low-memory search frees what was kept; the next refill keeps buffers again.
    refill(index, {.sorted = true, .low_memory = true});
    EXPECT_EQ(lists.scratch.bytes(), 0u);
    refill(index, {.radius = 0.6 * r, .sorted = true});
    EXPECT_GT(lists.scratch.bytes(), 0u);
  }
  refill(Index<Dim, T>(std::span<const T>(coords), r, {.engine = Engine::cell_list, .threads = 2}),
         {.sorted = true, .with_distances = true});
  // The kept memory is not part of the value: a copy has none and the same lists; assignment
  // keeps the target's own; release() frees it.
  const NeighborLists copy = lists;
  EXPECT_EQ(copy.scratch.bytes(), 0u);
  EXPECT_EQ(copy.offsets, lists.offsets);
  EXPECT_EQ(copy.indices, lists.indices);
  EXPECT_EQ(copy.distances, lists.distances);
  NeighborLists target = copy;
  const std::size_t kept = lists.scratch.bytes();
  lists = target;
  EXPECT_EQ(lists.scratch.bytes(), kept);
  lists.scratch.release();
  EXPECT_EQ(lists.scratch.bytes(), 0u);
  // Lists returned by value never carry buffers.
  const Index<Dim, T> fresh(std::span<const T>(coords), r, {.engine = Engine::cell_list});
  EXPECT_EQ(fresh.neighbor_lists().scratch.bytes(), 0u);
}

TEST(ListRefill, ThroughASimulationMatchesTheOracle3DFloat) {
  refill_through_a_simulation<3, float>();
}

TEST(ListRefill, ThroughASimulationMatchesTheOracle2DDouble) {
  refill_through_a_simulation<2, double>();
}

}  // namespace
