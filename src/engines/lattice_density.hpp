// sample_density: how crowded a cell lattice is around the points, estimated from a sample before
// any layout is built. cell_list decides its slabs and whether sparse data get coarser cells from
// it (CellList::index_points).
//
// Points are drawn at random once, whatever the input order (draw_points), and tallied by cell
// on each lattice asked about. Two means follow, each weighting a cell by its points (as the
// searches meet them):
// - points in a point's own cell: n times the share of drawn pairs that share a cell;
// - points per cell of the 3^Dim stencil around a point: the other drawn points found in the
//   stencils of some drawn points, scaled to all n.
// Both include the point itself. The counts of a sample grow with the square of its size and
// shrink with n: the stencil count takes more of the drawn points as n grows (about 160 found at
// the sparseness threshold up to 4M points).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "../engine_base.hpp"
#include "../grid_geometry.hpp"
#include "../key_tally.hpp"

namespace spatialhash::detail {

/// How crowded a lattice is around the points (sample_density).
struct LatticeDensity {
  /// Mean points in a point's own cell, the point included.
  double per_cell;
  /// Mean points per cell of the 3^Dim stencil around a point, the point included; infinite when
  /// not estimated.
  double per_stencil_cell;
  /// The other drawn points the stencil count found (its precision: about 1 / sqrt of this).
  std::uint64_t stencil_found = 0;
};

/// Points drawn at random from a set of `of` points, each once: one in 16, 256 to 2048 draws
/// (every point of sets up to twice that), so that estimates cost small builds little too.
template <int Dim>
struct DrawnPoints {
  std::vector<std::array<double, Dim>> at;  ///< their coordinates
  std::size_t of = 0;                       ///< the points they were drawn from
};

/// Draws from `context`'s points (splitmix64 with a fixed seed: the same draws every run).
template <int Dim, class T>
DrawnPoints<Dim> draw_points(const Context<Dim, T>& context) {
  const std::size_t n = context.points.size();
  const std::size_t wanted = std::clamp<std::size_t>(n / 16, 256, 2048);
  const bool all = n <= 2 * wanted;
  const std::size_t draws = all ? n : wanted;
  DrawnPoints<Dim> drawn;
  drawn.of = n;
  drawn.at.reserve(draws);
  // Draw q picks point picks[q], a repeated pick skipped. The picks come first, in a loop without
  // a dependency between draws; the points lie at random in memory, so each is prefetched
  // kAhead draws before (1M points: 0.5 ms, most of it cache misses, one after the other).
  constexpr std::size_t kAhead = 16;
  std::vector<std::size_t> picks(all ? 0 : draws);
  for (std::size_t q = 0; q < picks.size(); ++q) {
    constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;
    picks[q] = static_cast<std::size_t>(KeyTally::mix(kGolden * (q + 2)) % n);
  }
  KeyTally picked(all ? 0 : draws);
  for (std::size_t q = 0; q < draws; ++q) {
    if (!all && q + kAhead < draws) {
      __builtin_prefetch(context.points.data + picks[q + kAhead] * context.points.stride);
    }
    const std::size_t i = all ? q : picks[q];
    if (!all && picked.add(i) > 0) continue;
    std::array<double, Dim>& x = drawn.at.emplace_back();
    for (int k = 0; k < Dim; ++k) x[k] = context.points.coord(i, k);
  }
  return drawn;
}

/// Estimates the LatticeDensity of `grid` (a lattice of reach 1 for the stencil mean) from the
/// drawn points. The stencil mean only where `stencil_until` > 0: from the stencils of n / 512
/// drawn points (64 at least), or of every drawn point with `every_draw`; the count stops once it
/// is precise enough, or once it shows `stencil_until` or more (then the estimate comes from
/// fewer stencils).
template <int Dim>
LatticeDensity sample_density(const DrawnPoints<Dim>& drawn, const GridGeometry<Dim>& grid,
                              double stencil_until, bool every_draw = false) {
  const std::size_t n = drawn.of;
  constexpr double kUnknown = std::numeric_limits<double>::infinity();
  if (drawn.at.size() < 2) return {1.0, kUnknown};  // nothing to estimate
  // The drawn points already in each cell, tallied by key: each point adds as many pairs as its
  // cell held before it. A cell's key is its index in the lattice (x fastest; wrapping on
  // lattices of more than 2^64 cells, where two cells with one key would only nudge these
  // estimates). Near the slab threshold (16 points a cell) 256 draws of 1000 points expect about
  // 490 shared pairs, 2048 of 1M about 31: small inputs are not estimated worse than large ones.
  KeyTally in_cell(drawn.at.size());
  // A cell's index in the lattice, x fastest, modulo 2^64; as a key of the tally, kEmpty read 0.
  const auto lattice_index = [&](const Cell<Dim>& cell) {
    std::uint64_t index = 0;
    for (int k = Dim - 1; k >= 0; --k) {
      index =
          index * static_cast<std::uint64_t>(grid.dims[k]) + static_cast<std::uint64_t>(cell[k]);
    }
    return index;
  };
  const auto tally_key = [](std::uint64_t index) { return index == KeyTally::kEmpty ? 0 : index; };
  std::vector<Cell<Dim>> cells(drawn.at.size());  // of the drawn points
  double sharing = 0.0;
  for (std::size_t q = 0; q < cells.size(); ++q) {
    for (int k = 0; k < Dim; ++k) cells[q][k] = grid.cell_along(drawn.at[q][k], k);
    sharing += static_cast<double>(in_cell.add(tally_key(lattice_index(cells[q]))));
  }
  const auto distinct = static_cast<double>(cells.size());
  // Of the other n - 1 points, a point's cell holds on average n - 1 times the share of drawn
  // pairs that share a cell.
  const double pair_share = static_cast<double>(n - 1) / (0.5 * distinct * (distinct - 1.0));
  LatticeDensity density{1.0 + sharing * pair_share, kUnknown};
  if (!(stencil_until > 0.0) || grid.reach != 1) return density;
  // The stencils of up to `queries` drawn points count the other drawn points there: n / 512 of
  // them (64 at least), so that at the sparseness threshold (about 40 points in a stencil) some
  // 160 are found whatever n, up to 4M points, where all 2048 draws take part (about 40 found);
  // with `every_draw`, all of them. The drawn points are taken in an order whose every prefix
  // spreads over the draws (a stride of about 0.618 of them, coprime with their count), and the
  // count stops once kPrecise others are found (enough for the mean within about 6%), or
  // kForBound with a mean of at least `stencil_until` (W1 at 1M: after 76 points).
  constexpr std::uint64_t kPrecise = 256, kForBound = 32;
  const std::size_t queries =
      every_draw ? cells.size() : std::min(cells.size(), std::max<std::size_t>(64, n / 512));
  std::size_t stride = std::max<std::size_t>(1, cells.size() * 618 / 1000);
  while (std::gcd(stride, cells.size()) != 1) ++stride;
  // Others a point sees in its stencil, per other drawn point found there.
  const double scale = static_cast<double>(n - 1) / (distinct - 1.0);
  const double stencil = stencil_size<Dim>(1);
  const auto mean_of = [&](std::uint64_t found, std::size_t taken) {
    return (1.0 + static_cast<double>(found) / static_cast<double>(taken) * scale) / stencil;
  };
  // A stencil cell's key is the center's plus a fixed step (modulo 2^64, as the keys wrap) where
  // the stencil lies within the lattice: around every point, on a padded lattice.
  std::array<std::uint64_t, stencil_size<Dim>(1)> step{};
  for (int t = 0; t < stencil_size<Dim>(1); ++t) step[t] = lattice_index(stencil_offset<Dim>(t, 1));
  std::uint64_t found = 0;
  std::size_t taken = 0;
  for (std::size_t at = 0; taken < queries; at = (at + stride) % cells.size()) {
    const Cell<Dim>& center = cells[at];
    bool interior = true;
    for (int k = 0; k < Dim; ++k) {
      interior = interior && center[k] > 0 && center[k] + 1 < grid.dims[k];
    }
    const std::uint64_t key = lattice_index(center);
    std::uint64_t here = 0;
    for (int t = 0; t < stencil_size<Dim>(1); ++t) {
      if (interior) {
        here += in_cell.count(tally_key(key + step[t]));
        continue;
      }
      Cell<Dim> neighbor = stencil_offset<Dim>(t, 1);
      bool inside = true;
      for (int k = 0; k < Dim; ++k) {
        neighbor[k] += center[k];
        inside = inside &&
                 static_cast<std::uint64_t>(neighbor[k]) < static_cast<std::uint64_t>(grid.dims[k]);
      }
      if (inside) here += in_cell.count(tally_key(lattice_index(neighbor)));
    }
    found += here > 0 ? here - 1 : 0;  // the query itself left out
    ++taken;
    if (found >= kPrecise || (found >= kForBound && mean_of(found, taken) >= stencil_until)) break;
  }
  density.per_stencil_cell = mean_of(found, taken);
  density.stencil_found = found;
  return density;
}

}  // namespace spatialhash::detail
