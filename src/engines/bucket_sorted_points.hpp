// Müller's counting-sort build, shared by the two textbook grids (dense_grid: one bucket per
// lattice cell; hashed_grid: one bucket per hash slot): the points sorted by bucket in three passes
// (count per bucket, prefix sums, fill), a copy of their coordinates in that order, and the
// full-stencil scan of the bucket ranges around a point's cell.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../engine_base.hpp"
#include "../exact.hpp"
#include "../threads.hpp"

namespace spatialhash::detail {

/// Positions [begin, end) of the sorted order.
struct SortedRange {
  index_t begin = 0;
  index_t end = 0;
};

/// At most N ranges of the sorted order; the first `count` are the ones in use.
template <int N>
struct RangeSet {
  std::array<SortedRange, N> ranges{};
  int count = 0;

  const SortedRange* begin() const { return ranges.data(); }
  const SortedRange* end() const { return ranges.data() + count; }
};

/// Points counting-sorted by bucket: the points of bucket b sit at sorted positions
/// [start[b], start[b + 1]), ids ascending within a bucket.
template <int Dim, class T>
struct BucketSortedPoints {
  std::vector<index_t> start;       ///< buckets + 1 entries, start[buckets] = n
  std::vector<index_t> sorted_ids;  ///< point ids in sorted order
  std::vector<T> sorted_coords;     ///< their coordinates in the same order, Dim per point

  SortedRange bucket(std::uint64_t b) const { return {start[b], start[b + 1]}; }

  /// The points in sorted order: the same coordinate values (copied, not converted), so
  /// distance_squared on them is bit for bit the rule on the caller's points.
  PointsView<Dim, T> view() const {
    return PointsView<Dim, T>(sorted_coords.data(), sorted_ids.size());
  }
};

/// Sorts the context's points by `bucket_of(cell)`, which must lie in [0, buckets) for the cell of
/// every point.
template <int Dim, class T, class BucketOf>
BucketSortedPoints<Dim, T> counting_sort_points(const Context<Dim, T>& context, std::size_t buckets,
                                                BucketOf bucket_of) {
  using Bucket = std::invoke_result_t<BucketOf, const Cell<Dim>&>;
  const auto& points = context.points;
  const std::size_t n = points.size();
  std::vector<Bucket> bucket_of_point(n);
  const auto sn = static_cast<std::int64_t>(n);
  parallel_region(sn > 16384 ? context.threads : 1, [&] {
#pragma omp for nowait
    for (std::int64_t i = 0; i < sn; ++i) {
      bucket_of_point[i] = bucket_of(context.grid.cell_of(points, static_cast<std::size_t>(i)));
    }
  });
  // Count, then inclusive prefix sums (start[b] = end of bucket b), then fill backwards by
  // decrementing, which leaves start[b] = start of bucket b and ids ascending in each bucket.
  BucketSortedPoints<Dim, T> sorted;
  sorted.start.assign(buckets + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++sorted.start[bucket_of_point[i]];
  index_t running = 0;
  for (index_t& entry : sorted.start) entry = running += entry;
  sorted.sorted_ids.resize(n);
  for (std::size_t i = n; i-- > 0;) {
    sorted.sorted_ids[--sorted.start[bucket_of_point[i]]] = index_t(i);
  }
  sorted.sorted_coords.resize(n * Dim);
  parallel_region(sn > 16384 ? context.threads : 1, [&] {
#pragma omp for nowait
    for (std::int64_t a = 0; a < sn; ++a) {
      const T* from = points.data + sorted.sorted_ids[a] * points.stride;
      std::copy(from, from + Dim, sorted.sorted_coords.begin() + a * Dim);
    }
  });
  return sorted;
}

/// The full-stencil visitor of grid_lists.hpp over `ranges_around(cell)` (a RangeSet that holds
/// every neighbor of a point of that cell, each position once): emits every neighbor of sorted
/// position a but itself. It keeps the ranges of the last cell; each thread works on its own copy.
/// `grid` and `sorted` must outlive it.
template <int Dim, class T, class RangesAround>
auto range_visitor(const GridGeometry<Dim>& grid, const BucketSortedPoints<Dim, T>& sorted,
                   double radius, RangesAround ranges_around) {
  using Ranges = std::invoke_result_t<RangesAround, const Cell<Dim>&>;
  return
      [&grid, &sorted, points = sorted.view(), ranges_around, r2 = radius * radius,
       cell = Cell<Dim>{}, ranges = Ranges{}, cached = false](std::int64_t a, auto&& emit) mutable {
        const auto self = static_cast<std::size_t>(a);
        const Cell<Dim> c = grid.cell_of(points, self);
        if (!cached || c != cell) {
          cell = c;
          ranges = ranges_around(c);
          cached = true;
        }
        for (const SortedRange& range : ranges) {
          for (std::size_t b = range.begin; b < range.end; ++b) {
            if (b == self) continue;
            const double d2 = distance_squared(points, self, b);
            if (d2 <= r2) emit(sorted.sorted_ids[b], d2);
          }
        }
      };
}

/// Every point of `ranges` within `radius` of `center`, as (id, d²) hits.
template <int Dim, class T, class Ranges>
void ball_in_ranges(const BucketSortedPoints<Dim, T>& sorted, const Ranges& ranges,
                    const typename EngineBase<Dim, T>::Position& center, double radius,
                    HitSink& sink) {
  const double r2 = radius * radius;
  const auto points = sorted.view();
  for (const SortedRange& range : ranges) {
    for (std::size_t b = range.begin; b < range.end; ++b) {
      const double d2 = distance_squared(points, b, center);
      if (d2 <= r2) sink.emplace(sorted.sorted_ids[b], d2);
    }
  }
}

}  // namespace spatialhash::detail
