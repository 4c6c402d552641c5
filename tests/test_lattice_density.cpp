// sample_density (src/engines/lattice_density.hpp) against exact counts over every point, and
// the lattice cell_list chooses from it: edge r for dense data, coarser cells for sparse data (at
// once from the sample, or from the built layout's cells around dense clusters), never coarser
// with cells of edge r asked for. The oracle tallies every point by cell with a std::map.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../src/engine_base.hpp"
#include "../src/engines/lattice_density.hpp"

namespace {

using spatialhash::Engine;
using spatialhash::PointsView;
using spatialhash::detail::Cell;
using spatialhash::detail::draw_points;
using spatialhash::detail::GridGeometry;
using spatialhash::detail::LatticeDensity;
using spatialhash::detail::make_context;
using spatialhash::detail::make_engine;
using spatialhash::detail::sample_density;
using spatialhash::detail::stencil_offset;
using spatialhash::detail::stencil_size;

constexpr double kNoLimit = std::numeric_limits<double>::infinity();

/// `n` points uniform in a cube (square) holding `per_cell` points per cell of edge 1 on average.
template <int Dim>
std::vector<double> uniform_points(std::size_t n, double per_cell, std::uint64_t seed) {
  const double side = std::pow(static_cast<double>(n) / per_cell, 1.0 / Dim);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, side);
  std::vector<double> coords(n * Dim);
  for (double& x : coords) x = u(rng);
  return coords;
}

/// The exact LatticeDensity of `coords` on `grid` (reach 1): every point's own cell and stencil.
template <int Dim>
LatticeDensity exact_density(const std::vector<double>& coords, const GridGeometry<Dim>& grid) {
  const std::size_t n = coords.size() / Dim;
  const PointsView<Dim, double> points(coords.data(), n);
  std::map<Cell<Dim>, double> count;
  for (std::size_t i = 0; i < n; ++i) count[grid.cell_of(points, i)] += 1.0;
  double own = 0.0, stencil = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const Cell<Dim> center = grid.cell_of(points, i);
    own += count[center];
    for (int t = 0; t < stencil_size<Dim>(1); ++t) {
      Cell<Dim> neighbor = stencil_offset<Dim>(t, 1);
      for (int k = 0; k < Dim; ++k) neighbor[k] += center[k];
      const auto found = count.find(neighbor);
      if (found != count.end()) stencil += found->second;
    }
  }
  const double points_n = static_cast<double>(n);
  return {own / points_n, stencil / points_n / stencil_size<Dim>(1)};
}

/// `grid` moved one cell down and one cell wider at each end, as cell_list pads its lattices:
/// then no point's stencil leaves the lattice (sample_density's fast path).
template <int Dim>
GridGeometry<Dim> padded(GridGeometry<Dim> grid) {
  for (int k = 0; k < Dim; ++k) {
    grid.origin[k] -= grid.cell_size;
    grid.dims[k] += 2;
  }
  return grid;
}

/// The other points in every point's stencil, summed (what the stencil count finds when it takes
/// every point).
template <int Dim>
double others_in_stencils(const std::vector<double>& coords, const GridGeometry<Dim>& grid) {
  const double n = static_cast<double>(coords.size() / Dim);
  return n * (exact_density(coords, grid).per_stencil_cell * stencil_size<Dim>(1) - 1.0);
}

/// With at most 64 points, every point is drawn, and every point's stencil is counted while the
/// count finds fewer than 256 others (where it stops): the estimate is then the exact mean, on
/// lattices with points in their border cells (stencils cut off) and on padded ones. Sets whose
/// stencils hold more stop early: within 40% of it (their corners see fewer).
template <int Dim>
void check_exact_on_small_sets() {
  int exact_sets = 0;
  for (const double per_cell : {0.05, 0.3, 1.0, 6.0}) {
    for (const std::size_t n : {2, 12, 40, 64}) {
      const std::vector<double> coords = uniform_points<Dim>(n, per_cell, 7 + n);
      const auto context = make_context(PointsView<Dim, double>(coords.data(), n), 1.0, 1);
      for (const bool pad : {false, true}) {
        const GridGeometry<Dim> grid = pad ? padded(context.grid) : context.grid;
        const LatticeDensity exact = exact_density(coords, grid);
        const LatticeDensity got = sample_density(draw_points(context), grid, kNoLimit);
        const std::string where = "dim " + std::to_string(Dim) + ", " + std::to_string(n) +
                                  " points, " + std::to_string(per_cell) + " per cell" +
                                  (pad ? ", padded" : "");
        EXPECT_NEAR(got.per_cell, exact.per_cell, 1e-9 * exact.per_cell) << where;
        const bool whole = others_in_stencils(coords, grid) < 256.0;
        exact_sets += whole;
        EXPECT_NEAR(got.per_stencil_cell, exact.per_stencil_cell,
                    (whole ? 1e-9 : 0.4) * exact.per_stencil_cell)
            << where;
      }
    }
  }
  EXPECT_GE(exact_sets, 16) << "too few sets counted whole";
}

TEST(SampleDensity, ExactWhenEveryPointIsDrawn2D) {
  check_exact_on_small_sets<2>();
}
TEST(SampleDensity, ExactWhenEveryPointIsDrawn3D) {
  check_exact_on_small_sets<3>();
}

TEST(SampleDensity, NothingToEstimateFromOnePoint) {
  const std::vector<double> coords = {1.0, 2.0, 3.0};
  const auto context = make_context(PointsView<3, double>(coords.data(), 1), 1.0, 1);
  EXPECT_TRUE(
      std::isinf(sample_density(draw_points(context), context.grid, kNoLimit).per_stencil_cell));
}

/// On 40k points the sample (2048 draws, 78 stencils at most) estimates both means within a few
/// of its standard errors (about 10% for the stencil's at 1 point per cell, whatever n from 32k
/// points on: the stencils counted grow with n as the drawn share shrinks). A count told to stop
/// at 1.5 points per stencil cell stops after 32 others with at least 1.5 on dense sets (within
/// about 18%), and is the whole count on sparser ones.
template <int Dim>
void check_sampled() {
  const std::size_t n = 40000;
  for (const double per_cell : {1.0, 4.0}) {
    const std::vector<double> coords = uniform_points<Dim>(n, per_cell, 11);
    const auto context = make_context(PointsView<Dim, double>(coords.data(), n), 1.0, 2);
    const GridGeometry<Dim> grid = padded(context.grid);
    const LatticeDensity exact = exact_density(coords, grid);
    const LatticeDensity got = sample_density(draw_points(context), grid, kNoLimit);
    const std::string where = "dim " + std::to_string(Dim) + ", " + std::to_string(per_cell);
    EXPECT_NEAR(got.per_stencil_cell, exact.per_stencil_cell, 0.4 * exact.per_stencil_cell)
        << where;
    // The own cell's mean from about d^2 / 2n (per_cell - 1) shared pairs: 50 at 1 per cell.
    EXPECT_NEAR(got.per_cell, exact.per_cell, 0.3 * exact.per_cell) << where;
    const LatticeDensity stopped = sample_density(draw_points(context), grid, 1.5);
    if (exact.per_stencil_cell > 3.0) {
      EXPECT_GE(stopped.per_stencil_cell, 1.5) << where;
      EXPECT_NEAR(stopped.per_stencil_cell, exact.per_stencil_cell, 0.75 * exact.per_stencil_cell)
          << where;
    } else {
      EXPECT_EQ(stopped.per_stencil_cell, got.per_stencil_cell) << where;
    }
  }
}

TEST(SampleDensity, SampledWithinItsErrors2D) {
  check_sampled<2>();
}
TEST(SampleDensity, SampledWithinItsErrors3D) {
  check_sampled<3>();
}

/// The edge of the cells cell_list chooses for `coords` (radius 1), with `subdivision` as
/// Options::cell_subdivision.
template <int Dim>
double chosen_edge(const std::vector<double>& coords, int subdivision = 0) {
  auto context = make_context(PointsView<Dim, double>(coords.data(), coords.size() / Dim), 1.0, 2);
  context.cell_subdivision = subdivision;
  return make_engine(Engine::cell_list, context)->cell_edge();
}

/// Dense sets keep cells of edge r; uniform sparse ones get cells whose stencils hold about 3
/// points per cell (between 1.5 and 6 by the oracle, on the lattice chosen; the sparsest after
/// several recounts of the sample), unless the edge reached its limit of 64 r; cells of edge r
/// asked for stay.
template <int Dim>
void check_chosen_lattices() {
  const std::size_t n = 60000;
  const double r_edge = GridGeometry<Dim>::make({}, {}, 1.0).cell_size;  // r and its margin
  EXPECT_EQ(chosen_edge<Dim>(uniform_points<Dim>(n, 8.0, 3)), r_edge);
  for (const double per_cell : {0.00002, 0.0005, 0.02, 0.3}) {
    const std::vector<double> coords = uniform_points<Dim>(n, per_cell, 5);
    const std::string where = "dim " + std::to_string(Dim) + ", " + std::to_string(per_cell);
    const double edge = chosen_edge<Dim>(coords);
    EXPECT_GT(edge, 1.2 * r_edge) << where;
    EXPECT_EQ(chosen_edge<Dim>(coords, 1), r_edge) << where;
    if (edge >= 63.9 * r_edge) continue;
    const auto context =
        make_context(PointsView<Dim, double>(coords.data(), coords.size() / Dim), edge, 1);
    const double per_stencil_cell = exact_density(coords, context.grid).per_stencil_cell;
    EXPECT_GE(per_stencil_cell, 1.5) << where << ", edge " << edge;
    EXPECT_LE(per_stencil_cell, 6.0) << where << ", edge " << edge;
  }
}

TEST(ChosenLattice, SparseSetsGetCoarserCells2D) {
  check_chosen_lattices<2>();
}
TEST(ChosenLattice, SparseSetsGetCoarserCells3D) {
  check_chosen_lattices<3>();
}

/// Half the points in a sparse background (0.05 per cell of edge r), half in 20 tight blobs: the
/// drawn points see crowded stencils (most lie in blobs), the layout's cells, weighted evenly, do
/// not (most are background): the cells probed on the built layout coarsen the lattice.
TEST(ChosenLattice, SparseBackgroundAroundBlobsIsCoarsened) {
  const std::size_t n = 40000;
  std::vector<double> coords = uniform_points<3>(n, 0.05, 9);
  std::mt19937_64 rng(13);
  std::normal_distribution<double> spread(0.0, 0.7);
  for (std::size_t i = 0; i < n / 2; ++i) {
    const std::size_t blob = (i % 20) * 997;  // the blob's center: a background point
    for (int k = 0; k < 3; ++k) coords[3 * (n / 2 + i) + k] = coords[3 * blob + k] + spread(rng);
  }
  const auto context = make_context(PointsView<3, double>(coords.data(), n), 1.0, 1);
  const GridGeometry<3> grid = padded(context.grid);
  ASSERT_GE(exact_density(coords, grid).per_stencil_cell, 1.5) << "the points must be crowded";
  EXPECT_GT(chosen_edge<3>(coords), 1.2 * grid.cell_size);
}

}  // namespace
