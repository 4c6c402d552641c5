// SizedIndex: neighbor search among particles of different sizes (one radius per point).
//
//   std::vector<double> xyz = ..., radii = ...;             // one radius per point
//   spatialhash::SizedIndex<3, double> index(xyz, radii, spatialhash::SizeRule::sum);
//   spatialhash::PairList contacts = index.pairs();         // every overlapping pair once
//
// The rule, exact like the core's (index.hpp): with d2 = (dx*dx + dy*dy) + dz*dz evaluated in
// IEEE double, left to right, without fused multiply-add, on coordinates converted to double, and
// ri, rj the radii converted to double, points i != j are neighbors iff
//   SizeRule::sum:  d2 <= s * s  where s = ri + rj        (s and s * s rounded in double)
//   SizeRule::max:  d2 <= m * m  where m = max(ri, rj)    (m * m rounded in double)
// so touching particles (distance exactly ri + rj) are neighbors.
//
// How it stays fast when a few particles are much larger than the rest: points are grouped into
// levels by size class (radii within a factor SizedOptions::level_ratio of each other), each level
// sorted by cell of a grid sized for its own largest radius R. A point of radius r searches a
// level of largest radius R with reach r + R (sum) or max(r, R) (max): the cells meeting the box
// of that half-width around it. Pairs inside a level are searched once from the earlier point in
// cell order; for two levels, only the side whose queries are estimated cheaper searches the
// other (for a power law, the few large points search the many small ones). Every candidate is
// then decided by the rule above, on the exact d2. Rounding is monotone, so rj <= R implies
// ri + rj <= ri + R and the search never misses a pair; the box carries a relative margin that
// covers the rounding of d2 and of the cell computation. A single level (equal radii, or levels
// off) is searched by an Index at radius 2R (sum) or R (max) instead.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "spatialhash/function_ref.hpp"
#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash {

/// When two particles of radii ri and rj are neighbors (see the exact definition above).
enum class SizeRule {
  sum,  ///< |pi - pj| <= ri + rj: overlapping or touching spheres (collisions)
  max,  ///< |pi - pj| <= max(ri, rj): SPH with varying smoothing lengths
};

/// Construction options of a SizedIndex.
struct SizedOptions {
  /// threads: for the array queries. engine: of the Index that searches a single level (equal
  /// radii, or levels off); with several levels the per-level grids search instead.
  Options index{};
  /// true: one grid per size class (the fast scheme). false: a single grid sized for the largest
  /// radius, every pair filtered by the rule; kept for comparison (bench/sized_vs_single_grid).
  bool levels = true;
  /// Largest ratio of radii inside one size class; must be > 1. A larger ratio means fewer levels
  /// (fewer cross-level queries) but looser candidate searches inside each level.
  double level_ratio = 2.0;
};

/// Options of the array queries of a SizedIndex.
struct SizedListOptions {
  /// Sort pairs lexicographically, or each neighbor list by neighbor index.
  bool sorted = false;
  /// Also return the Euclidean distance (square root of d2) of each pair or list entry.
  bool with_distances = false;
};

namespace detail {
template <int Dim, class T>
struct SizedLevels;
}

/// Neighbor search among points with one radius each, under a SizeRule. Move-only. It copies the
/// points (grouped by level) and the radii, so the caller's arrays may change afterwards; call
/// update() when the points move (the radii stay).
template <int Dim, class T>
class SizedIndex {
  static_assert(Dim == 2 || Dim == 3, "spatialhash supports 2D and 3D points");
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "coordinates must be float or double");

 public:
  /// Throws InvalidArgument for non-finite coordinates, a radius that is not finite and > 0 or
  /// lies outside [kMinRadius, kMaxRadius / 2] (naming the first bad index), a radii count
  /// different from the point count, a level_ratio that is not finite and > 1, more than
  /// kMaxThreads threads, an extent of the points that overflows double precision, or (with one
  /// size class) a lattice the Index cannot hold; that message names the Index's radius.
  SizedIndex(PointsView<Dim, T> points, std::span<const T> radii, SizeRule rule,
             SizedOptions options = {});
  /// Same, for an interleaved x,y[,z] array whose length must be a multiple of Dim.
  SizedIndex(std::span<const T> coords, std::span<const T> radii, SizeRule rule,
             SizedOptions options = {});

  SizedIndex(SizedIndex&&) noexcept;
  SizedIndex& operator=(SizedIndex&&) noexcept;
  ~SizedIndex();

  std::size_t size() const;
  SizeRule rule() const;
  /// Number of size classes in use (1 with SizedOptions::levels = false or equal radii).
  std::size_t levels() const;

  /// Re-indexes after the points moved (same count; radii unchanged). On bad input it throws
  /// and leaves the index as it was.
  void update(PointsView<Dim, T> points);
  void update(std::span<const T> coords);

  /// Visits every neighbor pair once (first < second, indices of the caller's array), in
  /// batches, from the calling thread.
  void for_each_pair_batch(FunctionRef<void(std::span<const PairHit>)> visit) const;
  /// Calls f(first, second, distance_squared) for every neighbor pair once, first < second.
  template <class F>
  void for_each_pair(F&& f) const {
    for_each_pair_batch([&f](std::span<const PairHit> batch) {
      for (const PairHit& h : batch) f(h.first, h.second, h.distance_squared);
    });
  }

  /// Every neighbor pair once (first < second); parallel.
  PairList pairs(const SizedListOptions& options = {}) const;
  /// Full neighbor lists (symmetric: j in list(i) iff i in list(j)); parallel.
  NeighborLists neighbor_lists(const SizedListOptions& options = {}) const;
  /// Number of neighbors of every point; parallel.
  std::vector<index_t> neighbor_counts() const;

 private:
  std::unique_ptr<detail::SizedLevels<Dim, T>> levels_;
};

}  // namespace spatialhash
