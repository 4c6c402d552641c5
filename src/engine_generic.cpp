// Generic results built on an engine's pairs-once primitive (count, prefix sums, fill: the
// counting-sort pattern of the seeds), and the engine factory.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "engine_base.hpp"
#include "exact.hpp"
#include "simd/distance_kernels.hpp"
#include "threads.hpp"

namespace spatialhash::detail {

template <int Dim, class T>
void EngineBase<Dim, T>::neighbor_counts_by_rule(double, PairRule, std::span<index_t>) const {
  throw std::logic_error("spatialhash: neighbor_counts_by_rule on an engine without pair rules");
}

template <int Dim, class T>
void EngineBase<Dim, T>::pair_output_folded(double, const ImageFold&, PairOutput&,
                                            ResultVector<double>*) const {
  throw std::logic_error("spatialhash: pair_output_folded on an engine that does not fold images");
}

template <int Dim, class T>
void EngineBase<Dim, T>::pairs_folded(double, const ImageFold&, PairSink&) const {
  throw std::logic_error("spatialhash: pairs_folded on an engine that does not fold images");
}

template <int Dim, class T>
void EngineBase<Dim, T>::neighbor_counts(double radius, std::span<index_t> counts) const {
  std::fill(counts.begin(), counts.end(), index_t{0});
  auto visit = [&](std::span<const PairHit> batch) {
    for (const PairHit& h : batch) {
      ++counts[h.first];
      ++counts[h.second];
    }
  };
  PairSink sink(visit);
  pairs(radius, sink);
  sink.flush();
}

template <int Dim, class T>
void EngineBase<Dim, T>::neighbor_lists(const ListRequest& request, NeighborLists& lists) const {
  const double radius = request.radius;
  const bool with_distances = request.with_distances;
  const std::size_t n = context_.points.size();
  std::vector<index_t> counts(n);
  neighbor_counts(radius, counts);
  lists.offsets.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) lists.offsets[i + 1] = lists.offsets[i] + counts[i];
  lists.indices.resize(lists.offsets[n]);
  lists.distances.resize(with_distances ? lists.offsets[n] : 0);
  // counts[i] becomes the fill cursor of row i.
  for (std::size_t i = 0; i < n; ++i) counts[i] = 0;
  auto visit = [&](std::span<const PairHit> batch) {
    for (const PairHit& h : batch) {
      const std::size_t a = lists.offsets[h.first] + counts[h.first]++;
      const std::size_t b = lists.offsets[h.second] + counts[h.second]++;
      lists.indices[a] = h.second;
      lists.indices[b] = h.first;
      if (with_distances) lists.distances[a] = lists.distances[b] = std::sqrt(h.distance_squared);
    }
  };
  PairSink sink(visit);
  pairs(radius, sink);
  sink.flush();
}

template <int Dim, class T>
void EngineBase<Dim, T>::half_lists_from_pairs(const ListRequest& request,
                                               NeighborLists& lists) const {
  const PairList pairs = pair_list(request.radius, request.with_distances);
  const std::size_t n = context_.points.size();
  lists.scratch.release();
  lists.offsets.assign(n + 1, 0);
  for (const Pair& p : pairs.pairs) ++lists.offsets[p.first + 1];
  for (std::size_t i = 0; i < n; ++i) lists.offsets[i + 1] += lists.offsets[i];
  sized_for_overwrite(lists.indices, pairs.pairs.size());
  sized_for_overwrite(lists.distances, request.with_distances ? pairs.pairs.size() : 0);
  // Each row's fill cursor, from its start.
  std::vector<std::size_t> cursor(lists.offsets.begin(), lists.offsets.end() - 1);
  for (std::size_t k = 0; k < pairs.pairs.size(); ++k) {
    const std::size_t slot = cursor[pairs.pairs[k].first]++;
    lists.indices[slot] = pairs.pairs[k].second;
    if (request.with_distances) lists.distances[slot] = pairs.distances[k];
  }
}

void rows_from_lists(NeighborLists&& lists, NeighborRows& out) {
  const std::size_t n = lists.size();
  out.start.assign(lists.offsets.begin(), lists.offsets.end() - 1);
  out.count.resize(n);
  for (std::size_t i = 0; i < n; ++i) out.count[i] = static_cast<index_t>(lists.count(i));
  out.indices = std::move(lists.indices);
  out.distances = std::move(lists.distances);
}

template <int Dim, class T>
void EngineBase<Dim, T>::neighbor_rows(const ListRequest& request, NeighborRows& out) const {
  NeighborLists lists;
  neighbor_lists(request, lists);
  rows_from_lists(std::move(lists), out);
}

template <int Dim, class T>
void EngineBase<Dim, T>::cross_rows(Queries queries, const ListRequest& request,
                                    NeighborRows& out) const {
  NeighborLists lists;
  cross_lists(queries, request, lists);
  rows_from_lists(std::move(lists), out);
}

template <int Dim, class T>
void EngineBase<Dim, T>::cross_distances(Queries queries, double /*radius*/, RowRange row_range,
                                         index_t* indices, double* distances) const {
  const auto m = static_cast<std::int64_t>(queries.size());
  const RowDistancesFn<Dim, T> row_distances = best_row_distances<Dim, T>();
  parallel_region(context_.threads, [&] {
#pragma omp for schedule(dynamic, 1024) nowait
    for (std::int64_t q = 0; q < m; ++q) {
      const auto [first, last] = row_range(static_cast<std::size_t>(q));
      row_distances(context_.points, position_at(queries, static_cast<std::size_t>(q)),
                    indices + first, static_cast<std::uint32_t>(last - first), distances + first);
    }
  });
}

template <int Dim, class T>
void EngineBase<Dim, T>::ball_indices(const Position& center, double radius,
                                      std::vector<index_t>& out) const {
  out.clear();
  auto visit = [&](std::span<const Hit> batch) {
    for (const Hit& h : batch) out.push_back(h.index);
  };
  HitSink sink(visit);
  ball(center, radius, sink);
  sink.flush();
}

template <int Dim, class T>
void EngineBase<Dim, T>::cross_lists(Queries queries, const ListRequest& request,
                                     NeighborLists& out) const {
  const double radius = request.radius;
  const auto m = static_cast<std::int64_t>(queries.size());
  out.offsets.assign(queries.size() + 1, 0);
  out.distances.clear();
  // Count, prefix sums, fill: two passes so threads write disjoint rows without locks. Each
  // thread collects a query's neighbors in one vector, reused.
  parallel_region(context_.threads, [&] {
    std::vector<index_t> found;
#pragma omp for schedule(dynamic, 256)
    for (std::int64_t q = 0; q < m; ++q) {
      ball_indices(position_at(queries, static_cast<std::size_t>(q)), radius, found);
      out.offsets[q + 1] = found.size();
    }
  });
  std::partial_sum(out.offsets.begin(), out.offsets.end(), out.offsets.begin());
  sized_for_overwrite(out.indices, out.offsets.back());
  parallel_region(context_.threads, [&] {
    std::vector<index_t> found;
#pragma omp for schedule(dynamic, 256)
    for (std::int64_t q = 0; q < m; ++q) {
      ball_indices(position_at(queries, static_cast<std::size_t>(q)), radius, found);
      std::copy(found.begin(), found.end(), out.indices.begin() + out.offsets[q]);
    }
  });
}

template <int Dim, class T>
void EngineBase<Dim, T>::pair_output(double radius, PairOutput& out) const {
  ResultVector<Pair> pairs;
  auto visit = [&](std::span<const PairHit> batch) {
    for (const PairHit& h : batch) pairs.push_back({h.first, h.second});
  };
  PairSink sink(visit);
  this->pairs(radius, sink);
  sink.flush();
  out.allocate(pairs.size());
  out.write(0, pairs);
}

template <int Dim, class T>
PairList EngineBase<Dim, T>::pair_list(double radius, bool with_distances) const {
  PairList list;
  if (!with_distances) {
    PairListOutput output(list);
    pair_output(radius, output);
    return list;
  }
  auto visit = [&](std::span<const PairHit> batch) {
    for (const PairHit& h : batch) {
      list.pairs.push_back({h.first, h.second});
      list.distances.push_back(std::sqrt(h.distance_squared));
    }
  };
  PairSink sink(visit);
  pairs(radius, sink);
  sink.flush();
  return list;
}

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_engine(Engine kind, const Context<Dim, T>& context) {
  switch (kind) {
    case Engine::automatic:
    case Engine::cell_list:
      return make_cell_list(context);
    case Engine::dense_grid:
      return make_dense_grid(context);
    case Engine::hashed_grid:
      return make_hashed_grid(context);
    case Engine::cell_hash:
      return make_cell_hash(context);
    case Engine::sorted_index:
      return make_sorted_index(context);
    case Engine::multimap:
      return make_multimap(context);
    case Engine::brute_force:
      return make_brute_force(context);
  }
  throw InvalidArgument("spatialhash: unknown engine value");
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template class EngineBase<D, T>;    \
  template std::unique_ptr<EngineBase<D, T>> make_engine(Engine, const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
