// EngineBase: the internal interface every search scheme implements, and the shared build
// context. An engine supplies two primitives, pairs-once and ball; everything else (full lists,
// counts, cross queries) has a generic implementation on top of them that an engine may replace
// with a faster one of its own.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "for_each_dim_type.hpp"
#include "grid_geometry.hpp"
#include "growable_buffer.hpp"
#include "sinks.hpp"
#include "spatialhash/function_ref.hpp"
#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// An exact decision for a pair (query, candidate) of indexed points, in place of the distance
/// rule (EngineBase::neighbor_counts_by_rule).
using PairRule = FunctionRef<bool(index_t query, index_t candidate)>;

/// Indexed points that are images of others (a periodic index's ghosts): id first + k images
/// point origin[k] < first. A pair search that folds the images (EngineBase::pair_output_folded)
/// reports a pair (a, b), a < b, as it is where b < first, as (a, origin[b - first]) where that
/// origin is above a (so a < first too), and not at all otherwise: two images, or an image and a
/// point after its origin, whose pair the search meets again from the other side.
struct ImageFold {
  index_t first = 0;
  const index_t* origin = nullptr;
  /// shift[k]: image first + k's offset from its origin in box edges (PairHit::shift), for the
  /// callback search (EngineBase::pairs_folded).
  const std::array<std::int8_t, 3>* shift = nullptr;
};

/// Tuning of the in-place collection of neighbor lists (collect_rows_in_place.hpp).
struct InPlaceTuning {
  /// Entries a region should hold, about: its copy in a thread's scratch stays in cache (2 MiB;
  /// W3 at 4M points, 2 threads: 1.6 s with 2 MiB regions, 2.4 s with 8 MiB;
  /// docs/benchmarks.md).
  std::size_t region_entries = std::size_t{1} << 19;
  /// Room in a region beyond its share of the estimate, as a fraction of that share (W3 at 4M
  /// points, spatially sorted: 9k of 4M rows spill with a sixteenth).
  double margin = 0.0625;
  /// Entries per chunk a thread claims in a region.
  std::size_t chunk = 2048;
  /// Entries that may spill, all threads together, before the collection gives up.
  std::size_t spill_entries = std::size_t{1} << 26;
};

/// A list search as the engines receive it: ListOptions with the radius checked and resolved.
struct ListRequest {
  double radius = 0.0;
  bool with_distances = false;
  /// ListOptions::low_memory: no result buffers beyond the output (engines that buffer rows
  /// count first instead).
  bool low_memory = false;
  /// Memory that buffered rows may take, all threads together, beyond which an engine that
  /// buffers rows counts first instead (collect_rows.hpp; measured: docs/benchmarks.md, "Lists
  /// larger than the row buffers"). Tests set it small.
  std::size_t row_buffer_bytes = std::size_t{1} << 30;
  /// Points from which lists without distances are written in place (collect_rows_in_place.hpp)
  /// even within the budget: there, from 1.5M points, it was as fast or faster in 19 of 21 runs
  /// (W1, W2 and W3 at 1.5M, W1 and W2 at 2M and 4M, W4b and W5 at 4M, 2 threads: 0.88-1.84x the
  /// speed, median 1.08x; 1 thread and refills too), and at 1.25M in 9 of 15 (W1-W3, five runs
  /// each: median 1.07x), for a third less peak memory, while at 1M it ties on short rows and
  /// loses on W3's long ones (1.0-1.4x slower): docs/benchmarks.md, forty-second and forty-third
  /// sessions. Tests set it small.
  std::size_t in_place_from_rows = 1'250'000;
  /// How lists written in place are laid out (collect_rows_in_place.hpp). Tests make the regions
  /// small and their margins too small.
  InPlaceTuning in_place{};
  /// ListOptions::sorted: an engine whose sorts_rows() is true sorts each row by neighbor index as
  /// it stores it; the others ignore it (Index sorts their rows afterwards: sort_rows.hpp).
  bool sorted = false;
  /// ListOptions::half, for an engine whose searches_half_lists() is true (Index gives the others
  /// half_lists_from_pairs() instead).
  bool half = false;
  /// Full lists only, for an engine whose takes_pair_rule() is true: where not null, decides the
  /// pairs the engine would decide with distance_squared() <= radius^2 (see takes_pair_rule()).
  /// Distances are still the inner ones.
  const PairRule* rule = nullptr;
  /// The rows wanted: those of points at or above it may come out empty (a periodic index drops
  /// its ghosts' rows), as an engine chooses (the default one skips its search's steps whose
  /// points all lie there).
  std::size_t rows_wanted = std::numeric_limits<std::size_t>::max();
};

/// What every engine is built from: the caller's points, the index radius, the thread count and
/// the cell lattice (edge r * GridGeometry::kCellMargin over the points' bounding box).
template <int Dim, class T>
struct Context {
  PointsView<Dim, T> points;
  double radius = 0.0;
  int threads = 1;
  GridGeometry<Dim> grid;
  int cell_subdivision = 0;     ///< Options::cell_subdivision (cell_list only)
  Simd simd = Simd::automatic;  ///< Options::simd (cell_list only)
};

/// How an engine carried out its last update() (a diagnostic for tests and benchmarks).
enum class UpdateKind {
  rebuilt,    ///< indexed from scratch (also: no update yet)
  refreshed,  ///< no point changed cell: coordinates rewritten, structure kept
  patched,    ///< only the points that changed cell were moved
};

/// Throws InvalidArgument unless `radius` is finite and within [kMinRadius, kMaxRadius]; `what`
/// names it in the message ("radius", "query radius").
void check_radius(double radius, std::string_view what);
/// The worker count for Options::threads (0: all cores); throws InvalidArgument above kMaxThreads.
int checked_threads(int threads);

/// The points' bounding box (all zero for no points) and the worker count.
template <int Dim>
struct PointBounds {
  std::array<double, Dim> lower{}, upper{};
  int workers = 1;
};
/// The checks of make_context on the points and thread count alone (no radius: the curve orders
/// of reorder.hpp), and the points' bounding box.
template <int Dim, class T>
PointBounds<Dim> point_bounds(PointsView<Dim, T> points, int threads);

/// Validates points and radius and computes the lattice; throws InvalidArgument naming the
/// first problem (see validate.cpp).
template <int Dim, class T>
Context<Dim, T> make_context(PointsView<Dim, T> points, double radius, int threads);
/// make_context for points whose bounding box the caller already has (`lower`, `upper`: the least
/// and greatest coordinate per axis, finite) and whose checks it has made (non-null data,
/// stride, count, finite values): only the radius and thread count are checked, and no pass is
/// made over the points (a periodic index's images, bounded while they are made).
template <int Dim, class T>
Context<Dim, T> make_context_in_bounds(PointsView<Dim, T> points, double radius, int threads,
                                       const std::type_identity_t<std::array<double, Dim>>& lower,
                                       const std::type_identity_t<std::array<double, Dim>>& upper);
/// The checks of make_context but the finite values, and no lattice (grid left default), with
/// no pass over the points: for engines that build their lattice over other coordinates and
/// check the values as they read them (the periodic engine wraps the points first:
/// make_periodic_images calls check_finite()).
template <int Dim, class T>
Context<Dim, T> make_point_context(PointsView<Dim, T> points, double radius, int threads);
/// Throws InvalidArgument naming the first point with a non-finite coordinate, if any (a scan in
/// point order, for a caller that found one).
template <int Dim, class T>
void check_finite(PointsView<Dim, T> points);

/// PairOutput into a PairList's pairs.
class PairListOutput final : public PairOutput {
 public:
  explicit PairListOutput(PairList& list) : list_(list) {}
  void allocate(std::size_t count) override { sized_for_overwrite(list_.pairs, count); }
  void write(std::size_t at, std::span<const Pair> pairs) override {
    std::copy(pairs.begin(), pairs.end(), list_.pairs.begin() + static_cast<std::ptrdiff_t>(at));
  }
  bool resizable() const override { return true; }
  void resize(std::size_t count) override { list_.pairs.resize(count); }

 private:
  PairList& list_;
};

template <int Dim, class T>
class EngineBase {
 public:
  using Position = std::array<double, Dim>;
  /// Cross-query positions: the caller's doubles read in place (any stride), or float queries
  /// converted into a copy (Index::checked_queries). Every coordinate is finite.
  using Queries = PointsView<Dim, double>;

  explicit EngineBase(const Context<Dim, T>& context) : context_(context) {}
  virtual ~EngineBase() = default;
  EngineBase(const EngineBase&) = delete;
  EngineBase& operator=(const EngineBase&) = delete;

  const Context<Dim, T>& context() const { return context_; }
  virtual Engine kind() const = 0;

  /// Re-indexes for moved points (same count, unless updates_any_size()). The default rebuilds
  /// from scratch; the engine must be left unchanged if this throws.
  virtual void update(const Context<Dim, T>& context) = 0;
  /// Whether update() also takes a point set of another size (a periodic index's images, whose
  /// ghost count changes as points cross the margins): cell_list, which then rebuilds into the
  /// arrays it kept. The others need a new engine.
  virtual bool updates_any_size() const { return false; }
  /// How the last update() went; engines without an incremental path always rebuild.
  virtual UpdateKind last_update() const { return UpdateKind::rebuilt; }
  /// The edge of the cells the engine chose (a diagnostic for tests); 0 for engines that do not
  /// choose one.
  virtual double cell_edge() const { return 0.0; }

  /// Every unordered pair within `radius` (<= index radius) once, first < second, in any order.
  virtual void pairs(double radius, PairSink& sink) const = 0;
  /// Every indexed point within `radius` of `center`. Must be safe to call concurrently.
  virtual void ball(const Position& center, double radius, HitSink& sink) const = 0;
  /// The indices of ball()'s points, in `out` (cleared first), without their distances. The
  /// default collects ball(). Must be safe to call concurrently.
  virtual void ball_indices(const Position& center, double radius, std::vector<index_t>& out) const;

  virtual void neighbor_counts(double radius, std::span<index_t> counts) const;
  /// Whether the engine takes a PairRule (neighbor_counts_by_rule, ListRequest::rule): the rule
  /// then decides every pair (query, candidate) of indexed points that the engine would decide
  /// with distance_squared() <= radius^2 (exact.hpp), the candidate a neighbor of the query when
  /// rule(query, candidate) is true. An engine with a float fast path asks only for the
  /// candidates its band leaves undecided (float_band.hpp), so a rule may differ from the
  /// distance rule only by a rounding well inside that band (a periodic index's rule across the
  /// faces: periodic/periodic_rule.hpp).
  virtual bool takes_pair_rule() const { return false; }
  /// neighbor_counts() by `rule`, for an engine whose takes_pair_rule() is true, of the first
  /// counts.size() points only (a periodic index's real points, not its ghosts): the engine may
  /// skip searching the others.
  virtual void neighbor_counts_by_rule(double radius, PairRule rule,
                                       std::span<index_t> counts) const;
  /// Whether neighbor_lists, neighbor_rows, cross_lists and cross_rows sort each row by neighbor
  /// index when ListRequest::sorted asks (rows in cache as they are stored, instead of a pass
  /// over the whole result afterwards: sort_rows.hpp).
  virtual bool sorts_rows() const { return false; }
  /// Whether neighbor_lists and neighbor_rows search half lists themselves when ListRequest::half
  /// asks; for the others Index calls half_lists_from_pairs().
  virtual bool searches_half_lists() const { return false; }
  /// Half lists from pair_list(): each pair (i < j) in row i, rows in pair order (not sorted).
  void half_lists_from_pairs(const ListRequest& request, NeighborLists& out) const;
  /// Fills `out` with the full lists, reusing its storage (every member is overwritten).
  virtual void neighbor_lists(const ListRequest& request, NeighborLists& out) const;
  /// Fills `out` with the full lists as NeighborRows (request.low_memory does not apply). The
  /// default takes neighbor_lists() and points each row at its place in the CSR arrays.
  virtual void neighbor_rows(const ListRequest& request, NeighborRows& out) const;
  /// Row q of `out`: the indices of the indexed points within request.radius of queries[q], no
  /// distances whatever the request says (every member of `out` is overwritten). The default
  /// counts, then fills, one ball_indices() per query and pass.
  virtual void cross_lists(Queries queries, const ListRequest& request, NeighborLists& out) const;
  /// The rows of cross_lists() as NeighborRows (request.low_memory does not apply). The default
  /// takes cross_lists() and points each row at its place in the CSR arrays.
  virtual void cross_rows(Queries queries, const ListRequest& request, NeighborRows& out) const;
  /// Where row q of a cross query's result lies: [first, second) of its entries.
  using RowRange = FunctionRef<std::pair<std::size_t, std::size_t>(std::size_t)>;
  /// The distances of a cross query's rows: row q (entries row_range(q) of `indices`) holds the
  /// indexed points within `radius` of queries[q], and their distances go to the same entries of
  /// `distances`; entries outside every row are left alone. The default measures each row with
  /// the best distance kernel (distance_kernels.hpp: the same doubles as distance_squared,
  /// exact.hpp, the distance every engine's ball query reports, and its square root). The
  /// periodic index, whose distances are not those of its points, measures across the box.
  virtual void cross_distances(Queries queries, double radius, RowRange row_range, index_t* indices,
                               double* distances) const;
  /// Every pair once into `out` (PairOutput's contract). The default collects pairs() first.
  virtual void pair_output(double radius, PairOutput& out) const;
  /// Whether the engine folds images in its pair search (pair_output_folded).
  virtual bool folds_images() const { return false; }
  /// pair_output() of the pairs `fold` keeps, mapped as it says, into a resizable output; with
  /// `distances`, each pair's distance at its place there. Only where folds_images().
  virtual void pair_output_folded(double radius, const ImageFold& fold, PairOutput& out,
                                  ResultVector<double>* distances) const;
  /// pairs() of the pairs `fold` keeps, mapped as it says, each with the shift of the image it
  /// met (PairHit::shift). Only where folds_images().
  virtual void pairs_folded(double radius, const ImageFold& fold, PairSink& sink) const;
  /// The pairs as a PairList, with distances when asked. The default takes pair_output() without
  /// distances, and pairs() (whose hits carry each pair's distance) with them.
  virtual PairList pair_list(double radius, bool with_distances) const;

 protected:
  Context<Dim, T> context_;
};

/// CSR lists as NeighborRows: each row where it lies (no gaps), the arrays moved, not copied.
void rows_from_lists(NeighborLists&& lists, NeighborRows& out);

/// Point i of `points` as a double position.
template <int Dim, class U>
std::array<double, Dim> position_at(const PointsView<Dim, U>& points, std::size_t i) {
  std::array<double, Dim> position;
  for (int k = 0; k < Dim; ++k) position[k] = points.coord(i, k);
  return position;
}

/// Creates the engine of the given kind (never Engine::automatic) over a validated context.
template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_engine(Engine kind, const Context<Dim, T>& context);

/// Each engine's factory, defined in its own source file under src/engines/.
template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_brute_force(const Context<Dim, T>&);
template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_dense_grid(const Context<Dim, T>&);
template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_hashed_grid(const Context<Dim, T>&);
template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_cell_hash(const Context<Dim, T>&);
template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_sorted_index(const Context<Dim, T>&);
template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_multimap(const Context<Dim, T>&);
template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_cell_list(const Context<Dim, T>&);

}  // namespace spatialhash::detail
