// The cell lookup of cell_list's layout (src/engines/cell_list_layout.hpp) on lattices mostly
// empty, where it is a block table of 64-cell tiles behind an occupancy bitmap: find() and
// for_each_cell_in_box() against the set of occupied cells computed here from the points, for
// point sets that stress the table (cells only at even coordinates, whole 2^Dim blocks, random
// cells) and with a bitmap of a bit per cell or per block of cells. And the slabs of each cell
// (points sorted by slab along the last axis, slab_begin()), after a build and after each path of
// update(), against each point's cell and slab computed here in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../src/engines/cell_list_layout.hpp"
#include "../src/radix_sort.hpp"

namespace {

using spatialhash::PointsView;
using spatialhash::detail::CellListLayout;
using spatialhash::detail::make_context;

/// How the occupied cells are chosen.
enum class Pattern { random_cells, even_cells, whole_blocks };

template <int Dim>
using Coord = std::array<std::int64_t, Dim>;

/// Coordinates (x0, y0, ..., interleaved) of points in `cells` cells (cell edge 1 + margin, r = 1)
/// of a lattice about `side` cells wide, 1-3 per cell near its center.
template <int Dim>
std::vector<double> make_scene(Pattern pattern, int cells, std::int64_t side, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<std::int64_t> along(0, side - 1);
  std::uniform_int_distribution<int> how_many(1, 3);
  std::uniform_real_distribution<double> jitter(0.3, 0.7);
  std::map<Coord<Dim>, int> wanted;
  while (static_cast<int>(wanted.size()) < cells) {
    Coord<Dim> c;
    for (int k = 0; k < Dim; ++k) c[k] = along(g);
    if (pattern == Pattern::even_cells) {
      for (auto& x : c) x &= ~std::int64_t{1};
    }
    if (pattern == Pattern::whole_blocks) {
      for (int corner = 0; corner < (1 << Dim); ++corner) {
        Coord<Dim> b;
        for (int k = 0; k < Dim; ++k) b[k] = (c[k] & ~std::int64_t{1}) + ((corner >> k) & 1);
        wanted[b] = how_many(g);
      }
    } else {
      wanted[c] = how_many(g);
    }
  }
  // A point at the origin pins the lattice's lower corner to 0, so the pattern is the lattice's.
  std::vector<double> coords(Dim, 0.0);
  for (const auto& [c, count] : wanted) {
    for (int p = 0; p < count; ++p) {
      // Cell edges are 1 * (1 + 2^-18): points at 0.3-0.7 of a unit stay well inside.
      for (int k = 0; k < Dim; ++k) coords.push_back(static_cast<double>(c[k]) + jitter(g));
    }
  }
  return coords;
}

/// The lattice coordinates of every cell of `layout`, walked in order (CellWalk, from the tiles
/// or column runs). coord_of() (binary search) must give the same for each cell, and, on
/// lattices whose Morton codes hold every coordinate, the walk's key() the key of those
/// coordinates (cell_key(), its Morton code computed in full).
template <int Dim>
std::vector<std::array<std::uint32_t, Dim>> cell_coords(const CellListLayout<Dim>& layout) {
  std::vector<std::array<std::uint32_t, Dim>> coords;
  bool full_keys = true;
  for (int k = 0; k < Dim; ++k) {
    full_keys = full_keys &&
                layout.dims[k] <= (std::int64_t{1} << spatialhash::detail::kMortonBitsPerAxis<Dim>);
  }
  typename CellListLayout<Dim>::CellWalk walk(layout, 0);
  for (std::uint32_t c = 0; c < layout.cells(); ++c, walk.next()) {
    coords.push_back(walk.coord());
    EXPECT_EQ(layout.coord_of(c), walk.coord()) << "cell " << c;
    if (full_keys) {
      EXPECT_EQ(walk.key(), layout.cell_key(walk.coord())) << "cell " << c;
    }
  }
  return coords;
}

/// The points' own cells, in double (on `grid`), with how many points each holds.
template <int Dim>
std::map<Coord<Dim>, int> points_per_cell(const std::vector<double>& coords,
                                          const spatialhash::detail::GridGeometry<Dim>& grid) {
  std::map<Coord<Dim>, int> cells;
  for (std::size_t i = 0; i < coords.size() / Dim; ++i) {
    Coord<Dim> c;
    for (int k = 0; k < Dim; ++k) {
      c[k] = static_cast<std::int64_t>(
          std::floor((coords[i * Dim + k] - grid.origin[k]) * grid.inv_cell));
    }
    ++cells[c];
  }
  return cells;
}

template <int Dim>
void check_lookup(Pattern pattern, int cells, std::int64_t side, std::uint64_t seed,
                  bool bit_per_cell) {
  const std::vector<double> coords = make_scene<Dim>(pattern, cells, side, seed);
  const std::size_t n = coords.size() / Dim;
  const auto context = make_context(PointsView<Dim, double>(coords.data(), n), 1.0, /*threads=*/2);
  const auto layout = CellListLayout<Dim>::build(context, context.grid);
  const std::string where = "dim " + std::to_string(Dim) + ", pattern " +
                            std::to_string(static_cast<int>(pattern)) + ", seed " +
                            std::to_string(seed);
  ASSERT_FALSE(layout.direct()) << where << ": the lattice should use the hash table";
  ASSERT_EQ(layout.occupied_shift == 0, bit_per_cell) << where;

  const std::map<Coord<Dim>, int> occupied = points_per_cell<Dim>(coords, context.grid);
  ASSERT_EQ(layout.cells(), occupied.size()) << where;
  const auto coords_of_cells = cell_coords(layout);
  for (const auto& [c, count] : occupied) {
    const std::uint32_t found = layout.find(c);
    ASSERT_NE(found, CellListLayout<Dim>::kNoCell) << where;
    for (int k = 0; k < Dim; ++k) {
      ASSERT_EQ(static_cast<std::int64_t>(coords_of_cells[found][k]), c[k]) << where;
    }
    ASSERT_EQ(static_cast<int>(layout.cell_start[found + 1] - layout.cell_start[found]), count)
        << where;
  }

  // Boxes of 4 cells per axis at random corners (some reaching off the lattice) and around
  // occupied cells: every occupied cell of the box reported once, with its position, no other.
  std::mt19937_64 g(seed + 1);
  std::uniform_int_distribution<std::int64_t> along(-3, side);
  std::vector<Coord<Dim>> corners;
  for (int b = 0; b < 300; ++b) {
    Coord<Dim> corner;
    for (int k = 0; k < Dim; ++k) corner[k] = along(g);
    corners.push_back(corner);
  }
  int near = 0;
  for (const auto& [c, count] : occupied) {
    if (++near % 7 != 0) continue;
    Coord<Dim> corner = c;
    for (auto& x : corner) x -= 1;
    corners.push_back(corner);
  }
  // Boxes of 4 cells (a group's union) and of 7 (a stencil of reach 3), which meet up to 2 or 3
  // tiles of the block table per axis.
  for (const int width : {4, 7}) {
    for (const Coord<Dim>& corner : corners) {
      std::map<int, std::uint32_t> want;
      int positions = 1;
      for (int k = 0; k < Dim; ++k) positions *= width;
      for (int t = 0; t < positions; ++t) {
        Coord<Dim> c;
        int rest = t;
        for (int k = 0; k < Dim; ++k) {
          c[k] = corner[k] + rest % width;
          rest /= width;
        }
        if (occupied.count(c) != 0) {
          want[t] = layout.find(c);
        } else {
          // A cell without points is not found, on the lattice or off it.
          ASSERT_EQ(layout.find(c), CellListLayout<Dim>::kNoCell) << where;
        }
      }
      std::map<int, std::uint32_t> got;
      layout.for_each_cell_in_box(corner, width, [&](int t, std::uint32_t cell) {
        EXPECT_EQ(got.count(t), 0u) << where << ": position " << t << " reported twice";
        got[t] = cell;
      });
      ASSERT_EQ(got, want) << where << ", box of " << width;
    }
  }
}

/// near_points() of the layout of `coords` on a lattice of reach `reach` (cells of edge
/// 1 / reach), against the occupied cells found here. Every cell within the reach of an occupied
/// one (on the lattice or up to the reach off it) must say true; a cell whose bitmap block lies
/// at least the dilation away from the bitmap's faces must say exactly whether an occupied cell
/// lies in a block within the dilation of its block (nearer the faces, excess bits are allowed).
template <int Dim>
void check_near_points(const std::vector<double>& coords, int reach, bool dense,
                       const std::string& where) {
  const std::size_t n = coords.size() / Dim;
  const auto context = make_context(PointsView<Dim, double>(coords.data(), n), 1.0, /*threads=*/2);
  const auto grid = spatialhash::detail::GridGeometry<Dim>::make(context.grid.lower,
                                                                 context.grid.upper, 1.0, reach);
  const auto layout = CellListLayout<Dim>::build(context, grid);
  ASSERT_EQ(layout.direct(), dense) << where << ": the lattice's lookup";
  ASSERT_FALSE(layout.near_occupied.empty()) << where;
  const std::map<Coord<Dim>, int> occupied = points_per_cell<Dim>(coords, grid);
  const int shift = layout.occupied_shift;
  const std::int64_t block_reach = (reach + (std::int64_t{1} << shift) - 1) >> shift;
  // Whether an occupied cell lies within `within` blocks of 2^block_shift cells of c's block.
  const auto occupied_within = [&](const Coord<Dim>& c, int block_shift, std::int64_t within) {
    for (const auto& [o, count] : occupied) {
      bool near = true;
      for (int k = 0; k < Dim; ++k) {
        near = near && std::abs((o[k] >> block_shift) - (c[k] >> block_shift)) <= within;
      }
      if (near) return true;
    }
    return false;
  };
  // Cells around occupied ones (within and just beyond the reach) and random cells of the
  // lattice and its rim.
  std::vector<Coord<Dim>> cells;
  std::mt19937_64 g(static_cast<std::uint64_t>(reach) * 7919 + n);
  std::uniform_int_distribution<std::int64_t> offset(-reach - 1, reach + 1);
  int picked = 0;
  for (const auto& [o, count] : occupied) {
    if (++picked % 5 != 0) continue;
    Coord<Dim> c = o;
    for (int k = 0; k < Dim; ++k) c[k] += offset(g);
    cells.push_back(c);
  }
  for (int t = 0; t < 2000; ++t) {
    Coord<Dim> c;
    for (int k = 0; k < Dim; ++k) {
      c[k] = std::uniform_int_distribution<std::int64_t>(-reach, layout.dims[k] - 1 + reach)(g);
    }
    cells.push_back(c);
  }
  int exact_checked = 0, false_seen = 0;
  for (const Coord<Dim>& c : cells) {
    const bool got = layout.near_points(c);
    if (occupied_within(c, 0, reach)) {
      ASSERT_TRUE(got) << where << ": a cell near points said false";
    }
    bool interior = true;
    for (int k = 0; k < Dim; ++k) {
      const std::int64_t block = c[k] >> shift;
      interior = interior && c[k] >= 0 && c[k] < layout.dims[k] && block >= block_reach &&
                 block + block_reach < static_cast<std::int64_t>(layout.occupied_dims[k]);
    }
    if (!interior) continue;
    ++exact_checked;
    false_seen += !got;
    ASSERT_EQ(got, occupied_within(c, shift, block_reach)) << where << ": reach " << reach;
  }
  // The sample must exercise both answers away from the faces.
  ASSERT_GT(exact_checked, 100) << where;
  ASSERT_GT(false_seen, 10) << where;
}

TEST(CellListLayout, NearPointsMatchesTheOccupiedCellsWithinReach) {
  for (std::uint64_t seed : {5, 6}) {
    for (int reach : {1, 2}) {
      const std::string where = "seed " + std::to_string(seed);
      // Hash-table lattices with a bit per cell, then blocks of cells per bit; then lattices of
      // about a cell per point (the dense array, a bit per cell).
      check_near_points<3>(make_scene<3>(Pattern::random_cells, 300, 60, seed), reach, false,
                           "3D small " + where);
      check_near_points<3>(make_scene<3>(Pattern::random_cells, 400, 400, seed), reach, false,
                           "3D wide " + where);
      check_near_points<2>(make_scene<2>(Pattern::random_cells, 300, 500, seed), reach, false,
                           "2D small " + where);
      check_near_points<2>(make_scene<2>(Pattern::whole_blocks, 200, 20000, seed), reach, false,
                           "2D wide " + where);
      check_near_points<3>(make_scene<3>(Pattern::random_cells, 30, 16 / reach, seed), reach, true,
                           "3D dense " + where);
      check_near_points<2>(make_scene<2>(Pattern::random_cells, 30, 64 / reach, seed), reach, true,
                           "2D dense " + where);
    }
  }
}

/// Whether cell a comes before cell b in Z-order, bit by bit: the first bit that differs, from
/// the top bit of the last axis down (bit j of axis k is bit Dim * j + k of a Morton code),
/// decides.
template <int Dim>
bool z_order_less(const std::array<std::uint32_t, Dim>& a,
                  const std::array<std::uint32_t, Dim>& b) {
  for (int bit = 31; bit >= 0; --bit) {
    for (int k = Dim - 1; k >= 0; --k) {
      const std::uint32_t x = a[k] >> bit & 1u, y = b[k] >> bit & 1u;
      if (x != y) return x < y;
    }
  }
  return false;
}

/// Whether 3D cell a comes before b in column order: the Z-order of (x, y), then z.
template <int Dim>
bool column_order_less(const std::array<std::uint32_t, Dim>& a,
                       const std::array<std::uint32_t, Dim>& b) {
  const std::array<std::uint32_t, 2> a_column{a[0], a[1]}, b_column{b[0], b[1]};
  if (a_column != b_column) return z_order_less<2>(a_column, b_column);
  return a[Dim - 1] < b[Dim - 1];
}

/// Every sorted position of `layout` holds a point of `coords` (each once) in the cell and slab
/// that position says, by the lattice rule in double: u = (x - origin) * inv_cell, cell floor(u),
/// slab floor((u - floor(u)) * slabs) along the last axis; its float coordinates are the point's,
/// relative to the origin of its cell's float frame. The cells are distinct and in the Z-order of
/// their full coordinates, also on lattices wider than a Morton code holds (coarse keys), or, on a
/// layout in column order, in column order, with column_slots right for every lattice slot.
template <int Dim, class T>
void check_slabs(const CellListLayout<Dim>& layout, const std::vector<T>& coords,
                 const spatialhash::detail::GridGeometry<Dim>& grid, const std::string& where) {
  const std::size_t n = coords.size() / Dim;
  ASSERT_EQ(layout.size(), n) << where;
  std::vector<int> seen(n, 0);
  const int slabs = layout.slabs();
  const auto coords_of_cells = cell_coords(layout);
  for (std::uint32_t c = 0; c < layout.cells(); ++c) {
    ASSERT_LE(layout.slab_begin(c, 0), layout.slab_begin(c, slabs)) << where;
    for (int j = 0; j < slabs; ++j) {
      ASSERT_LE(layout.slab_begin(c, j), layout.slab_begin(c, j + 1)) << where;
      for (std::uint32_t s = layout.slab_begin(c, j); s < layout.slab_begin(c, j + 1); ++s) {
        const std::size_t i = layout.order[s];
        ASSERT_LT(i, n) << where;
        ++seen[i];
        for (int k = 0; k < Dim; ++k) {
          const double x = static_cast<double>(coords[i * Dim + k]);
          const double u = (x - grid.origin[k]) * grid.inv_cell;
          ASSERT_EQ(static_cast<std::int64_t>(std::floor(u)),
                    static_cast<std::int64_t>(coords_of_cells[c][k]))
              << where << ": point " << i << " axis " << k;
          const double frame = CellListLayout<Dim>::frame_origin(
              grid, k, static_cast<std::int64_t>(coords_of_cells[c][k]));
          ASSERT_EQ(layout.axis[k][s], static_cast<float>(x - frame)) << where;
          if (k == Dim - 1) {
            ASSERT_EQ(static_cast<int>(std::floor((u - std::floor(u)) * slabs)), j)
                << where << ": point " << i << " in the wrong slab";
          }
        }
      }
    }
  }
  ASSERT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(n)) << where;
  for (std::uint32_t c = 1; c < layout.cells(); ++c) {
    if (layout.columns) {
      ASSERT_TRUE(column_order_less<Dim>(coords_of_cells[c - 1], coords_of_cells[c]))
          << where << ": cell " << c << " is not after cell " << c - 1 << " in column order";
    } else {
      ASSERT_TRUE(z_order_less<Dim>(coords_of_cells[c - 1], coords_of_cells[c]))
          << where << ": cell " << c << " is not after cell " << c - 1 << " in Z-order";
    }
  }
  if (layout.columns) {
    // column_slots: per lattice column and z (0 ..= dims[2]), the first cell of the column at or
    // above z, or (no cell there) where the next cell of the column would be; every slot of a
    // column without cells is equal. Computed here from the cells' coordinates.
    const auto nz = static_cast<std::size_t>(layout.dims[2]);
    const auto columns = static_cast<std::size_t>(layout.dims[0] * layout.dims[1]);
    ASSERT_EQ(layout.column_slots.size(), columns * (nz + 1)) << where;
    std::vector<std::vector<std::uint32_t>> cells_of(columns);
    for (std::uint32_t c = 0; c < layout.cells(); ++c) {
      cells_of[static_cast<std::size_t>(coords_of_cells[c][0] +
                                        layout.dims[0] * coords_of_cells[c][1])]
          .push_back(c);
    }
    for (std::size_t column = 0; column < columns; ++column) {
      const auto& cells = cells_of[column];
      for (std::size_t z = 0; z <= nz; ++z) {
        const std::uint32_t slot = layout.column_slots[column * (nz + 1) + z];
        if (cells.empty()) {
          ASSERT_EQ(slot, layout.column_slots[column * (nz + 1)]) << where;
          continue;
        }
        std::uint32_t expected = cells.back() + 1;
        for (const std::uint32_t c : cells) {
          if (coords_of_cells[c][Dim - 1] >= z) {
            expected = c;
            break;
          }
        }
        ASSERT_EQ(slot, expected) << where << ": column " << column << ", z " << z;
      }
    }
    // find() through the slots: every cell found at its own coordinates.
    for (std::uint32_t c = 0; c < layout.cells(); ++c) {
      std::array<std::int64_t, Dim> at;
      for (int k = 0; k < Dim; ++k) at[k] = coords_of_cells[c][k];
      ASSERT_EQ(layout.find(at), c) << where;
    }
  }
}

/// `coords` with the points from the third on that lie at least a tenth of a cell from their
/// cell's faces along the first axis moved 1e-3 along it: no point changes cell or slab.
template <int Dim, class T>
std::vector<T> nudged_within_cells(const std::vector<T>& coords,
                                   const spatialhash::detail::GridGeometry<Dim>& grid) {
  std::vector<T> nudged = coords;
  for (std::size_t i = 2; i < coords.size() / Dim; ++i) {
    const double x = static_cast<double>(coords[i * Dim]);
    const double u = (x - grid.origin[0]) * grid.inv_cell;
    if (u - std::floor(u) > 0.1 && u - std::floor(u) < 0.9) {
      nudged[i * Dim] = static_cast<T>(x + 1e-3);
    }
  }
  return nudged;
}

/// Updates `layout` (built on `grid`) to the points `coords`, expects an update of kind `expected`,
/// and checks the layout against the points (check_slabs).
template <int Dim, class T>
void check_update(CellListLayout<Dim>& layout, const std::vector<T>& coords,
                  const spatialhash::detail::GridGeometry<Dim>& grid, double max_changed_fraction,
                  spatialhash::detail::CellListSpare<Dim>& spare,
                  spatialhash::detail::UpdateKind expected, const std::string& where) {
  const auto context =
      make_context(PointsView<Dim, T>(coords.data(), coords.size() / Dim), 1.0, /*threads=*/2);
  const auto kind =
      layout.update(context, grid, {max_changed_fraction, 2 * max_changed_fraction}, spare);
  ASSERT_TRUE(kind.has_value());
  EXPECT_EQ(*kind, expected);
  check_slabs<Dim>(layout, coords, grid, where);
}

/// Dense cells (about 60 points each) with a third of the points on the planes between slabs
/// and cells; then updates: a refresh (motion along the first axis only, within cells), and a
/// patch (points moved along the last axis across slab and cell borders).
template <int Dim, class T>
void check_slab_updates(int slab_bits) {
  const std::string where = "dim " + std::to_string(Dim) + (sizeof(T) == 4 ? " float" : " double") +
                            ", slab bits " + std::to_string(slab_bits);
  SCOPED_TRACE(where);
  std::mt19937_64 g(static_cast<std::uint64_t>(Dim * 10 + slab_bits + sizeof(T)));
  constexpr double kSide = 5.0;  // r = 1: about 5^Dim cells
  const std::size_t n = Dim == 2 ? 1500 : 7500;
  std::uniform_real_distribution<double> inside(0.05, kSide - 0.05);
  std::uniform_int_distribution<int> plane(1, 4 * static_cast<int>(kSide) - 1);
  std::vector<T> coords;
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) {
      const bool on_plane = k == Dim - 1 && i % 3 == 0;
      coords.push_back(static_cast<T>(on_plane ? plane(g) * 0.25 : inside(g)));
    }
  }
  // Two corners that never move: the bounding box (and so the lattice) stays.
  for (int k = 0; k < Dim; ++k) coords[k] = T(0);
  for (int k = 0; k < Dim; ++k) coords[Dim + k] = static_cast<T>(kSide);
  const auto context = make_context(PointsView<Dim, T>(coords.data(), n), 1.0, /*threads=*/2);
  const auto grid = context.grid;
  auto layout = CellListLayout<Dim>::build(context, grid, slab_bits);
  ASSERT_EQ(layout.slab_bits, slab_bits);
  check_slabs<Dim>(layout, coords, grid, where + ", built");

  spatialhash::detail::CellListSpare<Dim> spare;
  // Along the first axis by 1e-3, only points at least a tenth of a cell from their cell's faces
  // along it: no point changes cell or slab (slabs are along the last axis).
  const std::vector<T> nudged = nudged_within_cells<Dim>(coords, grid);
  ASSERT_NO_FATAL_FAILURE(check_update<Dim>(layout, nudged, grid, 0.5, spare,
                                            spatialhash::detail::UpdateKind::refreshed,
                                            where + ", refreshed"));

  // One point in ten moves by +-0.3 along the last axis: across a slab border, a cell border or
  // both, with the other points staying in place.
  std::vector<T> moved = nudged;
  for (std::size_t i = 2; i < n; i += 10) {
    const double z = static_cast<double>(moved[i * Dim + Dim - 1]);
    moved[i * Dim + Dim - 1] = static_cast<T>(z + 0.3 < kSide ? z + 0.3 : z - 0.3);
  }
  ASSERT_NO_FATAL_FAILURE(check_update<Dim>(layout, moved, grid, 0.5, spare,
                                            spatialhash::detail::UpdateKind::patched,
                                            where + ", patched"));
}

TEST(CellListLayout, EachCellIsSortedBySlabAfterBuildsAndUpdates) {
  for (int slab_bits : {1, 2}) {
    check_slab_updates<2, float>(slab_bits);
    check_slab_updates<2, double>(slab_bits);
    check_slab_updates<3, float>(slab_bits);
    check_slab_updates<3, double>(slab_bits);
  }
}

/// Points within two cells of the float frames' boundaries (frames of 2^kFrameBits cells) on a
/// lattice of `cells` per axis, r = 1: the build's float coordinates are relative to each cell's
/// frame, and so are an update's, both when points cross frame boundaries (patched) and when they
/// only move within their cells (refreshed). Without `updates` only the build is checked (a
/// layout with coarse keys refuses updates: the engine rebuilds).
template <int Dim, class T>
void check_frames(double cells, bool updates = true) {
  const std::string where = "dim " + std::to_string(Dim) + (sizeof(T) == 4 ? " float" : " double") +
                            ", " + std::to_string(cells) + " cells per axis";
  SCOPED_TRACE(where);
  using Layout = CellListLayout<Dim>;
  const double edge = spatialhash::detail::GridGeometry<Dim>::kCellMargin;  // r = 1
  const auto frame_span = static_cast<double>(std::int64_t{1} << Layout::kFrameBits) * edge;
  const auto frames = static_cast<int>(cells * edge / frame_span);
  ASSERT_GE(frames, 2) << "the lattice must hold more than one frame per axis";
  std::mt19937_64 g(static_cast<std::uint64_t>(Dim * 100 + sizeof(T)) + frames);
  std::uniform_int_distribution<int> boundary(1, frames);
  std::uniform_real_distribution<double> near(-2.0, 2.0);
  const std::size_t n = 3000;
  std::vector<T> coords;
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) {
      const double x =
          i < 2 ? static_cast<double>(i) * cells * edge : boundary(g) * frame_span + near(g);
      coords.push_back(static_cast<T>(x));
    }
  }
  const auto context = make_context(PointsView<Dim, T>(coords.data(), n), 1.0, /*threads=*/2);
  const auto grid = context.grid;
  auto layout = Layout::build(context, grid);
  check_slabs<Dim>(layout, coords, grid, where + ", built");
  if (!updates) return;

  spatialhash::detail::CellListSpare<Dim> spare;
  // Every other point moves by up to half a cell along each axis: some cross frame boundaries.
  std::vector<T> moved = coords;
  for (std::size_t i = 2; i < n; i += 2) {
    for (int k = 0; k < Dim; ++k) {
      moved[i * Dim + k] = static_cast<T>(static_cast<double>(coords[i * Dim + k]) + near(g) / 4);
    }
  }
  ASSERT_NO_FATAL_FAILURE(check_update<Dim>(layout, moved, grid, 1.0, spare,
                                            spatialhash::detail::UpdateKind::patched,
                                            where + ", patched"));

  // Points at least a tenth of a cell from their cell's faces along the first axis move 1e-3
  // along it: no point changes cell.
  const std::vector<T> nudged = nudged_within_cells<Dim>(moved, grid);
  ASSERT_NO_FATAL_FAILURE(check_update<Dim>(layout, nudged, grid, 1.0, spare,
                                            spatialhash::detail::UpdateKind::refreshed,
                                            where + ", refreshed"));
}

TEST(CellListLayout, FloatCoordinatesAreRelativeToTheirCellsFrame) {
  check_frames<2, double>(5000.0);
  check_frames<2, float>(5000.0);
  check_frames<3, double>(5000.0);
  check_frames<3, float>(5000.0);
  // Wider than a 3D Morton code holds at full resolution (2^21 cells): coarse keys.
  check_frames<3, double>(3.0e6, /*updates=*/false);
  check_frames<2, double>(3.0e6);
}

/// Dense clusters (about 20 points per cell) spread over a lattice of about 3e7 cells per axis,
/// wider than a 3D Morton code holds (2^21): the build sorts on coarse keys (blocks of 2^4 cells
/// per axis), then each block's points by the rest of their cell's code. Clusters of 5000 points
/// give blocks of thousands of points, several of them straddling the build's parallel chunks of
/// positions (4096); on 1 and 2 threads, every cell must come once, in Z-order (check_slabs).
TEST(CellListLayout, CoarseKeysKeepCellsInZOrder) {
  std::mt19937_64 g(41);
  const double spread = 3.0e7;
  std::uniform_real_distribution<double> site(0.0, spread), local(-3.0, 3.0);
  std::vector<double> coords = {0.0, 0.0, 0.0, spread, spread, spread};  // the lattice's corners
  for (int cluster = 0; cluster < 6; ++cluster) {
    std::array<double, 3> center;
    for (double& x : center) x = site(g);
    for (int p = 0; p < 5000; ++p) {
      for (int k = 0; k < 3; ++k) coords.push_back(center[k] + local(g));
    }
  }
  const std::size_t n = coords.size() / 3;
  for (const int threads : {1, 2}) {
    const auto context = make_context(PointsView<3, double>(coords.data(), n), 1.0, threads);
    ASSERT_GT(CellListLayout<3>::axis_bits(context.grid), 21) << "the keys must be coarse";
    const auto layout = CellListLayout<3>::build(context, context.grid);
    check_slabs<3>(layout, coords, context.grid, std::to_string(threads) + " threads");
    // Some block (cells with equal coordinates shifted right by the keys' shift) holds more
    // points than a chunk.
    const int shift = CellListLayout<3>::axis_bits(context.grid) - 21;
    std::map<std::array<std::uint32_t, 3>, std::uint32_t> per_block;
    const auto coords_of_cells = cell_coords(layout);
    for (std::uint32_t c = 0; c < layout.cells(); ++c) {
      std::array<std::uint32_t, 3> block = coords_of_cells[c];
      for (auto& x : block) x >>= shift;
      per_block[block] += layout.cell_start[c + 1] - layout.cell_start[c];
    }
    std::uint32_t largest = 0;
    for (const auto& [block, count] : per_block) largest = std::max(largest, count);
    ASSERT_GT(largest, 4096u);
  }
}

/// Builds of 540k points, enough for the sort that carries the points' float coordinates into
/// their buckets as it moves their records (radix_sort.hpp, sort_top_digit_first_carrying), on 1
/// and 2 threads, with uniform points in random order: check_slabs, and within each cell the
/// points in their input order (the sort is stable). In 2D, a lattice of about 4000 cells per
/// axis holds several float frames, which the carry decodes point by point in input order.
/// Returns the width of the sort's keys.
template <int Dim, class T>
int check_carried_build(double side, int threads) {
  const std::string where = "dim " + std::to_string(Dim) + (sizeof(T) == 4 ? " float" : " double") +
                            ", side " + std::to_string(side) + ", " + std::to_string(threads) +
                            " threads";
  SCOPED_TRACE(where);
  const std::size_t n = 540000;
  std::mt19937_64 g(static_cast<std::uint64_t>(Dim * 10 + threads) + sizeof(T));
  std::uniform_real_distribution<double> along(0.0, side);
  std::vector<T> coords(n * Dim);
  for (T& x : coords) x = static_cast<T>(along(g));
  const auto context = make_context(PointsView<Dim, T>(coords.data(), n), 1.0, threads);
  const auto& grid = context.grid;
  const auto layout = CellListLayout<Dim>::build(context, grid);
  const int key_bits = Dim * CellListLayout<Dim>::axis_bits(grid) + layout.slab_bits;
  EXPECT_LE(key_bits, 32) << "the keys must be packed";
  EXPECT_GE(n, spatialhash::detail::radix_detail::kCarryingFrom)
      << "the build must carry the coordinates";
  check_slabs<Dim>(layout, coords, grid, where);
  for (std::uint32_t c = 0; c < layout.cells(); ++c) {
    for (std::uint32_t s = layout.cell_start[c] + 1; s < layout.cell_start[c + 1]; ++s) {
      EXPECT_LT(layout.order[s - 1], layout.order[s]) << "cell " << c << ", position " << s;
      if (layout.order[s - 1] >= layout.order[s]) return key_bits;
    }
  }
  return key_bits;
}

// Dense keys (a lattice of about 60 cells per axis: buckets sorted by one counting pass) and
// sparse ones (about 100 per axis in 3D and 4000 in 2D over as many points: buckets sorted by
// passes over records standing for their positions); the 3D sparse keys are of a width that
// sort_top_digit_first would leave to LSD passes (top_digit_first_pays false), as W3's are at 1M.
TEST(CellListLayout, LargeBuildsCarryCoordinatesThroughTheSort) {
  for (const int threads : {1, 2}) {
    check_carried_build<3, float>(60.0, threads);
    check_carried_build<3, double>(60.0, threads);
    const int sparse_bits = check_carried_build<3, float>(100.0, threads);
    EXPECT_FALSE(spatialhash::detail::radix_detail::top_digit_first_pays(540000, sparse_bits))
        << sparse_bits << " bits";
    check_carried_build<2, float>(4000.0, threads);
    check_carried_build<2, double>(4000.0, threads);
  }
}

TEST(CellListLayout, HashTableLookupMatchesThePointsCells3D) {
  for (std::uint64_t seed : {1, 2}) {
    // 2000 cells (or 300 whole blocks) in a lattice of 60^3: a bit per cell.
    check_lookup<3>(Pattern::random_cells, 2000, 60, seed, true);
    check_lookup<3>(Pattern::even_cells, 2000, 60, seed, true);
    check_lookup<3>(Pattern::whole_blocks, 300, 60, seed, true);
    // Few points in a lattice of 400^3: blocks of cells per bit.
    check_lookup<3>(Pattern::random_cells, 3000, 400, seed, false);
    check_lookup<3>(Pattern::even_cells, 3000, 400, seed, false);
    check_lookup<3>(Pattern::whole_blocks, 400, 400, seed, false);
  }
}

TEST(CellListLayout, HashTableLookupMatchesThePointsCells2D) {
  for (std::uint64_t seed : {3, 4}) {
    check_lookup<2>(Pattern::random_cells, 3000, 500, seed, true);
    check_lookup<2>(Pattern::even_cells, 3000, 500, seed, true);
    check_lookup<2>(Pattern::whole_blocks, 700, 500, seed, true);
    check_lookup<2>(Pattern::random_cells, 2000, 20000, seed, false);
    check_lookup<2>(Pattern::even_cells, 2000, 20000, seed, false);
    check_lookup<2>(Pattern::whole_blocks, 400, 20000, seed, false);
  }
}

}  // namespace
