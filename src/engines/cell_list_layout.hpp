// CellListLayout: the reordered structure the default engine searches.
//
//   order[s]       original index of the point at sorted position s
//   axis[k][s]     float coordinate k of that point, relative to the lattice origin
//   cell_start[c]  first sorted position of cell c (cells in Morton order, only non-empty ones);
//                  cell_start[cells] == n
//   cell_coord[c]  lattice coordinates of cell c
//   table          open-addressing hash: lattice coordinates -> cell index, load <= 1/2, or
//   dense          a direct lattice -> cell array when the lattice has about a cell per point
//
// Invariants: points of one cell are contiguous; cells appear in Z-order of their coordinates (or
// of their coordinates shifted right, for lattices wider than a 64-bit Morton code can hold), so
// cells that are close in space are mostly close in memory. About 16 bytes per point plus 24 per
// non-empty cell.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "../engine_base.hpp"

namespace spatialhash::detail {

template <int Dim>
class CellListLayout {
 public:
  static constexpr std::uint32_t kNoCell = 0xFFFFFFFFu;
  using CellCoord = std::array<std::uint32_t, Dim>;

  /// Reorders the points of `context` by their cell of `grid` (parallel radix sort on Morton
  /// codes).
  template <class T>
  static CellListLayout build(const Context<Dim, T>& context, const GridGeometry<Dim>& grid);

  std::size_t size() const { return order.size(); }
  std::size_t cells() const { return cell_coord.size(); }

  /// Index of the cell with lattice coordinates `c` (may lie outside the lattice), or kNoCell.
  std::uint32_t find(const std::array<std::int64_t, Dim>& c) const {
    for (int k = 0; k < Dim; ++k) {
      if (c[k] < 0 || c[k] >= dims[k]) return kNoCell;
    }
    if (!dense.empty()) {
      std::int64_t linear = c[Dim - 1];
      for (int k = Dim - 2; k >= 0; --k) linear = linear * dims[k] + c[k];
      return dense[static_cast<std::size_t>(linear)];
    }
    CellCoord u;
    for (int k = 0; k < Dim; ++k) u[k] = static_cast<std::uint32_t>(c[k]);
    for (std::uint64_t slot = hash(u) & table_mask;; slot = (slot + 1) & table_mask) {
      const std::uint32_t cell = table[slot];
      if (cell == kNoCell) return cell;
      bool same = true;
      for (int k = 0; k < Dim; ++k) same = same && cell_coord[cell][k] == u[k];
      if (same) return cell;
    }
  }

  /// Packs the coordinates and mixes all bits into the low ones (murmur3's finalizer), so that
  /// lattice neighborhoods spread evenly over a power-of-two table.
  static std::uint64_t hash(const CellCoord& c) {
    std::uint64_t h = c[0];
    for (int k = 1; k < Dim; ++k) h = h * 0x9E3779B97F4A7C15ull + c[k];
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return h;
  }

  std::vector<index_t> order;
  std::array<std::vector<float>, Dim> axis;
  std::vector<std::uint32_t> cell_start;
  std::vector<CellCoord> cell_coord;
  std::vector<std::uint32_t> table;
  /// When the lattice has at most about one cell per point: lattice cell (x fastest) -> cell
  /// index, replacing the hash table.
  std::vector<std::uint32_t> dense;
  std::uint64_t table_mask = 0;
  std::array<std::int64_t, Dim> dims{};
};

}  // namespace spatialhash::detail
