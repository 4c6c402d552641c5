// CellListLayout: the reordered structure the default engine searches.
//
//   order[s]       original index of the point at sorted position s
//   axis[k][s]     float coordinate k of that point, relative to the lattice origin
//   cell_start[c]  first sorted position of cell c (cells in Morton order, only non-empty ones);
//                  cell_start[cells] == n
//   cell_coord[c]  lattice coordinates of cell c
//   table          open-addressing hash: lattice coordinates -> cell index, load <= 1/2
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

  /// Reorders the points of `context` by cell (parallel radix sort on Morton codes).
  template <class T>
  static CellListLayout build(const Context<Dim, T>& context);

  std::size_t size() const { return order.size(); }
  std::size_t cells() const { return cell_coord.size(); }

  /// Index of the cell with lattice coordinates `c` (may lie outside the lattice), or kNoCell.
  std::uint32_t find(const std::array<std::int64_t, Dim>& c) const {
    for (int k = 0; k < Dim; ++k) {
      if (c[k] < 0 || c[k] >= dims[k]) return kNoCell;
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

  static std::uint64_t hash(const CellCoord& c) {
    std::uint64_t h = 0;
    constexpr std::uint64_t kPrimes[3] = {0x9E3779B185EBCA87ull, 0xC2B2AE3D27D4EB4Full,
                                          0x165667B19E3779F9ull};
    for (int k = 0; k < Dim; ++k) h ^= (c[k] + 1) * kPrimes[k];
    return h ^ (h >> 29);
  }

  std::vector<index_t> order;
  std::array<std::vector<float>, Dim> axis;
  std::vector<std::uint32_t> cell_start;
  std::vector<CellCoord> cell_coord;
  std::vector<std::uint32_t> table;
  std::uint64_t table_mask = 0;
  std::array<std::int64_t, Dim> dims{};
};

}  // namespace spatialhash::detail
