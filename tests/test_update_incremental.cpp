// The incremental update paths of the default engine (cell_list): each step is checked against
// the double brute-force oracle and a fresh build, and the test asserts which path the engine
// took (through the engine's internal last_update() diagnostic), so that the refresh, patch and
// rebuild paths are each really exercised: no motion, a few points jumping, everyone drifting a
// little, many points changing cell, points leaving the lattice and coming back.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../src/engine_base.hpp"
#include "for_each_dim_type.hpp"
#include "oracle.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using spatialhash::Engine;
using spatialhash::detail::UpdateKind;

std::string kind_name(UpdateKind kind) {
  switch (kind) {
    case UpdateKind::rebuilt:
      return "rebuilt";
    case UpdateKind::refreshed:
      return "refreshed";
    case UpdateKind::patched:
      return "patched";
  }
  return "?";
}

/// Sorted rows of neighbor lists.
std::vector<std::vector<std::size_t>> sorted_rows(const spatialhash::NeighborLists& lists) {
  std::vector<std::vector<std::size_t>> rows(lists.size());
  for (std::size_t i = 0; i < lists.size(); ++i) {
    rows[i].assign(lists.indices.begin() + lists.offsets[i],
                   lists.indices.begin() + lists.offsets[i + 1]);
    std::sort(rows[i].begin(), rows[i].end());
  }
  return rows;
}

/// One engine driven directly (as Index::update does), so that its update path can be asserted.
template <int Dim, class T>
class Driven {
 public:
  Driven(const std::vector<T>& coords, double r, Engine engine, int threads,
         spatialhash::Simd simd = spatialhash::Simd::automatic)
      : r_(r), engine_kind_(engine), threads_(threads), simd_(simd) {
    engine_ = spatialhash::detail::make_engine(engine, context(coords));
  }

  spatialhash::NeighborLists lists_at(double radius) const {
    spatialhash::NeighborLists lists;
    engine_->neighbor_lists({.radius = radius}, lists);
    return lists;
  }

  /// Updates to `coords` and checks the results against the oracle and a fresh build (full lists
  /// at r and 0.7 r, and pairs at r). Returns how the engine updated.
  UpdateKind step(const std::vector<T>& coords) {
    const UpdateKind kind = update_to(coords);
    SCOPED_TRACE("update " + kind_name(kind));
    const std::vector<double> exact = oracle::widen(coords);
    const auto got = sorted_rows(lists_at(r_));
    EXPECT_EQ(got, oracle::lists<Dim>(exact, r_)) << "differs from the oracle";
    const spatialhash::Index<Dim, T> fresh = fresh_build(coords);
    EXPECT_EQ(got, sorted_rows(fresh.neighbor_lists())) << "differs from a fresh build";
    EXPECT_EQ(sorted_rows(lists_at(0.7 * r_)), oracle::lists<Dim>(exact, 0.7 * r_))
        << "smaller radius differs from the oracle";
    spatialhash::PairList pairs = engine_->pair_list(r_, false);
    std::sort(pairs.pairs.begin(), pairs.pairs.end());
    const auto want = oracle::pairs<Dim>(exact, r_);
    EXPECT_EQ(pairs.pairs.size(), want.size());
    for (std::size_t k = 0; k < std::min(want.size(), pairs.pairs.size()); ++k) {
      if (pairs.pairs[k].first != want[k].first || pairs.pairs[k].second != want[k].second) {
        ADD_FAILURE() << "pair " << k << " differs from the oracle";
        break;
      }
    }
    return kind;
  }

  /// Updates to `coords` and checks the rows of `spots` points against the oracle (a ball
  /// query in double each: the sets are too large for the full oracle) and the length of every
  /// row against a fresh build. Returns how the engine updated.
  UpdateKind step_spot_checked(const std::vector<T>& coords, std::size_t spots) {
    const UpdateKind kind = update_to(coords);
    SCOPED_TRACE("update " + kind_name(kind));
    const spatialhash::NeighborLists got = lists_at(r_);
    const std::vector<double> exact = oracle::widen(coords);
    const std::size_t n = coords.size() / Dim;
    for (std::size_t i = 0; i < n; i += n / spots) {
      std::array<double, Dim> center;
      for (int k = 0; k < Dim; ++k) center[k] = exact[i * Dim + k];
      std::vector<std::size_t> want = oracle::ball<Dim>(exact, center, r_);
      std::erase(want, i);
      std::vector<std::size_t> row(got.indices.begin() + got.offsets[i],
                                   got.indices.begin() + got.offsets[i + 1]);
      std::sort(row.begin(), row.end());
      EXPECT_EQ(row, want) << "row " << i << " differs from the oracle";
    }
    const spatialhash::Index<Dim, T> fresh = fresh_build(coords);
    EXPECT_TRUE(got.offsets == fresh.neighbor_lists().offsets)
        << "row lengths differ from a fresh build";
    return kind;
  }

 private:
  /// Updates the engine to `coords`; returns how it updated.
  UpdateKind update_to(const std::vector<T>& coords) {
    engine_->update(context(coords));
    return engine_->last_update();
  }

  /// A fresh index of `coords` with the same engine, radius and threads.
  spatialhash::Index<Dim, T> fresh_build(const std::vector<T>& coords) const {
    return spatialhash::Index<Dim, T>(std::span<const T>(coords), r_,
                                      {.engine = engine_kind_, .threads = threads_});
  }

  spatialhash::detail::Context<Dim, T> context(const std::vector<T>& coords) const {
    auto made =
        spatialhash::detail::make_context(spatialhash::interleaved<Dim, T>(coords), r_, threads_);
    made.simd = simd_;
    return made;
  }

  double r_;
  Engine engine_kind_;
  int threads_;
  spatialhash::Simd simd_;
  std::unique_ptr<spatialhash::detail::EngineBase<Dim, T>> engine_;
};

/// Points on a jittered lattice of spacing 1 (side^Dim of them).
template <int Dim, class T>
std::vector<T> jittered_lattice(int side, std::mt19937_64& g) {
  std::uniform_real_distribution<double> jitter(-0.2, 0.2);
  std::vector<T> coords;
  const int count = Dim == 2 ? side * side : side * side * side;
  for (int p = 0; p < count; ++p) {
    int rest = p;
    for (int k = 0; k < Dim; ++k, rest /= side) {
      coords.push_back(static_cast<T>(rest % side + jitter(g)));
    }
  }
  return coords;
}

/// Every point moves by `fraction_of_r` (times a random factor in [0.5, 1]) in a random direction.
template <int Dim, class T>
void drift(std::vector<T>& coords, double step, std::mt19937_64& g) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> length(0.5 * step, step);
  for (std::size_t i = 0; i < coords.size() / Dim; ++i) {
    std::array<double, Dim> dir;
    double norm = 0.0;
    for (int k = 0; k < Dim; ++k) norm += (dir[k] = normal(g)) * dir[k];
    const double scale = length(g) / std::sqrt(norm);
    for (int k = 0; k < Dim; ++k) {
      coords[i * Dim + k] = static_cast<T>(coords[i * Dim + k] + dir[k] * scale);
    }
  }
}

template <int Dim, class T>
std::string label() {
  return "dim=" + std::to_string(Dim) + (std::is_same_v<T, float> ? " float" : " double");
}

/// Moves every `stride`-th point to a random place inside [0, extent)^Dim.
template <int Dim, class T>
void jump_every(std::vector<T>& coords, std::size_t stride, double extent, std::mt19937_64& g) {
  std::uniform_real_distribution<double> inside(0.0, extent);
  for (std::size_t i = 0; i < coords.size() / Dim; i += stride) {
    for (int k = 0; k < Dim; ++k) coords[i * Dim + k] = static_cast<T>(inside(g));
  }
}

TEST(CellListUpdate, EachPathIsTakenAndExact) {
  for_each_dim_type([]<int Dim, class T>() {
    {
      const int threads = std::is_same_v<T, float> ? 1 : 2;
      SCOPED_TRACE((label<Dim, T>() + " threads " + std::to_string(threads)));
      std::mt19937_64 g(7 + Dim + threads);
      const int side = Dim == 2 ? 40 : 11;
      const double r = 1.6;
      std::vector<T> coords = jittered_lattice<Dim, T>(side, g);
      Driven<Dim, T> engine(coords, r, Engine::cell_list, threads);

      // The same positions in another array: no point changes cell.
      std::vector<T> copy = coords;
      EXPECT_EQ(engine.step(copy), UpdateKind::refreshed);

      // A few points (one in 40) jump somewhere else inside the box: patched, and the set of
      // non-empty cells stays (the lattice is dense) or changes (a point lands in a hole).
      jump_every<Dim>(coords, 40, side - 1.0, g);
      EXPECT_EQ(engine.step(coords), UpdateKind::patched);

      // One point leaves the lattice (far beyond the padding): rebuilt on a new lattice, which
      // still covers the old box when it comes back (patched).
      std::vector<T> out = coords;
      for (int k = 0; k < Dim; ++k) out[5 * Dim + k] = static_cast<T>(-3.0 * side);
      EXPECT_EQ(engine.step(out), UpdateKind::rebuilt);
      EXPECT_EQ(engine.step(coords), UpdateKind::patched);

      // Six steps of small motion (1-2% of r, about 1-2% of the points change cell): refreshed
      // or patched, never rebuilt.
      int patched = 0;
      for (int s = 0; s < 6; ++s) {
        SCOPED_TRACE("drift step " + std::to_string(s));
        drift<Dim>(coords, (s % 3 == 0 ? 0.02 : 0.01) * r, g);
        const UpdateKind kind = engine.step(coords);
        EXPECT_NE(kind, UpdateKind::rebuilt);
        patched += kind == UpdateKind::patched;
      }
      EXPECT_GT(patched, 0);

      // Every point moves by more than a cell: too many changed cell, rebuilt.
      for (std::size_t i = 0; i < coords.size(); ++i) {
        coords[i] = static_cast<T>(coords[i] + (i % Dim == 0 ? 1.3 * r : 0.0));
      }
      EXPECT_EQ(engine.step(coords), UpdateKind::rebuilt);
    }
  });
}

TEST(CellListUpdate, EveryKernelLevelRefreshesAndPatches) {
  // update()'s key pass (simd/cell_keys.hpp) at every level this processor runs (Options::simd
  // caps it as it caps the build's): the same positions (refreshed), a few jumps and small
  // drifts (patched), each step exact.
  using spatialhash::Simd;
  for (const Simd level : {Simd::scalar, Simd::avx2, Simd::avx512}) {
    if (!spatialhash::simd_available(level)) continue;
    for_each_dim_type([level]<int Dim, class T>() {
      SCOPED_TRACE((label<Dim, T>() + " level " + std::to_string(static_cast<int>(level))));
      std::mt19937_64 g(11 + Dim);
      const int side = Dim == 2 ? 30 : 10;
      const double r = 1.6;
      std::vector<T> coords = jittered_lattice<Dim, T>(side, g);
      Driven<Dim, T> engine(coords, r, Engine::cell_list, 1, level);
      std::vector<T> copy = coords;
      EXPECT_EQ(engine.step(copy), UpdateKind::refreshed);
      jump_every<Dim>(coords, 50, side - 1.0, g);
      EXPECT_EQ(engine.step(coords), UpdateKind::patched);
      int patched = 0;
      for (int s = 0; s < 3; ++s) {
        drift<Dim>(coords, 0.01 * r, g);
        patched += engine.step(coords) == UpdateKind::patched;
      }
      EXPECT_GT(patched, 0);
    });
  }
}

TEST(CellListUpdate, ASampleSendsManyMoversToARebuild) {
  // From 16384 points (128 samples at one position in 128), update() samples the points first and
  // rebuilds at once when the sample shows any that changed cell; after its first step, which
  // counts them exactly, it patches up to 4%. So in a large set 1 jump in 200, 29 or 10 is
  // rebuilt; in a small one (no sample) 1 in 200 and 1 in 29 (about 3.4%) are patched, 1 in 10
  // rebuilt; the same points again, no point changing cell, are refreshed in both.
  using T = float;
  constexpr int Dim = 3;
  for (const int side : {11, 100}) {
    SCOPED_TRACE("lattice side " + std::to_string(side));
    std::mt19937_64 g(side);
    std::vector<T> coords = jittered_lattice<Dim, T>(side, g);
    Driven<Dim, T> engine(coords, 1.6, Engine::cell_list, 2);
    std::vector<T> same = coords;
    EXPECT_EQ(engine.step_spot_checked(same, 100), UpdateKind::refreshed);
    jump_every<Dim>(coords, 200, side - 1.0, g);
    EXPECT_EQ(engine.step_spot_checked(coords, 100),
              side == 100 ? UpdateKind::rebuilt : UpdateKind::patched);
    jump_every<Dim>(coords, 29, side - 1.0, g);
    EXPECT_EQ(engine.step_spot_checked(coords, 100),
              side == 100 ? UpdateKind::rebuilt : UpdateKind::patched);
    jump_every<Dim>(coords, 10, side - 1.0, g);
    EXPECT_EQ(engine.step_spot_checked(coords, 100), UpdateKind::rebuilt);
  }
}

TEST(CellListUpdate, RandomizedStepsOverEveryEngine) {
  // Random mixtures of motions for every engine: most points drift a little, some jump, now and
  // then the whole set shifts or stretches. Each step against the oracle and a fresh build.
  for (Engine engine_kind : spatialhash::all_engines()) {
    for_each_dim_type([&]<int Dim, class T>() {
      SCOPED_TRACE((std::string(spatialhash::engine_name(engine_kind)) + " " + label<Dim, T>()));
      std::mt19937_64 g(1000 + Dim + static_cast<int>(engine_kind));
      const double r = Dim == 2 ? 0.3 : 0.9;
      std::uniform_real_distribution<double> box(0.0, 8.0), unit(0.0, 1.0);
      std::vector<T> coords(600 * Dim);
      for (T& x : coords) x = static_cast<T>(box(g));
      Driven<Dim, T> engine(coords, r, engine_kind, 2);
      for (int s = 0; s < 6; ++s) {
        SCOPED_TRACE("step " + std::to_string(s));
        const double roll = unit(g);
        drift<Dim>(coords, (0.01 + 0.04 * unit(g)) * r, g);
        const double jump_fraction = roll < 0.5 ? 0.0 : roll < 0.8 ? 0.02 : 0.3;
        for (std::size_t i = 0; i < coords.size() / Dim; ++i) {
          if (unit(g) >= jump_fraction) continue;
          for (int k = 0; k < Dim; ++k) coords[i * Dim + k] = static_cast<T>(box(g));
        }
        if (roll > 0.9) {
          for (T& x : coords) x = static_cast<T>(1.2 * x - 2.0);
        }
        engine.step(coords);
      }
    });
  }
}

TEST(CellListUpdate, TiesAtTheRadiusSurviveAPatch) {
  // Pairs at exactly r (integer lattice, r = 1, float and double exact): a patch must keep every
  // one, as a fresh build does.
  for_each_dim_type([]<int Dim, class T>() {
    SCOPED_TRACE((label<Dim, T>()));
    const int side = Dim == 2 ? 30 : 10;
    std::vector<T> coords;
    const int count = Dim == 2 ? side * side : side * side * side;
    for (int p = 0; p < count; ++p) {
      int rest = p;
      for (int k = 0; k < Dim; ++k, rest /= side) coords.push_back(static_cast<T>(rest % side));
    }
    Driven<Dim, T> engine(coords, 1.0, Engine::cell_list, 2);
    // A few points move by whole units onto other lattice sites (coincident points, ties).
    for (std::size_t i = 3; i < coords.size() / Dim; i += 50) {
      coords[i * Dim] = static_cast<T>(std::fmod(coords[i * Dim] + 3.0, side));
    }
    EXPECT_EQ(engine.step(coords), UpdateKind::patched);
  });
}

TEST(CellListUpdate, TinyMotionWithinCellsIsRefreshedAndExact) {
  // An integer lattice with r = 1 has pairs at exactly r along every axis. The points with
  // x >= 20 move by +2^-14 along x (exact in float there): less than the distance to their
  // cell's border (the cell edge is r (1 + 2^-18), so a point at x = k lies k 2^-18 below one),
  // so no point changes cell and only the coordinates are refreshed; yet pairs move from ties to
  // beyond the float rounding band and back, so stale float coordinates would answer wrongly.
  for_each_dim_type([]<int Dim, class T>() {
    SCOPED_TRACE((label<Dim, T>()));
    const std::array<int, 3> sides = {30, Dim == 2 ? 30 : 6, 6};
    std::vector<T> coords;
    const int count = Dim == 2 ? sides[0] * sides[1] : sides[0] * sides[1] * sides[2];
    for (int p = 0; p < count; ++p) {
      int rest = p;
      for (int k = 0; k < Dim; ++k) {
        coords.push_back(static_cast<T>(rest % sides[k]));
        rest /= sides[k];
      }
    }
    std::vector<T> moved = coords;
    for (std::size_t i = 0; i < moved.size(); i += Dim) {
      if (moved[i] >= 20) moved[i] = static_cast<T>(moved[i] + 0x1p-14);
    }
    // From pairs at 1 + 2^-14 (clearly apart in float) to ties, and back.
    Driven<Dim, T> engine(moved, 1.0, Engine::cell_list, 2);
    EXPECT_EQ(engine.step(coords), UpdateKind::refreshed);
    EXPECT_EQ(engine.step(moved), UpdateKind::refreshed);
  });
}

TEST(CellListUpdate, DenseCellsSearchedBySlabsStayExact) {
  // About 40 points per cell, well above the density at which cell_list searches a group of
  // cells slab by slab (kSlabMinPoints, 16), so the slab stencils and the sub-cell patches are
  // exercised; half the points on a lattice of spacing r / 4, so that many pairs lie at exactly
  // r, some of them across slab borders. Then one point in 50 moves by 0.3 r along the last
  // axis (across slab and cell borders: patched), and everyone drifts a little. Each step against
  // the oracle.
  for_each_dim_type([]<int Dim, class T>() {
    SCOPED_TRACE((label<Dim, T>()));
    std::mt19937_64 g(40 + Dim + sizeof(T));
    const double side = Dim == 2 ? 6.0 : 4.0, r = 1.0;
    const std::size_t n = Dim == 2 ? 1440 : 2560;
    std::uniform_real_distribution<double> inside(0.0, side);
    std::uniform_int_distribution<int> site(0, static_cast<int>(4 * side));
    std::vector<T> coords;
    for (std::size_t i = 0; i < n; ++i) {
      for (int k = 0; k < Dim; ++k) {
        coords.push_back(static_cast<T>(i % 2 == 0 ? site(g) * 0.25 : inside(g)));
      }
    }
    Driven<Dim, T> engine(coords, r, Engine::cell_list, 2);
    std::vector<T> copy = coords;
    EXPECT_EQ(engine.step(copy), UpdateKind::refreshed);
    for (std::size_t i = 1; i < n; i += 50) {
      T& z = coords[i * Dim + Dim - 1];
      z = static_cast<T>(z + 0.3 * r <= side ? z + 0.3 * r : z - 0.3 * r);
    }
    EXPECT_EQ(engine.step(coords), UpdateKind::patched);
    // Many lattice points sit on slab and cell borders: any path may follow a drift.
    drift<Dim>(coords, 0.01 * r, g);
    engine.step(coords);
  });
}

TEST(CellListUpdate, RebuildsAndPatchesWriteIntoEachOthersArraysAcrossLayoutKinds) {
  // update() writes each new layout, patched or rebuilt, into the arrays of the layout it
  // replaced the time before (CellListSpare): those held another kind of layout here, and stale
  // contents must never show. The same 1500 points take five shapes in turn: dense (about 40 a
  // cell: slabs, and column order in 3D), moderate (about 2 a cell: direct lookup), clusters in a
  // large box (a block table of tiles), sparse (a coarser lattice) and dense again. Each shape is
  // reached by a rebuild, then a few points jump (a patch: fewer than 16384 points, no sample),
  // then nothing moves (a refresh). Every step against the oracle and a fresh build.
  for_each_dim_type([]<int Dim, class T>() {
    SCOPED_TRACE((label<Dim, T>()));
    std::mt19937_64 g(500 + Dim + sizeof(T));
    constexpr std::size_t n = 1500;
    const double r = 1.0;
    const auto uniform = [&](double per_cell) {
      const double side = std::pow(static_cast<double>(n) / per_cell, 1.0 / Dim) * r;
      std::uniform_real_distribution<double> inside(0.0, side);
      std::vector<T> coords(n * Dim);
      for (T& x : coords) x = static_cast<T>(inside(g));
      return coords;
    };
    const auto clustered = [&] {
      const double side = 400.0 * r;
      std::uniform_real_distribution<double> center(0.0, side), offset(-1.5 * r, 1.5 * r);
      std::vector<T> coords;
      std::array<double, Dim> c{};
      for (std::size_t i = 0; i < n; ++i) {
        if (i % 250 == 0) {
          for (int k = 0; k < Dim; ++k) c[k] = center(g);
        }
        for (int k = 0; k < Dim; ++k) coords.push_back(static_cast<T>(c[k] + offset(g)));
      }
      return coords;
    };
    const std::vector<T> start = uniform(40.0);  // the engine reads the points it was given
    Driven<Dim, T> engine(start, r, Engine::cell_list, 2);
    const std::vector<std::vector<T>> shapes = {uniform(2.0), clustered(), uniform(0.02),
                                                uniform(40.0)};
    for (std::size_t shape = 0; shape < shapes.size(); ++shape) {
      SCOPED_TRACE("shape " + std::to_string(shape));
      std::vector<T> coords = shapes[shape];
      EXPECT_EQ(engine.step(coords), UpdateKind::rebuilt);
      // One point in 200 jumps to another point's place, nudged: inside the lattice.
      std::uniform_int_distribution<std::size_t> other(0, n - 1);
      for (std::size_t i = 3; i < n; i += 200) {
        const std::size_t to = other(g);
        for (int k = 0; k < Dim; ++k) {
          coords[i * Dim + k] = static_cast<T>(coords[to * Dim + k] + (k == 0 ? 0.01 : 0.0));
        }
      }
      EXPECT_EQ(engine.step(coords), UpdateKind::patched);
      std::vector<T> same = coords;
      EXPECT_EQ(engine.step(same), UpdateKind::refreshed);
    }
  });
}

}  // namespace
