// CellListLayout: the reordered structure the default engine searches.
//
//   order[s]       original index of the point at sorted position s
//   axis[k][s]     float coordinate k of that point, relative to the origin of its float frame
//   cell_start[c]  first sorted position of cell c (cells in Morton order, only non-empty ones);
//                  cell_start[cells] == n
//   slab_start     with slabs (slab_bits > 0): where each slab of each cell begins; a slab is one
//                  of 2^slab_bits equal parts of a cell along the last axis (slab_begin())
//   tiles[t]       the tiles of 64 cells (kTileSide per axis) that hold points, in Z-order: a
//                  tile's coordinates, the index of its first cell and a mask of its cells with
//                  points (bit = the cell's Morton code within the tile). A tile's cells are
//                  consecutive in Z-order, so cell index = first + the mask's bits below the
//                  cell's, and the lattice coordinates of cell c come from its tile and its rank
//                  there (coord_of(), CellWalk): no per-cell coordinates are kept.
//   block table    open addressing over the tiles, load <= 1/2: per slot, a tile index
//                  (find(), for_each_cell_in_box()); a box of cells costs one probe per tile it
//                  meets, not one per cell; or
//   dense          a direct lattice -> cell array when the lattice has about a cell per point (in
//                  column order, column_slots serves instead: cell_at_slot()), and
//   near_occupied  a bitmap of the lattice, a bit per block of 2^occupied_shift cells per axis,
//                  set when a block within the stencil's reach of it has points, so that a query
//                  far from every point costs one bit test instead of a stencil of lookups (kept
//                  only when at most kNearShareKept of the lattice is near points). The bitmap of
//                  the blocks with points, which it dilates, is not kept: only find() would read
//                  it, and find() serves the build's sampling, not the searches.
//
// Float frames: the lattice is cut into frames of 2^kFrameBits cells per axis, and a point's float
// coordinates are relative to the origin of the frame holding its cell (frame_origin(), the same
// double everywhere), not to the lattice origin. Float rounding then scales with a frame's extent,
// not the whole lattice's: a search whose stencil lies in one frame keeps the float fast path on
// lattices far wider than float could resolve (geospatial extents), and one whose stencil
// crosses a frame boundary decides its candidates in double (cell_list.hpp). A lattice of at most
// 2^kFrameBits cells per axis is one frame, whose origin is the lattice origin.
//
// Column order (`columns`, 3D lattices of cells of edge r, small enough for a direct lookup, of
// one float frame): cells are sorted by column instead, a column being the cells of one (x, y), the
// columns in Z-order of (x, y) and the cells of a column by z. Every run of z cells of one column
// is then contiguous in memory, so a full-stencil search tests its queries against 9 runs of the
// layout where they lie, with no gather (CellList::search_columns). Such a layout keeps, instead of
// tiles and the dense array, each cell's z (cell_z), the columns with points in memory order
// (column_runs) and, per slot of the lattice, the first cell of its column at or above it
// (column_slots, the direct lookup).
//
// Invariants: points of one cell are contiguous, sorted by slab within it; cells appear in Z-order
// of their full coordinates (or in column order) (on lattices wider than a 64-bit Morton code
// holds, sorted by the coordinates shifted right, then by the rest: cell_list_layout.cpp), so cells
// that are close in space are mostly close in memory, and the cells of a tile are consecutive.
// About 16 bytes per point plus 4 per non-empty cell (8 with slabs), 24 per tile, the dense array
// or the block table, and at most a byte per point of bitmap; in column order no tiles, but 2
// bytes per cell (cell_z), 8 per column with points, and column_slots in place of the dense array
// (a slot more per column).
//
// update() re-sorts the layout for moved points on the same lattice without a full sort: points
// that stayed in their cell (and slab) keep their relative order, the few that changed are sorted
// by key and merged in (see cell_list_update.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "../engine_base.hpp"
#include "../index_vector.hpp"
#include "../morton.hpp"
#include "../threads.hpp"

namespace spatialhash::detail {

/// Writes the bitmap of cell beginnings that CellListLayout::index_cells() reads, for a run of
/// consecutive sorted positions visited in order by one thread: a word's bits are gathered in a
/// register and ORed into the bitmap once per word, atomically, as the runs of two threads may
/// share the words at their ends (the bitmap must start zeroed).
class CellBegins {
 public:
  explicit CellBegins(std::span<std::uint64_t> bits) : bits_(bits) {}
  CellBegins(const CellBegins&) = delete;
  CellBegins& operator=(const CellBegins&) = delete;
  ~CellBegins() { flush(); }
  /// Position s (at or after the previous one) begins a cell when `begins`.
  void set(std::size_t s, bool begins) {
    if (s / 64 != word_) {
      flush();
      word_ = s / 64;
    }
    pending_ |= static_cast<std::uint64_t>(begins) << (s % 64);
  }
  /// ORs `value` into word `word` of `bits`, atomically (another thread's run may end in it).
  static void add(std::uint64_t* bits, std::size_t word, std::uint64_t value) {
    if (value != 0) {
      std::atomic_ref<std::uint64_t>(bits[word]).fetch_or(value, std::memory_order_relaxed);
    }
  }

 private:
  void flush() {
    add(bits_.data(), word_, pending_);
    pending_ = 0;
  }
  std::span<std::uint64_t> bits_;
  std::size_t word_ = 0;
  std::uint64_t pending_ = 0;
};

template <int Dim>
struct CellListSpare;

/// A tile of the layout's block table spans 2^kTileShift cells per axis: 64 cells (4^3, 8^2),
/// whose Morton codes within the tile are the low 6 bits of theirs.
template <int Dim>
inline constexpr int kTileShift = 6 / Dim;

/// Morton codes within a tile (0 ..= 63): local[code], the local coordinates of a code;
/// range[k][lo][hi], the codes whose local coordinate along axis k lies in [lo, hi), as a mask.
template <int Dim>
struct TileCodes {
  static constexpr int kSide = 1 << kTileShift<Dim>;
  std::array<std::array<std::uint32_t, Dim>, 64> local{};
  std::array<std::array<std::array<std::uint64_t, kSide + 1>, kSide + 1>, Dim> range{};

  constexpr TileCodes() {
    for (int code = 0; code < 64; ++code) local[code] = morton_decode<Dim>(code);
    for (int k = 0; k < Dim; ++k) {
      for (int lo = 0; lo <= kSide; ++lo) {
        for (int hi = lo; hi <= kSide; ++hi) {
          for (int code = 0; code < 64; ++code) {
            const auto v = static_cast<int>(local[code][k]);
            if (v >= lo && v < hi) range[k][lo][hi] |= std::uint64_t{1} << code;
          }
        }
      }
    }
  }
};
template <int Dim>
inline constexpr TileCodes<Dim> kTileCodes{};

/// A column of a layout in column order that holds points: its lattice (x, y) and its first cell
/// (CellListLayout::column_runs). Column order needs at most 2^kFrameBits cells per axis.
struct ColumnRun {
  std::uint32_t first;
  std::uint16_t x, y;
  bool operator==(const ColumnRun&) const = default;
};

template <int Dim>
class CellListLayout {
 public:
  static constexpr std::uint32_t kNoCell = 0xFFFFFFFFu;
  static constexpr int kTileShift = spatialhash::detail::kTileShift<Dim>;
  static constexpr int kTileSide = 1 << kTileShift;
  /// Budget of near_occupied (beyond a floor of 32 KiB): a byte per point.
  static constexpr double kOccupancyBitsPerPoint = 8.0;
  /// near_occupied is dropped when more than this share of its blocks are near points.
  static constexpr double kNearShareKept = 0.875;
  using CellCoord = std::array<std::uint32_t, Dim>;

  /// A tile (tile_of()) that holds points: its cells are the popcount(cells) consecutive cells
  /// from `first`, in the order of their Morton codes within the tile (the bits of `cells`).
  struct Tile {
    CellCoord at;         ///< tile coordinates: those of its cells shifted right by kTileShift
    std::uint32_t first;  ///< index of its first cell
    std::uint64_t cells;  ///< bit b set: the cell with Morton code b within the tile has points
    bool operator==(const Tile&) const = default;
  };

  /// Reorders the points of `context` by their cell of `grid` (parallel radix sort on Morton
  /// codes), and within each cell by slab: 2^slab_bits equal parts of the cell along the last
  /// axis (cell_keys.hpp), or fewer bits where the sort's packed keys would not hold them.
  /// With a `spare` (an update()'s rebuild), the layout is written into spare->layout's arrays and
  /// the build's work arrays are the spare's, which keeps them when the build returns (empty ones
  /// grow as needed); without (a new index), each work array is released as soon as the build is
  /// done with it, so that the arrays allocated after it may reuse its memory (a plain program's
  /// 100k-point builds: 6.2 against 7.1 ms when the sort's scratch was kept to the end).
  template <class T>
  static CellListLayout build(const Context<Dim, T>& context, const GridGeometry<Dim>& grid,
                              int slab_bits = 0, CellListSpare<Dim>* spare = nullptr);

  /// Empties the layout (no points, no cells, every setting at its default) and keeps its
  /// arrays' storage, for a build or an update() to write the next layout into.
  void clear();

  /// When update() gives up for a rebuild: the shares of points that changed cell above which a
  /// patch is not tried.
  struct UpdateLimits {
    double sampled;  ///< shown by the sample (beyond three standard errors; 0: any point)
    double counted;  ///< counted exactly by the first step
  };
  /// Re-sorts the layout for the moved points of `context` on the same lattice `grid` (the
  /// build's lattice with a new bounding box). Returns UpdateKind::refreshed when no point changed
  /// cell (only the float coordinates are rewritten: O(n), no sort),
  /// UpdateKind::patched when few did (those are sorted and merged into the others), and
  /// nothing, with the layout unchanged, when a sample or the exact count shows more than
  /// `limits` allow changed cell, when a point left the lattice, or when its Morton keys are
  /// coarse (then rebuild).
  template <class T>
  std::optional<UpdateKind> update(const Context<Dim, T>& context, const GridGeometry<Dim>& grid,
                                   const UpdateLimits& limits, CellListSpare<Dim>& spare);

  /// A float frame spans 2^kFrameBits cells per axis (see the header comment).
  static constexpr int kFrameBits = 10;
  /// The frame holding lattice coordinate `cell` along an axis (floor division, also below 0).
  static std::int64_t frame_of(std::int64_t cell) { return cell >> kFrameBits; }
  /// Origin along an axis of the frame holding lattice coordinate `cell`, for a lattice with
  /// origin `origin` along that axis and cells of edge `cell_size`. Every float coordinate and
  /// query position of that frame is taken relative to this one expression's value.
  static double frame_origin(double origin, double cell_size, std::int64_t cell) {
    return origin +
           static_cast<double>(frame_of(cell) * (std::int64_t{1} << kFrameBits)) * cell_size;
  }
  static double frame_origin(const GridGeometry<Dim>& grid, int k, std::int64_t cell) {
    return frame_origin(grid.origin[k], grid.cell_size, cell);
  }

  /// Bits needed for a cell coordinate of the widest axis of `grid`.
  static int axis_bits(const GridGeometry<Dim>& grid) {
    int bits = 0;
    for (int k = 0; k < Dim; ++k) {
      bits = std::max(
          bits, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(grid.dims[k] - 1))));
    }
    return bits;
  }

  /// Whether a build on `grid` of `points` points sorts its cells in column order (the header
  /// comment): 3D, cells of edge r (reach 1), one float frame (every axis at most 2^kFrameBits
  /// cells, so that column keys stay below the frame bits and every float is relative to the
  /// lattice origin), and a lattice small enough for a direct lookup (index_lookup()).
  static bool column_order_for(const GridGeometry<Dim>& grid, std::size_t points) {
    if (Dim != 3 || grid.reach != 1) return false;
    for (int k = 0; k < Dim; ++k) {
      if (grid.dims[k] > (std::int64_t{1} << kFrameBits)) return false;
    }
    return grid.total_cells() <= static_cast<double>(points) + kDenseSlack;
  }
  /// The dense array replaces the block table on lattices of at most points + kDenseSlack cells.
  static constexpr double kDenseSlack = 4096.0;

  /// The sort key of the cell with lattice coordinates `c`: its Morton code, or in column order
  /// the Morton code of (x, y) followed by z_bits bits of z.
  std::uint64_t cell_key(const CellCoord& c) const {
    if constexpr (Dim == 3) {
      if (columns) return morton_code<2>({c[0], c[1]}) << z_bits | c[2];
    }
    return morton_code<Dim>(c);
  }
  /// The lattice coordinates of cells from their sort keys (the inverse of cell_key()), for keys
  /// that mostly come in ascending order, as index_cells() walks them; one decoder per thread. A
  /// key's bits above its column's z bits (column order) or above its tile's Morton code (the
  /// low Dim * kTileShift bits) are decoded once per column or tile and remembered; the low bits
  /// are z itself or an entry of kTileCodes. Any order gives the same coordinates, only slower.
  /// (index_cells took 8.7% of a W2-like 100k build on one thread, most of it in decoding every
  /// key in full; docs/benchmarks.md.)
  class SortedKeyDecoder {
   public:
    explicit SortedKeyDecoder(const CellListLayout& layout)
        : columns_(Dim == 3 && layout.columns),
          low_bits_(columns_ ? layout.z_bits : Dim * kTileShift) {}
    CellCoord operator()(std::uint64_t key) {
      const std::uint64_t high = key >> low_bits_;
      if (!decoded_ || high != high_) {
        high_ = high;
        decoded_ = true;
        if (columns_) {
          const auto xy = morton_decode<2>(high);
          base_[0] = xy[0];
          base_[1] = xy[1];
          base_[Dim - 1] = 0;
        } else {
          base_ = morton_decode<Dim>(high);
          for (int k = 0; k < Dim; ++k) base_[k] <<= kTileShift;
        }
      }
      const std::uint64_t low = key & ((std::uint64_t{1} << low_bits_) - 1);
      CellCoord c = base_;
      if (columns_) {
        c[Dim - 1] = static_cast<std::uint32_t>(low);
      } else {
        const CellCoord& in_tile = kTileCodes<Dim>.local[low];
        for (int k = 0; k < Dim; ++k) c[k] |= in_tile[k];
      }
      return c;
    }

   private:
    bool columns_;
    int low_bits_;
    bool decoded_ = false;
    std::uint64_t high_ = 0;
    CellCoord base_{};  ///< coordinates of high_'s column (z = 0) or tile's first cell
  };
  /// Lattice column (x + dims[0] * y) of 3D lattice coordinates `c` (column order).
  std::size_t column_of(const CellCoord& c) const {
    return static_cast<std::size_t>(c[0]) +
           static_cast<std::size_t>(dims[0]) * static_cast<std::size_t>(c[1]);
  }

  std::size_t size() const { return order.size(); }
  std::size_t cells() const { return cell_start.empty() ? 0 : cell_start.size() - 1; }
  /// Slabs per cell: 1 << slab_bits.
  int slabs() const { return 1 << slab_bits; }

  /// First sorted position of slab j of cell c (0 <= j <= slabs(): slab 0 begins the cell, "slab"
  /// slabs() is the next cell's start).
  std::uint32_t slab_begin(std::uint32_t c, int j) const {
    if (j == 0) return cell_start[c];
    if (j == slabs()) return cell_start[c + 1];
    return slab_start[static_cast<std::size_t>(c) * static_cast<std::size_t>(slabs() - 1) +
                      static_cast<std::size_t>(j - 1)];
  }

  /// Whether cells are found by direct lookup (the dense array, or column_slots in column order)
  /// rather than through the block table.
  bool direct() const { return !dense.empty() || !column_slots.empty(); }
  /// Distance in the direct lookup between neighbouring cells along axis k: x fastest in the
  /// dense array; z fastest, then columns x + dims[0] * y, in column_slots (dims[2] + 1 slots
  /// per column).
  std::int64_t slot_stride(int k) const {
    if (columns) {
      const std::int64_t column = dims[Dim - 1] + 1;
      return k == Dim - 1 ? 1 : k == 0 ? column : column * dims[0];
    }
    std::int64_t stride = 1;
    for (int j = 0; j < k; ++j) stride *= dims[j];
    return stride;
  }
  /// The direct lookup's slot of lattice coordinates `c` (on the lattice).
  template <class Coord>
  std::int64_t slot_of(const std::array<Coord, Dim>& c) const {
    std::int64_t slot = 0;
    for (int k = 0; k < Dim; ++k) slot += static_cast<std::int64_t>(c[k]) * slot_stride(k);
    return slot;
  }
  /// The cell at direct-lookup slot `slot`, or kNoCell. In column order the cells of a column
  /// are consecutive and column_slots gives the first at or above each z, so the slot's cell
  /// exists when the next slot's first cell is a later one.
  std::uint32_t cell_at_slot(std::int64_t slot) const {
    const auto at = static_cast<std::size_t>(slot);
    if (columns) return column_slots[at + 1] > column_slots[at] ? column_slots[at] : kNoCell;
    return dense[at];
  }

  /// Index of the cell with lattice coordinates `c` (may lie outside the lattice), or kNoCell.
  std::uint32_t find(const std::array<std::int64_t, Dim>& c) const {
    for (int k = 0; k < Dim; ++k) {
      if (c[k] < 0 || c[k] >= dims[k]) return kNoCell;
    }
    if (direct()) return cell_at_slot(slot_of(c));
    CellCoord u;
    for (int k = 0; k < Dim; ++k) u[k] = static_cast<std::uint32_t>(c[k]);
    const std::uint32_t t = probe_tile(tile_of(u));
    if (t == kNoCell) return kNoCell;
    const Tile& tile = tiles[t];
    const std::uint64_t bit = std::uint64_t{1} << code_in_tile(u);
    if ((tile.cells & bit) == 0) return kNoCell;
    return tile.first + static_cast<std::uint32_t>(std::popcount(tile.cells & (bit - 1)));
  }

  /// Lattice coordinates of cell c (< cells()): its tile found by binary search. Walking cells
  /// in order, CellWalk gives them at a few operations per cell.
  CellCoord coord_of(std::uint32_t c) const { return CellWalk(*this, c).coord(); }

  /// Lattice coordinates of the cell of `tile` with Morton code `code` within it.
  static CellCoord cell_in_tile(const Tile& tile, int code) {
    CellCoord c;
    for (int k = 0; k < Dim; ++k) c[k] = tile.at[k] << kTileShift | kTileCodes<Dim>.local[code][k];
    return c;
  }

  /// The cells c, c + 1, ... of a layout in order, each with its lattice coordinates (read from
  /// the tiles: the layout keeps no per-cell coordinates).
  class CellWalk {
   public:
    /// At cell c (<= cells(); at cells() there is no coordinate to read).
    CellWalk(const CellListLayout& layout, std::uint32_t c)
        : end_(layout.tiles.data() + layout.tiles.size()) {
      if (layout.columns) {
        if constexpr (Dim == 3) {
          runs_ = layout.column_runs.data();
          runs_end_ = runs_ + layout.column_runs.size();
          z_ = layout.cell_z.data();
          z_bits_ = layout.z_bits;
          cell_ = c;
          cells_ = static_cast<std::uint32_t>(layout.cells());
          if (c >= cells_) return;
          run_ = std::upper_bound(
                     runs_, runs_end_, c,
                     [](std::uint32_t cell, const ColumnRun& r) { return cell < r.first; }) -
                 1;
          coord_ = {run_->x, run_->y, z_[c]};
        }
        return;
      }
      if (c >= layout.cells()) {
        tile_ = end_;
        return;
      }
      const auto after =
          std::upper_bound(layout.tiles.begin(), layout.tiles.end(), c,
                           [](std::uint32_t cell, const Tile& t) { return cell < t.first; });
      tile_ = &*(after - 1);
      rest_ = tile_->cells;
      for (std::uint32_t rank = c - tile_->first; rank > 0; --rank) rest_ &= rest_ - 1;
      coord_ = cell_in_tile(*tile_, std::countr_zero(rest_));
    }
    /// Lattice coordinates of the current cell.
    const CellCoord& coord() const { return coord_; }
    /// The current cell's sort key, cell_key(coord()) (on lattices whose Morton codes hold the
    /// coordinates, as update()'s), its Morton part computed once per tile (whose cells' codes
    /// differ in their low Dim * kTileShift bits only) or column run.
    std::uint64_t key() {
      if constexpr (Dim == 3) {
        if (z_ != nullptr) {
          if (run_ != keyed_run_) {
            keyed_run_ = run_;
            prefix_ = morton_code<2>({run_->x, run_->y}) << z_bits_;
          }
          return prefix_ | z_[cell_];
        }
      }
      if (tile_ != keyed_tile_) {
        keyed_tile_ = tile_;
        prefix_ = morton_code<Dim>(tile_->at) << (Dim * kTileShift);
      }
      return prefix_ | static_cast<std::uint64_t>(std::countr_zero(rest_));
    }
    /// Moves to the next cell.
    void next() {
      if (z_ != nullptr) {
        if constexpr (Dim == 3) {
          if (++cell_ >= cells_) return;
          if (run_ + 1 < runs_end_ && run_[1].first == cell_) ++run_;
          coord_ = {run_->x, run_->y, z_[cell_]};
        }
        return;
      }
      rest_ &= rest_ - 1;
      if (rest_ == 0) {
        if (++tile_ == end_) return;
        rest_ = tile_->cells;
      }
      coord_ = cell_in_tile(*tile_, std::countr_zero(rest_));
    }

   private:
    const Tile* tile_ = nullptr;
    const Tile* end_ = nullptr;
    std::uint64_t rest_ = 0;  ///< the current cell's bit and those of the tile's later cells
    /// Column order (read instead of tiles): the layout's column runs, the current cell's run,
    /// its cells' z, the current cell and the number of cells.
    const ColumnRun* runs_ = nullptr;
    const ColumnRun* runs_end_ = nullptr;
    const ColumnRun* run_ = nullptr;
    const std::uint16_t* z_ = nullptr;
    int z_bits_ = 0;
    std::uint32_t cell_ = 0, cells_ = 0;
    CellCoord coord_{};
    /// key(): the tile or column run whose Morton part prefix_ holds.
    const Tile* keyed_tile_ = nullptr;
    const ColumnRun* keyed_run_ = nullptr;
    std::uint64_t prefix_ = 0;
  };

  /// Whether some cell within the lattice's reach of lattice cell `c` (clamped onto the lattice:
  /// a position off it has no nearer lattice cells) may have points: false only where
  /// near_occupied rules every one out; always true without it.
  bool near_points(Cell<Dim> c) const {
    if (near_occupied.empty()) return true;
    for (int k = 0; k < Dim; ++k) c[k] = std::clamp<std::int64_t>(c[k], 0, dims[k] - 1);
    return bit_set(near_occupied, occupancy_bit(c));
  }

  /// Bit `bit` of the bitmap `bits`.
  static bool bit_set(const std::vector<std::uint64_t>& bits, std::uint64_t bit) {
    return (bits[bit >> 6] >> (bit & 63) & 1) != 0;
  }

  /// Calls f(t, cell) for every non-empty cell of the box of `width` (<= 8) cells per axis whose
  /// lowest corner is lattice cell `corner`, t being the cell's position in the box, x fastest.
  /// The box may reach off the lattice. With the block table, each tile the box meets is probed
  /// once and its cells inside the box read from its mask (in Z-order within the tile).
  template <class F>
  void for_each_cell_in_box(const std::array<std::int64_t, Dim>& corner, int width, F&& f) const {
    std::array<int, Dim> widths;
    widths.fill(width);
    for_each_cell_in_box(corner, widths, std::forward<F>(f));
  }
  /// The same for a box of width[k] (<= 8) cells along axis k.
  template <class F>
  void for_each_cell_in_box(const std::array<std::int64_t, Dim>& corner,
                            const std::array<int, Dim>& width, F&& f) const {
    std::array<int, Dim> from, to;  // box positions on the lattice: [from, to) per axis
    for (int k = 0; k < Dim; ++k) {
      from[k] = static_cast<int>(std::clamp<std::int64_t>(-corner[k], 0, width[k]));
      to[k] = static_cast<int>(std::clamp<std::int64_t>(dims[k] - corner[k], 0, width[k]));
      if (from[k] >= to[k]) return;
    }
    if (direct()) {
      std::array<int, Dim> at = from;
      const int row_length = to[0] - from[0];
      const std::int64_t x_stride = slot_stride(0);
      while (true) {
        // The row of the box at positions at[1..] along the other axes, from position from[0].
        int t = 0;
        std::array<std::int64_t, Dim> first;
        for (int k = Dim - 1; k >= 0; --k) {
          t = t * width[k] + at[k];
          first[k] = corner[k] + at[k];
        }
        const std::int64_t slot = slot_of(first);
        for (int x = 0; x < row_length; ++x) {
          const std::uint32_t found = cell_at_slot(slot + x * x_stride);
          if (found != kNoCell) f(t + x, found);
        }
        int k = 1;
        for (; k < Dim; ++k) {
          if (++at[k] < to[k]) break;
          at[k] = from[k];
        }
        if (k == Dim) return;
      }
    }
    // The tiles the box meets: [first_tile, last_tile] per axis.
    std::array<std::uint32_t, Dim> first_tile, last_tile, tile;
    for (int k = 0; k < Dim; ++k) {
      first_tile[k] = static_cast<std::uint32_t>(corner[k] + from[k]) >> kTileShift;
      last_tile[k] = static_cast<std::uint32_t>(corner[k] + to[k] - 1) >> kTileShift;
    }
    tile = first_tile;
    while (true) {
      if (const std::uint32_t t = probe_tile(tile); t != kNoCell) {
        // The tile's cells inside the box: for each axis, the codes whose local coordinate lies
        // in the box's range there.
        std::uint64_t inside = ~std::uint64_t{0};
        for (int k = 0; k < Dim; ++k) {
          const std::int64_t tile_corner = static_cast<std::int64_t>(tile[k]) << kTileShift;
          const auto low =
              static_cast<int>(std::max<std::int64_t>(corner[k] + from[k] - tile_corner, 0));
          const auto high =
              static_cast<int>(std::min<std::int64_t>(corner[k] + to[k] - tile_corner, kTileSide));
          inside &= kTileCodes<Dim>.range[k][low][high];
        }
        const std::uint64_t cells_mask = tiles[t].cells;
        const std::uint32_t first = tiles[t].first;
        for (std::uint64_t bits = cells_mask & inside; bits != 0; bits &= bits - 1) {
          const int code = std::countr_zero(bits);
          int t = 0;
          for (int k = Dim - 1; k >= 0; --k) {
            const std::int64_t cell =
                (static_cast<std::int64_t>(tile[k]) << kTileShift) + kTileCodes<Dim>.local[code][k];
            t = t * width[k] + static_cast<int>(cell - corner[k]);
          }
          const std::uint64_t below = cells_mask & ((std::uint64_t{1} << code) - 1);
          f(t, first + static_cast<std::uint32_t>(std::popcount(below)));
        }
      }
      int k = 0;
      for (; k < Dim; ++k) {
        if (tile[k]++ < last_tile[k]) break;
        tile[k] = first_tile[k];
      }
      if (k == Dim) return;
    }
  }

  /// The bitmap's bit (x fastest) for the block of lattice cell `c` (on the lattice).
  template <class Coord>
  std::uint64_t occupancy_bit(const std::array<Coord, Dim>& c) const {
    auto bit = static_cast<std::uint64_t>(c[Dim - 1]) >> occupied_shift;
    for (int k = Dim - 2; k >= 0; --k) {
      bit = bit * occupied_dims[k] + (static_cast<std::uint64_t>(c[k]) >> occupied_shift);
    }
    return bit;
  }

  /// The tile holding lattice cell `c`: its coordinates shifted right by kTileShift.
  static CellCoord tile_of(CellCoord c) {
    for (auto& x : c) x >>= kTileShift;
    return c;
  }
  /// The Morton code of lattice cell `c` within its tile (0 ..= 63): the low bits of its own.
  static int code_in_tile(const CellCoord& c) {
    int code = 0;
    for (int b = 0; b < kTileShift; ++b) {
      for (int k = 0; k < Dim; ++k) code |= static_cast<int>(c[k] >> b & 1u) << (b * Dim + k);
    }
    return code;
  }

  /// The index in `tiles` of tile `tile` (tile_of()), or kNoCell when no cell of that tile has
  /// points (block table lattices only).
  std::uint32_t probe_tile(const CellCoord& tile) const {
    for (std::uint64_t slot = hash(tile) & table_mask;; slot = (slot + 1) & table_mask) {
      const std::uint32_t t = tile_slots[slot];
      if (t == kNoCell || same_coords(tiles[t].at, tile)) return t;
    }
  }

  /// The table slot where the search for tile `c` starts: the tiles of one block of 2 tiles per
  /// axis start at consecutive slots (the block's coordinates packed and mixed by murmur3's
  /// finalizer, times 2^Dim, plus the tile's place in the block), so that a box meeting several
  /// tiles reads a few cache lines of the table instead of one each.
  static std::uint64_t hash(const CellCoord& c) {
    std::uint64_t h = c[0] >> 1;
    std::uint64_t local = c[0] & 1;
    for (int k = 1; k < Dim; ++k) {
      h = h * 0x9E3779B97F4A7C15ull + (c[k] >> 1);
      local |= static_cast<std::uint64_t>(c[k] & 1) << k;
    }
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return (h << Dim) | local;
  }

  // Uninitialized on resize (IndexVector): every element is written by the build.
  IndexVector<index_t> order;
  std::array<IndexVector<float>, Dim> axis;
  std::vector<std::uint32_t> cell_start;
  /// Within each cell the points are sorted by slab (build()); slab_start[c * (slabs() - 1) + j -
  /// 1] is the first sorted position of slab j >= 1 of cell c (slab_begin()). Empty with one slab.
  std::vector<std::uint32_t> slab_start;
  int slab_bits = 0;
  std::vector<Tile> tiles;  ///< the tiles with points, in Z-order (lattices in Z-order)
  /// Column order (header comment): cells sorted by column, then z; cell_z[c] is the z of cell
  /// c, column_runs the columns with points in memory order (one column's cells are
  /// column_runs[k].first up to the next run's first), and `tiles` stays empty.
  bool columns = false;
  int z_bits = 0;  ///< column order: bits of z in a cell key (cell_key())
  std::vector<std::uint16_t> cell_z;
  std::vector<ColumnRun> column_runs;
  /// Column order: column_slots[column * (dims[2] + 1) + z] is the first cell of the lattice
  /// column with z coordinate z or above (the column's end for z = dims[2]). It replaces the
  /// dense array there (cell_at_slot()), at 4 bytes a slot too.
  std::vector<std::uint32_t> column_slots;
  /// The block table (lattices without the dense array): per slot, the index in `tiles` of the
  /// tile stored there (kNoCell: an empty slot). table_mask + 1 slots.
  std::vector<std::uint32_t> tile_slots;
  /// A bit (x fastest) per block of 2^occupied_shift cells per axis, set when a block within the
  /// lattice's reach of it, rounded up to whole blocks, along every axis has points (or empty:
  /// see kNearShareKept). The blocks are as small as kOccupancyBitsPerPoint bits per point allow
  /// (a bit per cell with the dense array). Bits may also be set in excess next to the lattice's
  /// faces (the dilation runs on the bitmap as one line and crosses the ends of its rows), never
  /// missing.
  std::vector<std::uint64_t> near_occupied;
  int occupied_shift = 0;
  std::array<std::uint64_t, Dim> occupied_dims{};  ///< blocks along each axis
  /// When the lattice has at most about one cell per point: lattice cell (x fastest) -> cell
  /// index, replacing the hash table.
  std::vector<std::uint32_t> dense;
  std::uint64_t table_mask = 0;
  std::array<std::int64_t, Dim> dims{};

 private:
  /// Cell starts of `n` sorted positions from `begins`, a bitmap of them (bit s % 64 of word
  /// s / 64 set where a cell begins: always at s = 0; CellBegins); `cell_at(s)` gives the
  /// coordinates of the cell that begins at sorted position s (each thread calls its own copy of
  /// it, with ascending s). Sets cell_start and `coords`, the coordinates of each cell, for
  /// index_lookup(). Each thread counts the bits of its slice of the words, then writes the starts
  /// and coordinates of its cells: a bit per point read twice, where 32-bit marks were written
  /// twice and read three times by a prefix sum (docs/benchmarks.md).
  template <class CellAt>
  void index_cells(std::span<const std::uint64_t> begins, std::size_t n, int threads,
                   CellAt cell_at, std::vector<CellCoord>& coords) {
    const std::size_t words = begins.size();
    std::vector<std::size_t> cells_before(static_cast<std::size_t>(std::max(threads, 1)) + 1, 0);
    parallel_region(threads, [&] {
      // A slice per thread of the team, which may be smaller than asked for (team_size()).
      const auto team = static_cast<std::size_t>(team_size());
      const auto t = static_cast<std::size_t>(thread_id());
      const std::size_t first = words * t / team, last = words * (t + 1) / team;
      std::size_t begun = 0;
      for (std::size_t w = first; w < last; ++w) begun += std::popcount(begins[w]);
      cells_before[t + 1] = begun;
#pragma omp barrier
#pragma omp single
      {
        for (std::size_t u = 1; u <= team; ++u) cells_before[u] += cells_before[u - 1];
        cell_start.resize(cells_before[team] + 1);
        coords.resize(cells_before[team]);
      }
      std::size_t c = cells_before[t];
      std::uint32_t* starts = cell_start.data();
      CellCoord* at = coords.data();
      CellAt own_cell_at = cell_at;  // the thread's own copy (a SortedKeyDecoder's state)
      for (std::size_t w = first; w < last; ++w) {
        for (std::uint64_t bits = begins[w]; bits != 0; bits &= bits - 1) {
          const auto s = static_cast<std::uint32_t>(64 * w + std::countr_zero(bits));
          starts[c] = s;
          at[c++] = own_cell_at(s);
        }
      }
    });
    cell_start.back() = static_cast<std::uint32_t>(n);
  }
  /// slab_start from cell_start and `slab_at(s)`, the slab of the point at sorted position s
  /// (within a cell the slabs ascend).
  template <class SlabAt>
  void index_slabs(int threads, SlabAt slab_at) {
    slab_start.clear();
    const int inner = slabs() - 1;
    if (inner == 0) return;
    slab_start.resize(cells() * static_cast<std::size_t>(inner));
    const auto signed_cells = static_cast<std::int64_t>(cells());
    parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t c = 0; c < signed_cells; ++c) {
        std::uint32_t s = cell_start[c];
        const std::uint32_t end = cell_start[c + 1];
        for (int j = 1; j <= inner; ++j) {
          while (s < end && slab_at(s) < j) ++s;
          slab_start[static_cast<std::size_t>(c * inner + j - 1)] = s;
        }
      }
    });
  }
  /// The tiles of the cells of lattice coordinates `coords` (index_cells()), or in column order
  /// cell_z and column_runs.
  void index_order(std::span<const CellCoord> coords, int threads);
  /// The tiles of the cells of lattice coordinates `coords` (Z-order).
  void index_tiles(std::span<const CellCoord> coords, int threads);
  /// The lookup from lattice coordinates to cells (dense array, column_slots in column order, or
  /// block table) and the bitmaps, for the cells of lattice coordinates `coords`, after
  /// index_order().
  void index_lookup(const GridGeometry<Dim>& grid, std::span<const CellCoord> coords, int threads);
};

/// What the default engine keeps from one update() to the next, so that a step maps and faults
/// in nothing once its arrays have grown to the point count, whether it refreshes, patches or
/// rebuilds: the arrays of the layout it last replaced (emptied by CellListLayout::clear(), their
/// storage kept: the next layout, patched or built, is written into them) and the work arrays of
/// the update's steps and of a build (a build's sort keys and their radix sort scratch are
/// position_keys and sort_keys). On top of the layout's 16-18 bytes per point in 3D: about 21
/// after an update that only refreshed coordinates, about 40 after one that patched or rebuilt,
/// about 49 once both have run (tests/test_index_memory.cpp measures it). A new index's build
/// has no spare: its work arrays are its own, released as it goes.
template <int Dim>
struct CellListSpare {
  CellListLayout<Dim> layout;  ///< a replaced layout, emptied (clear()): the next one's storage
  std::array<IndexVector<float>, Dim> moved_axis;  ///< new coordinates at the old positions
  std::vector<std::uint8_t> changed_cell;          ///< per old position: 1 if the cell changed
  /// Per old position, the key of the point's sub-cell now; a build's sort keys.
  IndexVector<std::uint64_t> position_keys;
  IndexVector<std::uint64_t> mover_keys;       ///< each mover's key (its sub-cell's now)
  IndexVector<std::uint32_t> mover_positions;  ///< old sorted position of each mover
  IndexVector<std::uint64_t> sort_keys;        ///< radix sort scratch (a patch's and a build's)
  IndexVector<std::uint32_t> sort_values;
  /// Bitmap of the cells' first positions (a patch's merged cells, a build's sorted ones).
  std::vector<std::uint64_t> cell_begins;
  std::vector<std::array<std::uint32_t, Dim>> cell_coords;  ///< per cell (index_cells())
};

}  // namespace spatialhash::detail
