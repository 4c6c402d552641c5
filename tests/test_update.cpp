// Index::update: after the points move, every engine answers exactly as a fresh index on the new
// points and as the double-precision brute-force oracle, over several steps; a failed update
// leaves the index answering for the points it had.
#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "for_each_dim_type.hpp"
#include "oracle.hpp"
#include "rows_of.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using spatialhash::Engine;
using spatialhash::Index;
using spatialhash::InvalidArgument;

template <int Dim, class T>
std::string label() {
  return "dim=" + std::to_string(Dim) + (std::is_same_v<T, float> ? " float" : " double");
}

/// Checks an updated index against a fresh one on the same points and against the oracle:
/// sorted neighbor lists at the index radius and at a smaller one, and ball queries at points,
/// near them, and around (and beyond) the corners of the current bounding box.
template <int Dim, class T>
void expect_matches_fresh_and_oracle(const Index<Dim, T>& index, const std::vector<T>& coords,
                                     double r, Engine engine, std::uint64_t seed) {
  const std::vector<double> exact = oracle::widen(coords);
  const std::size_t n = coords.size() / Dim;
  ASSERT_EQ(index.size(), n);
  const auto want = oracle::lists<Dim>(exact, r);
  const auto got = rows_of(index.neighbor_lists({.sorted = true}));
  ASSERT_EQ(got, want) << "updated index differs from the oracle";
  Index<Dim, T> fresh(std::span<const T>(coords), r, {.engine = engine});
  ASSERT_EQ(rows_of(fresh.neighbor_lists({.sorted = true})), got)
      << "updated index differs from a fresh build";
  ASSERT_EQ(rows_of(index.neighbor_lists({.radius = 0.6 * r, .sorted = true})),
            oracle::lists<Dim>(exact, 0.6 * r))
      << "smaller query radius after update";

  std::vector<std::array<double, Dim>> probes;
  std::mt19937_64 g(seed);
  std::array<double, Dim> lo, hi;
  lo.fill(std::numeric_limits<double>::infinity());
  hi.fill(-std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) {
      lo[k] = std::min(lo[k], exact[i * Dim + k]);
      hi[k] = std::max(hi[k], exact[i * Dim + k]);
    }
  }
  for (int s = 0; s < 12 && n > 0; ++s) {
    const std::size_t i = g() % n;
    std::array<double, Dim> p;
    for (int k = 0; k < Dim; ++k) p[k] = exact[i * Dim + k] + (s % 2 ? 0.3 * r : 0.0);
    probes.push_back(p);
  }
  if (n > 0) {
    for (double beyond : {0.0, 0.5 * r, 0.99 * r, 2.5 * r}) {
      std::array<double, Dim> a = lo, b = hi;
      for (int k = 0; k < Dim; ++k) a[k] -= beyond, b[k] += beyond;
      probes.push_back(a);
      probes.push_back(b);
    }
  }
  for (const auto& p : probes) {
    const auto ball = index.ball(p, r, true);
    ASSERT_EQ(std::vector<std::size_t>(ball.begin(), ball.end()), oracle::ball<Dim>(exact, p, r))
        << "ball at (" << p[0] << ", " << p[1] << ") after update";
  }
}

class Update : public ::testing::TestWithParam<Engine> {};

/// One step of motion: most points move by 1-5% of r, a few by several r, a few jump anywhere
/// in (a slightly larger copy of) the box.
template <int Dim, class T>
void move(std::vector<T>& coords, double r, double box, std::mt19937_64& g) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0), frac(0.01, 0.05), anywhere(-1.0, box + 1);
  std::uniform_int_distribution<int> kind(0, 99);
  for (std::size_t i = 0; i < coords.size() / Dim; ++i) {
    const int k = kind(g);
    for (int a = 0; a < Dim; ++a) {
      T& x = coords[i * Dim + a];
      if (k < 2) {
        x = static_cast<T>(anywhere(g));
      } else if (k < 6) {
        x = static_cast<T>(x + 3.0 * r * unit(g));
      } else {
        x = static_cast<T>(x + frac(g) * r * unit(g));
      }
    }
  }
}

TEST_P(Update, RandomizedStepsMatchFreshBuildAndOracle) {
  for_each_dim_type([&]<int Dim, class T>() {
    for (std::uint64_t seed : {1u, 2u}) {
      SCOPED_TRACE((label<Dim, T>() + " seed " + std::to_string(seed)));
      std::mt19937_64 g(seed * 7919 + Dim);
      const double box = 10.0, r = Dim == 2 ? 0.45 : 1.1;
      std::uniform_real_distribution<double> u(0.0, box);
      std::vector<T> coords(700 * Dim);
      for (T& x : coords) x = static_cast<T>(u(g));
      Index<Dim, T> index(std::span<const T>(coords), r, {.engine = GetParam()});
      for (int step = 0; step < 5; ++step) {
        SCOPED_TRACE("step " + std::to_string(step));
        // Even steps move the points in place (the index views them), odd steps hand over a new
        // array.
        std::vector<T> moved = coords;
        move<Dim>(moved, r, box, g);
        if (step % 2 == 0) {
          coords = moved;  // same buffer, same size: the view stays valid
          index.update(std::span<const T>(coords));
          expect_matches_fresh_and_oracle<Dim, T>(index, coords, r, GetParam(), seed + step);
        } else {
          index.update(std::span<const T>(moved));
          expect_matches_fresh_and_oracle<Dim, T>(index, moved, r, GetParam(), seed + step);
          coords = moved;
          index.update(std::span<const T>(coords));  // back onto the long-lived buffer, no motion
        }
      }
    }
  });
}

TEST_P(Update, ManySmallStepsOfADriftingCloud) {
  // Sixty steps of a cloud drifting steadily in one direction with some jitter (a few percent
  // of the points change cell per step): cells keep emptying behind it and filling ahead of it,
  // beyond the first bounding box.
  for_each_dim_type([&]<int Dim, class T>() {
    SCOPED_TRACE((label<Dim, T>()));
    std::mt19937_64 g(99 + Dim);
    const double r = 0.5;
    std::uniform_real_distribution<double> u(0.0, 4.0), jitter(-0.01, 0.01);
    std::vector<T> coords(400 * Dim);
    for (T& x : coords) x = static_cast<T>(u(g));
    Index<Dim, T> index(std::span<const T>(coords), r, {.engine = GetParam()});
    for (int step = 1; step <= 60; ++step) {
      for (std::size_t i = 0; i < coords.size(); ++i) {
        coords[i] = static_cast<T>(coords[i] + (i % Dim == 0 ? 0.03 : 0.0) + jitter(g));
      }
      index.update(std::span<const T>(coords));
      if (step % 12 == 0) {
        SCOPED_TRACE("step " + std::to_string(step));
        expect_matches_fresh_and_oracle<Dim, T>(index, coords, r, GetParam(), step);
      }
    }
  });
}

TEST_P(Update, ACompactClusterSpreadsIntoManyNewCells) {
  // All points start in a few cells; each step a tenth of them jump to places all over a box a
  // hundred cells wide, nearly every one into a cell no point was in: the cell table keeps
  // growing (an incremental engine must grow or rebuild it).
  for_each_dim_type([&]<int Dim, class T>() {
    SCOPED_TRACE((label<Dim, T>()));
    std::mt19937_64 g(41 + Dim);
    const double r = 0.25;
    std::uniform_real_distribution<double> cluster(0.0, 0.9), wide(-12.0, 13.0);
    std::vector<T> coords(1600 * Dim);
    for (T& x : coords) x = static_cast<T>(cluster(g));
    Index<Dim, T> index(std::span<const T>(coords), r, {.engine = GetParam()});
    for (int step = 0; step < 6; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      for (std::size_t i = step; i < coords.size() / Dim; i += 10) {
        for (int k = 0; k < Dim; ++k) coords[i * Dim + k] = static_cast<T>(wide(g));
      }
      index.update(std::span<const T>(coords));
      expect_matches_fresh_and_oracle<Dim, T>(index, coords, r, GetParam(), step);
    }
  });
}

TEST_P(Update, ManyPointsChangeCellAtOnce) {
  // Enough points for an incremental engine to sample before scanning (thousands): first every
  // point shifts by more than a cell, then about half of them by a fraction of one, then a few.
  for_each_dim_type([&]<int Dim, class T>() {
    SCOPED_TRACE((label<Dim, T>()));
    std::mt19937_64 g(53 + Dim);
    const double r = Dim == 2 ? 0.12 : 0.4;
    std::uniform_real_distribution<double> u(0.0, 8.0);
    std::vector<T> coords(5000 * Dim);
    for (T& x : coords) x = static_cast<T>(u(g));
    Index<Dim, T> index(std::span<const T>(coords), r, {.engine = GetParam()});
    for (std::size_t i = 0; i < coords.size(); i += Dim) {
      coords[i] = static_cast<T>(coords[i] + 1.3 * r);
    }
    index.update(std::span<const T>(coords));
    expect_matches_fresh_and_oracle<Dim, T>(index, coords, r, GetParam(), 1);
    for (std::size_t i = 0; i < coords.size(); ++i) {
      coords[i] = static_cast<T>(coords[i] + 0.45 * r);
    }
    index.update(std::span<const T>(coords));
    expect_matches_fresh_and_oracle<Dim, T>(index, coords, r, GetParam(), 2);
    // And then only one point in thirty (a patch, for an incremental engine).
    for (std::size_t i = 0; i < coords.size(); i += 30 * Dim) {
      coords[i] = static_cast<T>(coords[i] - 0.7 * r);
    }
    index.update(std::span<const T>(coords));
    expect_matches_fresh_and_oracle<Dim, T>(index, coords, r, GetParam(), 3);
  });
}

TEST_P(Update, PointsLeaveTheOldBoundingBox) {
  for_each_dim_type([&]<int Dim, class T>() {
    SCOPED_TRACE((label<Dim, T>()));
    std::mt19937_64 g(5 + Dim);
    const double r = 0.7;
    std::uniform_real_distribution<double> u(0.0, 6.0);
    std::vector<T> coords(500 * Dim);
    for (T& x : coords) x = static_cast<T>(u(g));
    Index<Dim, T> index(std::span<const T>(coords), r, {.engine = GetParam()});
    // A few points far outside on every side (few movers: an incremental engine patches), each
    // with a companion within r so there are pairs out there.
    std::vector<T> out = coords;
    const double far[4] = {-20.5, 28.25, -8.0, 19.0};  // (a lattice every engine takes)
    for (int j = 0; j < 8; ++j) {
      for (int k = 0; k < Dim; ++k) {
        const double base = far[(j / 2 + k) % 4] + 0.1 * k;
        out[j * Dim + k] = static_cast<T>(base + (j % 2 ? 0.3 * r : 0.0));
      }
    }
    index.update(std::span<const T>(out));
    expect_matches_fresh_and_oracle<Dim, T>(index, out, r, GetParam(), 1);
    // Then the whole set shifted and stretched beyond the old box (most points change cell).
    std::vector<T> stretched = out;
    for (std::size_t i = 0; i < stretched.size(); ++i) {
      stretched[i] = static_cast<T>(1.7 * stretched[i] - 11.0 + 0.5 * (i % Dim));
    }
    index.update(std::span<const T>(stretched));
    expect_matches_fresh_and_oracle<Dim, T>(index, stretched, r, GetParam(), 2);
    // And back into a box smaller than the first one.
    std::vector<T> shrunk = coords;
    for (T& x : shrunk) x = static_cast<T>(0.5 * x + 1.0);
    index.update(std::span<const T>(shrunk));
    expect_matches_fresh_and_oracle<Dim, T>(index, shrunk, r, GetParam(), 3);
  });
}

TEST_P(Update, TranslationBeyondTheOldLatticeRange) {
  // The whole set moves so far (in cells) that the old lattice cannot address the new box
  // (more than 2^30 cells from its origin): an incremental engine must start a new lattice.
  for_each_dim_type([&]<int Dim, class T>() {
    SCOPED_TRACE((label<Dim, T>()));
    std::mt19937_64 g(17 + Dim);
    const double r = 1e-3;
    std::uniform_real_distribution<double> u(0.0, 0.02);
    std::vector<T> coords(300 * Dim);
    for (T& x : coords) x = static_cast<T>(u(g));
    Index<Dim, T> index(std::span<const T>(coords), r, {.engine = GetParam()});
    expect_matches_fresh_and_oracle<Dim, T>(index, coords, r, GetParam(), 1);
    // 1.5e6 / 1e-3 = 1.5e9 cells > 2^30. In float the coordinates collapse onto a coarse grid
    // there (duplicates galore): still a valid set.
    std::vector<T> moved = coords;
    for (std::size_t i = 0; i < moved.size(); ++i) {
      moved[i] = static_cast<T>(moved[i] + (i % Dim == 0 ? 1.5e6 : -2.0e6));
    }
    index.update(std::span<const T>(moved));
    expect_matches_fresh_and_oracle<Dim, T>(index, moved, r, GetParam(), 2);
    // And back.
    index.update(std::span<const T>(coords));
    expect_matches_fresh_and_oracle<Dim, T>(index, coords, r, GetParam(), 3);
  });
}

TEST_P(Update, FailedUpdatesAfterStepsKeepTheLatestResults) {
  for_each_dim_type([&]<int Dim, class T>() {
    SCOPED_TRACE((label<Dim, T>()));
    std::mt19937_64 g(23 + Dim);
    const double r = 0.6, box = 6.0;
    std::uniform_real_distribution<double> u(0.0, box);
    std::vector<T> a(400 * Dim);
    for (T& x : a) x = static_cast<T>(u(g));
    Index<Dim, T> index(std::span<const T>(a), r, {.engine = GetParam()});
    // Two successful steps (the second from a separate buffer the index keeps viewing).
    std::vector<T> b = a;
    move<Dim>(b, r, box, g);
    index.update(std::span<const T>(b));
    std::vector<T> c = b;
    move<Dim>(c, r, box, g);
    index.update(std::span<const T>(c));
    const auto before = rows_of(index.neighbor_lists({.sorted = true}));
    ASSERT_EQ(before, oracle::lists<Dim>(oracle::widen(c), r));

    // A NaN in a point that moved out of the box, points outside the box before it, and a wrong
    // count: each throws, naming the problem, and changes nothing.
    std::vector<T> bad = c;
    move<Dim>(bad, r, box, g);
    for (int k = 0; k < Dim; ++k) bad[3 * Dim + k] = static_cast<T>(-50.0 - k);
    bad[217 * Dim + (Dim - 1)] = std::numeric_limits<T>::quiet_NaN();
    expect_error([&] { index.update(std::span<const T>(bad)); },
                 std::string("point 217 has a non-finite ") + (Dim == 2 ? "y" : "z"));
    bad[217 * Dim + (Dim - 1)] = std::numeric_limits<T>::infinity();
    expect_error([&] { index.update(std::span<const T>(bad)); }, "point 217 has a non-finite");
    std::vector<T> more = c;
    more.insert(more.end(), c.begin(), c.begin() + Dim);
    expect_error([&] { index.update(std::span<const T>(more)); },
                 "update() got 401 points, the index holds 400");
    std::vector<T> ragged(c.begin(), c.end() - 1);
    expect_error([&] { index.update(std::span<const T>(ragged)); }, "not a multiple");
    // An extent the lattice cannot cover at this radius (rebound and rebuild both impossible).
    std::vector<T> wide = c;
    wide[5 * Dim] = static_cast<T>(1e15);
    expect_error([&] { index.update(std::span<const T>(wide)); }, "too small for the extent");
    ASSERT_EQ(rows_of(index.neighbor_lists({.sorted = true})), before);
    expect_matches_fresh_and_oracle<Dim, T>(index, c, r, GetParam(), 4);

    // Still updatable afterwards, incrementally and correctly.
    std::vector<T> d = c;
    move<Dim>(d, r, box, g);
    index.update(std::span<const T>(d));
    expect_matches_fresh_and_oracle<Dim, T>(index, d, r, GetParam(), 5);
  });
}

TEST_P(Update, WiderThanAPackedKeyAxisHolds) {
  // One point moves 3 million cells away along x (3D, r = 1): more than the 2^21 cells per axis
  // sorted_index can pack, fewer than the 2^30 of the lattice. sorted_index must refuse with a
  // clear message and keep its results; cell_hash (a hash: no limit but the lattice's) and
  // brute_force must follow; other engines may refuse for memory, but then change nothing.
  using T = double;
  std::mt19937_64 g(31);
  const double r = 1.0;
  std::uniform_real_distribution<double> u(0.0, 10.0);
  std::vector<T> xyz(300 * 3);
  for (T& x : xyz) x = u(g);
  Index<3, T> index(std::span<const T>(xyz), r, {.engine = GetParam()});
  const auto before = rows_of(index.neighbor_lists({.sorted = true}));
  std::vector<T> wide = xyz;
  wide[7 * 3] = 3.0e6;
  wide[8 * 3] = 3.0e6 + 0.5;  // a neighbor out there
  try {
    index.update(std::span<const T>(wide));
  } catch (const InvalidArgument& e) {
    ASSERT_NE(GetParam(), Engine::cell_hash) << e.what();
    ASSERT_NE(GetParam(), Engine::brute_force) << e.what();
    if (GetParam() == Engine::sorted_index) {
      const std::string message = e.what();
      EXPECT_NE(message.find("along x"), std::string::npos) << message;
      EXPECT_NE(message.find("hashed_grid"), std::string::npos) << message;
    }
    ASSERT_EQ(rows_of(index.neighbor_lists({.sorted = true})), before);
    expect_matches_fresh_and_oracle<3, T>(index, xyz, r, GetParam(), 1);
    return;
  }
  ASSERT_NE(GetParam(), Engine::sorted_index) << "sorted_index accepted 3e6 cells along x";
  expect_matches_fresh_and_oracle<3, T>(index, wide, r, GetParam(), 2);
}

TEST(UpdateSortedIndex, ConstructionRefusesTooManyCellsPerPackedAxis) {
  // Along z this time, at construction: the message names the axis and the alternative.
  std::vector<double> xyz = {0, 0, 0, 1, 1, 5.0e6};
  expect_error(
      [&] {
        Index<3, double>(std::span<const double>(xyz), 1.0, {.engine = Engine::sorted_index});
      },
      "cells along z");
  // 2D packs 32 bits per axis, more than the lattice's 2^30: no such limit.
  std::vector<double> xy = {0, 0, 1.0e9, 0.5, 1.0e9 + 0.5, 0.5};
  Index<2, double> index(std::span<const double>(xy), 1.0, {.engine = Engine::sorted_index});
  ASSERT_EQ(index.pairs().pairs.size(), 1u);
  EXPECT_EQ(index.pairs().pairs[0], (spatialhash::Pair{1, 2}));
}

INSTANTIATE_TEST_SUITE_P(AllEngines, Update, ::testing::ValuesIn(spatialhash::all_engines()),
                         [](const auto& info) {
                           return std::string(spatialhash::engine_name(info.param));
                         });

}  // namespace
