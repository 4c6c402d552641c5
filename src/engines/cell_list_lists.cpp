// cell_list (cell_list.hpp): neighbor counts and neighbor lists (both over the full stencil, by
// groups of cells; half lists over the half stencil), the lists as CSR lists or NeighborRows,
// through the collectors.
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "../growable_buffer.hpp"
#include "../threads.hpp"
#include "cell_list.hpp"
#include "collect_rows.hpp"
#include "collect_rows_in_place.hpp"
#include "collect_rows_unordered.hpp"

namespace spatialhash::detail {

template <int Dim, class T>
void CellList<Dim, T>::neighbor_counts(double radius, std::span<index_t> counts) const {
  count_search<false>(Search{band_for(radius), radius * radius}, counts);
}

template <int Dim, class T>
void CellList<Dim, T>::neighbor_counts_by_rule(double radius, PairRule rule,
                                               std::span<index_t> counts) const {
  Search search{band_for(radius), radius * radius};
  search.rule = &rule;
  search.rows_wanted = counts.size();
  count_search<true>(search, counts);
}

template <int Dim, class T>
template <bool kRule>
void CellList<Dim, T>::count_search(const Search& search, std::span<index_t> counts) const {
  const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
  const int threads = own_search_threads();
  const std::size_t n = layout_.size();
  // Counts written by sorted position, in sequence, then put in the caller's order in one pass:
  // written straight to counts[order[s]] from the search, shuffled input made the stores miss
  // (W4 4M points, 2 threads: 0.77-0.96x the half stencil's speed, against 1.2-1.7x this way).
  WorkVector<index_t> by_position;
  sized_for_overwrite(by_position, n);
  parallel_region(threads, [&] {
    CellWork<Dim> work;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const auto store = [&](std::uint32_t s, const std::uint32_t*, std::uint32_t count) {
        by_position[s] = count;
      };
      if constexpr (kRule) {
        search_block(b, Stencil::full, Ids::none, search, work,
                     ByRule<decltype(store)&>{{}, store});
      } else {
        search_block(b, Stencil::full, Ids::none, search, work, store);
      }
    }
  });
  // Counts of the first counts.size() points only (neighbor_counts_by_rule).
  const auto signed_n = static_cast<std::int64_t>(n);
  const std::size_t wanted = counts.size();
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t s = 0; s < signed_n; ++s) {
      const index_t point = layout_.order[s];
      if (point < wanted) counts[point] = by_position[s];
    }
  });
}

template <int Dim, class T>
void CellList<Dim, T>::neighbor_lists(const ListRequest& request, NeighborLists& lists) const {
  if (request.rule != nullptr) {
    // A half search evaluates a pair from one side only, whichever comes first in the layout:
    // the rule (ListRequest::rule) is for full lists.
    if (request.half) throw std::logic_error("spatialhash: a pair rule for half lists");
    full_lists<true>(request, lists);
  } else {
    full_lists<false>(request, lists);
  }
}

template <int Dim, class T>
void CellList<Dim, T>::neighbor_rows(const ListRequest& request, NeighborRows& rows) const {
  if (request.rule != nullptr) {
    throw std::logic_error("spatialhash: a pair rule for rows (full lists only)");
  }
  full_lists<false>(request, rows);
}

template <int Dim, class T>
template <bool kRule, class Lists>
void CellList<Dim, T>::full_lists(const ListRequest& request, Lists& lists) const {
  Search asked{band_for(request.radius), request.radius * request.radius};
  asked.rule = request.rule;
  asked.rows_wanted = request.rows_wanted;
  const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
  const bool by_position = request.with_distances && !request.sorted;
  WorkVector<std::uint32_t> identity;
  const Search search = by_position ? for_positions(asked, identity) : asked;
  WorkVector<T> sorted_coords;
  RowPositions<Dim, T> positions;
  if (by_position) {
    sorted_coords = sorted_copy();
    positions = {layout_.order.data(), PointsView<Dim, T>(sorted_coords.data(), layout_.size())};
  }
  const Ids row_ids = by_position ? Ids::sorted_position : Ids::original;
  const Stencil stencil = request.half ? Stencil::half : Stencil::full;
  // Lists written in place (below) need the close estimate; row buffers take the cheaper one,
  // unless it shows lists larger than the buffers may hold, which are then written in place too.
  constexpr bool kInPlaceKind = std::is_same_v<Lists, NeighborLists>;
  const bool may_go_in_place = kInPlaceKind && !request.with_distances;
  const std::size_t budget_entries = request.row_buffer_bytes / sizeof(index_t);
  const bool in_place_asked =
      may_go_in_place && (request.low_memory || layout_.size() >= request.in_place_from_rows);
  std::size_t estimate = estimated_entries(
      search, stencil, layout_.size(), in_place_asked ? EstimateUse::regions : EstimateUse::room);
  const bool in_place = in_place_asked || (may_go_in_place && estimate > budget_entries);
  if (in_place && !in_place_asked) {
    estimate = estimated_entries(search, stencil, layout_.size(), EstimateUse::regions);
  }
  const auto run = [&](std::int64_t b, CellWork<Dim>& work, bool count_only, auto&& emit) {
    if constexpr (kRule) {
      search_block(b, stencil, count_only ? Ids::none : row_ids, search, work,
                   ByRule<decltype(emit)&>{{}, emit});
    } else {
      search_block(b, stencil, count_only ? Ids::none : row_ids, search, work, emit);
    }
  };
  if constexpr (kInPlaceKind) {
    if (in_place) {
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
      if (collect_rows_in_place<CellWork<Dim>>(own_search_threads(), blocks, layout_.order,
                                               layout_.size(), estimate, weigh, run, request, lists)
              .done) {
        return;
      }
      // Gave up (estimates far too low): counted first, then written into place.
    }
  }
  collect_rows<CellWork<Dim>>(
      own_search_threads(), this->context_.points, blocks, layout_.order, layout_.size(), estimate,
      [&](std::int64_t b) {
        return std::pair{layout_.cell_start[blocks_[b]], layout_.cell_start[blocks_[b + 1]]};
      },
      run, request, lists, positions);
}

template <int Dim, class T>
typename CellList<Dim, T>::Search CellList<Dim, T>::for_positions(
    const Search& search, WorkVector<std::uint32_t>& identity) const {
  if (!layout_.columns) return search;
  const std::size_t n = layout_.size();
  sized_for_overwrite(identity, n);
  const auto signed_n = static_cast<std::int64_t>(n);
  parallel_region(own_search_threads(), [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t s = 0; s < signed_n; ++s) identity[s] = static_cast<std::uint32_t>(s);
  });
  Search with = search;
  with.positions = identity.data();
  return with;
}

template <int Dim, class T>
WorkVector<T> CellList<Dim, T>::sorted_copy() const {
  const auto& points = this->context_.points;
  const std::size_t n = layout_.size();
  WorkVector<T> copy;
  sized_for_overwrite(copy, n * Dim);
  const auto signed_n = static_cast<std::int64_t>(n);
  parallel_region(own_search_threads(), [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t p = 0; p < signed_n; ++p) {
      const T* from = points.data + std::size_t{layout_.order[p]} * points.stride;
      for (int k = 0; k < Dim; ++k) copy[static_cast<std::size_t>(p) * Dim + k] = from[k];
    }
  });
  return copy;
}

#define SPATIALHASH_INSTANTIATE(D, T)                                                         \
  template void CellList<D, T>::neighbor_counts(double, std::span<index_t>) const;            \
  template void CellList<D, T>::neighbor_counts_by_rule(double, PairRule, std::span<index_t>) \
      const;                                                                                  \
  template void CellList<D, T>::neighbor_lists(const ListRequest&, NeighborLists&) const;     \
  template void CellList<D, T>::neighbor_rows(const ListRequest&, NeighborRows&) const;       \
  template WorkVector<T> CellList<D, T>::sorted_copy() const;                                 \
  template CellList<D, T>::Search CellList<D, T>::for_positions(const Search&,                \
                                                                WorkVector<std::uint32_t>&) const;
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
