// cell_list: the default engine.
//
// Points are reordered by cell along a Z-order curve into a float structure-of-arrays copy
// (cell_list_layout.hpp). A search walks the cells; each cell gathers its own points and then the
// contiguous ranges of its 3^Dim stencil (merging ranges that touch) once, then the points of the
// cell are tested against them kBlockQueries at a time with a SIMD block filter. On 3D lattices of
// one float frame with the dense array (most dense data), cells are sorted by column instead (the
// cells of one (x, y), then z), and searches (counts, lists, rows, and pairs once but for pairs
// with distances) test steps of one or two cells of a column against the 9 runs of the layout
// their stencil makes, where the points lie, with no gather (search_columns). Other full-stencil
// searches (neighbor lists) take the cells of one parent cell together (search_group): their
// stencils share most cells, so the union is looked up once and gathered in two copies, one per
// offset along x, arranged so that each cell's stencil is one contiguous run per row along y; on
// dense data, points are sorted by slab (half a cell along the last axis) within their cells, and
// a slab's stencil leaves out the slabs of the cells below and above that lie beyond r.
// Candidates whose float distance falls
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
// Stencil cells are found through the layout's direct lookup (its dense array, or column_slots in
// column order) or, on mostly empty lattices, its block table: one probe per 64-cell tile the
// stencil meets (CellListLayout::for_each_cell_in_box).
//
// Files: this header holds the engine class and the cell search that every query inlines
// (search_block, search_group, search_cell, the gather and the filter loop); the queries are
// defined by purpose in cell_list.cpp (indexing, update, the factory), cell_list_lists.cpp
// (counts and neighbor lists), cell_list_pairs.cpp (pairs) and cell_list_cross.cpp (ball and
// cross queries), each of which instantiates its own members for every dimension and type.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "spatialhash/types.hpp"

#include "../engine_base.hpp"
#include "../exact.hpp"
#include "../growable_buffer.hpp"
#include "../index_vector.hpp"
#include "../simd/block_filter.hpp"
#include "cell_list_layout.hpp"
#include "chunk_copy.hpp"
#include "lattice_density.hpp"

namespace spatialhash::detail {

/// Helper types of CellList's cell search.
namespace cell_search {

/// A contiguous run of sorted positions (or of gathered candidates) to test.
using Range = CandidateRun;

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

}  // namespace cell_search

/// The default engine (see the comment at the top of this file).
template <int Dim, class T>
class CellList final : public EngineBase<Dim, T> {
 public:
  using Base = EngineBase<Dim, T>;
  using typename Base::Position;
  using typename Base::Queries;
  using CellWalk = typename CellListLayout<Dim>::CellWalk;
  /// The cell search's helper types (cell_search above), by their short names.
  using Range = cell_search::Range;
  template <class Item>
  using Buffer = cell_search::Buffer<Item>;
  template <int D>
  using Gathered = cell_search::Gathered<D>;
  template <int D>
  using CellWork = cell_search::CellWork<D>;
  /// Largest stencil: 5^Dim cells (cells of edge r/2).
  static constexpr int kStencil = Dim == 2 ? 25 : 125;
  /// Points per block (the unit of parallel work) at most. Smaller inputs get smaller blocks, so
  /// that each thread has about kBlocksPerThread of them and the dynamic schedule evens out
  /// blocks of uneven work (clustered points), down to kMinBlockPoints.
  static constexpr std::uint32_t kBlockPoints = 4096;
  static constexpr std::uint32_t kBlocksPerThread = 16;
  static constexpr std::uint32_t kMinBlockPoints = 256;
  /// Cells sampled by estimated_entries(), always within [kMinSampleCells, kMaxSampleCells]: for
  /// EstimateUse::regions one in kSampleShare up to 4096 cells, 4 sqrt(cells) beyond (the two
  /// meet at 256 samples); for EstimateUse::room sqrt(cells) from 256 cells (one in kSampleShare
  /// below): a quarter of regions' samples from 4096 to 65536 cells, W2's 140k cells at 1M points
  /// 374 against 1024.
  static constexpr std::size_t kSampleShare = 16, kMinSampleCells = 32, kMaxSampleCells = 1024;
  /// Cross queries: the key pass works in chunks of kKeyChunk queries; the queries off the lattice
  /// are left out before the sort when they are more than one in kCompactBelow.
  static constexpr std::size_t kKeyChunk = 4096, kCompactBelow = 8;
  /// A group (search_group): the cells of one parent cell; their stencils' union is kGroupSide
  /// cells along each axis.
  static constexpr int kGroupSide = 4;
  static constexpr int kGroupCells = Dim == 2 ? 16 : 64;
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
  /// How far past the end of a column step's run its search prefetches (search_columns): a
  /// cache line of floats or ids, so the line after the one the run ends in (32 measured the
  /// same).
  static constexpr std::uint32_t kColumnPrefetch = 16;
  /// Cells per radius when Options::cell_subdivision is 0 (measured: docs/benchmarks.md).
  static constexpr int kDefaultSubdivision = 1;
  /// update() rebuilds when its sample (one point in 128, from 16384 points) shows any point that
  /// changed cell, and patches when the sample showed none and its exact count finds at most 4%
  /// (CellListLayout::update): with the build's sort and carried gather a patch took longer than
  /// a rebuild whenever points had changed cell, 1.3-1.6x at 100k-1M points (docs/benchmarks.md,
  /// "Update vs rebuild" and the eightieth session), and since the eighty-first session's faster
  /// patch still 1.0-1.2x (1 and 2 threads), but less than a rebuild after the first step's
  /// full pass. With the eighty-second session's key pass, patching up to a sampled 2% made steps
  /// 1.1-1.2x faster on two threads (points in spatial order) but 1.05-1.3x slower on one.
  static constexpr typename CellListLayout<Dim>::UpdateLimits kUpdateLimits{0.0, 0.04};
  /// Builds and updates of fewer points run on one thread (for_build()). Measured on 2 threads
  /// against 1 (docs/benchmarks.md, seventy-third session): 1000 points 32 against 22 us, 3000
  /// points 51 against 49, 5000 points 70 against 77: a build's dozen parallel regions cost a
  /// team of two more than they share out below a few thousand points. Searches keep every
  /// thread: their lists divide from 1000 points on (51 against 74 us).
  static constexpr std::size_t kParallelBuildPoints = 4096;
  /// Searches of the index's own points (counts, lists, rows, pairs) run on one thread below this
  /// many points (own_search_threads()). Measured on 2 threads against 1 (docs/benchmarks.md,
  /// seventy-third session): lists of 50 points 9.2 against 5.5 us, 200 points 18.0 against
  /// 17.1, 500 points 35.8 against 38.5; with sleeping workers (OMP_WAIT_POLICY=passive) a
  /// region of two threads costs about 100 us more.
  static constexpr std::size_t kParallelSearchPoints = 256;
  /// Empty cells added around the bounding box on every side, so that points drifting out of it
  /// stay on the lattice and update() can keep it.
  static constexpr std::int64_t kPaddingCells = 1;

  explicit CellList(const Context<Dim, T>& context) : Base(context) {
    filter_ = best_block_filter<Dim>(context.simd);
    std::tie(grid_, layout_) = index_points(context);  // only update() keeps the work arrays
    make_blocks();
  }

  Engine kind() const override { return Engine::cell_list; }

  /// Keeps the lattice while every point stays on it: the layout is refreshed or patched in
  /// place (CellListLayout::update); otherwise, or when too many points changed cell, rebuilds.
  void update(const Context<Dim, T>& context) override;

  UpdateKind last_update() const override { return last_update_; }
  /// A point set of another size is rebuilt (CellListLayout::update() gives up on it), into the
  /// arrays kept from the last update as any rebuild.
  bool updates_any_size() const override { return true; }

  double cell_edge() const override { return grid_.cell_size; }

  void pairs(double radius, PairSink& sink) const override;
  void pairs_folded(double radius, const ImageFold& fold, PairSink& sink) const override;

  void ball(const Position& center, double radius, HitSink& sink) const override;

  /// As ball(), but sure neighbors cost no double distance (nor a read of the caller's points).
  void ball_indices(const Position& center, double radius,
                    std::vector<index_t>& out) const override;

  /// The full-stencil search of neighbor lists (search_group) with the count-only filter: each
  /// point's count is written once, by sorted position, then put in the caller's order. It tests
  /// twice the candidates of a half stencil, but needs no crediting of both points and no count
  /// array per thread (memory and a merge that grew with the threads): as fast or faster than the
  /// half stencil on every workload, 1.1-2x on 2D and small sets. Cells of edge r/2 have no
  /// groups and search their full 125-cell stencil cell by cell: 1.1-1.6x slower than the half
  /// stencil there, in a mode 3-28x slower than the default anyway (docs/benchmarks.md).
  void neighbor_counts(double radius, std::span<index_t> counts) const override;
  /// Counts and full lists by a rule: the same searches, the rule deciding the candidates the
  /// float band leaves undecided (Search::rule).
  bool takes_pair_rule() const override { return true; }
  /// Pairs with images folded: the one-search pair path, each block's pairs folded before they
  /// are written out (simd/pair_fold.hpp); the callback search folds each pair as it is found.
  bool folds_images() const override { return true; }
  void pair_output_folded(double radius, const ImageFold& fold, PairOutput& out,
                          ResultVector<double>* distances) const override;
  void neighbor_counts_by_rule(double radius, PairRule rule,
                               std::span<index_t> counts) const override;

  void neighbor_lists(const ListRequest& request, NeighborLists& lists) const override;
  /// Every list query goes through the collectors, which sort rows as they store them.
  bool sorts_rows() const override { return true; }
  /// Half lists by the half stencil: each point's row holds the neighbors after it in the
  /// layout's order (what pairs() searches), collected like full lists.
  bool searches_half_lists() const override { return true; }
  /// The same rows, each written once where its thread found room (collect_rows_unordered.hpp).
  void neighbor_rows(const ListRequest& request, NeighborRows& rows) const override;

  void cross_lists(Queries queries, const ListRequest& request,
                   NeighborLists& lists) const override;
  /// The same rows, each written once where its thread found room (collect_rows_unordered.hpp).
  void cross_rows(Queries queries, const ListRequest& request, NeighborRows& rows) const override;

  /// Every pair once into `out`. A resizable output (the library's own) gets one search: each
  /// block's pairs are collected in a per-thread buffer, then claim the next free range of the
  /// output (an atomic cursor) and are copied there. The output is allocated from a sampled
  /// estimate plus a margin; blocks that would land past it wait until the parallel search is
  /// over and the output has been resized to the true count. Any other output gets a count
  /// search first (count-only filter), then a second search writes each block at its offset.
  void pair_output(double radius, PairOutput& out) const override;

  /// pair_output() into the list. With distances, the pairs are searched as sorted positions and
  /// each point's pairs measured as they are found, from a copy of the caller's points in sorted
  /// order (as lists with distances are: row_distances.hpp), where a pair's two points lie near
  /// each other in memory instead of anywhere in the caller's order. A pass over the finished
  /// pairs at the caller's indices was slower (W1, 1M shuffled points, 1 thread, the same
  /// distance kernel: 196-225 ms against 146-165 ms; docs/benchmarks.md).
  PairList pair_list(double radius, bool with_distances) const override;

 private:
  // ---- What a search is asked for ----

  /// The thresholds of one search.
  struct Search {
    FloatBand band;
    double r2;
    /// Decides the candidates the band leaves undecided in place of the distance rule, in the
    /// searches whose emit callback is a ByRule (neighbor_counts_by_rule, ListRequest::rule).
    const PairRule* rule = nullptr;
    /// For searches of sorted positions on a column-order layout: the identity (positions[s] ==
    /// s, one per point), which the column search reads as the candidates' ids in place of the
    /// layout's `order`, so that it reports sorted positions without gathering. Null otherwise.
    const std::uint32_t* positions = nullptr;
    /// The rows wanted (ListRequest::rows_wanted; the counts asked for): the column search skips
    /// a step whose points all lie at or above it, each of their rows empty (any_row_wanted).
    std::size_t rows_wanted = std::numeric_limits<std::size_t>::max();
  };

  /// What a skipped row's emit gets as its (empty) row: the collectors may read a row's slack.
  static constexpr std::array<std::uint32_t, kFilterSlack> kNoRow{};

  /// Whether the sorted positions `queries` hold a point below search.rows_wanted.
  bool any_row_wanted(Range queries, const Search& search) const {
    if (search.rows_wanted >= layout_.size()) return true;
    for (std::uint32_t s = queries.begin; s < queries.end; ++s) {
      if (layout_.order[s] < search.rows_wanted) return true;
    }
    return false;
  }

  /// The emit callback of a search whose borderline candidates search.rule decides (not null).
  /// The rule's call is compiled into those searches only, each a template instance of its own
  /// (count_search<true>, full_lists<true>): the searches without a rule stay as they were.
  struct RuleTag {};
  template <class Emit>
  struct ByRule : RuleTag {
    Emit emit;
    template <class... Args>
    void operator()(Args&&... args) {
      emit(std::forward<Args>(args)...);
    }
  };
  template <class Emit>
  static constexpr bool kByRule = std::is_base_of_v<RuleTag, std::remove_cvref_t<Emit>>;

  /// Which stencil a cell search covers: all cells around it, or only those after it in memory
  /// order (each pair of cells once).
  enum class Stencil { full, half };

  /// What a cell search reports for a neighbor: its original index, its sorted position, or
  /// nothing (a count search: emit gets each point's count and a null row, and the filter skips
  /// the sure rows' compress and store; border candidates come as sorted positions).
  enum class Ids { original, sorted_position, none };

  // ---- Indexing (cell_list.cpp) ----

  /// Cells of edge r / subdivision when the lattice allows it, else of edge r.
  static GridGeometry<Dim> choose_grid(const Context<Dim, T>& context);

  /// The lattice moved kPaddingCells cells down and widened by twice that on every axis that
  /// stays within the lattice limit. Any origin keeps the lattice exact (grid_geometry.hpp).
  static GridGeometry<Dim> padded(GridGeometry<Dim> grid);

  /// Reorders the points by cell. With the default lattice, sparse data is indexed on coarser
  /// cells: any edge >= r keeps the 3^Dim stencil exact, and a few points per stencil cell beat
  /// a lookup per nearly empty cell (each a cache miss once the cell table outgrows the caches).
  /// Sparse means fewer than kSparse points per stencil cell: around the points drawn by
  /// sample_density, decided before any layout is built, or else around an eighth of the built
  /// layout's cells (64 to 512), each cell weighted evenly, which finds sparse backgrounds around
  /// dense clusters, and builds a second time when it does. Every build writes into `spare`'s
  /// storage, where there is one (update(); CellListLayout::build).
  static std::pair<GridGeometry<Dim>, CellListLayout<Dim>> index_points(
      const Context<Dim, T>& context, CellListSpare<Dim>* spare = nullptr);

  /// Below this many points per stencil cell the default lattice is coarsened.
  static constexpr double kSparse = 1.5;
  /// A coarser lattice aims at this many points per stencil cell, its edge at most
  /// kMaxCoarsening times r (16 before the seventy-fourth session: 1M uniform points with 1e-4
  /// neighbors each, lists 202 ms there against 48 on cells of 50 r).
  static constexpr double kTargetPerStencilCell = 3.0, kMaxCoarsening = 64.0;
  /// sparse_lattice recounts a sparse sample's stencils on the lattice it chose, at most kRecounts
  /// times, rescaling the edge by at most kMaxRecountStep each time, until a count finds
  /// kRecountFound others.
  static constexpr int kRecounts = 4;
  static constexpr double kMaxRecountStep = 4.0;
  static constexpr std::uint64_t kRecountFound = 64;
  /// No limit on sample_density's stencil count.
  static constexpr double kNoLimit = std::numeric_limits<double>::infinity();

  /// How much coarser than r a lattice whose stencils hold `per_stencil_cell` points per cell
  /// should be: (kTargetPerStencilCell / per_stencil_cell)^(1 / Dim), as if the points per cell
  /// grew with the cell's volume.
  static double coarsening_for(double per_stencil_cell) {
    return std::pow(kTargetPerStencilCell / per_stencil_cell, 1.0 / Dim);
  }

  /// The coarse lattice for points whose drawn sample sees `per_stencil_cell` points per stencil
  /// cell (below kSparse) on edge r, recounted as kRecounts says; none when too wide.
  static std::optional<GridGeometry<Dim>> sparse_lattice(const Context<Dim, T>& context,
                                                         const DrawnPoints<Dim>& drawn,
                                                         double per_stencil_cell);

  /// The padded lattice of cells of edge r times `coarsening`, clamped to [1, kMaxCoarsening];
  /// none when it would be too wide.
  static std::optional<GridGeometry<Dim>> coarser(const Context<Dim, T>& context,
                                                  double coarsening);

  /// The threads a search of the index's own points takes: one below kParallelSearchPoints
  /// points, else the context's. Cross queries keep the context's: their work is the queries'.
  int own_search_threads() const {
    return layout_.size() < kParallelSearchPoints ? 1 : this->context_.threads;
  }

  /// `context` with the threads a build or update of its points takes: one below
  /// kParallelBuildPoints points, else the context's own.
  static Context<Dim, T> for_build(const Context<Dim, T>& context) {
    Context<Dim, T> build = context;
    if (context.points.size() < kParallelBuildPoints) build.threads = 1;
    return build;
  }

  /// Splits the cells into blocks (the unit of parallel work) of kMinBlockPoints to kBlockPoints
  /// points, about kBlocksPerThread per thread, and lists the stencil's cell offsets for the
  /// lattice's reach.
  void make_blocks();

  /// The rounding band for float coordinates relative to the origin of one float frame
  /// (cell_list_layout.hpp), for searches whose stencil lies in one frame (frame_search()):
  /// coordinates within the lattice's extent, queries up to the stencil reach outside the
  /// bounding box, and within a frame's extent of its origin (plus the reach). Points and queries
  /// of one frame are taken relative to the same double (frame_origin(): one expression, and the
  /// library is compiled without contraction, -ffp-contract=off), so that origin's own rounding
  /// cancels in their differences.
  FloatBand band_for(double radius) const;

  /// What an estimate of the output (estimated_entries()) sizes, which decides how close it must
  /// come. `room`: outputs that take a slower path, never a wrong one, past their room, reserved
  /// with a wide margin: the row buffers (collect_rows.hpp: twice a thread's share), the pairs
  /// and cross queries' rows (room_for_estimate(): a quarter more and a margin). `regions`: the
  /// regions of lists written in place, whose margin is a sixteenth (collect_rows_in_place.hpp):
  /// an estimate a few percent low there makes the lists give up and count first.
  enum class EstimateUse { room, regions };

  /// The number of neighbor-list entries (full stencil) or pairs (half) of `rows` rows, as their
  /// mean per point estimated from a count search of sampled cells, in parallel: cells picked in
  /// proportion to their points (the cells holding evenly spaced sorted positions), as many as
  /// kSampleShare's comment says for `use`, and at most `max_samples` (0: no sample, the estimate
  /// is 0). A fixed 256 cells, searched on one thread, were a quarter of the cells of 10k points
  /// and a fifth of their lists' time, and 0.07 ms of every cross query of a single position; at
  /// most 256 missed W3's 1M-point lists by -7% to +23% over eight seeds (an estimate 7% low made
  /// low_memory's lists give up and count first: twice the time), 1024 by -5% to +4%; cells picked
  /// in proportion to their points, W3 at 100k by -3% to +2% against -11% to +28%, at 1M by -3% to
  /// +2% (docs/benchmarks.md). The search of a sample costs about samples / cells of the whole
  /// search: a sixteenth below 4096 cells for `regions`; `room`'s sqrt(cells) samples cost 1.8% of
  /// a search of 10k sparse points (W6) instead of 6%, and missed by at most -19% to +25% (W6 at
  /// 10k) and -13% to +11% (W3 at 100k) over eight seeds, within the room they size.
  std::size_t estimated_entries(const Search& search, Stencil stencil, std::size_t rows,
                                EstimateUse use, std::size_t max_samples = kMaxSampleCells) const;

  // ---- Counts and lists (cell_list_lists.cpp) ----

  /// The full-stencil search of every block, its rows collected into `lists`: CSR lists
  /// (collect_rows.hpp) or NeighborRows (collect_rows_unordered.hpp).
  /// Rows with distances (unsorted) are searched as sorted positions and measured from a copy of
  /// the caller's points in sorted order (RowPositions, row_distances.hpp): a row's neighbors then
  /// lie side by side in memory instead of scattered over the caller's order (1M uniform points in
  /// random order, 2 threads: 130 neighbors per point 1.27x as fast, 30 and 60 unchanged;
  /// docs/benchmarks.md).
  /// With kRule, by request.rule (ByRule).
  template <bool kRule, class Lists>
  void full_lists(const ListRequest& request, Lists& lists) const;

  /// The caller's coordinates in sorted order: point order[p] at p, Dim values per point.
  WorkVector<T> sorted_copy() const;
  /// `search` for a search of sorted positions (Ids::sorted_position): on a column-order layout
  /// with Search::positions set to `identity`, filled here (4 bytes a point for the call), so that
  /// the column search reports positions where the points lie instead of gathering its runs.
  Search for_positions(const Search& search, WorkVector<std::uint32_t>& identity) const;

  // ---- Pairs (cell_list_pairs.cpp) ----

  /// The callback search of pairs() and, with kFold, of pairs_folded(): the pairs `fold` keeps,
  /// mapped, each image's pair measured only when kept (the periodic index forwarded every pair
  /// through a second batch before).
  template <bool kFold>
  void pairs_into(double radius, const ImageFold& fold, PairSink& sink) const;

  /// The one-search path of pair_output() (resizable outputs), and of pair_list() with
  /// distances: then `distances` (the list's) gets each pair's distance at the pair's place.
  /// With `fold`, only the pairs it keeps, mapped (ImageFold), and their distances.
  void pairs_in_one_search(const Search& search, PairOutput& out,
                           ResultVector<double>* distances = nullptr,
                           const ImageFold* fold = nullptr) const;

  /// Appends the pairs of point `a` with `ids[0 .. count)`, each as (smaller, larger); with
  /// `order` set, the ids are sorted positions, point order[id].
  static void append_pairs(index_t a, const std::uint32_t* ids, std::uint32_t count,
                           const index_t* order, Buffer<Pair>& pairs);

  /// The count-first path of pair_output() (fixed-size outputs): block counts, then each block
  /// written at its offset by a second search that repeats the first exactly.
  void pairs_counted_first(const Search& search, PairOutput& out) const;

  // ---- Ball and cross queries (cell_list_cross.cpp) ----

  /// Queries sorted by cell (Z-order), so that each cell's stencil is gathered once for all its
  /// queries and tested against them kBlockQueries at a time, as in neighbor_lists(); the rows
  /// collected into `lists`: CSR lists (collect_rows.hpp) or NeighborRows
  /// (collect_rows_unordered.hpp). No distances (the collectors' are between indexed points).
  template <class Lists>
  void cross_search(Queries queries, const ListRequest& request, Lists& lists) const;

  /// Calls emit(ids) with the indices of every point within `radius` of `center`, a span at a
  /// time: the stencil's ranges through the filter with one query, packed up to kMaxRuns runs and
  /// a chunk of candidates per filter call (one call per range cost a ball query about a third
  /// of its time), on the stack (nothing allocated). Borderline candidates are decided in double
  /// before they are emitted.
  template <class Emit>
  void scan_ball(const Position& center, double radius, Emit&& emit) const;

  /// Searches `count` query positions, all in lattice cell `cell`: queries[query_of[0 .. count)],
  /// reported to emit as slots first_slot, first_slot + 1, ... (no self exclusion; null rows
  /// with count_only).
  template <class Emit>
  void search_queries(const Cell<Dim>& cell, Queries queries, const index_t* query_of,
                      std::uint32_t count, std::uint32_t first_slot, bool count_only,
                      const Search& search, CellWork<Dim>& work, Emit&& emit) const;

  /// Tests the query positions queries[query_of[0 .. count)], all in lattice cell `cell`, against
  /// the gathered candidates `candidates` (runs of work.g), reporting them to emit as slots
  /// first_slot, ... (null rows with count_only).
  template <class Emit>
  void filter_queries(const Cell<Dim>& cell, Queries queries, const index_t* query_of,
                      std::uint32_t count, std::uint32_t first_slot,
                      const CandidateRuns& candidates, bool count_only, const Search& search,
                      CellWork<Dim>& work, Emit&& emit) const;

  // ---- The cell search, which every query inlines (here) ----

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
        Search open{FloatBand{-kInf, kInf}, search.r2};
        open.rule = search.rule;
        return open;
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

  /// search_cell() for every cell of block b, in order: in column order by search_columns()
  /// but for a half search of sorted positions without Search::positions (the column search
  /// would gather a step's whole union, 36 cells for 2, where search_cell gathers a half stencil,
  /// about 14 per cell; measured no faster, docs/benchmarks.md, fifty-third session; with the
  /// identity it gathers nothing), full stencils in Z-order by groups (search_group()).
  template <class Emit>
  void search_block(std::int64_t b, Stencil stencil, Ids ids, const Search& search,
                    CellWork<Dim>& work, Emit&& emit) const {
    if (layout_.columns &&
        (stencil == Stencil::full || ids != Ids::sorted_position || search.positions != nullptr)) {
      search_columns(b, stencil, ids, search, work, emit);
      return;
    }
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
  /// stencils together cover 4^Dim cells, looked up once and gathered in copies, one per offset
  /// of the group's cells along x (GroupGather), so that each cell's stencil is one contiguous run
  /// per row along y (3 runs in 3D, 1 in 2D). A full 3D group gathers 12 cells per cell. A group
  /// of dense cells (slabs_for_group) is searched slab by slab: each cell is gathered slab after
  /// slab, and the points of slab h of a cell meet only the slabs >= h of the cells below and <=
  /// h of the cells above along the last axis (the others lie more than r away: W3 tests 15% fewer
  /// candidates), still one run per row. A count search (Ids::none) reports counts with null rows.
  template <class Emit>
  void search_group(std::uint32_t first, std::uint32_t last,
                    const std::array<Cell<Dim>, kParentCells>& cells, Ids ids,
                    const Search& group_wide, CellWork<Dim>& work, Emit&& emit) const {
    const Search search = group_search(group_wide, cells[0]);
    GroupCopies needs{};
    for (std::uint32_t c = first; c < last; ++c) needs[copy_of(cells[c - first])] = true;
    const int slabs = slabs_for_group(first, last);
    const GroupGather group = gather_group(cells[0], needs, slabs, ids, work.g);
    for (std::uint32_t c = first; c < last; ++c) {
      const Cell<Dim> cell = cells[c - first];
      for (int h = 0; h < slabs; ++h) {
        const Range slab = part_of(c, h, slabs);  // no structured binding: the lambdas use it
        const std::uint32_t slab_first = slab.begin;
        const std::uint32_t slab_end = slab.end;
        if (slab_first == slab_end) continue;
        const std::uint32_t own = group.own_of(cell, h);
        const CandidateRuns stencil = group.stencil_of(cell, h);
        filter_gathered(
            work, ids == Ids::none, slab_end - slab_first, search, stencil,
            [&](std::uint32_t p0, QueryBlock<Dim>& block) -> const CandidateRuns& {
              block.after = false;
              for (int q = 0; q < block.count; ++q) {
                for (int k = 0; k < Dim; ++k) {
                  block.position[q][k] = layout_.axis[k][slab_first + p0 + q];
                }
                block.skip[q] = own + p0 + static_cast<std::uint32_t>(q);
              }
              return stencil;
            },
            [&](std::uint32_t p, std::uint32_t id) {
              const index_t other = ids == Ids::original ? id : layout_.order[id];
              return border_within<kByRule<Emit>>(search, layout_.order[slab_first + p], other);
            },
            [&](std::uint32_t p, const std::uint32_t* row, std::uint32_t kept) {
              emit(slab_first + p, row, kept);
            });
      }
    }
  }

  /// Search of the cells of block b on a layout in column order
  /// (CellListLayout::columns: 3D, cells of edge r, one float frame). The cells of a column are
  /// taken in steps along z: two cells z, z + 1 together, whose stencils' union is z - 1 .. z + 2
  /// of the 9 columns around them, or, on cells with slabs (a cell of at least kSlabMinPoints
  /// points on a layout with slabs), one slab h of one cell, whose stencil runs in each column from
  /// slab h of cell z - 1 to slab h of cell z + 1 (the slabs beyond lie more than r away:
  /// GroupGather). Either way the stencil is one contiguous run of the layout per column, at most
  /// 9 runs, and the step's queries are tested against them where they lie: no gather. A filter
  /// block of a pair's queries that all lie in one of its cells tests only that cell's 27-cell
  /// part of the runs (z - 1 .. z + 1 or z .. z + 2); a block with queries of both cells, the
  /// whole runs (a third more candidates). The filter reads the layout's coordinates and
  /// original indices (`order`) in place; a search for sorted positions (Ids::sorted_position)
  /// reads the identity (Search::positions) in place of `order`, or without it gathers the runs
  /// first (pairs and lists with distances 1.02-1.8x faster in place, docs/benchmarks.md,
  /// seventy-seventh session). A run's cells come from column_slots: a few loads per column and
  /// step, no search. A half search (pairs once; with sorted positions only in place:
  /// search_block) tests each block against the candidates after its first query (the runs clipped
  /// there) and each query against those after itself: a pair is found from its point at the lower
  /// sorted position, whose runs hold the other. Against the gathered half stencil of search_cell
  /// (`bench/alternate.py`, pairs, 1M points, 7 rounds): W2 1.07-1.17x, W3 1.02-1.14x, W1
  /// 1.09-1.15x (docs/benchmarks.md, fifty-third session). The full search against the group
  /// search on the same data (in-process A/B, 1M points, 2 threads): counts 1.08-1.27x as fast on
  /// W1 and W2, rows and lists up to 1.1x; steps of one cell (27 cells' candidates, twice the
  /// steps) measured the same as steps of two, and each cell of a pair in blocks of its own (no
  /// block across the two) 0.93-0.95x the blocks across on W2's counts; the cells' parts of the
  /// runs per block, 1.04-1.06x the whole runs there (docs/benchmarks.md, fifty-first and
  /// fifty-second sessions).
  template <class Emit>
  void search_columns(std::int64_t b, Stencil stencil, Ids ids, const Search& search,
                      CellWork<Dim>& work, Emit&& emit) const {
    if constexpr (Dim == 3) {
      const std::uint32_t begin = blocks_[b], end = blocks_[b + 1];
      const bool gathered = ids == Ids::sorted_position && search.positions == nullptr;
      const bool half = stencil == Stencil::half;  // never gathered: search_block()
      const auto& cell_z = layout_.cell_z;
      const auto& starts = layout_.cell_start;
      constexpr int kColumns = 9;
      // The neighbouring columns with cells: where each one's slots begin (column_slots, which
      // also find the cells within a range of z: no search); `center` is the walk's own column.
      std::array<const std::uint32_t*, kColumns> column{};
      int columns = 0, center = 0;
      std::size_t current = ~std::size_t{0};
      const auto nz = static_cast<std::size_t>(layout_.dims[Dim - 1]);
      SoaView<Dim> in_place;
      for (int k = 0; k < Dim; ++k) in_place.axis[k] = layout_.axis[k].data();
      in_place.ids = ids == Ids::sorted_position ? search.positions : layout_.order.data();
      CellWalk walk(layout_, begin);
      for (std::uint32_t c = begin; c < end;) {
        const auto at = walk.coord();
        const std::size_t own_column = layout_.column_of(at);
        if (own_column != current) {
          current = own_column;
          columns = 0;
          for (int dy = -1; dy <= 1; ++dy) {
            for (int dx = -1; dx <= 1; ++dx) {
              const std::int64_t x = std::int64_t{at[0]} + dx, y = std::int64_t{at[1]} + dy;
              if (x < 0 || y < 0 || x >= layout_.dims[0] || y >= layout_.dims[1]) continue;
              const std::uint32_t* slots =
                  layout_.column_slots.data() +
                  static_cast<std::size_t>(x + layout_.dims[0] * y) * (nz + 1);
              if (slots[0] == slots[nz]) continue;  // no cells
              if (dx == 0 && dy == 0) center = columns;
              column[static_cast<std::size_t>(columns++)] = slots;
            }
          }
        }
        const std::int64_t z = at[2];
        const int slabs = layout_.slabs() > 1 && starts[c + 1] - starts[c] >= kSlabMinPoints
                              ? layout_.slabs()
                              : 1;
        // The next cell joins the step when it is the one above in the same column (whose cells
        // end where its last slot says).
        std::uint32_t last = c + 1;
        if (slabs == 1 && last < end && last < column[static_cast<std::size_t>(center)][nz] &&
            cell_z[last] == at[2] + 1) {
          ++last;
        }
        // The stencil's z range, z_low .. z_high: a cell below and above the step where the
        // lattice has them.
        const std::size_t top = cell_z[last - 1];
        const bool below = z > 0, above = top + 1 < nz;
        const std::size_t z_low = static_cast<std::size_t>(z) - (below ? 1 : 0);
        const std::size_t z_high = top + (above ? 1 : 0);
        for (int h = 0; h < slabs; ++h) {
          const Range queries = slabs == 1 ? Range{starts[c], starts[last]} : part_of(c, h, slabs);
          if (queries.begin == queries.end) continue;
          if (!any_row_wanted(queries, search)) {
            for (std::uint32_t s = queries.begin; s < queries.end; ++s) emit(s, kNoRow.data(), 0);
            continue;
          }
          CandidateRuns runs;
          // A step of two cells: the runs of a block of queries of the lower cell (cells z - 1 ..
          // z + 1 of each column: the cell above those is more than r from any of its points) and
          // of the upper cell (z .. z + 2), as the filter reads them: in place, or where gather()
          // puts them (the runs one after another). A block with queries of both tests the whole
          // runs.
          const bool pair = last == c + 2;
          CandidateRuns lower_runs, upper_runs;
          std::uint32_t gathered_at = 0;
          // Candidates in the runs before the own column's, and where the own column's begins.
          std::uint32_t before_center = 0, center_from = 0;
          for (int i = 0; i < columns; ++i) {
            // The column's cells within z_low .. z_high.
            const std::uint32_t* slots = column[static_cast<std::size_t>(i)];
            const std::uint32_t low = slots[z_low], high = slots[z_high + 1];
            if (low == high) continue;
            std::uint32_t from = starts[low], to = starts[high];
            if (pair) {
              const std::uint32_t at = gathered ? gathered_at : from;  // where `from` is read
              lower_runs.add(at, at + (starts[slots[z + 2]] - from));
              upper_runs.add(at + (starts[slots[z]] - from), at + (to - from));
            }
            if (slabs > 1) {
              // Only slabs >= h of the cell below, <= h of the cell above, where they exist.
              if (below && slots[z_low + 1] > low) from = layout_.slab_begin(low, h);
              if (above && high > slots[z_high]) to = layout_.slab_begin(high - 1, h + 1);
            }
            // The next step's run in this column begins where this one ends: the line after
            // the one that holds `to` prefetched, in each array the filter reads (W2, 1M points,
            // 2 threads: counts 1.05-1.11x, rows 1.03x; docs/benchmarks.md, fifty-third
            // session).
            for (int k = 0; k < Dim; ++k) {
              __builtin_prefetch(layout_.axis[k].data() + to + kColumnPrefetch);
            }
            if (ids == Ids::original) {
              __builtin_prefetch(layout_.order.data() + to + kColumnPrefetch);
            }
            if (i < center) before_center += to - from;
            if (i == center) center_from = from;
            gathered_at += to - from;
            runs.add(from, to);
          }
          // The candidate index of the step's first query: its sorted position in place, its
          // place in the gathered runs otherwise.
          std::uint32_t own = queries.begin;
          if (gathered) {
            gather(std::span<const Range>(runs.run.data(), static_cast<std::size_t>(runs.count)),
                   work.g, ids);
            own = before_center + (queries.begin - center_from);
            runs = all_gathered(work.g);
          }
          const std::uint32_t split = pair ? starts[c + 1] - queries.begin : 0;
          CandidateRuns later;
          filter_runs(
              work, gathered ? work.g.view() : in_place, ids == Ids::none,
              queries.end - queries.begin, search, runs,
              [&](std::uint32_t p0, QueryBlock<Dim>& block) -> const CandidateRuns& {
                block.after = half;
                for (int q = 0; q < block.count; ++q) {
                  for (int k = 0; k < Dim; ++k) {
                    block.position[q][k] = layout_.axis[k][queries.begin + p0 + q];
                  }
                  block.skip[q] = own + p0 + static_cast<std::uint32_t>(q);
                }
                const CandidateRuns& tested =
                    !pair                                                   ? runs
                    : p0 + static_cast<std::uint32_t>(block.count) <= split ? lower_runs
                    : p0 >= split                                           ? upper_runs
                                                                            : runs;
                if (!half) return tested;
                // Pairs once: each pair from its point at the lower sorted position, so only
                // the candidates after the block's first query.
                later.clip(tested, own + p0 + 1);
                return later;
              },
              [&](std::uint32_t p, std::uint32_t id) {
                const index_t other = ids == Ids::sorted_position ? layout_.order[id] : id;
                return border_within<kByRule<Emit>>(search, layout_.order[queries.begin + p],
                                                    other);
              },
              [&](std::uint32_t p, const std::uint32_t* row, std::uint32_t kept) {
                emit(queries.begin + p, row, kept);
              });
        }
        for (; c < last; ++c) walk.next();
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

  /// Which offsets of a group's cells along the axes before the last (copy_of()) its search
  /// serves: gather_group() gathers the parts of the union their stencils need.
  using GroupCopies = std::array<bool, kGroupCopies>;

  /// Stencil runs of a group search fewer than this many candidates apart are tested as one run
  /// (GroupGather::stencil_of): a vector of the widest filter.
  static constexpr std::uint32_t kBridge = 16;
  /// Rows of a group's union in 3D: its cells of one position along y (the second axis); 2D
  /// unions have one.
  static constexpr int kUnionRows = Dim == 3 ? kGroupSide : 1;
  /// Cells of one copy (GroupGather) at one row and one position along the last axis: 3 along x.
  static constexpr int kCopyWidth = 3;

  /// A group's gathered candidates (gather_group): the layout cell of each union cell, and where
  /// each slab of each gathered cell begins among the gathered candidates. The union is gathered
  /// in copies, one per offset of the group's cells along x (the first axis): copy p holds union
  /// columns p .. p + 2 along x. Within a copy the order is row (y, 3D), then position along the
  /// last axis, then slab, then x fastest, so that the stencil of a cell's slab h (rows of its y
  /// range, each from the slab-h part at its first position along the last axis to the slab-h
  /// part at its last, which leaves out the slabs below h of the position below and those above
  /// h of the position above) is one contiguous run per row: 3 runs in 3D, 1 in 2D. A full 3D
  /// group gathers 12 cells per cell. A copy per offset along x and y (one contiguous stencil
  /// each) gathered 18, and counted 1.05-1.09x slower; one copy in column order gathered 8, but
  /// its stencils, runs with a cell between them, took more filter vectors and gained less
  /// (docs/benchmarks.md, fiftieth session). Why the slabs left out are beyond r: a point of slab
  /// h of cell c has computed u >= c + h / slabs along the last axis, one of slab j < h of cell
  /// c - 1 has u < c - 1 + (j + 1) / slabs <= c - 1 + h / slabs; computed u more than 1 apart are
  /// more than r apart (the invariant of grid_geometry.hpp), and likewise above.
  struct GroupGather {
    std::array<std::uint32_t, kGroupCells> unit;
    int slabs = 1;
    /// Per copy: its first gathered row (union y; 0 in 2D) and the index of its first part.
    std::array<int, 2> row_low{}, copy_first{};
    /// part_begin[part_index(...)]: where a gathered part begins; the next part's entry is where
    /// it ends.
    std::array<std::uint32_t, 2 * kUnionRows * kGroupSide * kSlabs * kCopyWidth + 1> part_begin{};

    /// Index of the part holding slab j of the union cell at union x = copy + dx, row y, position
    /// z along the last axis, in copy `copy`.
    int part_index(int copy, int y, int z, int j, int dx) const {
      return copy_first[static_cast<std::size_t>(copy)] +
             (((y - row_low[static_cast<std::size_t>(copy)]) * kGroupSide + z) * slabs + j) *
                 kCopyWidth +
             dx;
    }

    /// The gathered runs of the stencil of slab h of `cell` (a cell of the group, its copy
    /// gathered); with one slab (whole cells), h = 0 is the whole stencil.
    CandidateRuns stencil_of(const Cell<Dim>& cell, int h) const {
      const auto x = static_cast<int>(cell[0] & 1);
      const auto y = Dim == 3 ? static_cast<int>(cell[1] & 1) : 0;
      const auto z = static_cast<int>(cell[Dim - 1] & 1);
      CandidateRuns runs;
      for (int dy = 0; dy < (Dim == 3 ? 3 : 1); ++dy) {
        runs.add_bridged(
            part_begin[static_cast<std::size_t>(part_index(x, y + dy, z, h, 0))],
            part_begin[static_cast<std::size_t>(part_index(x, y + dy, z + 2, h, 2) + 1)], kBridge);
      }
      return runs;
    }

    /// The gathered index of the first point of slab h of `cell` (a cell of the group): its own
    /// part, at union coordinates its offset in its parent + 1.
    std::uint32_t own_of(const Cell<Dim>& cell, int h) const {
      const auto x = static_cast<int>(cell[0] & 1);
      const auto y = Dim == 3 ? static_cast<int>(cell[1] & 1) + 1 : 0;
      const auto z = static_cast<int>(cell[Dim - 1] & 1) + 1;
      return part_begin[static_cast<std::size_t>(part_index(x, y, z, h, 1))];
    }
  };

  /// The sorted positions of part j of cell c cut into `parts` (1, whole cells, or the layout's
  /// slabs).
  Range part_of(std::uint32_t c, int j, int parts) const {
    const int step = layout_.slabs() / parts;
    return Range{layout_.slab_begin(c, j * step), layout_.slab_begin(c, (j + 1) * step)};
  }

  /// Looks up the 4^Dim union cells of the group of `cell` (lattice coordinates; may lie off the
  /// lattice) and gathers the copies (GroupGather) that the cells at the offsets `needs` use, each
  /// with the rows their stencils meet, each cell split into `slabs` slabs (1, or the layout's),
  /// with original indices or sorted positions as ids (gather()).
  GroupGather gather_group(const Cell<Dim>& cell, const GroupCopies& needs, int slabs, Ids ids,
                           Gathered<Dim>& g) const {
    GroupGather group;
    group.slabs = slabs;
    std::array<std::int64_t, Dim> base;
    bool interior = layout_.direct();
    for (int k = Dim - 1; k >= 0; --k) {
      // An arithmetic shift: the parent of a negative coordinate is below zero too.
      base[k] = 2 * (cell[k] >> 1) - 1;
      interior = interior && base[k] >= 0 && base[k] + kGroupSide <= layout_.dims[k];
    }
    if (interior) {
      const std::int64_t slot = layout_.slot_of(base);
      for (int u = 0; u < kGroupCells; ++u) {
        group.unit[u] = layout_.cell_at_slot(slot + group_offset_[u]);
      }
    } else {
      group.unit.fill(CellListLayout<Dim>::kNoCell);
      layout_.for_each_cell_in_box(base, kGroupSide,
                                   [&](int u, std::uint32_t found) { group.unit[u] = found; });
    }
    // The parts as ranges of the layout, touching ones merged.
    std::array<Range, 2 * kUnionRows * kGroupSide * kSlabs * kCopyWidth> ranges;
    int count = 0, part = 0;
    std::uint32_t at = 0;
    for (int copy = 0; copy < 2; ++copy) {
      // The rows the copy's cells need: y offset o needs rows o .. o + 2.
      int row_low = kUnionRows, row_high = -1;
      for (int bits = 0; bits < kGroupCopies; ++bits) {
        if (!needs[static_cast<std::size_t>(bits)] || (bits & 1) != copy) continue;
        const int y = Dim == 3 ? bits >> 1 & 1 : 0;
        row_low = std::min(row_low, y);
        row_high = std::max(row_high, Dim == 3 ? y + 2 : 0);
      }
      group.row_low[static_cast<std::size_t>(copy)] = row_low;
      group.copy_first[static_cast<std::size_t>(copy)] = part;
      for (int y = row_low; y <= row_high; ++y) {
        for (int z = 0; z < kGroupSide; ++z) {
          for (int j = 0; j < slabs; ++j) {
            for (int dx = 0; dx < kCopyWidth; ++dx) {
              group.part_begin[static_cast<std::size_t>(part++)] = at;
              const std::uint32_t found = group.unit[static_cast<std::size_t>(
                  copy + dx + kGroupSide * y + (kGroupCells / kGroupSide) * z)];
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
      }
    }
    group.part_begin[static_cast<std::size_t>(part)] = at;
    gather(std::span<const Range>(ranges.data(), static_cast<std::size_t>(count)), g, ids);
    return group;
  }

  /// The offsets of a cell in its group along the axes before the last, as bits.
  static int copy_of(const Cell<Dim>& cell) {
    int copy = 0;
    for (int k = Dim - 2; k >= 0; --k) copy = copy * 2 + static_cast<int>(cell[k] & 1);
    return copy;
  }

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
    const bool after = stencil == Stencil::half;
    const CandidateRuns all = all_gathered(work.g);
    CandidateRuns later;
    filter_gathered(
        work, ids == Ids::none, own, search, all,
        [&](std::uint32_t p0, QueryBlock<Dim>& block) -> const CandidateRuns& {
          // The cell's own points come first in g: point p of the cell is candidate p.
          block.after = after;
          for (int q = 0; q < block.count; ++q) {
            for (int k = 0; k < Dim; ++k) block.position[q][k] = layout_.axis[k][first + p0 + q];
            block.skip[q] = p0 + static_cast<std::uint32_t>(q);
          }
          if (!after) return all;
          later.clip(all, p0 + 1);  // the candidates after the block's first query
          return later;
        },
        [&](std::uint32_t p, std::uint32_t id) {
          const index_t other = ids == Ids::original ? id : layout_.order[id];
          return border_within<kByRule<Emit>>(search, layout_.order[first + p], other);
        },
        [&](std::uint32_t p, const std::uint32_t* row, std::uint32_t count) {
          emit(first + p, row, count);
        });
  }

  /// The filter loop of every cell search: `count` queries against the runs `runs` of the
  /// candidates gathered in work.g, kBlockQueries per filter call. setup(p0, block) fills in the
  /// block of queries p0, p0 + 1, ... (block.count is set) and returns the runs that block tests:
  /// `runs` or part of them (no more candidates: `runs` sizes the rows), such as the candidates
  /// after the block's first query in a half search, or a column step's runs for a block of one
  /// of its cells (search_columns); a borderline candidate `id` of query p is kept when
  /// within(p, id) (the double rule); emit(p, row, count) then gets query p's neighbors (row is
  /// null in a count search, count_only).
  template <class Setup, class Within, class Emit>
  void filter_gathered(CellWork<Dim>& work, bool count_only, std::uint32_t count,
                       const Search& search, const CandidateRuns& runs, Setup&& setup,
                       Within&& within, Emit&& emit) const {
    filter_runs(work, work.g.view(), count_only, count, search, runs, setup, within, emit);
  }

  /// filter_gathered() against the runs `runs` of the candidates `view` (the gathered ones, or
  /// the layout's own arrays: search_columns).
  template <class Setup, class Within, class Emit>
  void filter_runs(CellWork<Dim>& work, const SoaView<Dim>& view, bool count_only,
                   std::uint32_t count, const Search& search, const CandidateRuns& runs,
                   Setup&& setup, Within&& within, Emit&& emit) const {
    const std::size_t stride = runs.size() + kFilterSlack;
    work.sure.clear();
    work.border.clear();
    BlockOutput out{count_only ? nullptr : work.sure.reserve_more(stride * kBlockQueries),
                    work.border.reserve_more(stride * kBlockQueries), stride};
    QueryBlock<Dim> block;
    for (std::uint32_t p0 = 0; p0 < count; p0 += kBlockQueries) {
      block.count = static_cast<int>(std::min<std::uint32_t>(kBlockQueries, count - p0));
      filter_(view, setup(p0, block), block, search.band, out);
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

  /// Whether indexed point `query` has `candidate` as a neighbor, for a candidate the float band
  /// left undecided: by search.rule in a search whose emit callback is a ByRule, else by the
  /// distance rule (exact.hpp).
  template <bool kRule>
  bool border_within(const Search& search, index_t query, index_t candidate) const {
    if constexpr (kRule) {
      return (*search.rule)(query, candidate);
    } else {
      return distance_squared(this->context_.points, query, candidate) <= search.r2;
    }
  }

  /// neighbor_counts() with `search`, by its rule (not null) when kRule.
  template <bool kRule>
  void count_search(const Search& search, std::span<index_t> counts) const;

  /// All the candidates gathered in `g`, as one run.
  static CandidateRuns all_gathered(const Gathered<Dim>& g) {
    CandidateRuns runs;
    runs.add(0, static_cast<std::uint32_t>(g.size));
    return runs;
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

  /// The stencil cells a search visits around its center cell, as offsets along each axis:
  /// [low[k], high[k]] within [-reach, reach] (the whole stencil, or the part a ball query's
  /// box meets: ball_box()).
  struct StencilBox {
    std::array<int, Dim> low, high;
  };

  /// The stencil cells that may hold a point within `radius` of `center` (in lattice cell
  /// `cell`): those the box [center - radius', center + radius'] meets, radius' = radius (1 +
  /// 2^-20). A point whose double distance to center is at most radius (the rule, exact.hpp)
  /// differs from it by less than radius' along each axis (the computed square of a difference
  /// is within a few units in the last place of the exact one), so its coordinate lies inside
  /// the box's rounded bounds and cell_along, monotone, puts it in a cell between theirs, the
  /// cells the build assigned (the same arithmetic, cell_keys.hpp). Cells of edge r hold every
  /// ball of radius r across three cells per axis; a coarser lattice (sparse points) or a
  /// smaller radius across fewer: 1M sparse points (W6), cells of 2.9 r, about 5 cells of 27.
  StencilBox ball_box(const Position& center, double radius, const Cell<Dim>& cell) const {
    const double half_width = radius * (1.0 + 0x1p-20);  // radius'
    StencilBox box;
    for (int k = 0; k < Dim; ++k) {
      const std::int64_t low = grid_.cell_along(center[k] - half_width, k) - cell[k];
      const std::int64_t high = grid_.cell_along(center[k] + half_width, k) - cell[k];
      box.low[k] = static_cast<int>(std::clamp<std::int64_t>(low, -grid_.reach, 0));
      box.high[k] = static_cast<int>(std::clamp<std::int64_t>(high, 0, grid_.reach));
    }
    return box;
  }

  /// Ranges of the stencil cells around lattice cell `cell`, sorted and merged where they touch,
  /// leaving out cell `skip_cell` (for a half stencil, every cell up to it); with `box`, only
  /// the stencil cells inside it.
  int stencil_ranges(const Cell<Dim>& cell, std::uint32_t skip_cell, Stencil stencil,
                     std::array<Range, kStencil>& ranges, const StencilBox* box = nullptr) const {
    std::array<std::uint32_t, kStencil> cells;
    int count = 0;
    const auto add = [&](std::uint32_t found) {
      if (found == CellListLayout<Dim>::kNoCell) return;
      if (stencil == Stencil::half ? found <= skip_cell : found == skip_cell) return;
      cells[count++] = found;
    };
    // Only with a direct lookup (at most about a cell per point): on a wide sparse lattice the
    // slot would overflow.
    bool interior = layout_.direct();
    for (int k = Dim - 1; k >= 0; --k) {
      interior = interior && cell[k] >= grid_.reach && cell[k] + grid_.reach < layout_.dims[k];
    }
    if (interior && box == nullptr) {
      // The whole stencil lies on the lattice: direct lookups at fixed offsets.
      const std::int64_t slot = layout_.slot_of(cell);
      for (int o = 0; o < stencil_size_; ++o) add(layout_.cell_at_slot(slot + dense_offset_[o]));
    } else {
      std::array<std::int64_t, Dim> corner;
      std::array<int, Dim> width;
      for (int k = 0; k < Dim; ++k) {
        const int low = box != nullptr ? box->low[k] : -grid_.reach;
        const int high = box != nullptr ? box->high[k] : grid_.reach;
        corner[k] = cell[k] + low;
        width[k] = high - low + 1;
      }
      layout_.for_each_cell_in_box(corner, width, [&](int, std::uint32_t found) { add(found); });
    }
    // Insertion sort: short, and mostly in order already (cells in Z-order). Cell indices, not
    // ranges: half the bytes moved, and consecutive indices are touching cells, so a merged run
    // reads cell_start twice, not twice per cell (W6 ball queries 1.04-1.06x, ninety-second
    // session).
    for (int q = 1; q < count; ++q) {
      const std::uint32_t moving = cells[q];
      int at = q;
      for (; at > 0 && cells[at - 1] > moving; --at) cells[at] = cells[at - 1];
      cells[at] = moving;
    }
    int merged = 0;
    for (int q = 0; q < count;) {
      const std::uint32_t first = cells[q];
      std::uint32_t last = first;
      for (++q; q < count && cells[q] == last + 1; ++q) last = cells[q];
      ranges[merged++] = Range{layout_.cell_start[first], layout_.cell_start[last + 1]};
    }
    return merged;
  }

  GridGeometry<Dim> grid_;  ///< the lattice of this engine (edge r / subdivision)
  CellListLayout<Dim> layout_;
  BlockFilterFn<Dim> filter_ = nullptr;
  std::vector<std::uint32_t> blocks_;  ///< blocks_[b] .. blocks_[b+1]: the cells of block b
  /// The stencil offsets as distances in the layout's direct lookup (slot_stride()).
  std::array<std::int64_t, kStencil> dense_offset_{};
  /// The union cells of a group (x fastest) as distances in the layout's direct lookup from its
  /// first.
  std::array<std::int64_t, kGroupCells> group_offset_{};
  int stencil_size_ = 0;
  /// update()'s work arrays and the layout it last replaced, reused step after step.
  CellListSpare<Dim> spare_;
  UpdateKind last_update_ = UpdateKind::rebuilt;
};

}  // namespace spatialhash::detail
