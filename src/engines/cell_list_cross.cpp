// cell_list (cell_list.hpp): ball queries (one position, its stencil's ranges through the filter)
// and cross queries (many positions, sorted by cell and searched like a cell's points).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "../morton.hpp"
#include "../radix_sort.hpp"
#include "../simd/cell_keys.hpp"
#include "../threads.hpp"
#include "cell_list.hpp"
#include "collect_rows.hpp"
#include "collect_rows_unordered.hpp"
#include "row_distances.hpp"

namespace spatialhash::detail {

template <int Dim, class T>
void CellList<Dim, T>::ball(const Position& center, double radius, HitSink& sink) const {
  const auto& points = this->context_.points;
  scan_ball(center, radius, [&](std::span<const std::uint32_t> ids) {
    // The hits' points lie scattered in the caller's array: every line is requested before the
    // first is read (for_each_in_ball about 1.04x, docs/benchmarks.md, ninety-second session).
    prefetch_points(points, ids.data(), static_cast<std::uint32_t>(ids.size()));
    for (const std::uint32_t j : ids) sink.emplace(j, distance_squared(points, j, center));
  });
}

template <int Dim, class T>
void CellList<Dim, T>::ball_indices(const Position& center, double radius,
                                    std::vector<index_t>& out) const {
  out.clear();
  scan_ball(center, radius, [&](std::span<const std::uint32_t> ids) {
    out.insert(out.end(), ids.begin(), ids.end());
  });
}

template <int Dim, class T>
void CellList<Dim, T>::cross_lists(Queries queries, const ListRequest& request,
                                   NeighborLists& lists) const {
  cross_search(queries, request, lists);
}

template <int Dim, class T>
void CellList<Dim, T>::cross_rows(Queries queries, const ListRequest& request,
                                  NeighborRows& rows) const {
  cross_search(queries, request, rows);
}

template <int Dim, class T>
template <class Lists>
void CellList<Dim, T>::cross_search(Queries queries, const ListRequest& request,
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
  WorkVector<std::uint64_t> keys;
  sized_for_overwrite(keys, m);
  WorkVector<index_t> order;  // query indices in key order (the pair sort's values)
  if (!packed) sized_for_overwrite(order, m);
  // The key of a query on the lattice is not 0 (packed: its upper half).
  const auto on_lattice = [packed](std::uint64_t key) { return (packed ? key >> 32 : key) != 0; };
  std::vector<std::size_t> kept_in_chunk;  // per chunk of the key pass: queries on the lattice
  {
    // The key pass of the build in query mode (cell_keys.hpp), with the lattice test of
    // GridGeometry::cell_of_position; an empty index puts every query off the lattice.
    CellKeyInput<Dim, double> input{queries.data, queries.stride, grid_.origin, grid_.inv_cell,
                                    shift};
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
    parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
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
            for (int k = 0; k < Dim; ++k) cell[k] = grid_.cell_along(queries.coord(q, k), k);
            if (!layout_.near_points(cell)) {
              keys[q] = packed ? keys[q] & 0xFFFFFFFFu : 0;
              continue;
            }
          }
          ++kept;
        }
        kept_in_chunk[static_cast<std::size_t>(c)] = kept;
      }
    });
  }
  // Where many queries are off the lattice (points on a surface, queries in its box), they are
  // left out before the sort, so that it sorts only the others: one more pass over the keys.
  // Otherwise they are sorted with the rest (their keys are 0: they come first) and skipped.
  std::size_t on = 0;
  for (std::size_t& kept : kept_in_chunk) on += std::exchange(kept, on);
  if (on < m - m / kCompactBelow) {
    WorkVector<std::uint64_t> kept_keys;
    WorkVector<index_t> kept_order;
    sized_for_overwrite(kept_keys, on);
    if (!packed) sized_for_overwrite(kept_order, on);
    const auto chunks = static_cast<std::int64_t>(kept_in_chunk.size());
    parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
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
    });
    keys = std::move(kept_keys);
    if (!packed) order = std::move(kept_order);
  }
  {
    WorkVector<std::uint64_t> scratch_keys;
    if (packed) {
      radix_sort_packed(keys, key_bits, threads, scratch_keys);
    } else {
      WorkVector<index_t> scratch_values;
      radix_sort_pairs(keys, order, key_bits, threads, scratch_keys, scratch_values);
    }
  }
  const std::size_t off = keys.size() - on;  // off the lattice: sorted first, if still there
  if (packed) {
    sized_for_overwrite(order, on);
    const auto slots = static_cast<std::int64_t>(on);
    parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t t = 0; t < slots; ++t) order[t] = static_cast<index_t>(keys[off + t]);
    });
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
      estimated_entries(search, Stencil::full, slots, EstimateUse::room, slots / kSampleShare);
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
          if (t + kAhead < last) {
            __builtin_prefetch(queries.data + std::size_t{query_of[t + kAhead]} * queries.stride);
          }
          Cell<Dim>& cell = cells[t - unit_first];
          cell = {};
          grid_.cell_of_position(position_at(queries, query_of[t]), cell);
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

template <int Dim, class T>
template <class Emit>
void CellList<Dim, T>::scan_ball(const Position& center, double radius, Emit&& emit) const {
  Cell<Dim> cell;
  if (layout_.size() == 0 || !grid_.cell_of_position(center, cell)) return;
  if (!layout_.near_points(cell)) return;
  const auto& points = this->context_.points;
  const double r2 = radius * radius;
  const FloatBand band = stencil_search(Search{band_for(radius), r2}, cell).band;
  std::array<Range, kStencil> ranges;
  // The cells of the ball's box, where it leaves out some of the stencil's.
  const StencilBox box = ball_box(center, radius, cell);
  bool whole = true;
  for (int k = 0; k < Dim; ++k) whole = whole && box.high[k] - box.low[k] == 2 * grid_.reach;
  const int count = stencil_ranges(cell, CellListLayout<Dim>::kNoCell, Stencil::full, ranges,
                                   whole ? nullptr : &box);
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
  CandidateRuns runs;
  std::uint32_t held = 0;  // candidates in `runs`: at most kChunk
  const auto filter_runs = [&] {
    BlockOutput out{sure.data(), border.data(), sure.size()};
    filter_(all, runs, block, band, out);
    emit(std::span<const std::uint32_t>(sure.data(), out.sure_count[0]));
    std::size_t kept = 0;
    for (std::size_t k = 0; k < out.border_count[0]; ++k) {
      border[kept] = border[k];
      kept += distance_squared(points, border[k], center) <= r2 ? 1 : 0;
    }
    if (kept > 0) emit(std::span<const std::uint32_t>(border.data(), kept));
    runs.count = 0;
    held = 0;
  };
  for (int q = 0; q < count; ++q) {
    for (std::uint32_t begin = ranges[q].begin; begin < ranges[q].end;) {
      const std::uint32_t end = std::min(ranges[q].end, begin + (kChunk - held));
      runs.add(begin, end);
      held += end - begin;
      begin = end;
      if (held == kChunk || runs.count == kMaxRuns) filter_runs();
    }
  }
  if (runs.count > 0) filter_runs();
}

template <int Dim, class T>
template <class Emit>
void CellList<Dim, T>::search_queries(const Cell<Dim>& cell, Queries queries,
                                      const index_t* query_of, std::uint32_t count,
                                      std::uint32_t first_slot, bool count_only,
                                      const Search& search, CellWork<Dim>& work,
                                      Emit&& emit) const {
  std::array<Range, kStencil> ranges;
  const int found = stencil_ranges(cell, CellListLayout<Dim>::kNoCell, Stencil::full, ranges);
  gather(std::span<const Range>(ranges.data(), static_cast<std::size_t>(found)), work.g,
         Ids::original);
  filter_queries(cell, queries, query_of, count, first_slot, all_gathered(work.g), count_only,
                 stencil_search(search, cell), work, emit);
}

template <int Dim, class T>
template <class Emit>
void CellList<Dim, T>::filter_queries(const Cell<Dim>& cell, Queries queries,
                                      const index_t* query_of, std::uint32_t count,
                                      std::uint32_t first_slot, const CandidateRuns& candidates,
                                      bool count_only, const Search& search, CellWork<Dim>& work,
                                      Emit&& emit) const {
  const auto& points = this->context_.points;
  filter_gathered(
      work, count_only, count, search, candidates,
      [&](std::uint32_t p0, QueryBlock<Dim>& block) -> const CandidateRuns& {
        block.after = false;
        for (int q = 0; q < block.count; ++q) {
          const Position center =
              position_at(queries, query_of[p0 + static_cast<std::uint32_t>(q)]);
          for (int k = 0; k < Dim; ++k) {
            block.position[q][k] = frame_position(center, k, cell);
          }
          block.skip[q] = kSkipNone;
        }
        return candidates;
      },
      [&](std::uint32_t p, std::uint32_t id) {
        return distance_squared(points, id, position_at(queries, query_of[p])) <= search.r2;
      },
      [&](std::uint32_t p, const std::uint32_t* row, std::uint32_t kept) {
        emit(first_slot + p, row, kept);
      });
}

#define SPATIALHASH_INSTANTIATE(D, T)                                                        \
  template void CellList<D, T>::ball(const Position&, double, HitSink&) const;               \
  template void CellList<D, T>::ball_indices(const Position&, double, std::vector<index_t>&) \
      const;                                                                                 \
  template void CellList<D, T>::cross_lists(PointsView<D, double>, const ListRequest&,       \
                                            NeighborLists&) const;                           \
  template void CellList<D, T>::cross_rows(PointsView<D, double>, const ListRequest&,        \
                                           NeighborRows&) const;
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
