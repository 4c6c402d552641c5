// Float frames (src/engines/cell_list_layout.hpp): on lattices wider than a frame (2^kFrameBits
// cells per axis), cell_list keeps float coordinates relative to each cell's frame, searches
// within one frame in float and stencils across frames in double. Clusters of pairs within a few
// ulps of r straddle frame boundaries, near the lattice origin and a million radii from it, in
// float and double: cell_list, in each configuration, must agree with the double-precision brute
// force for every query form, and after updates that move points across the boundaries. And
// clusters on lattices wider than a Morton code holds (coarse keys), through the same checks.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "../src/engines/cell_list_layout.hpp"
#include "check_against_oracle.hpp"
#include "engine_cases.hpp"
#include "rows_of.hpp"
#include "sanitized_build.hpp"

namespace {

using spatialhash::detail::CellListLayout;

/// `clusters` clusters of 400 pairs (p, p + r (1 + k eps) u), k in [-3, 3], u a random unit
/// vector, p within 2.5 r of a corner where frame boundaries meet, plus a point at `base` on every
/// axis that fixes the bounding box's lower corner (the engine's lattice origin lies one cell
/// below it, so the boundaries lie at base + (1024 j - 1) cells). The corners are 1 to 160 frames
/// out: more than one frame per axis even on cells coarsened 64 times for sparse data.
template <int Dim, class T>
datasets::Dataset pairs_at_frame_corners(double r, double base, int clusters, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> around(-2.5 * r, 2.5 * r);
  std::uniform_int_distribution<int> ulps(-3, 3);
  std::uniform_int_distribution<int> frame(1, 160);
  const double cell = r * spatialhash::detail::GridGeometry<Dim>::kCellMargin;
  const auto frame_cells = static_cast<double>(std::int64_t{1} << CellListLayout<Dim>::kFrameBits);
  datasets::Dataset d{"pairs_at_frame_corners", {}, r};
  for (int k = 0; k < Dim; ++k) d.xyz.push_back(static_cast<T>(base));
  for (int c = 0; c < clusters; ++c) {
    std::array<double, Dim> corner;
    for (int k = 0; k < Dim; ++k) corner[k] = base + (frame_cells * frame(g) - 1.0) * cell;
    for (int pair = 0; pair < 400; ++pair) {
      std::array<double, Dim> p;
      for (int k = 0; k < Dim; ++k) p[k] = corner[k] + around(g);
      const double length = r * (1.0 + ulps(g) * std::numeric_limits<T>::epsilon());
      datasets::add_pair_at_distance<Dim, T>(d, p, length, pair, g);
    }
  }
  return d;
}

class FloatFrames : public ::testing::TestWithParam<spatialhash::Options> {
 protected:
  template <int Dim, class T>
  void run(const datasets::Dataset& d, double base) {
    SCOPED_TRACE(d.name + " dim=" + std::to_string(Dim) + " base=" + std::to_string(base) +
                 (std::is_same_v<T, float> ? " float" : " double"));
    check_against_oracle<Dim, T>(GetParam(), d);
  }
};

TEST_P(FloatFrames, PairsWithinUlpsOfRadiusAcrossFrameBoundaries) {
  // One radius under the sanitizers (this test took 46 s of their run's CPU time).
  for (double r : fewer_when_sanitized({0.37, 1.0}, 1)) {
    for (double base : {0.0, -1.0e6}) {
      run<2, double>(pairs_at_frame_corners<2, double>(r, base, 3, 1), base);
      run<3, double>(pairs_at_frame_corners<3, double>(r, base, 3, 2), base);
      run<2, float>(pairs_at_frame_corners<2, float>(r, base, 3, 3), base);
      run<3, float>(pairs_at_frame_corners<3, float>(r, base, 3, 4), base);
    }
  }
}

/// `clusters` clusters of `per_cluster` points uniform in a cube of edge 6 r around random
/// centers in a cube of edge `spread`, plus its two corners (fixing the bounding box).
template <int Dim, class T>
datasets::Dataset far_clusters(double r, double spread, int clusters, int per_cluster,
                               std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> site(0.0, spread), local(-3.0 * r, 3.0 * r);
  datasets::Dataset d{"far_clusters", {}, r};
  for (int k = 0; k < Dim; ++k) d.xyz.push_back(T{0});
  for (int k = 0; k < Dim; ++k) d.xyz.push_back(static_cast<T>(spread));
  for (int c = 0; c < clusters; ++c) {
    std::array<double, Dim> center;
    for (double& x : center) x = site(g);
    for (int p = 0; p < per_cluster; ++p) {
      for (int k = 0; k < Dim; ++k) d.xyz.push_back(static_cast<T>(center[k] + local(g)));
    }
  }
  return d;
}

TEST_P(FloatFrames, ClustersOnLatticesWiderThanAMortonCode) {
  // 1e7 radii: more than 2^21 cells per axis, coarse keys in 3D (blocks of 2^3 or, with cells of
  // edge r/2, 2^4 cells per axis), whose runs of equal keys (up to a cluster's 4000 points)
  // straddle the build's parallel chunks; the same extent in 2D, where keys hold it in full.
  // Under the sanitizers, clusters of 1500 and 600 points (still runs of equal keys across the
  // chunks of a 2-thread build): this test took 43 s of their run's CPU time with 4000 and 1500,
  // its cost growing with the square of a cluster's points.
  constexpr double r = 1.0, spread = 1.0e7;
  static_assert(spread / r > double{1 << 22});
  constexpr int per_cluster_3d = kSanitizedBuild ? 1500 : 4000;
  constexpr int per_cluster_2d = kSanitizedBuild ? 600 : 1500;
  run<3, double>(far_clusters<3, double>(r, spread, 3, per_cluster_3d, 51), 0.0);
  run<3, float>(far_clusters<3, float>(r, spread, 3, per_cluster_3d, 52), 0.0);
  run<2, double>(far_clusters<2, double>(r, spread, 3, per_cluster_2d, 53), 0.0);
}

/// The cell_list configurations of engine_cases(): only cell_list has float frames.
std::vector<spatialhash::Options> cell_list_cases() {
  std::vector<spatialhash::Options> cases;
  for (const spatialhash::Options& options : engine_cases()) {
    if (options.engine == spatialhash::Engine::cell_list) cases.push_back(options);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(CellList, FloatFrames, ::testing::ValuesIn(cell_list_cases()),
                         engine_case_label);

/// Steps of a random walk (a tenth of r, then a hundredth) of the default engine's index: points
/// cross frame boundaries, and their lists still match the oracle's on the moved points.
template <int Dim, class T>
void check_walk(double base) {
  SCOPED_TRACE("dim=" + std::to_string(Dim) + " base=" + std::to_string(base) +
               (std::is_same_v<T, float> ? " float" : " double"));
  const double r = 1.0;
  const datasets::Dataset d = pairs_at_frame_corners<Dim, T>(r, base, 2, 7);
  std::vector<T> coords(d.xyz.begin(), d.xyz.end());
  spatialhash::Index<Dim, T> index(std::span<const T>(coords), r,
                                   {.engine = spatialhash::Engine::cell_list});
  std::mt19937_64 g(11);
  for (double step : {0.1, 0.1, 0.01}) {
    std::uniform_real_distribution<double> move(-step * r, step * r);
    for (std::size_t i = Dim; i < coords.size(); ++i) {  // the anchor at base stays
      coords[i] = static_cast<T>(static_cast<double>(coords[i]) + move(g));
    }
    index.update(std::span<const T>(coords));
    const std::vector<double> exact = oracle::widen(coords);
    ASSERT_EQ(rows_of(index.neighbor_lists({.sorted = true})), oracle::lists<Dim>(exact, r))
        << "step " << step;
  }
}

TEST(FloatFramesUpdate, ListsMatchTheOracleAfterMovesAcrossFrameBoundaries) {
  for (double base : {0.0, 3.0e5}) {
    check_walk<2, double>(base);
    check_walk<3, double>(base);
    check_walk<3, float>(base);
  }
}

}  // namespace
