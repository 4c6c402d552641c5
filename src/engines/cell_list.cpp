// cell_list: the default engine.
//
// Points are reordered by cell along a Z-order curve into a float structure-of-arrays copy
// (cell_list_layout.hpp). A search walks the cells; each cell gathers its own points and then the
// contiguous ranges of its 3^Dim stencil (merging ranges that touch) once, then the points of the
// cell are tested against them kBlockQueries at a time with a SIMD block filter. Full-stencil
// searches (neighbor lists) take the cells of one parent cell together (search_group): their
// stencils share most cells, so the union is looked up and gathered once, in copies arranged so
// that each cell's stencil is still one contiguous range; on dense data, points are sorted by slab
// (half a cell along the last axis) within their cells, and a slab's stencil leaves out the slabs
// of the rows below and above that lie beyond r. Candidates whose float distance falls
// in the rounding band around r are re-decided with the double rule (float_band.hpp), so results
// are exact. Float coordinates are relative to their float frame (1024 cells per axis,
// cell_list_layout.hpp), so that band stays narrow on lattices of any extent; a search whose
// stencil reaches into another frame decides all its candidates in double (frame_search).
// Parallel searches split the cells into blocks of consecutive cells, taken dynamically by the
// threads: no locks, no per-point allocation. Neighbor lists go to per-thread buffers (sized from
// a sampled estimate, in huge pages), then each row is copied once into the caller's CSR arrays
// (collect_rows.hpp). Lists without distances larger than the buffers' budget or of 1.25M points
// or more, and all of them with ListOptions::low_memory, are written into the output itself, a
// region per bucket of caller rows, and compacted there (collect_rows_in_place.hpp); lists with
// distances then have a count search first and their rows written straight into place. The same
// rows as NeighborRows (neighbor_rows) are written once, into chunks of one shared array that the
// threads claim with an atomic cursor (collect_rows_unordered.hpp). Pairs go to a resizable output
// in one search, each block claiming the next free range with an atomic cursor; to a fixed-size
// output, counted per block first, then written at their offsets (pair_output). Cross queries are
// sorted by cell and searched like the points of a cell, by groups of cells where they fill three
// or more of a group's cells (cross_search, serving cross_lists and cross_rows); a query whose
// stencil holds no point (one bit of the layout's dilated occupancy bitmap) is dropped in the key
// pass, as one off the lattice, and such queries are left out before the sort where they are many.
// Stencil cells are found through the layout's dense array or, on mostly empty lattices, its block
// table: one probe per 64-cell tile the stencil meets (CellListLayout::for_each_cell_in_box).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "spatialhash/types.hpp"

#include "../engine_base.hpp"
#include "../exact.hpp"
#include "../growable_buffer.hpp"
#include "../key_tally.hpp"
#include "../morton.hpp"
#include "../radix_sort.hpp"
#include "../simd/block_filter.hpp"
#include "../simd/cell_keys.hpp"
#include "../threads.hpp"
#include "cell_list_layout.hpp"
#include "chunk_copy.hpp"
#include "collect_rows.hpp"
#include "collect_rows_in_place.hpp"
#include "collect_rows_unordered.hpp"

namespace spatialhash::detail {
namespace {

/// A contiguous run of sorted positions to test.
struct Range {
  std::uint32_t begin, end;
};

template <class Item>
using Buffer = GrowableBuffer<Item>;

/// The candidates of one cell's stencil, copied into one contiguous structure of arrays so that
/// every point of the cell is tested against them with a single filter call. Reused per thread.
template <int Dim>
struct Gathered {
  std::array<Buffer<float>, Dim> axis;
  Buffer<std::uint32_t> ids;
  std::size_t size = 0;

  SoaView<Dim> view() const {
    SoaView<Dim> v;
    for (int k = 0; k < Dim; ++k) v.axis[k] = axis[k].data();
    v.ids = ids.data();
    return v;
  }
};

/// Per-thread work space of cell searches, reused from cell to cell: the gathered stencil and the
/// block filter's rows.
template <int Dim>
struct CellWork {
  Gathered<Dim> g;
  Buffer<std::uint32_t> sure, border;
};

/// For search_group(): per copy (a bit per axis before the last) and per position t of a row's
/// cross-section (3^(Dim-1) cells, x fastest), the union cell's index within a row of a union of
/// `side` cells per axis: along each axis k before the last, coordinate (copy's bit k) + (t's
/// base-3 digit k).
template <int Dim>
constexpr auto group_cross_sections(int side) {
  std::array<std::array<int, Dim == 2 ? 3 : 9>, 1 << (Dim - 1)> table{};
  for (int copy = 0; copy < (1 << (Dim - 1)); ++copy) {
    for (int t = 0; t < (Dim == 2 ? 3 : 9); ++t) {
      int cell = 0, digits = t, scale = 1;
      for (int k = 0; k < Dim - 1; ++k) {
        cell += (((copy >> k) & 1) + digits % 3) * scale;
        digits /= 3;
        scale *= side;
      }
      table[static_cast<std::size_t>(copy)][static_cast<std::size_t>(t)] = cell;
    }
  }
  return table;
}

template <int Dim, class T>
class CellList final : public EngineBase<Dim, T> {
 public:
  using Base = EngineBase<Dim, T>;
  using typename Base::Position;
  using CellWalk = typename CellListLayout<Dim>::CellWalk;
  /// Largest stencil: 5^Dim cells (cells of edge r/2).
  static constexpr int kStencil = Dim == 2 ? 25 : 125;
  /// Points per block (the unit of parallel work) at most. Smaller inputs get smaller blocks, so
  /// that each thread has about kBlocksPerThread of them and the dynamic schedule evens out
  /// blocks of uneven work (clustered points), down to kMinBlockPoints.
  static constexpr std::uint32_t kBlockPoints = 4096;
  static constexpr std::uint32_t kBlocksPerThread = 16;
  static constexpr std::uint32_t kMinBlockPoints = 256;
  /// Cells sampled by estimated_entries(): one in kSampleShare, within these bounds.
  static constexpr std::size_t kSampleShare = 16, kMinSampleCells = 32, kMaxSampleCells = 256;
  /// Cross queries: the key pass works in chunks of kKeyChunk queries; the queries off the lattice
  /// are left out before the sort when they are more than one in kCompactBelow.
  static constexpr std::size_t kKeyChunk = 4096, kCompactBelow = 8;
  /// A group (search_group): the cells of one parent cell; their stencils' union is kGroupSide
  /// cells along each axis.
  static constexpr int kGroupSide = 4;
  static constexpr int kGroupCells = Dim == 2 ? 16 : 64;
  /// Cells in a cross-section of a stencil: 3^(Dim-1).
  static constexpr int kCrossSection = Dim == 2 ? 3 : 9;
  /// Copies of a group's union (search_group): one per offset along the axes before the last.
  static constexpr int kGroupCopies = 1 << (Dim - 1);
  /// Cells of a parent cell: at most this many cells make a group (search_group).
  static constexpr int kParentCells = 1 << Dim;
  /// Slabs per cell along the last axis (CellListLayout, search_group): 2. Four cut W3's
  /// candidates by a quarter instead of a sixth but add a radix pass to its build and gather more
  /// pieces: no faster (docs/benchmarks.md).
  static constexpr int kSlabBits = 1;
  static constexpr int kSlabs = 1 << kSlabBits;
  /// A group is searched slab by slab when its cells hold at least this many points each on
  /// average (two filter blocks per slab); sparser ones lose more to the split blocks and the
  /// gather's extra pieces than the slabs save (W1, W2: docs/benchmarks.md).
  static constexpr std::uint32_t kSlabMinPoints = 16;
  /// filter_gathered() tests the gathered candidates up to this index: all of them.
  static constexpr std::uint32_t kAllGathered = 0xFFFFFFFFu;
  /// Cells per radius when Options::cell_subdivision is 0 (measured: docs/benchmarks.md).
  static constexpr int kDefaultSubdivision = 1;
  /// update() rebuilds when a sample shows more than this fraction of the points changed cell
  /// (CellListLayout::update; measured: docs/benchmarks.md, "Update vs rebuild").
  static constexpr double kMaxChangedFraction = 0.02;
  /// Empty cells added around the bounding box on every side, so that points drifting out of it
  /// stay on the lattice and update() can keep it.
  static constexpr std::int64_t kPaddingCells = 1;

  explicit CellList(const Context<Dim, T>& context) : Base(context) {
    filter_ = best_block_filter<Dim>(context.simd);
    std::tie(grid_, layout_) = index_points(context);
    make_blocks();
  }

  Engine kind() const override { return Engine::cell_list; }

  /// Keeps the lattice while every point stays on it: the layout is refreshed or patched in
  /// place (CellListLayout::update); otherwise, or when too many points changed cell, rebuilds.
  void update(const Context<Dim, T>& context) override {
    GridGeometry<Dim> grid = grid_;
    if (grid.rebound(context.grid.lower, context.grid.upper)) {
      const auto kind = layout_.update(context, grid, kMaxChangedFraction, spare_);
      if (kind) {
        this->context_ = context;
        grid_ = grid;
        if (*kind == UpdateKind::patched) make_blocks();
        last_update_ = *kind;
        return;
      }
    }
    auto [fresh_grid, layout] = index_points(context);
    this->context_ = context;
    grid_ = fresh_grid;
    layout_ = std::move(layout);
    make_blocks();
    last_update_ = UpdateKind::rebuilt;
  }

  UpdateKind last_update() const override { return last_update_; }

  void pairs(double radius, PairSink& sink) const override {
    const Search search{band_for(radius), radius * radius};
    CellWork<Dim> work;
    CellWalk walk(layout_, 0);
    for (std::uint32_t c = 0; c < layout_.cells(); ++c, walk.next()) {
      search_cell(c, cell_of(walk), Stencil::half, Ids::original, search, work,
                  [&](std::uint32_t s, const std::uint32_t* ids, std::uint32_t count) {
                    const index_t a = layout_.order[s];
                    for (std::uint32_t k = 0; k < count; ++k) {
                      const double d2 = distance_squared(this->context_.points, a, ids[k]);
                      sink.push(a < ids[k] ? PairHit{a, ids[k], d2} : PairHit{ids[k], a, d2});
                    }
                  });
    }
  }

  void ball(const Position& center, double radius, HitSink& sink) const override {
    scan_ball<true>(center, radius, [&](index_t j, double d2) { sink.push({j, d2}); });
  }

  /// As ball(), but sure neighbors cost no double distance (nor a read of the caller's points).
  void ball_indices(const Position& center, double radius,
                    std::vector<index_t>& out) const override {
    out.clear();
    scan_ball<false>(center, radius, [&](index_t j, double) { out.push_back(j); });
  }

  /// Half stencil: each pair is found once and credited to both points, in per-thread count
  /// arrays that are summed at the end. (A count search over the full stencil needs no merge but
  /// tests twice the candidates: 10-30% slower, docs/benchmarks.md.)
  void neighbor_counts(double radius, std::span<index_t> counts) const override {
    const Search search{band_for(radius), radius * radius};
    const std::size_t n = layout_.size();
    const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
    const int threads = this->context_.threads;
    std::vector<std::vector<index_t>> partial(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    {
      std::vector<index_t>& local = partial[static_cast<std::size_t>(thread_id())];
      local.assign(n, 0);
      CellWork<Dim> work;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < blocks; ++b) {
        search_block(b, Stencil::half, Ids::sorted_position, search, work,
                     [&](std::uint32_t s, const std::uint32_t* positions, std::uint32_t count) {
                       local[s] += count;
                       for (std::uint32_t k = 0; k < count; ++k) ++local[positions[k]];
                     });
      }
    }
    const auto signed_n = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t s = 0; s < signed_n; ++s) {
      index_t total = 0;
      for (const auto& local : partial) total += local[s];
      counts[layout_.order[s]] = total;
    }
  }

  void neighbor_lists(const ListRequest& request, NeighborLists& lists) const override {
    full_lists(request, lists);
  }
  /// Every list query goes through the collectors, which sort rows as they store them.
  bool sorts_rows() const override {
    return true;
  }
  /// The same rows, each written once where its thread found room (collect_rows_unordered.hpp).
  void neighbor_rows(const ListRequest& request, NeighborRows& rows) const override {
    full_lists(request, rows);
  }

  void cross_lists(std::span<const Position> queries, const ListRequest& request,
                   NeighborLists& lists) const override {
    cross_search(queries, request, lists);
  }
  /// The same rows, each written once where its thread found room (collect_rows_unordered.hpp).
  void cross_rows(std::span<const Position> queries, const ListRequest& request,
                  NeighborRows& rows) const override {
    cross_search(queries, request, rows);
  }

  /// Every pair once into `out`. A resizable output (the library's own) gets one search: each
  /// block's pairs are collected in a per-thread buffer, then claim the next free range of the
  /// output (an atomic cursor) and are copied there. The output is allocated from a sampled
  /// estimate plus a margin; blocks that would land past it wait until the parallel search is
  /// over and the output has been resized to the true count. Any other output gets a count
  /// search first (count-only filter), then a second search writes each block at its offset.
  void pair_output(double radius, PairOutput& out) const override {
    const Search search{band_for(radius), radius * radius};
    if (out.resizable()) {
      pairs_in_one_search(search, out);
    } else {
      pairs_counted_first(search, out);
    }
  }

  /// pair_output() into the list. With distances, the pairs are searched as sorted positions and
  /// each point's pairs measured as they are found, from a copy of the caller's points in sorted
  /// order (as lists with distances are: row_distances.hpp), where a pair's two points lie near
  /// each other in memory instead of anywhere in the caller's order. A pass over the finished
  /// pairs at the caller's indices was slower (W1, 1M shuffled points, 1 thread, the same
  /// distance kernel: 196-225 ms against 146-165 ms; docs/benchmarks.md).
  PairList pair_list(double radius, bool with_distances) const override {
    PairList list;
    PairListOutput output(list);
    if (with_distances) {
      pairs_in_one_search(Search{band_for(radius), radius * radius}, output, &list.distances);
    } else {
      pair_output(radius, output);
    }
    return list;
  }

 private:
  /// Queries sorted by cell (Z-order), so that each cell's stencil is gathered once for all its
  /// queries and tested against them kBlockQueries at a time, as in neighbor_lists(); the rows
  /// collected into `lists`: CSR lists (collect_rows.hpp) or NeighborRows
  /// (collect_rows_unordered.hpp). No distances (the collectors' are between indexed points).
  template <class Lists>
  void cross_search(std::span<const Position> queries, const ListRequest& request,
                    Lists& lists) const {
    const Search search{band_for(request.radius), request.radius * request.radius};
    const std::size_t m = queries.size();
    const int threads = this->context_.threads;
    // Each query's sort key: 1 + the Z-order code of its lattice cell, clamped onto the lattice
    // (the key only groups queries), or 0 for a query off the lattice: those have no neighbors,
    // sort first and get no slot. Keys of up to 32 bits are sorted packed with the query's index
    // (radix_sort.hpp).
    const int bits = CellListLayout<Dim>::axis_bits(grid_);
    const int shift = std::max(0, bits - kMortonBitsPerAxis<Dim>);
    const int key_bits = Dim * (bits - shift) + 1;
    const bool packed = key_bits <= 32;
    ResultVector<std::uint64_t> keys;
    sized_for_overwrite(keys, m);
    ResultVector<index_t> order;  // query indices in key order (the pair sort's values)
    if (!packed) sized_for_overwrite(order, m);
    // The key of a query on the lattice is not 0 (packed: its upper half).
    const auto on_lattice = [packed](std::uint64_t key) { return (packed ? key >> 32 : key) != 0; };
    std::vector<std::size_t> kept_in_chunk;  // per chunk of the key pass: queries on the lattice
    {
      // The key pass of the build in query mode (cell_keys.hpp), with the lattice test of
      // GridGeometry::cell_of_position; an empty index puts every query off the lattice.
      static_assert(sizeof(Position) == Dim * sizeof(double), "positions are packed doubles");
      CellKeyInput<Dim, double> input{reinterpret_cast<const double*>(queries.data()), Dim,
                                      grid_.origin, grid_.inv_cell, shift};
      input.queries = true;
      const double margin = grid_.reach * grid_.cell_size;
      const bool empty = layout_.size() == 0;
      for (int k = 0; k < Dim; ++k) {
        input.lower[k] = empty ? HUGE_VAL : grid_.lower[k] - margin;
        input.upper[k] = empty ? -HUGE_VAL : grid_.upper[k] + margin;
        input.last_cell[k] = static_cast<double>(layout_.dims[k] - 1);
      }
      const CellKeysFn<Dim, double> query_keys = best_cell_keys<Dim, double>(this->context_.simd);
      const auto chunks = static_cast<std::int64_t>((m + kKeyChunk - 1) / kKeyChunk);
      kept_in_chunk.assign(static_cast<std::size_t>(chunks), 0);
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::int64_t c = 0; c < chunks; ++c) {
        const auto first = static_cast<std::size_t>(c) * kKeyChunk;
        const std::size_t last = std::min(m, first + kKeyChunk);
        query_keys(input, first, last, keys.data(), packed ? nullptr : order.data());
        // A query whose stencil has no points is put off the lattice too (one bit test, while
        // its position is still in cache, instead of a stencil's lookups from its slot): most
        // of them where the points fill a small part of their box (W5, docs/benchmarks.md).
        const bool probe = !layout_.near_occupied.empty();
        std::size_t kept = 0;
        for (std::size_t q = first; q < last; ++q) {
          if (!on_lattice(keys[q])) continue;
          if (probe) {
            Cell<Dim> cell;
            for (int k = 0; k < Dim; ++k) cell[k] = grid_.cell_along(queries[q][k], k);
            if (!layout_.near_points(cell)) {
              keys[q] = packed ? keys[q] & 0xFFFFFFFFu : 0;
              continue;
            }
          }
          ++kept;
        }
        kept_in_chunk[static_cast<std::size_t>(c)] = kept;
      }
    }
    // Where many queries are off the lattice (points on a surface, queries in its box), they are
    // left out before the sort, so that it sorts only the others: one more pass over the keys.
    // Otherwise they are sorted with the rest (their keys are 0: they come first) and skipped.
    std::size_t on = 0;
    for (std::size_t& kept : kept_in_chunk) on += std::exchange(kept, on);
    if (on < m - m / kCompactBelow) {
      ResultVector<std::uint64_t> kept_keys;
      ResultVector<index_t> kept_order;
      sized_for_overwrite(kept_keys, on);
      if (!packed) sized_for_overwrite(kept_order, on);
      const auto chunks = static_cast<std::int64_t>(kept_in_chunk.size());
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::int64_t c = 0; c < chunks; ++c) {
        const auto first = static_cast<std::size_t>(c) * kKeyChunk;
        const std::size_t last = std::min(m, first + kKeyChunk);
        std::size_t at = kept_in_chunk[static_cast<std::size_t>(c)];
        for (std::size_t q = first; q < last; ++q) {
          if (!on_lattice(keys[q])) continue;
          kept_keys[at] = keys[q];
          if (!packed) kept_order[at] = order[q];
          ++at;
        }
      }
      keys = std::move(kept_keys);
      if (!packed) order = std::move(kept_order);
    }
    {
      ResultVector<std::uint64_t> scratch_keys;
      if (packed) {
        radix_sort_packed(keys, key_bits, threads, scratch_keys);
      } else {
        ResultVector<index_t> scratch_values;
        radix_sort_pairs(keys, order, key_bits, threads, scratch_keys, scratch_values);
      }
    }
    const std::size_t off = keys.size() - on;  // off the lattice: sorted first, if still there
    if (packed) {
      sized_for_overwrite(order, on);
      const auto slots = static_cast<std::int64_t>(on);
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::int64_t t = 0; t < slots; ++t) order[t] = static_cast<index_t>(keys[off + t]);
    }
    // slot -> query, sorted by cell
    const std::span<const index_t> query_of(order.data() + (packed ? 0 : off), on);
    constexpr std::uint32_t kUnit = 1024;  // sorted queries per unit of parallel work
    const auto slots = static_cast<std::uint32_t>(query_of.size());
    const std::int64_t units = (slots + kUnit - 1) / kUnit;
    // The estimate: the neighbor lists' mean row length times the queries (a rough guess; a
    // buffer that needs more grows), sampled on at most a cell per kSampleShare queries, so that a
    // few queries are not outweighed by the sample.
    const std::size_t estimate =
        estimated_entries(search, Stencil::full, slots, slots / kSampleShare);
    collect_rows<CellWork<Dim>>(
        this->context_.threads, this->context_.points, units, query_of, m, estimate,
        [&](std::int64_t u) {
          return std::pair{static_cast<std::uint32_t>(u * kUnit),
                           std::min(slots, static_cast<std::uint32_t>((u + 1) * kUnit))};
        },
        [&](std::int64_t u, CellWork<Dim>& work, bool count_only, auto&& emit) {
          const auto unit_first = static_cast<std::uint32_t>(u * kUnit);
          const std::uint32_t last = std::min(slots, unit_first + kUnit);
          // The cell of each slot's query, computed once (every slot's query is on the lattice:
          // cell_of_position succeeds). Sorted order reads the caller's array at random: the
          // queries kAhead slots on are prefetched.
          constexpr std::uint32_t kAhead = 16;
          std::array<Cell<Dim>, kUnit> cells;
          for (std::uint32_t t = unit_first; t < last; ++t) {
            if (t + kAhead < last) __builtin_prefetch(queries.data() + query_of[t + kAhead]);
            Cell<Dim>& cell = cells[t - unit_first];
            cell = {};
            grid_.cell_of_position(queries[query_of[t]], cell);
          }
          const auto cell_at = [&](std::uint32_t slot) { return cells[slot - unit_first]; };
          // Runs of queries in one cell share its gathered stencil; with the stencil of edge-r
          // cells, runs of queries in several cells of one group share the group's gathered
          // union (search_group). A group with queries in fewer than kMinGroupCells cells (sparse
          // queries) is searched cell by cell: 3^Dim lookups a cell instead of the union's 4^Dim.
          constexpr int kMinGroupCells = 3;
          std::uint32_t t = unit_first;
          while (t < last) {
            const Cell<Dim> first = cell_at(t);
            std::uint32_t end = t + 1;
            while (end < last && same_coords(cell_at(end), first)) ++end;
            int group_cells = 1;
            for (std::uint32_t s = end;
                 s < last && group_cells < kMinGroupCells && same_parent(cell_at(s), first); ++s) {
              group_cells += cell_at(s) != cell_at(s - 1);
            }
            if (grid_.reach != 1 || group_cells < kMinGroupCells) {
              search_queries(first, queries, query_of.data() + t, end - t, t, count_only, search,
                             work, emit);
              t = end;
              continue;
            }
            GroupCopies needs{};
            needs[copy_of(first)] = true;
            for (; end < last && same_parent(cell_at(end), first); ++end) {
              needs[copy_of(cell_at(end))] = true;
            }
            const GroupGather group = gather_group(first, needs, 1, Ids::original, work.g);
            const Search in_group = group_search(search, first);
            while (t < end) {
              const Cell<Dim> cell = cell_at(t);
              std::uint32_t run_end = t + 1;
              while (run_end < end && same_coords(cell_at(run_end), cell)) ++run_end;
              filter_queries(cell, queries, query_of.data() + t, run_end - t, t,
                             group.stencil_of(cell, 0), count_only, in_group, work, emit);
              t = run_end;
            }
          }
        },
        ListRequest{.radius = request.radius,
                    .low_memory = request.low_memory,
                    .row_buffer_bytes = request.row_buffer_bytes,
                    .sorted = request.sorted},
        lists);
  }

  /// The thresholds of one search.
  struct Search {
    FloatBand band;
    double r2;
  };

  /// Calls emit(index, d2) for every point within `radius` of `center`: the stencil's ranges
  /// through the filter with one query, fixed-size chunks on the stack (nothing allocated). d2 is
  /// the exact double distance for borderline candidates, and for sure ones when kDistances.
  template <bool kDistances, class Emit>
  void scan_ball(const Position& center, double radius, Emit&& emit) const {
    Cell<Dim> cell;
    if (layout_.size() == 0 || !grid_.cell_of_position(center, cell)) return;
    if (!layout_.near_points(cell)) return;
    const auto& points = this->context_.points;
    const double r2 = radius * radius;
    const FloatBand band = stencil_search(Search{band_for(radius), r2}, cell).band;
    std::array<Range, kStencil> ranges;
    const int count = stencil_ranges(cell, CellListLayout<Dim>::kNoCell, Stencil::full, ranges);
    SoaView<Dim> all;
    for (int k = 0; k < Dim; ++k) all.axis[k] = layout_.axis[k].data();
    all.ids = layout_.order.data();
    QueryBlock<Dim> block;
    for (int k = 0; k < Dim; ++k) {
      block.position[0][k] = frame_position(center, k, cell);
    }
    block.skip[0] = kSkipNone;
    block.count = 1;
    constexpr std::uint32_t kChunk = 256;
    std::array<std::uint32_t, kChunk + kFilterSlack> sure, border;
    for (int q = 0; q < count; ++q) {
      for (std::uint32_t begin = ranges[q].begin; begin < ranges[q].end; begin += kChunk) {
        const std::uint32_t end = std::min(ranges[q].end, begin + kChunk);
        BlockOutput out{sure.data(), border.data(), sure.size()};
        filter_(all, begin, end, block, band, out);
        for (std::size_t k = 0; k < out.sure_count[0]; ++k) {
          emit(sure[k], kDistances ? distance_squared(points, sure[k], center) : 0.0);
        }
        for (std::size_t k = 0; k < out.border_count[0]; ++k) {
          const double d2 = distance_squared(points, border[k], center);
          if (d2 <= r2) emit(border[k], d2);
        }
      }
    }
  }

  /// Searches `count` query positions, all in lattice cell `cell`: queries[query_of[0 .. count)],
  /// reported to emit as slots first_slot, first_slot + 1, ... (no self exclusion; null rows
  /// with count_only).
  template <class Emit>
  void search_queries(const Cell<Dim>& cell, std::span<const Position> queries,
                      const index_t* query_of, std::uint32_t count, std::uint32_t first_slot,
                      bool count_only, const Search& search, CellWork<Dim>& work,
                      Emit&& emit) const {
    std::array<Range, kStencil> ranges;
    const int found = stencil_ranges(cell, CellListLayout<Dim>::kNoCell, Stencil::full, ranges);
    gather(std::span<const Range>(ranges.data(), static_cast<std::size_t>(found)), work.g,
           Ids::original);
    filter_queries(cell, queries, query_of, count, first_slot,
                   Range{0, static_cast<std::uint32_t>(work.g.size)}, count_only,
                   stencil_search(search, cell), work, emit);
  }

  /// Tests the query positions queries[query_of[0 .. count)], all in lattice cell `cell`, against
  /// the gathered candidates `candidates` (a range of work.g), reporting them to emit as slots
  /// first_slot, ... (null rows with count_only).
  template <class Emit>
  void filter_queries(const Cell<Dim>& cell, std::span<const Position> queries,
                      const index_t* query_of, std::uint32_t count, std::uint32_t first_slot,
                      Range candidates, bool count_only, const Search& search, CellWork<Dim>& work,
                      Emit&& emit) const {
    const auto& points = this->context_.points;
    filter_gathered(
        work, count_only, count, search,
        [&](std::uint32_t p0, QueryBlock<Dim>& block) {
          block.after = false;
          for (int q = 0; q < block.count; ++q) {
            const Position& center = queries[query_of[p0 + static_cast<std::uint32_t>(q)]];
            for (int k = 0; k < Dim; ++k) {
              block.position[q][k] = frame_position(center, k, cell);
            }
            block.skip[q] = kSkipNone;
          }
          return candidates.begin;
        },
        [&](std::uint32_t p, std::uint32_t id) {
          return distance_squared(points, id, queries[query_of[p]]) <= search.r2;
        },
        [&](std::uint32_t p, const std::uint32_t* row, std::uint32_t kept) {
          emit(first_slot + p, row, kept);
        },
        candidates.end);
  }

  /// The one-search path of pair_output() (resizable outputs), and of pair_list() with
  /// distances: then `distances` (the list's) gets each pair's distance at the pair's place.
  void pairs_in_one_search(const Search& search, PairOutput& out,
                           ResultVector<double>* distances = nullptr) const {
    const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
    const int threads = this->context_.threads;
    // Room for the estimate plus a margin, at most kMaxCapacity pairs: pages never written cost
    // nothing, but a request beyond the machine's memory could fail outright.
    constexpr std::size_t kMaxCapacity = std::size_t{1} << 28;
    const std::size_t estimate = estimated_entries(search, Stencil::half, layout_.size());
    const std::size_t capacity =
        std::min(kMaxCapacity, estimate + estimate / 4 + (std::size_t{1} << 16));
    out.allocate(capacity);
    // With `distances` (pair_list()): rows of sorted positions, measured from the sorted copy.
    const bool measure = distances != nullptr;
    ResultVector<T> sorted_coords;
    PointsView<Dim, T> sorted;
    if (measure) {
      sorted_coords = sorted_copy();
      sorted = PointsView<Dim, T>(sorted_coords.data(), layout_.size());
      sized_for_overwrite(*distances, capacity);
    }
    const RowDistancesFn<Dim, T> row_distances = best_row_distances<Dim, T>();
    const index_t* order = measure ? layout_.order.data() : nullptr;
    std::atomic<std::size_t> cursor = 0;
    struct Late {
      std::size_t at;
      std::vector<Pair> pairs;
      std::vector<double> distances;
    };
    std::vector<std::vector<Late>> late(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    {
      CellWork<Dim> work;
      Buffer<Pair> block_pairs;
      Buffer<double> block_distances;
      std::vector<Late>& my_late = late[static_cast<std::size_t>(thread_id())];
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < blocks; ++b) {
        block_pairs.clear();
        block_distances.clear();
        search_block(b, Stencil::half, measure ? Ids::sorted_position : Ids::original, search, work,
                     [&](std::uint32_t s, const std::uint32_t* ids, std::uint32_t count) {
                       if (measure) {
                         measure_row_distances(row_distances, sorted, s, ids, count,
                                               block_distances.reserve_more(count));
                         block_distances.grow(count);
                       }
                       append_pairs(layout_.order[s], ids, count, order, block_pairs);
                     });
        const std::span<const Pair> found(block_pairs.data(), block_pairs.size());
        const std::span<const double> measured(block_distances.data(), block_distances.size());
        const std::size_t at = cursor.fetch_add(found.size(), std::memory_order_relaxed);
        if (at + found.size() <= capacity) {
          out.write(at, found);
          if (measure) std::copy(measured.begin(), measured.end(), distances->begin() + at);
        } else {
          my_late.push_back(Late{at, std::vector<Pair>(found.begin(), found.end()),
                                 std::vector<double>(measured.begin(), measured.end())});
        }
      }
    }
    out.resize(cursor.load());
    if (measure) distances->resize(cursor.load());
    for (const auto& per_thread : late) {
      for (const Late& block : per_thread) {
        out.write(block.at, block.pairs);
        if (measure) {
          std::copy(block.distances.begin(), block.distances.end(), distances->begin() + block.at);
        }
      }
    }
  }

  /// Appends the pairs of point `a` with `ids[0 .. count)`, each as (smaller, larger); with
  /// `order` set, the ids are sorted positions, point order[id].
  static void append_pairs(index_t a, const std::uint32_t* ids, std::uint32_t count,
                           const index_t* order, Buffer<Pair>& pairs) {
    Pair* row = pairs.reserve_more(count);
    for (std::uint32_t k = 0; k < count; ++k) {
      const index_t b = order == nullptr ? ids[k] : order[ids[k]];
      row[k] = Pair{std::min(a, b), std::max(a, b)};
    }
    pairs.grow(count);
  }

  /// The count-first path of pair_output() (fixed-size outputs): block counts, then each block
  /// written at its offset by a second search that repeats the first exactly.
  void pairs_counted_first(const Search& search, PairOutput& out) const {
    const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
    const int threads = this->context_.threads;
    std::vector<std::size_t> start(static_cast<std::size_t>(blocks) + 1, 0);
#pragma omp parallel num_threads(threads)
    {
      CellWork<Dim> work;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < blocks; ++b) {
        std::size_t count = 0;
        search_block(
            b, Stencil::half, Ids::none, search, work,
            [&](std::uint32_t, const std::uint32_t*, std::uint32_t found) { count += found; });
        start[b + 1] = count;
      }
    }
    for (std::int64_t b = 0; b < blocks; ++b) start[b + 1] += start[b];
    out.allocate(start.back());
    std::atomic<bool> repeated = true;
#pragma omp parallel num_threads(threads)
    {
      CellWork<Dim> work;
      Buffer<Pair> row_pairs;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < blocks; ++b) {
        std::size_t at = start[b];
        search_block(b, Stencil::half, Ids::original, search, work,
                     [&](std::uint32_t s, const std::uint32_t* ids, std::uint32_t count) {
                       // The second search repeats the first exactly; never write past the
                       // block's share even so.
                       if (at + count > start[b + 1]) {
                         repeated = false;
                         return;
                       }
                       row_pairs.clear();
                       append_pairs(layout_.order[s], ids, count, nullptr, row_pairs);
                       out.write(at, std::span<const Pair>(row_pairs.data(), count));
                       at += count;
                     });
      }
    }
    if (!repeated) throw std::logic_error("spatialhash: the pair search was not repeatable");
  }

  /// Cells of edge r / subdivision when the lattice allows it, else of edge r.
  static GridGeometry<Dim> choose_grid(const Context<Dim, T>& context) {
    const int subdivision =
        context.cell_subdivision > 0 ? context.cell_subdivision : kDefaultSubdivision;
    if (subdivision == 1) return context.grid;
    try {
      return GridGeometry<Dim>::make(context.grid.lower, context.grid.upper, context.radius,
                                     subdivision);
    } catch (const InvalidArgument&) {
      return context.grid;  // too many cells along an axis: the coarse lattice still works
    }
  }

  /// The lattice moved kPaddingCells cells down and widened by twice that on every axis that
  /// stays within the lattice limit. Any origin keeps the lattice exact (grid_geometry.hpp).
  static GridGeometry<Dim> padded(GridGeometry<Dim> grid) {
    for (int k = 0; k < Dim; ++k) {
      if (grid.dims[k] + 2 * kPaddingCells > GridGeometry<Dim>::kMaxCellsPerAxis) continue;
      grid.origin[k] -= static_cast<double>(kPaddingCells) * grid.cell_size;
      grid.dims[k] += 2 * kPaddingCells;
    }
    return grid;
  }

  /// Reorders the points by cell. With the default lattice, sparse data is re-indexed on coarser
  /// cells: any edge >= r keeps the 3^Dim stencil exact, and a few points per stencil cell beat
  /// a lookup per nearly empty cell (each a cache miss once the cell table outgrows the caches).
  /// Sparseness is the mean number of points in the stencil cells around a point: points per
  /// non-empty cell times the fraction of non-empty stencil cells, sampled on up to 512 cells.
  static std::pair<GridGeometry<Dim>, CellListLayout<Dim>> index_points(
      const Context<Dim, T>& context) {
    static constexpr double kSparse = 1.5, kTarget = 3.0, kMaxCoarsening = 16.0;
    GridGeometry<Dim> grid = padded(choose_grid(context));
    CellListLayout<Dim> layout =
        CellListLayout<Dim>::build(context, grid, slab_bits_for(context, grid));
    if (context.cell_subdivision != 0 || layout.cells() == 0) return {grid, std::move(layout)};
    const std::size_t cells = layout.cells();
    const std::size_t samples = std::min<std::size_t>(cells, 512);
    std::int64_t found = 0;
#pragma omp parallel for schedule(static) reduction(+ : found) num_threads(context.threads)
    for (std::int64_t q = 0; q < static_cast<std::int64_t>(samples); ++q) {
      const auto c = layout.coord_of(
          static_cast<std::uint32_t>(static_cast<std::size_t>(q) * cells / samples));
      for (int t = 0; t < stencil_size<Dim>(1); ++t) {
        Cell<Dim> neighbor = stencil_offset<Dim>(t, 1);
        for (int k = 0; k < Dim; ++k) neighbor[k] += c[k];
        found += layout.find(neighbor) != CellListLayout<Dim>::kNoCell;
      }
    }
    const auto probed = static_cast<std::int64_t>(samples) * stencil_size<Dim>(1);
    const double per_stencil_cell = static_cast<double>(layout.size()) /
                                    static_cast<double>(cells) * static_cast<double>(found) /
                                    static_cast<double>(probed);
    if (per_stencil_cell < kSparse) {
      const double coarsening =
          std::min(kMaxCoarsening, std::pow(kTarget / per_stencil_cell, 1.0 / Dim));
      try {
        GridGeometry<Dim> coarse = padded(GridGeometry<Dim>::make(
            context.grid.lower, context.grid.upper, context.radius * coarsening, 1));
        layout = CellListLayout<Dim>::build(context, coarse);  // sparse: no slabs
        grid = coarse;
      } catch (const InvalidArgument&) {
        // keep the lattice of edge r
      }
    }
    return {grid, std::move(layout)};
  }

  /// Slab bits for the layout on `grid`: kSlabBits where a group search may use them (cells of
  /// edge r) and a point's own cell holds at least kSlabMinPoints points on average (weighting
  /// each cell by its points, as the searches meet them), else none: then sparser data pays
  /// nothing for slabs (no key bit, no slab index). The mean is estimated as n times the share of
  /// pairs of kSamples points drawn at random (whatever the input order) that share a cell.
  static int slab_bits_for(const Context<Dim, T>& context, const GridGeometry<Dim>& grid) {
    constexpr std::size_t kSamples = 2048;
    const std::size_t n = context.points.size();
    if (grid.reach != 1 || n < 2) return 0;
    // Distinct points (a repeated pick is skipped) and the sampled points already in each cell,
    // both tallied by key: each point adds as many pairs as its cell held before it. A cell's key
    // is a 64-bit hash of its coordinates; two sampled cells with one key (odds about 2^-43)
    // would only nudge this estimate.
    const bool all = n <= 2 * kSamples;
    const std::size_t draws = all ? n : kSamples;
    KeyTally picked(draws), in_cell(draws);
    std::uint64_t state = 0x9E3779B97F4A7C15ull;  // splitmix64: fixed seed, same choice each run
    double sharing = 0.0, distinct = 0.0;
    for (std::size_t q = 0; q < draws; ++q) {
      state += 0x9E3779B97F4A7C15ull;
      const std::size_t i = all ? q : static_cast<std::size_t>(KeyTally::mix(state) % n);
      if (!all && picked.add(i) > 0) continue;
      const Cell<Dim> cell = grid.cell_of(context.points, i);
      std::uint64_t key = 0;
      for (int k = 0; k < Dim; ++k) key = KeyTally::mix(key + static_cast<std::uint64_t>(cell[k]));
      sharing += static_cast<double>(in_cell.add(key == KeyTally::kEmpty ? 0 : key));
      distinct += 1.0;
    }
    const double seen =
        1.0 + static_cast<double>(n - 1) * sharing / (0.5 * distinct * (distinct - 1.0));
    return seen >= static_cast<double>(kSlabMinPoints) ? kSlabBits : 0;
  }

  /// The rounding band for float coordinates relative to the origin of one float frame
  /// (cell_list_layout.hpp), for searches whose stencil lies in one frame (frame_search()):
  /// coordinates within the lattice's extent, queries up to the stencil reach outside the
  /// bounding box, and within a frame's extent of its origin (plus the reach). Points and queries
  /// of one frame are taken relative to the same double (frame_origin(): one expression, and the
  /// library is compiled without contraction, -ffp-contract=off), so that origin's own rounding
  /// cancels in their differences.
  FloatBand band_for(double radius) const {
    const double margin = (grid_.reach + 1) * grid_.cell_size;
    double extent = 0.0;
    for (int k = 0; k < Dim; ++k) {
      extent = std::max(extent, std::abs(grid_.upper[k] - grid_.origin[k]) + margin);
      extent = std::max(extent, std::abs(grid_.lower[k] - grid_.origin[k]) + margin);
    }
    const double frame =
        static_cast<double>(std::int64_t{1} << CellListLayout<Dim>::kFrameBits) * grid_.cell_size +
        margin;
    return make_float_band(radius, std::min(extent, frame), Dim);
  }

  /// `search` for queries in the float frame of lattice cell `home` against candidates in the
  /// cells from `low` to `high` (per axis, inclusive; cells off the lattice hold none): as it is
  /// when all of those lie in that frame, else with its band open (every candidate decided in
  /// double: floats of different frames are relative to different origins).
  Search frame_search(const Search& search, const Cell<Dim>& home, const Cell<Dim>& low,
                      const Cell<Dim>& high) const {
    using Layout = CellListLayout<Dim>;
    for (int k = 0; k < Dim; ++k) {
      const std::int64_t from = std::max<std::int64_t>(low[k], 0);
      const std::int64_t to = std::min<std::int64_t>(high[k], layout_.dims[k] - 1);
      const std::int64_t frame = Layout::frame_of(home[k]);
      if (from <= to && (Layout::frame_of(from) != frame || Layout::frame_of(to) != frame)) {
        constexpr float kInf = std::numeric_limits<float>::infinity();
        return Search{FloatBand{-kInf, kInf}, search.r2};
      }
    }
    return search;
  }
  /// frame_search() for the queries of lattice cell `cell` against its stencil.
  Search stencil_search(const Search& search, const Cell<Dim>& cell) const {
    Cell<Dim> low = cell, high = cell;
    for (int k = 0; k < Dim; ++k) {
      low[k] -= grid_.reach;
      high[k] += grid_.reach;
    }
    return frame_search(search, cell, low, high);
  }
  /// frame_search() for the queries of the group (parent cell) of lattice cell `cell`, which
  /// share its frame (frames are whole groups), against the union of their stencils: 4 cells per
  /// axis from the parent's first cell minus one.
  Search group_search(const Search& search, const Cell<Dim>& cell) const {
    Cell<Dim> low, high;
    for (int k = 0; k < Dim; ++k) {
      low[k] = (cell[k] >> 1) * 2 - 1;
      high[k] = low[k] + 3;
    }
    return frame_search(search, cell, low, high);
  }
  /// Float coordinate k of `position` in the frame of lattice cell `cell`.
  float frame_position(const Position& position, int k, const Cell<Dim>& cell) const {
    return static_cast<float>(position[k] - CellListLayout<Dim>::frame_origin(grid_, k, cell[k]));
  }

  /// Which stencil a cell search covers: all cells around it, or only those after it in memory
  /// order (each pair of cells once).
  enum class Stencil { full, half };
  /// The full-stencil search of every block, its rows collected into `lists`: CSR lists
  /// (collect_rows.hpp) or NeighborRows (collect_rows_unordered.hpp).
  /// Rows with distances (unsorted) are searched as sorted positions and measured from a copy of
  /// the caller's points in sorted order (RowPositions, row_distances.hpp): a row's neighbors then
  /// lie side by side in memory instead of scattered over the caller's order (1M uniform points in
  /// random order, 2 threads: 130 neighbors per point 1.27x as fast, 30 and 60 unchanged;
  /// docs/benchmarks.md).
  template <class Lists>
  void full_lists(const ListRequest& request, Lists& lists) const {
    const Search search{band_for(request.radius), request.radius * request.radius};
    const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
    const bool by_position = request.with_distances && !request.sorted;
    ResultVector<T> sorted_coords;
    RowPositions<Dim, T> positions;
    if (by_position) {
      sorted_coords = sorted_copy();
      positions = {layout_.order.data(), PointsView<Dim, T>(sorted_coords.data(), layout_.size())};
    }
    const Ids row_ids = by_position ? Ids::sorted_position : Ids::original;
    const std::size_t estimate = estimated_entries(search, Stencil::full, layout_.size());
    const auto run = [&](std::int64_t b, CellWork<Dim>& work, bool count_only, auto&& emit) {
      search_block(b, Stencil::full, count_only ? Ids::none : row_ids, search, work, emit);
    };
    if constexpr (std::is_same_v<Lists, NeighborLists>) {
      if (!request.with_distances &&
          (request.low_memory || estimate > request.row_buffer_bytes / sizeof(index_t) ||
           layout_.size() >= request.in_place_from_rows)) {
        // Lists larger than the row buffers may take, lists of many points
        // (ListRequest::in_place_from_rows), or lists asked for without buffers: written into the
        // output itself and compacted there (collect_rows_in_place.hpp), each bucket's region
        // sized by its rows' cell populations; one search instead of a count search and a
        // writing one (W3 at 4M points, 2 threads: about 1.4x as fast; low_memory at 1M points:
        // 1.1-2.4x; docs/benchmarks.md). Below the budget and those points the buffers are as
        // fast or faster (W3 at 1M: 1.0-1.4x slower in place).
        lists.scratch.release();
        const auto weigh = [&](std::int64_t b, auto&& add) {
          for (std::uint32_t c = blocks_[b]; c < blocks_[b + 1]; ++c) {
            const std::uint32_t first = layout_.cell_start[c], last = layout_.cell_start[c + 1];
            for (std::uint32_t slot = first; slot < last; ++slot) add(slot, double(last - first));
          }
        };
        if (collect_rows_in_place<CellWork<Dim>>(this->context_.threads, blocks, layout_.order,
                                                 layout_.size(), estimate, weigh, run, request,
                                                 lists)
                .done) {
          return;
        }
        // Gave up (estimates far too low): counted first, then written into place.
      }
    }
    collect_rows<CellWork<Dim>>(
        this->context_.threads, this->context_.points, blocks, layout_.order, layout_.size(),
        estimate,
        [&](std::int64_t b) {
          return std::pair{layout_.cell_start[blocks_[b]], layout_.cell_start[blocks_[b + 1]]};
        },
        run, request, lists, positions);
  }

  /// The caller's coordinates in sorted order: point order[p] at p, Dim values per point.
  ResultVector<T> sorted_copy() const {
    const auto& points = this->context_.points;
    const std::size_t n = layout_.size();
    ResultVector<T> copy;
    sized_for_overwrite(copy, n * Dim);
    const auto signed_n = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static) num_threads(this->context_.threads)
    for (std::int64_t p = 0; p < signed_n; ++p) {
      const T* from = points.data + std::size_t{layout_.order[p]} * points.stride;
      for (int k = 0; k < Dim; ++k) copy[static_cast<std::size_t>(p) * Dim + k] = from[k];
    }
    return copy;
  }

  /// What a cell search reports for a neighbor: its original index, its sorted position, or
  /// nothing (a count search: emit gets each point's count and a null row, and the filter skips
  /// the sure rows' compress and store; border candidates come as sorted positions).
  enum class Ids { original, sorted_position, none };

  /// The number of neighbor-list entries (full stencil) or pairs (half) of `rows` rows, as their
  /// mean per point estimated from a count search of sampled cells spread over the layout, in
  /// parallel: one cell in kSampleShare, at least kMinSampleCells and at most kMaxSampleCells, and
  /// at most `max_samples` (0: no sample, the estimate is 0). The estimate only sizes the row
  /// buffers, which are reserved with a wide margin (collect_rows.hpp). A fixed 256 cells,
  /// searched on one thread, were a quarter of the cells of 10k points and a fifth of their
  /// lists' time, and 0.07 ms of every cross query of a single position (docs/benchmarks.md).
  std::size_t estimated_entries(const Search& search, Stencil stencil, std::size_t rows,
                                std::size_t max_samples = kMaxSampleCells) const {
    const std::size_t cells = layout_.cells();
    const auto samples = static_cast<std::int64_t>(std::min(
        {cells, std::clamp(cells / kSampleShare, kMinSampleCells, kMaxSampleCells), max_samples}));
    if (samples == 0) return 0;
    std::uint64_t points = 0, found = 0;
#pragma omp parallel num_threads(this->context_.threads)
    {
      CellWork<Dim> work;
#pragma omp for schedule(static) reduction(+ : points, found)
      for (std::int64_t q = 0; q < samples; ++q) {
        const auto c = static_cast<std::uint32_t>(static_cast<std::size_t>(q) * cells /
                                                  static_cast<std::size_t>(samples));
        points += layout_.cell_start[c + 1] - layout_.cell_start[c];
        search_cell(
            c, cell_of(c), stencil, Ids::none, search, work,
            [&](std::uint32_t, const std::uint32_t*, std::uint32_t count) { found += count; });
      }
    }
    return static_cast<std::size_t>(static_cast<double>(found) / static_cast<double>(points) *
                                    static_cast<double>(rows));
  }

  /// search_cell() for every cell of block b, in order.
  template <class Emit>
  void search_block(std::int64_t b, Stencil stencil, Ids ids, const Search& search,
                    CellWork<Dim>& work, Emit&& emit) const {
    const std::uint32_t begin = blocks_[b], end = blocks_[b + 1];
    CellWalk walk(layout_, begin);
    if (stencil == Stencil::full && grid_.reach == 1) {
      // The coordinates of the group's cells: those of one parent, consecutive in Z-order.
      std::array<Cell<Dim>, kParentCells> cells;
      Cell<Dim> next = cell_of(walk);
      for (std::uint32_t c = begin; c < end;) {
        cells[0] = next;
        walk.next();
        std::uint32_t last = c + 1;
        for (; last < end; ++last, walk.next()) {
          next = cell_of(walk);
          if (!same_parent(cells[0], next)) break;
          cells[last - c] = next;
        }
        search_group(c, last, cells, ids, search, work, emit);
        c = last;
      }
      return;
    }
    for (std::uint32_t c = begin; c < end; ++c, walk.next()) {
      search_cell(c, cell_of(walk), stencil, ids, search, work, emit);
    }
  }

  /// Whether cells of lattice coordinates a and b have the same parent (coordinates halved):
  /// they belong to one group.
  static bool same_parent(const Cell<Dim>& a, const Cell<Dim>& b) {
    for (int k = 0; k < Dim; ++k) {
      if ((a[k] >> 1) != (b[k] >> 1)) return false;  // arithmetic shifts: floor halves
    }
    return true;
  }

  /// Full-stencil search of the cells [first, last), which share one parent cell (a group of up
  /// to 2^Dim cells, consecutive in Z-order; cells[c - first] are the coordinates of cell c). Their
  /// stencils together cover 4^Dim cells, looked up once. The candidates are gathered in copies,
  /// one per offset of the group's cells along the axes before the last (2 copies in 2D, 4 in 3D;
  /// only those some cell needs): row z' of a copy holds the stencil's cross-section at union
  /// coordinate z' along the last axis, its 3^(Dim-1) cells x fastest. The stencil of a cell at
  /// offset z along the last axis is rows z .. z+2 of its copy: one contiguous range, as in
  /// search_cell(). A full 3D group gathers 18 cells per cell instead of 27, and looks up 8 instead
  /// of 27. A group of dense cells (slabs_for_group) is searched slab by slab: each row is gathered
  /// as slab rows (GroupGather), and the points of slab h of a cell meet only the slabs >= h of the
  /// row below and <= h of the row above (the others lie more than r away along the last axis: W3
  /// tests 15% fewer candidates). A count search (Ids::none) reports counts with null rows.
  template <class Emit>
  void search_group(std::uint32_t first, std::uint32_t last,
                    const std::array<Cell<Dim>, kParentCells>& cells, Ids ids,
                    const Search& group_wide, CellWork<Dim>& work, Emit&& emit) const {
    const Search search = group_search(group_wide, cells[0]);
    GroupCopies needs{};
    for (std::uint32_t c = first; c < last; ++c) needs[copy_of(cells[c - first])] = true;
    const int slabs = slabs_for_group(first, last);
    const GroupGather group = gather_group(cells[0], needs, slabs, ids, work.g);
    const auto& points = this->context_.points;
    for (std::uint32_t c = first; c < last; ++c) {
      const Cell<Dim> cell = cells[c - first];
      for (int h = 0; h < slabs; ++h) {
        const auto [slab_first, slab_end] = part_of(c, h, slabs);
        if (slab_first == slab_end) continue;
        const Range stencil = group.stencil_of(cell, h);
        const std::uint32_t own = own_of(group, cell, h);
        filter_gathered(
            work, ids == Ids::none, slab_end - slab_first, search,
            [&](std::uint32_t p0, QueryBlock<Dim>& block) {
              block.after = false;
              for (int q = 0; q < block.count; ++q) {
                for (int k = 0; k < Dim; ++k) {
                  block.position[q][k] = layout_.axis[k][slab_first + p0 + q];
                }
                block.skip[q] = own + p0 + static_cast<std::uint32_t>(q);
              }
              return stencil.begin;
            },
            [&](std::uint32_t p, std::uint32_t id) {
              const index_t other = ids == Ids::original ? id : layout_.order[id];
              return distance_squared(points, layout_.order[slab_first + p], other) <= search.r2;
            },
            [&](std::uint32_t p, const std::uint32_t* row, std::uint32_t kept) {
              emit(slab_first + p, row, kept);
            },
            stencil.end);
      }
    }
  }

  /// Slabs a group's search splits its cells into: the layout's where the group's cells hold at
  /// least kSlabMinPoints points each on average, else 1 (whole cells).
  int slabs_for_group(std::uint32_t first, std::uint32_t last) const {
    if (layout_.slabs() == 1) return 1;
    const std::uint32_t points = layout_.cell_start[last] - layout_.cell_start[first];
    return points >= kSlabMinPoints * (last - first) ? layout_.slabs() : 1;
  }

  /// Which copies of a group (search_group) to gather.
  using GroupCopies = std::array<bool, kGroupCopies>;

  /// A group's gathered candidates (gather_group): the layout cell of each union cell, and where
  /// each slab row of each copy begins among the gathered candidates. Slab row z' * slabs + j of a
  /// copy holds slab j of the copy's cross-section at union coordinate z' (its 3^(Dim-1) cells
  /// x fastest), so that the stencil of a cell's slab h, which leaves out the slabs below h of
  /// the row below and those above h of the row above, is still one contiguous range. Why those
  /// are beyond r: a point of slab h of cell c has computed u >= c + h / slabs along the last
  /// axis, one of slab j < h of cell c - 1 has u < c - 1 + (j + 1) / slabs <= c - 1 + h / slabs;
  /// computed u more than 1 apart are more than r apart (the invariant of grid_geometry.hpp), and
  /// likewise above.
  struct GroupGather {
    std::array<std::uint32_t, kGroupCells> unit;
    int slabs = 1;
    std::array<std::array<std::uint32_t, kGroupSide * kSlabs + 1>, kGroupCopies> row_begin{};

    /// The gathered range of the stencil of slab h of `cell` (a cell of the group; its copy
    /// gathered); with one slab (whole cells), h = 0 is the whole stencil.
    Range stencil_of(const Cell<Dim>& cell, int h) const {
      const auto& rows = row_begin[static_cast<std::size_t>(copy_of(cell))];
      const auto z = static_cast<int>(cell[Dim - 1] & 1);
      return Range{rows[static_cast<std::size_t>(z * slabs + h)],
                   rows[static_cast<std::size_t>((z + 2) * slabs + h + 1)]};
    }
  };

  /// The gathered index of the first point of slab h of `cell` (a cell of `group`): in the
  /// middle row of its stencil, slab row h, after slab h of the cells before it in the
  /// cross-section.
  std::uint32_t own_of(const GroupGather& group, const Cell<Dim>& cell, int h) const {
    const int copy = copy_of(cell);
    const int z = static_cast<int>(cell[Dim - 1] & 1) + 1;
    std::uint32_t own = group.row_begin[static_cast<std::size_t>(copy)]
                                       [static_cast<std::size_t>(z * group.slabs + h)];
    for (int t = 0; t < kCrossSection / 2; ++t) {
      const std::uint32_t found = group.unit[static_cast<std::size_t>(section_cell(copy, z, t))];
      if (found == CellListLayout<Dim>::kNoCell) continue;
      const Range part = part_of(found, h, group.slabs);
      own += part.end - part.begin;
    }
    return own;
  }

  /// The sorted positions of part j of cell c cut into `parts` (1, whole cells, or the layout's
  /// slabs).
  Range part_of(std::uint32_t c, int j, int parts) const {
    const int step = layout_.slabs() / parts;
    return Range{layout_.slab_begin(c, j * step), layout_.slab_begin(c, (j + 1) * step)};
  }

  /// Looks up the 4^Dim union cells of the group of `cell` (lattice coordinates; may lie off the
  /// lattice) and gathers the copies in `needs` into g, each row split into `slabs` slab rows
  /// (1, or the layout's slabs), with original indices or sorted positions as ids (gather()).
  GroupGather gather_group(const Cell<Dim>& cell, const GroupCopies& needs, int slabs, Ids ids,
                           Gathered<Dim>& g) const {
    GroupGather group;
    group.slabs = slabs;
    std::array<std::int64_t, Dim> base;
    bool interior = !layout_.dense.empty();
    std::int64_t linear = 0;
    for (int k = Dim - 1; k >= 0; --k) {
      // An arithmetic shift: the parent of a negative coordinate is below zero too.
      base[k] = 2 * (cell[k] >> 1) - 1;
      interior = interior && base[k] >= 0 && base[k] + kGroupSide <= layout_.dims[k];
      if (interior) linear = linear * layout_.dims[k] + base[k];  // as in stencil_ranges()
    }
    if (interior) {
      for (int u = 0; u < kGroupCells; ++u) {
        group.unit[u] = layout_.dense[static_cast<std::size_t>(linear + group_offset_[u])];
      }
    } else {
      group.unit.fill(CellListLayout<Dim>::kNoCell);
      layout_.for_each_cell_in_box(base, kGroupSide,
                                   [&](int u, std::uint32_t found) { group.unit[u] = found; });
    }
    // The copies as ranges of the layout, touching ones merged.
    std::array<Range, kGroupCopies * kGroupSide * kSlabs * kCrossSection> ranges;
    int count = 0;
    std::uint32_t at = 0;
    for (int copy = 0; copy < kGroupCopies; ++copy) {
      if (!needs[static_cast<std::size_t>(copy)]) continue;
      auto& rows = group.row_begin[static_cast<std::size_t>(copy)];
      for (int row = 0; row < kGroupSide; ++row) {
        for (int j = 0; j < slabs; ++j) {
          rows[static_cast<std::size_t>(row * slabs + j)] = at;
          for (int t = 0; t < kCrossSection; ++t) {
            const std::uint32_t found = group.unit[section_cell(copy, row, t)];
            if (found == CellListLayout<Dim>::kNoCell) continue;
            const Range r = part_of(found, j, slabs);
            if (r.end == r.begin) continue;
            if (count > 0 && ranges[count - 1].end == r.begin) {
              ranges[count - 1].end = r.end;
            } else {
              ranges[count++] = r;
            }
            at += r.end - r.begin;
          }
        }
      }
      rows[static_cast<std::size_t>(kGroupSide * slabs)] = at;
    }
    gather(std::span<const Range>(ranges.data(), static_cast<std::size_t>(count)), g, ids);
    return group;
  }

  /// The copy (search_group) of a cell: its offsets in its group along the axes before the last,
  /// as bits.
  static int copy_of(const Cell<Dim>& cell) {
    int copy = 0;
    for (int k = Dim - 2; k >= 0; --k) copy = copy * 2 + static_cast<int>(cell[k] & 1);
    return copy;
  }

  /// The union cell (index into the group's 4^Dim, x fastest) at position t of row `row` of copy
  /// `copy`: along each axis k before the last, union coordinate (copy's bit k) + (t's base-3
  /// digit k).
  static int section_cell(int copy, int row, int t) {
    return row * (kGroupCells / kGroupSide) + kSection[copy][t];
  }
  /// section_cell() within a row, per copy and position.
  static constexpr auto kSection = group_cross_sections<Dim>(kGroupSide);

  /// Searches the points of cell c (lattice coordinates `cell`) against its stencil, kBlockQueries
  /// points per filter call, and calls emit(s, ids, count) for each point of c (sorted position s)
  /// with its neighbors' ids; a half search reports, within cell c, only the points after s.
  /// Borderline candidates are re-decided with the double rule before emit sees them.
  template <class Emit>
  void search_cell(std::uint32_t c, const Cell<Dim>& cell, Stencil stencil, Ids ids,
                   const Search& lattice_wide, CellWork<Dim>& work, Emit&& emit) const {
    const Search search = stencil_search(lattice_wide, cell);
    const std::uint32_t own = gather_stencil(c, cell, stencil, ids, work.g);
    const std::uint32_t first = layout_.cell_start[c];
    const auto& points = this->context_.points;
    const bool after = stencil == Stencil::half;
    filter_gathered(
        work, ids == Ids::none, own, search,
        [&](std::uint32_t p0, QueryBlock<Dim>& block) {
          // The cell's own points come first in g: point p of the cell is candidate p.
          block.after = after;
          for (int q = 0; q < block.count; ++q) {
            for (int k = 0; k < Dim; ++k) block.position[q][k] = layout_.axis[k][first + p0 + q];
            block.skip[q] = p0 + static_cast<std::uint32_t>(q);
          }
          return after ? p0 + 1 : 0;
        },
        [&](std::uint32_t p, std::uint32_t id) {
          const index_t other = ids == Ids::original ? id : layout_.order[id];
          return distance_squared(points, layout_.order[first + p], other) <= search.r2;
        },
        [&](std::uint32_t p, const std::uint32_t* row, std::uint32_t count) {
          emit(first + p, row, count);
        });
  }

  /// The filter loop of every cell search: `count` queries against the candidates gathered in
  /// work.g, kBlockQueries per filter call. setup(p0, block) fills in the block of queries p0, p0
  /// + 1, ... (block.count is set) and returns the first candidate to test (the last is `to` - 1,
  /// or the last gathered); a borderline candidate `id` of query p is kept when within(p, id)
  /// (the double rule); emit(p, row, count) then gets query p's neighbors (row is null in a count
  /// search, count_only).
  template <class Setup, class Within, class Emit>
  void filter_gathered(CellWork<Dim>& work, bool count_only, std::uint32_t count,
                       const Search& search, Setup&& setup, Within&& within, Emit&& emit,
                       std::uint32_t to = kAllGathered) const {
    const Gathered<Dim>& g = work.g;
    const std::size_t stride = g.size + kFilterSlack;
    work.sure.clear();
    work.border.clear();
    BlockOutput out{count_only ? nullptr : work.sure.reserve_more(stride * kBlockQueries),
                    work.border.reserve_more(stride * kBlockQueries), stride};
    const SoaView<Dim> view = g.view();
    QueryBlock<Dim> block;
    for (std::uint32_t p0 = 0; p0 < count; p0 += kBlockQueries) {
      block.count = static_cast<int>(std::min<std::uint32_t>(kBlockQueries, count - p0));
      const std::uint32_t from = setup(p0, block);
      filter_(view, from, std::min(to, static_cast<std::uint32_t>(g.size)), block, search.band,
              out);
      for (int q = 0; q < block.count; ++q) {
        const std::uint32_t p = p0 + static_cast<std::uint32_t>(q);
        std::uint32_t* row = count_only ? nullptr : out.sure + static_cast<std::size_t>(q) * stride;
        const std::uint32_t* border = out.border + static_cast<std::size_t>(q) * stride;
        std::uint32_t kept = out.sure_count[q];
        for (std::uint32_t k = 0; k < out.border_count[q]; ++k) {
          if (!within(p, border[k])) continue;
          if (!count_only) row[kept] = border[k];
          ++kept;
        }
        emit(p, static_cast<const std::uint32_t*>(row), kept);
      }
    }
  }

  /// Copies the points of `ranges` into `g`, with their original indices as ids, or with their
  /// sorted positions. Runs are short (a few cells): they are copied in whole chunks
  /// (copy_in_chunks), the next run overwriting the overshoot, the last one's landing in the
  /// slack; a run whose overshoot would read past the layout's arrays is copied item by item.
  void gather(std::span<const Range> ranges, Gathered<Dim>& g, Ids ids) const {
    std::size_t total = 0;
    for (const Range& q : ranges) total += q.end - q.begin;
    std::array<float*, Dim> axis;
    for (int k = 0; k < Dim; ++k) {
      g.axis[k].clear();
      axis[k] = g.axis[k].reserve_more(total + kFilterSlack);
    }
    g.ids.clear();
    std::uint32_t* out_ids = g.ids.reserve_more(total + kFilterSlack);
    std::size_t at = 0;
    const std::size_t n = layout_.size();
    for (const Range& q : ranges) {
      const std::size_t length = q.end - q.begin;
      if (q.begin + (length + kCopyChunk - 1) / kCopyChunk * kCopyChunk <= n) {
        for (int k = 0; k < Dim; ++k) {
          copy_in_chunks(axis[k] + at, layout_.axis[k].data() + q.begin, length);
        }
        if (ids == Ids::original)
          copy_in_chunks(out_ids + at, layout_.order.data() + q.begin, length);
      } else {
        for (int k = 0; k < Dim; ++k) {
          std::copy(layout_.axis[k].data() + q.begin, layout_.axis[k].data() + q.end, axis[k] + at);
        }
        if (ids == Ids::original) {
          std::copy(layout_.order.data() + q.begin, layout_.order.data() + q.end, out_ids + at);
        }
      }
      if (ids != Ids::original) {
        // Whole chunks too (fixed-size loops the compiler vectorizes): the overshoot lands where
        // the next run starts, or in the slack.
        for (std::size_t j = 0; j < length; j += kCopyChunk) {
          for (std::size_t i = 0; i < kCopyChunk; ++i) {
            out_ids[at + j + i] = q.begin + static_cast<std::uint32_t>(j + i);
          }
        }
      }
      at += length;
    }
    g.size = total;
  }

  /// Gathers cell c itself first, then the other cells of its stencil (all of them, or for a
  /// half stencil those after c in memory order). Returns the number of points of cell c.
  std::uint32_t gather_stencil(std::uint32_t c, const Cell<Dim>& cell, Stencil stencil, Ids ids,
                               Gathered<Dim>& g) const {
    std::array<Range, kStencil + 1> ranges;
    ranges[0] = Range{layout_.cell_start[c], layout_.cell_start[c + 1]};
    std::array<Range, kStencil> others;
    const int count = stencil_ranges(cell, c, stencil, others);
    std::copy(others.begin(), others.begin() + count, ranges.begin() + 1);
    gather(std::span<const Range>(ranges.data(), count + 1), g, ids);
    return ranges[0].end - ranges[0].begin;
  }

  /// Lattice coordinates of the cell `walk` is at.
  static Cell<Dim> cell_of(const CellWalk& walk) {
    Cell<Dim> cell;
    for (int k = 0; k < Dim; ++k) cell[k] = walk.coord()[k];
    return cell;
  }
  /// Lattice coordinates of cell c, found by binary search (for cells taken out of order).
  Cell<Dim> cell_of(std::uint32_t c) const {
    const auto coord = layout_.coord_of(c);
    Cell<Dim> cell;
    for (int k = 0; k < Dim; ++k) cell[k] = coord[k];
    return cell;
  }

  /// Ranges of the stencil cells around lattice cell `cell`, sorted and merged where they touch,
  /// leaving out cell `skip_cell` (for a half stencil, every cell up to it).
  int stencil_ranges(const Cell<Dim>& cell, std::uint32_t skip_cell, Stencil stencil,
                     std::array<Range, kStencil>& ranges) const {
    int count = 0;
    const auto add = [&](std::uint32_t found) {
      if (found == CellListLayout<Dim>::kNoCell) return;
      if (stencil == Stencil::half ? found <= skip_cell : found == skip_cell) return;
      ranges[count++] = Range{layout_.cell_start[found], layout_.cell_start[found + 1]};
    };
    bool interior = !layout_.dense.empty();
    std::int64_t linear = 0;
    for (int k = Dim - 1; k >= 0; --k) {
      interior = interior && cell[k] >= grid_.reach && cell[k] + grid_.reach < layout_.dims[k];
      // Only on the dense array's lattice (at most about a cell per point): on a wide sparse one
      // the product would overflow.
      if (interior) linear = linear * layout_.dims[k] + cell[k];
    }
    if (interior) {
      // The whole stencil lies on the lattice: direct lookups at fixed offsets.
      const std::uint32_t* dense = layout_.dense.data() + linear;
      for (int o = 0; o < stencil_size_; ++o) add(dense[dense_offset_[o]]);
    } else {
      std::array<std::int64_t, Dim> corner;
      for (int k = 0; k < Dim; ++k) corner[k] = cell[k] - grid_.reach;
      layout_.for_each_cell_in_box(corner, 2 * grid_.reach + 1,
                                   [&](int, std::uint32_t found) { add(found); });
    }
    // Insertion sort by position: short, and mostly in order already (cells in Z-order).
    for (int q = 1; q < count; ++q) {
      const Range moving = ranges[q];
      int at = q;
      for (; at > 0 && ranges[at - 1].begin > moving.begin; --at) ranges[at] = ranges[at - 1];
      ranges[at] = moving;
    }
    int merged = 0;
    for (int q = 0; q < count; ++q) {
      if (merged > 0 && ranges[merged - 1].end == ranges[q].begin) {
        ranges[merged - 1].end = ranges[q].end;
      } else {
        ranges[merged++] = ranges[q];
      }
    }
    return merged;
  }

  /// Splits the cells into blocks (the unit of parallel work) of kMinBlockPoints to kBlockPoints
  /// points, about kBlocksPerThread per thread, and lists the stencil's cell offsets for the
  /// lattice's reach.
  void make_blocks() {
    stencil_size_ = stencil_size<Dim>(grid_.reach);
    for (int t = 0; t < stencil_size_; ++t) {
      const Cell<Dim> offset = stencil_offset<Dim>(t, grid_.reach);
      dense_offset_[t] = 0;
      for (int k = Dim - 1; k >= 0; --k) {
        dense_offset_[t] = dense_offset_[t] * layout_.dims[k] + offset[k];
      }
    }
    for (int u = 0; u < kGroupCells; ++u) {
      group_offset_[u] = 0;
      for (int k = Dim - 1; k >= 0; --k) {
        int digit = u;
        for (int j = 0; j < k; ++j) digit /= kGroupSide;
        group_offset_[u] = group_offset_[u] * layout_.dims[k] + digit % kGroupSide;
      }
    }
    // Blocks end between groups (search_group).
    const std::size_t fair_share =
        layout_.size() / (static_cast<std::size_t>(this->context_.threads) * kBlocksPerThread);
    const auto block_points = static_cast<std::uint32_t>(
        std::clamp<std::size_t>(fair_share, kMinBlockPoints, kBlockPoints));
    blocks_.assign(1, 0);
    std::uint32_t points_in_block = 0;
    CellWalk walk(layout_, 0);
    for (std::uint32_t c = 0; c < layout_.cells(); ++c) {
      const Cell<Dim> cell = cell_of(walk);
      walk.next();
      points_in_block += layout_.cell_start[c + 1] - layout_.cell_start[c];
      if (points_in_block >= block_points &&
          (c + 1 == layout_.cells() || !same_parent(cell, cell_of(walk)))) {
        blocks_.push_back(c + 1);
        points_in_block = 0;
      }
    }
    if (blocks_.back() != layout_.cells()) {
      blocks_.push_back(static_cast<std::uint32_t>(layout_.cells()));
    }
  }

  GridGeometry<Dim> grid_;  ///< the lattice of this engine (edge r / subdivision)
  CellListLayout<Dim> layout_;
  BlockFilterFn<Dim> filter_ = nullptr;
  std::vector<std::uint32_t> blocks_;  ///< blocks_[b] .. blocks_[b+1]: the cells of block b
  /// The stencil offsets as distances in the dense lattice lookup (x fastest).
  std::array<std::int64_t, kStencil> dense_offset_{};
  /// The union cells of a group as distances in the dense lattice lookup from its first (x
  /// fastest).
  std::array<std::int64_t, kGroupCells> group_offset_{};
  int stencil_size_ = 0;
  CellListSpare<Dim> spare_;  ///< update()'s work arrays, reused step after step
  UpdateKind last_update_ = UpdateKind::rebuilt;
};

}  // namespace

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_cell_list(const Context<Dim, T>& context) {
  return std::make_unique<CellList<Dim, T>>(context);
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template std::unique_ptr<EngineBase<D, T>> make_cell_list(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
