// Index: argument checks, engine dispatch, and the results every engine shares (sorting, cross
// queries).
#include "spatialhash/index.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "engine_base.hpp"
#include "growable_buffer.hpp"
#include "periodic/periodic_engine.hpp"
#include "shortest.hpp"
#include "sort_rows.hpp"
#include "threads.hpp"

namespace spatialhash {

namespace {

/// Half lists are lists of an index's own points: every pair twice, kept once.
void refuse_half_lists(const ListOptions& options) {
  if (options.half) {
    throw InvalidArgument(
        "spatialhash: ListOptions::half applies to an index's own points "
        "(neighbor_lists, neighbor_rows), not to cross queries");
  }
}

void sort_pairs(PairList& list) {
  if (list.distances.empty()) {
    std::sort(list.pairs.begin(), list.pairs.end());
    return;
  }
  std::vector<std::size_t> order(list.pairs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return list.pairs[a] < list.pairs[b]; });
  PairList sorted;
  sorted.pairs.reserve(order.size());
  sorted.distances.reserve(order.size());
  for (std::size_t k : order) {
    sorted.pairs.push_back(list.pairs[k]);
    sorted.distances.push_back(list.distances[k]);
  }
  list = std::move(sorted);
}

void check_options(const Options& options) {
  if (options.cell_subdivision < 0 || options.cell_subdivision > 2) {
    throw InvalidArgument("spatialhash: cell_subdivision must be 0, 1 or 2, got " +
                          std::to_string(options.cell_subdivision));
  }
  const auto simd = static_cast<int>(options.simd);
  if (simd < static_cast<int>(Simd::automatic) || simd > static_cast<int>(Simd::scalar)) {
    throw InvalidArgument("spatialhash: Options::simd holds " + std::to_string(simd) +
                          ", not a Simd value");
  }
}

}  // namespace

template <int Dim, class T>
Index<Dim, T>::Index(PointsView<Dim, T> points, double radius, Options options) {
  check_options(options);
  auto context = detail::make_context(points, radius, options.threads);
  context.cell_subdivision = options.cell_subdivision;
  context.simd = options.simd;
  engine_ = detail::make_engine(options.engine, context);
}

template <int Dim, class T>
Index<Dim, T>::Index(std::span<const T> coords, double radius, Options options)
    : Index(interleaved<Dim, T>(coords), radius, options) {}

template <int Dim, class T>
Index<Dim, T>::Index(PointsView<Dim, T> points, double radius, const PeriodicBox<Dim>& box,
                     Options options) {
  check_options(options);
  // No lattice over the caller's coordinates: they may lie far outside the box.
  auto context = detail::make_point_context(points, radius, options.threads);
  context.cell_subdivision = options.cell_subdivision;
  context.simd = options.simd;
  engine_ = detail::make_periodic_engine(options.engine, context, box);
  box_ = box;
}

template <int Dim, class T>
Index<Dim, T>::Index(std::span<const T> coords, double radius, const PeriodicBox<Dim>& box,
                     Options options)
    : Index(interleaved<Dim, T>(coords), radius, box, options) {}

template <int Dim, class T>
Index<Dim, T>::Index(Index&&) noexcept = default;
template <int Dim, class T>
Index<Dim, T>& Index<Dim, T>::operator=(Index&&) noexcept = default;
template <int Dim, class T>
Index<Dim, T>::~Index() = default;

template <int Dim, class T>
std::size_t Index<Dim, T>::size() const {
  return engine_->context().points.size();
}
template <int Dim, class T>
double Index<Dim, T>::radius() const {
  return engine_->context().radius;
}
template <int Dim, class T>
Engine Index<Dim, T>::engine() const {
  return engine_->kind();
}
template <int Dim, class T>
int Index<Dim, T>::threads() const {
  return engine_->context().threads;
}

template <int Dim, class T>
void Index<Dim, T>::update(PointsView<Dim, T> points) {
  if (points.size() != size()) {
    throw InvalidArgument("spatialhash: update() got " + std::to_string(points.size()) +
                          " points, the index holds " + std::to_string(size()));
  }
  auto context = box_ ? detail::make_point_context(points, radius(), threads())
                      : detail::make_context(points, radius(), threads());
  context.cell_subdivision = engine_->context().cell_subdivision;
  context.simd = engine_->context().simd;
  engine_->update(context);
}

template <int Dim, class T>
void Index<Dim, T>::update(std::span<const T> coords) {
  update(interleaved<Dim, T>(coords));
}

template <int Dim, class T>
double Index<Dim, T>::checked_query_radius(double radius) const {
  if (radius == kIndexRadius) return this->radius();
  detail::check_radius(radius, "query radius");
  if (radius > this->radius()) {
    throw InvalidArgument("spatialhash: query radius " + detail::shortest(radius) +
                          " exceeds the index radius " + detail::shortest(this->radius()));
  }
  return radius;
}

template <int Dim, class T>
void Index<Dim, T>::check_ball_center(const Position& center) {
  for (int k = 0; k < Dim; ++k) {
    if (!std::isfinite(center[k])) {
      throw InvalidArgument("spatialhash: ball query position has a non-finite coordinate " +
                            std::to_string(k));
    }
  }
}

template <int Dim, class T>
void Index<Dim, T>::for_each_pair_batch(FunctionRef<void(std::span<const PairHit>)> visit,
                                        double radius) const {
  const double r = checked_query_radius(radius);
  detail::PairSink sink(visit);
  engine_->pairs(r, sink);
  sink.flush();
}

template <int Dim, class T>
void Index<Dim, T>::for_each_in_ball_batch(const Position& center, double radius,
                                           FunctionRef<void(std::span<const Hit>)> visit) const {
  const double r = checked_query_radius(radius);
  check_ball_center(center);
  detail::HitSink sink(visit);
  engine_->ball(center, r, sink);
  sink.flush();
}

template <int Dim, class T>
PairList Index<Dim, T>::pairs(const ListOptions& options) const {
  const double r = checked_query_radius(options.radius);
  PairList list = engine_->pair_list(r, options.with_distances);
  if (options.sorted) sort_pairs(list);
  return list;
}

template <int Dim, class T>
void Index<Dim, T>::pairs(PairOutput& out, double radius) const {
  engine_->pair_output(checked_query_radius(radius), out);
}

template <int Dim, class T>
NeighborLists Index<Dim, T>::neighbor_lists(const ListOptions& options) const {
  NeighborLists lists;
  neighbor_lists(lists, options);
  return lists;
}

template <int Dim, class T>
void Index<Dim, T>::neighbor_lists(NeighborLists& out, const ListOptions& options) const {
  const double r = checked_query_radius(options.radius);
  const detail::ListRequest request{.radius = r,
                                    .with_distances = options.with_distances,
                                    .low_memory = options.low_memory,
                                    .sorted = options.sorted,
                                    .half = options.half};
  if (options.half && !engine_->searches_half_lists()) {
    engine_->half_lists_from_pairs(request, out);
    if (options.sorted) detail::sort_rows(out, threads());
    return;
  }
  engine_->neighbor_lists(request, out);
  if (options.sorted && !engine_->sorts_rows()) detail::sort_rows(out, threads());
}

template <int Dim, class T>
NeighborRows Index<Dim, T>::neighbor_rows(const ListOptions& options) const {
  NeighborRows rows;
  neighbor_rows(rows, options);
  return rows;
}

template <int Dim, class T>
void Index<Dim, T>::neighbor_rows(NeighborRows& out, const ListOptions& options) const {
  const double r = checked_query_radius(options.radius);
  const detail::ListRequest request{.radius = r,
                                    .with_distances = options.with_distances,
                                    .sorted = options.sorted,
                                    .half = options.half};
  if (options.half && !engine_->searches_half_lists()) {
    NeighborLists lists;
    engine_->half_lists_from_pairs(request, lists);
    detail::rows_from_lists(std::move(lists), out);
    if (options.sorted) detail::sort_rows(out, threads());
    return;
  }
  engine_->neighbor_rows(request, out);
  if (options.sorted && !engine_->sorts_rows()) detail::sort_rows(out, threads());
}

template <int Dim, class T>
std::vector<index_t> Index<Dim, T>::neighbor_counts(double radius) const {
  std::vector<index_t> counts;
  neighbor_counts(counts, radius);
  return counts;
}

template <int Dim, class T>
void Index<Dim, T>::neighbor_counts(std::vector<index_t>& out, double radius) const {
  const double r = checked_query_radius(radius);
  // Fresh storage is advised to huge pages before std::vector zeroes it (every count is then
  // overwritten): fewer page faults on the one thread that zeroes it.
  detail::sized_for_overwrite(out, size());
  engine_->neighbor_counts(r, out);
}

template <int Dim, class T>
std::vector<index_t> Index<Dim, T>::ball(const Position& center, double radius, bool sorted) const {
  std::vector<index_t> result;
  ball(center, radius, result, sorted);
  return result;
}

template <int Dim, class T>
void Index<Dim, T>::ball(const Position& center, double radius, std::vector<index_t>& out,
                         bool sorted) const {
  const double r = checked_query_radius(radius);
  check_ball_center(center);
  engine_->ball_indices(center, r, out);
  if (sorted) std::sort(out.begin(), out.end());
}

template <int Dim, class T>
template <class U>
PointsView<Dim, double> Index<Dim, T>::checked_queries(PointsView<Dim, U> queries,
                                                       ResultVector<double>& converted) const {
  if (queries.size() > 0 && queries.data == nullptr) {
    throw InvalidArgument("spatialhash: cross query with null data and a non-zero count");
  }
  if (queries.stride < static_cast<std::size_t>(Dim)) {
    throw InvalidArgument("spatialhash: cross query stride is smaller than the dimension");
  }
  const auto m = static_cast<std::int64_t>(queries.size());
  // Checked (and float queries converted) in one parallel pass; a non-finite coordinate is then
  // located by a sequential scan, so the message names the first.
  constexpr bool kInPlace = std::is_same_v<U, double>;
  if constexpr (!kInPlace) detail::sized_for_overwrite(converted, queries.size() * Dim);
  std::atomic<bool> finite = true;
  detail::parallel_region(detail::threads_for_pass(queries.size(), threads()), [&] {
    bool mine = true;
#pragma omp for schedule(static) nowait
    for (std::int64_t q = 0; q < m; ++q) {
      bool all = true;
      for (int k = 0; k < Dim; ++k) {
        const double x = queries.coord(q, k);
        if constexpr (!kInPlace) converted[q * Dim + k] = x;
        all &= std::isfinite(x);
      }
      mine = mine && all;
    }
    if (!mine) finite.store(false, std::memory_order_relaxed);
  });
  for (std::int64_t q = 0; !finite.load() && q < m; ++q) {
    for (int k = 0; k < Dim; ++k) {
      if (!std::isfinite(queries.coord(q, k))) {
        throw InvalidArgument("spatialhash: query point " + std::to_string(q) +
                              " has a non-finite coordinate " + std::to_string(k));
      }
    }
  }
  if constexpr (kInPlace) {
    return queries;
  } else {
    return PointsView<Dim, double>(converted.data(), queries.size());
  }
}

template <int Dim, class T>
template <class U>
NeighborLists Index<Dim, T>::cross(PointsView<Dim, U> queries, const ListOptions& options) const {
  NeighborLists lists;
  cross(queries, lists, options);
  return lists;
}

template <int Dim, class T>
template <class U>
void Index<Dim, T>::cross(PointsView<Dim, U> queries, NeighborLists& lists,
                          const ListOptions& options) const {
  refuse_half_lists(options);
  const double r = checked_query_radius(options.radius);
  ResultVector<double> converted;
  const PointsView<Dim, double> positions = checked_queries(queries, converted);
  // Sorted in the search where the engine can (sorts_rows()): the distances then follow.
  engine_->cross_lists(
      positions, {.radius = r, .low_memory = options.low_memory, .sorted = options.sorted}, lists);
  if (options.with_distances) {
    detail::sized_for_overwrite(lists.distances, lists.offsets.back());
    engine_->cross_distances(
        positions, r,
        [&](std::size_t q) {
          return std::pair{lists.offsets[q], lists.offsets[q + 1]};
        },
        lists.indices.data(), lists.distances.data());
  }
  if (options.sorted && !engine_->sorts_rows()) detail::sort_rows(lists, threads());
}

template <int Dim, class T>
template <class U>
NeighborRows Index<Dim, T>::cross_rows(PointsView<Dim, U> queries,
                                       const ListOptions& options) const {
  NeighborRows rows;
  cross_rows(queries, rows, options);
  return rows;
}

template <int Dim, class T>
template <class U>
void Index<Dim, T>::cross_rows(PointsView<Dim, U> queries, NeighborRows& rows,
                               const ListOptions& options) const {
  refuse_half_lists(options);
  const double r = checked_query_radius(options.radius);
  ResultVector<double> converted;
  const PointsView<Dim, double> positions = checked_queries(queries, converted);
  engine_->cross_rows(positions, {.radius = r, .sorted = options.sorted}, rows);
  if (options.with_distances) {
    // Entries between rows get NaN, as in neighbor_rows(); cross_distances() writes the rows'.
    const auto entries = static_cast<std::int64_t>(rows.indices.size());
    detail::sized_for_overwrite(rows.distances, rows.indices.size());
    detail::parallel_region(threads(), [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t e = 0; e < entries; ++e) {
        if (rows.indices[e] == kNoNeighbor) {
          rows.distances[e] = std::numeric_limits<double>::quiet_NaN();
        }
      }
    });
    engine_->cross_distances(
        positions, r,
        [&](std::size_t q) {
          return std::pair{rows.start[q], rows.start[q] + rows.count[q]};
        },
        rows.indices.data(), rows.distances.data());
  }
  if (options.sorted && !engine_->sorts_rows()) detail::sort_rows(rows, threads());
}

#define SPATIALHASH_INSTANTIATE(D, T)                                                             \
  template class Index<D, T>;                                                                     \
  template NeighborLists Index<D, T>::cross(PointsView<D, float>, const ListOptions&) const;      \
  template NeighborLists Index<D, T>::cross(PointsView<D, double>, const ListOptions&) const;     \
  template void Index<D, T>::cross(PointsView<D, float>, NeighborLists&, const ListOptions&)      \
      const;                                                                                      \
  template void Index<D, T>::cross(PointsView<D, double>, NeighborLists&, const ListOptions&)     \
      const;                                                                                      \
  template NeighborRows Index<D, T>::cross_rows(PointsView<D, float>, const ListOptions&) const;  \
  template NeighborRows Index<D, T>::cross_rows(PointsView<D, double>, const ListOptions&) const; \
  template void Index<D, T>::cross_rows(PointsView<D, float>, NeighborRows&, const ListOptions&)  \
      const;                                                                                      \
  template void Index<D, T>::cross_rows(PointsView<D, double>, NeighborRows&, const ListOptions&) \
      const;
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash
