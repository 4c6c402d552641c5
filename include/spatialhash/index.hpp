// Index: the one public entry point of spatialhash.
//
// Build once on a set of points and a radius r, then run any number of queries:
//
//   std::vector<float> xyz = ...;                          // x0,y0,z0,x1,y1,z1,...
//   spatialhash::Index<3, float> index(xyz, 0.1);          // default engine, all cores
//   spatialhash::NeighborLists lists = index.neighbor_lists();
//   index.for_each_pair([](auto i, auto j, double d2) { /* each unordered pair once */ });
//
// The neighbor rule (identical for every engine, for float and double input): points i != j are
// neighbors iff  d2 <= r*r  where d2 = (dx*dx + dy*dy) + dz*dz is evaluated in IEEE double
// precision, left to right, without fused multiply-add, on the coordinates converted to double.
// Pairs at exactly distance r and coincident points are neighbors; a point is never its own.
// A query may use a radius smaller than the index radius, never a larger one.
//
// Periodic boxes (box.hpp): an index built with a PeriodicBox applies the minimum-image rule.
// Each point x is first wrapped, w = wrap_into(box, x) (points outside the box are accepted; the
// results are those of the wrapped points). Points i < j are neighbors iff some shift s, with
// components in {-1, 0, 1} on periodic axes and 0 on open ones, gives d2 <= r*r where
// d = w_i - (w_j + s*L) per axis, the image w_j + s*L rounded to double first, and d2 summed as
// above. The radius must be below half the edge L of every periodic axis, so at most one s
// qualifies: each pair is reported once, with that s as PairHit::shift. A ball query wraps its
// center c the same way and reports j iff some s gives |c - (w_j + s*L)|^2 <= r*r.
//
// Threading: construction and the array-returning queries use Options::threads threads. Callback
// queries call the callback from the calling thread only, one batch at a time, so callbacks need
// no locking. They allocate nothing per result: batches live on the stack, and a pair search
// allocates its scratch space once per call (with the default engine, chiefly a copy of the
// points in its own order, whose distances it measures: Dim values per point; a ball query with
// the default engine, never).
// Every query is const and keeps its scratch space in the call: several threads may query one
// index at the same time; update(), assignment and destruction need it to themselves.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "spatialhash/box.hpp"
#include "spatialhash/function_ref.hpp"
#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash {

namespace detail {
template <int Dim, class T>
class EngineBase;
}

/// A fixed-radius neighbor index over points of dimension Dim (2 or 3) with coordinates of type
/// T (float or double). Move-only; it borrows the caller's points (see PointsView).
template <int Dim, class T>
class Index {
  static_assert(Dim == 2 || Dim == 3, "spatialhash supports 2D and 3D points");
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "coordinates must be float or double");

 public:
  /// A query position, in double precision.
  using Position = std::array<double, Dim>;

  /// Indexes `points` for searches up to `radius`. Throws InvalidArgument for non-finite
  /// coordinates (naming the first bad point), a radius that is not finite or lies outside
  /// [kMinRadius, kMaxRadius], more than kMaxThreads threads, more points than index_t can
  /// number, or a grid the chosen engine cannot hold.
  Index(PointsView<Dim, T> points, double radius, Options options = {});
  /// Same, for an interleaved x,y[,z] array whose length must be a multiple of Dim.
  Index(std::span<const T> coords, double radius, Options options = {});
  /// Indexes `points` in a periodic box (see the rule above). Throws InvalidArgument, naming the
  /// axis, for a periodic axis with non-finite bounds, upper <= lower, or a radius not below
  /// half its edge; otherwise as the constructors without a box.
  Index(PointsView<Dim, T> points, double radius, const PeriodicBox<Dim>& box,
        Options options = {});
  Index(std::span<const T> coords, double radius, const PeriodicBox<Dim>& box,
        Options options = {});

  Index(Index&&) noexcept;
  Index& operator=(Index&&) noexcept;
  ~Index();

  std::size_t size() const;
  double radius() const;
  /// The engine in use (never Engine::automatic).
  Engine engine() const;
  int threads() const;
  /// The periodic box, if the index has one.
  const std::optional<PeriodicBox<Dim>>& box() const { return box_; }

  /// Re-indexes after the points moved (same count, same radius, same box); `points` may be the
  /// array the index was built on, modified in place, or another one. The results equal a fresh
  /// index's. cell_list (default) and cell_hash move only the points whose cell changed (cell_list:
  /// while every point stays on its lattice and at most 4% changed cell, below 16384 points; from
  /// there a sample that sees one sends it to a rebuild); the others rebuild. cell_list keeps the
  /// arrays of the layout it replaced and its work arrays from one call to the next and writes the
  /// next layout into them (about 40 bytes per point more in 3D, README's "Memory"), so that a
  /// step allocates nothing once they have grown. On bad input it throws and leaves the index as
  /// it was.
  void update(PointsView<Dim, T> points);
  void update(std::span<const T> coords);

  // ---- Callback queries: no allocation per result, sequential, results in batches. ----

  /// Visits every unordered pair within `radius` (default: the index radius) once, first < second.
  void for_each_pair_batch(FunctionRef<void(std::span<const PairHit>)> visit,
                           double radius = kIndexRadius) const;
  /// Calls f(first, second, distance_squared) for every unordered pair once.
  template <class F>
  void for_each_pair(F&& f, double radius = kIndexRadius) const {
    for_each_pair_batch(
        [&f](std::span<const PairHit> batch) {
          for (const PairHit& h : batch) f(h.first, h.second, h.distance_squared);
        },
        radius);
  }

  /// Visits every indexed point within `radius` of an arbitrary position (no self exclusion: a
  /// point at `center` itself is reported with distance 0).
  void for_each_in_ball_batch(const Position& center, double radius,
                              FunctionRef<void(std::span<const Hit>)> visit) const;
  /// Calls f(index, distance_squared) for every indexed point within `radius` of `center`.
  template <class F>
  void for_each_in_ball(const Position& center, double radius, F&& f) const {
    for_each_in_ball_batch(center, radius, [&f](std::span<const Hit> batch) {
      for (const Hit& h : batch) f(h.index, h.distance_squared);
    });
  }

  /// Cross query by callback: calls f(query_index, index, distance_squared) for every indexed
  /// point within `radius` of each point of `queries` (no self exclusion), query by query.
  template <class U, class F>
  void for_each_cross(PointsView<Dim, U> queries, double radius, F&& f) const {
    for (std::size_t q = 0; q < queries.size(); ++q) {
      Position center;
      for (int k = 0; k < Dim; ++k) center[k] = queries.coord(q, k);
      for_each_in_ball(center, radius, [&](index_t j, double d2) { f(q, j, d2); });
    }
  }

  // ---- Array queries: parallel, results owned by the caller. ----

  /// Every unordered pair within the radius once (first < second). `sorted` orders the pairs
  /// lexicographically; otherwise the order is the engine's, which may differ from run to run
  /// when several threads search.
  PairList pairs(const ListOptions& options = {}) const;
  /// Every unordered pair within `radius` once (first < second), in the engine's order, written
  /// to `out` (see PairOutput) instead of a PairList.
  void pairs(PairOutput& out, double radius = kIndexRadius) const;
  /// Full neighbor lists of every indexed point (symmetric: j in list(i) iff i in list(j)); with
  /// options.half, half lists: each pair in one of its two rows only (ListOptions::half).
  NeighborLists neighbor_lists(const ListOptions& options = {}) const;
  /// Same, into `out`, reusing its storage: a simulation that keeps one NeighborLists across
  /// steps allocates (and page-faults) nothing for the result after the first step. Every
  /// member of `out` is overwritten; lists that already held entries also keep the default
  /// engine's row buffers for the next refill (out.scratch, see ListScratch).
  void neighbor_lists(NeighborLists& out, const ListOptions& options = {}) const;
  /// The same lists as neighbor_lists(), each row wherever the search wrote it (NeighborRows):
  /// with the default engine, written once, without the pass that orders the rows by point.
  /// options.low_memory changes nothing: the rows are never held twice.
  NeighborRows neighbor_rows(const ListOptions& options = {}) const;
  /// Same, into `out`, reusing its storage (every member is overwritten).
  void neighbor_rows(NeighborRows& out, const ListOptions& options = {}) const;
  /// Number of neighbors of every indexed point.
  std::vector<index_t> neighbor_counts(double radius = kIndexRadius) const;
  /// Same, into `out` (resized to size(), its storage reused): a simulation that keeps one
  /// vector across steps allocates (and page-faults) nothing for the counts after the first step.
  void neighbor_counts(std::vector<index_t>& out, double radius = kIndexRadius) const;
  /// Indices of the indexed points within `radius` of `center`, ascending when `sorted`.
  std::vector<index_t> ball(const Position& center, double radius = kIndexRadius,
                            bool sorted = false) const;
  /// Same, into `out` (cleared first, its capacity reused): many queries in a loop allocate
  /// nothing once `out` has grown. Safe to call from several threads, each with its own `out`.
  void ball(const Position& center, double radius, std::vector<index_t>& out,
            bool sorted = false) const;
  /// Cross query: for every point of `queries` (another set, same dimension), its neighbors
  /// among the indexed points. Row q of the result belongs to queries point q; no self exclusion.
  template <class U>
  NeighborLists cross(PointsView<Dim, U> queries, const ListOptions& options = {}) const;
  /// Same, into `out`, reusing its storage and, as neighbor_lists(NeighborLists&) does, keeping
  /// the default engine's row buffers in it for the next call (out.scratch). Every member of
  /// `out` is overwritten.
  template <class U>
  void cross(PointsView<Dim, U> queries, NeighborLists& out, const ListOptions& options = {}) const;
  /// The rows of cross() as NeighborRows, row q for queries point q, each wherever the search
  /// wrote it: with the default engine written once, without the pass that orders the rows by
  /// query (as neighbor_rows() is to neighbor_lists()). options.low_memory changes nothing.
  template <class U>
  NeighborRows cross_rows(PointsView<Dim, U> queries, const ListOptions& options = {}) const;
  /// Same, into `out`, reusing its storage (every member is overwritten).
  template <class U>
  void cross_rows(PointsView<Dim, U> queries, NeighborRows& out,
                  const ListOptions& options = {}) const;

 private:
  /// The queries as the engines read them, checked: throws InvalidArgument for a null array, a
  /// stride below the dimension, or (naming the first) a non-finite coordinate. Double queries
  /// are read where they are (a copy into fresh memory cost a third of a million ball queries'
  /// time, docs/benchmarks.md); float ones are converted into `converted`, which the view reads.
  template <class U>
  PointsView<Dim, double> checked_queries(PointsView<Dim, U> queries,
                                          ResultVector<double>& converted) const;
  double checked_query_radius(double radius) const;
  /// Throws InvalidArgument naming the first non-finite coordinate of a ball query position.
  static void check_ball_center(const Position& center);

  std::unique_ptr<detail::EngineBase<Dim, T>> engine_;
  std::optional<PeriodicBox<Dim>> box_;
};

}  // namespace spatialhash
