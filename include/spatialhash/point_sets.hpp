// PointSets: several point sets searched against each other, chosen by an activation table.
//
//   spatialhash::PointSets<3, float> sets(0.1);             // one radius for every set
//   auto fluid = sets.add_set(fluid_view);                  // ids 0, 1, ... in order of adding
//   auto boundary = sets.add_set(boundary_view);
//   sets.activate(boundary, fluid, false);                  // boundary sees nothing ...
//   sets.activate(boundary, boundary, false);               // ... (fluid sees fluid and boundary)
//   spatialhash::NeighborLists fb = sets.neighbor_lists(fluid, boundary);
//   // row i: point i of `fluid`; entries: indices into `boundary`
//
// The pair (a, b) is directed: "a's points search among b's". Every pair is active by default,
// as in SPH codes; activate(a, b, false) turns one off. Queries of one pair (neighbor_lists(a, b),
// for_each_neighbor(a, b, f)) throw InvalidArgument for an inactive pair, so a switched-off pair
// never reads as "no neighbors"; the all-pairs queries skip inactive pairs. Within one set
// (a == b) a point is never its own neighbor; across sets there is no exclusion (a point of a
// and a point of b at the same position are neighbors). The neighbor rule is the core's
// (index.hpp). Each set has its own Index over the caller's memory (borrowed like Index does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "spatialhash/index.hpp"
#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash {

/// A point identified across sets: point `index` of set `set`.
struct SetPoint {
  std::uint32_t set;
  index_t index;
  friend bool operator==(const SetPoint&, const SetPoint&) = default;
  friend auto operator<=>(const SetPoint&, const SetPoint&) = default;
};

/// Neighbor lists of every set pair at once: block (a, b) holds, for each point of set a, its
/// neighbors in set b. An inactive pair's block has a row per point of a, all empty.
struct SetNeighborLists {
  std::size_t sets = 0;
  std::vector<NeighborLists> blocks;  ///< blocks[a * sets + b]
  std::vector<bool> active;           ///< active[a * sets + b]: was the pair searched

  const NeighborLists& between(std::size_t a, std::size_t b) const { return blocks[a * sets + b]; }
};

/// Several point sets with one search radius and a directed activation table. Move-only.
template <int Dim, class T>
class PointSets {
 public:
  /// Sets added later are indexed for searches up to `radius` with `options`. Throws
  /// InvalidArgument for a radius that is not finite or lies outside [kMinRadius, kMaxRadius],
  /// or more than kMaxThreads threads.
  explicit PointSets(double radius, Options options = {});

  /// Indexes another set (borrowed: keep its memory alive and unchanged, call update() after
  /// it moves) and returns its id (0, 1, ... in order). Every pair with the new set is active.
  std::size_t add_set(PointsView<Dim, T> points);
  std::size_t add_set(std::span<const T> coords);

  /// Number of sets.
  std::size_t size() const { return sets_.size(); }
  std::size_t set_size(std::size_t set) const;
  double radius() const { return radius_; }

  /// Turns on or off the search of set a's points among set b's (directed).
  void activate(std::size_t a, std::size_t b, bool active = true);
  bool is_active(std::size_t a, std::size_t b) const;

  /// Re-indexes every set after its points moved in place (same views). A set whose new
  /// points are bad throws and stays as it was; the sets before it are already updated.
  void update();
  /// Re-indexes one set on new (or moved) points; same count.
  void update(std::size_t set, PointsView<Dim, T> points);

  /// For every point i of set a, its neighbors in set b (indices into b). a == b gives the
  /// usual symmetric lists without self. Throws for a bad id or an inactive pair.
  NeighborLists neighbor_lists(std::size_t a, std::size_t b, const ListOptions& options = {}) const;
  /// Calls f(i, j, distance_squared) for each point i of set a and each neighbor j in set b
  /// (a == b: both (i, j) and (j, i)), from the calling thread.
  template <class F>
  void for_each_neighbor(std::size_t a, std::size_t b, F&& f) const {
    check_pair(a, b);
    const Index<Dim, T>& target = sets_[b].index;
    if (a == b) {
      target.for_each_pair([&f](index_t i, index_t j, double d2) {
        f(i, j, d2);
        f(j, i, d2);
      });
      return;
    }
    target.for_each_cross(sets_[a].points, kIndexRadius, [&f](std::size_t i, index_t j, double d2) {
      f(static_cast<index_t>(i), j, d2);
    });
  }

  /// Every active pair at once; each block is computed by the parallel query above.
  SetNeighborLists neighbor_lists(const ListOptions& options = {}) const;
  /// Calls f(SetPoint p, SetPoint q, distance_squared) for every active pair (a, b), each point
  /// p of a and each neighbor q in b.
  template <class F>
  void for_each_neighbor(F&& f) const {
    for (std::size_t a = 0; a < size(); ++a) {
      for (std::size_t b = 0; b < size(); ++b) {
        if (!is_active(a, b)) continue;
        const auto sa = static_cast<std::uint32_t>(a), sb = static_cast<std::uint32_t>(b);
        for_each_neighbor(a, b, [&](index_t i, index_t j, double d2) {
          f(SetPoint{sa, i}, SetPoint{sb, j}, d2);
        });
      }
    }
  }

 private:
  struct Set {
    PointsView<Dim, T> points;
    Index<Dim, T> index;
  };
  void check_set(std::size_t set, const char* role) const;
  void check_pair(std::size_t a, std::size_t b) const;

  double radius_;
  Options options_;
  std::vector<Set> sets_;
  std::vector<std::vector<bool>> active_;  ///< active_[a][b]
};

}  // namespace spatialhash
