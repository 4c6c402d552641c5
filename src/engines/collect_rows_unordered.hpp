// Rows of a parallel search written once, straight into the caller's NeighborRows, in the order
// the threads find them: the neighbor_rows() of cell_list. Beside collect_rows.hpp (CSR lists in
// the caller's row order, which goes through per-thread buffers, an offsets pass and a placement
// pass) this skips both passes and the buffers: each thread claims chunks of one shared array
// with an atomic cursor and writes its rows there as it finds them.
//
// Invariants of the shared array (out.indices) while the search runs:
//   - [0, cursor) is claimed: every chunk in it belongs to one thread, which alone writes it;
//   - a thread's rows lie back to back in its chunk; a row that does not fit the rest of its
//     chunk goes to a new chunk, and the rest (a gap, at most a row plus kCopyChunk entries) is
//     recorded and filled with kNoNeighbor at the end, as is the unused tail of each thread's
//     last chunk;
//   - [cursor, capacity) is reserved but never written: untouched pages cost no memory.
// A row that finds no room left (the estimate was too low) goes to its thread's spill buffer
// instead; spilled rows are appended after [0, cursor) at the end, the only case that may copy
// the array.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

#include "../engine_base.hpp"
#include "../growable_buffer.hpp"
#include "../index_vector.hpp"
#include "../sort_rows.hpp"
#include "../threads.hpp"
#include "chunk_copy.hpp"
#include "estimate_room.hpp"
#include "row_distances.hpp"

namespace spatialhash::detail {

/// Entries a thread claims of the shared array at a time (256 KiB): the gaps a chunk leaves (at
/// most one row) are then a fraction of a percent, and the cursor is touched rarely. Small
/// outputs take smaller chunks (an eighth of a thread's part of the estimate, at least
/// kMinRowChunk): the tails of the threads' last chunks, filled and kept, stay in proportion.
inline constexpr std::size_t kRowChunk = std::size_t{1} << 16, kMinRowChunk = 1024;

/// Rows of a search collected into `out` (NeighborRows) as the threads find them: the
/// counterpart of collect_rows(..., NeighborLists&) (collect_rows.hpp), with the same arguments.
/// The work is `units` units taken dynamically by `threads` threads, each with its own `Work`;
/// unit u covers the slots [slots_of(u).first, .second) and run(u, work, count_only, emit) must
/// call emit(slot, ids, count) once for each of them (run here always with count_only false and
/// ids non-null; ids has kCopyChunk entries of room past count). Slot t's row is row row_of[t] of
/// `out` (rows that no slot covers stay empty). `estimate` (entries) sizes the shared array; a
/// lower one is slower, never wrong. Of `request`, only with_distances and sorted apply (the rows
/// are never buffered); with distances, row_of[t] must be a point of `points`. With sorted, each
/// row is sorted by index where it is stored, while it is in cache. With positions.ids set, as in
/// collect_rows(..., NeighborLists&): rows of sorted positions, turned into the caller's indices
/// after the search (in place, once their distances are measured), and not sorted.
template <class Work, int Dim, class T, class SlotsOf, class Run>
void collect_rows(int threads, const PointsView<Dim, T>& points, std::int64_t units,
                  std::span<const index_t> row_of, std::size_t rows, std::size_t estimate,
                  SlotsOf slots_of, Run run, const ListRequest& request, NeighborRows& out,
                  const RowPositions<Dim, T>& positions = {}) {
  if (positions.ids != nullptr && request.sorted) {
    throw std::logic_error("spatialhash: rows of sorted positions cannot be sorted as stored");
  }
  const bool with_distances = request.with_distances;
  const std::size_t slots = row_of.size();
  // Where each slot's row starts: in the shared array, or (kSpilled set) in the spill buffer of
  // the thread that ran the slot's unit, unit_thread[u].
  constexpr std::size_t kSpilled = std::size_t{1} << (std::numeric_limits<std::size_t>::digits - 1);
  WorkVector<std::size_t> slot_start;
  WorkVector<std::uint32_t> slot_length;
  sized_for_overwrite(slot_start, slots);
  sized_for_overwrite(slot_length, slots);
  std::vector<int> unit_thread(static_cast<std::size_t>(units));

  // The shared array: the estimate with a margin, plus two chunks per thread for the gaps and
  // the last chunks' tails. Refilled rows reuse their storage when it is large enough.
  const auto thread_count = static_cast<std::size_t>(threads);
  const std::size_t chunk =
      std::clamp(std::bit_ceil(estimate / (8 * thread_count) + 1), kMinRowChunk, kRowChunk);
  const std::size_t capacity = room_for_estimate(estimate) + 2 * thread_count * chunk;
  if (out.indices.capacity() < capacity) out.indices = {};  // freed before the new one is taken
  sized_for_overwrite(out.indices, capacity);
  index_t* const shared = out.indices.data();
  std::atomic<std::size_t> cursor = 0;
  const bool sorted = request.sorted;
  const RowSortFn row_sort = best_row_sort();

  std::vector<GrowableBuffer<index_t>> spill(static_cast<std::size_t>(threads));
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> gaps(
      static_cast<std::size_t>(threads));
  parallel_region(threads, [&] {
    const int t = thread_id();
    GrowableBuffer<index_t>& own_spill = spill[static_cast<std::size_t>(t)];
    std::vector<std::pair<std::size_t, std::size_t>>& own_gaps = gaps[static_cast<std::size_t>(t)];
    std::size_t at = 0, chunk_end = 0;  // the free part of this thread's chunk
    bool full = false;                  // no chunk left: every row from now on spills
    // A new chunk with room for `need` entries; false when the shared array has none left.
    const auto claim = [&](std::size_t need) {
      const std::size_t size = std::max(chunk, need);
      std::size_t begin = cursor.load(std::memory_order_relaxed);
      do {
        if (begin + size > capacity) return false;
      } while (!cursor.compare_exchange_weak(begin, begin + size, std::memory_order_relaxed));
      if (at < chunk_end) own_gaps.emplace_back(at, chunk_end);
      at = begin;
      chunk_end = begin + size;
      return true;
    };
    Work work;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t u = 0; u < units; ++u) {
      unit_thread[static_cast<std::size_t>(u)] = t;
      run(u, work, false, [&](std::uint32_t slot, const std::uint32_t* ids, std::uint32_t length) {
        const std::size_t need = length + kCopyChunk;  // copy_in_chunks writes whole chunks
        slot_length[slot] = length;
        if (chunk_end - at < need) {
          if (!full) full = !claim(need);
          if (full) {
            slot_start[slot] = kSpilled | own_spill.size();
            index_t* row = own_spill.reserve_more(need);
            store_row(ids, length, row, sorted, row_sort);
            own_spill.grow(length);
            return;
          }
        }
        slot_start[slot] = at;
        store_row(ids, length, shared + at, sorted, row_sort);
        at += length;
      });
    }
    if (at < chunk_end) own_gaps.emplace_back(at, chunk_end);
  });

  // Spilled rows go after the claimed part, thread after thread.
  const std::size_t claimed = cursor.load();
  std::vector<std::size_t> spill_at(static_cast<std::size_t>(threads));
  std::size_t total = claimed;
  for (int t = 0; t < threads; ++t) {
    spill_at[static_cast<std::size_t>(t)] = total;
    total += spill[static_cast<std::size_t>(t)].size();
  }
  out.indices.resize(total);  // copies the array only when rows spilled past its capacity
  if (total > claimed) {
    for (int t = 0; t < threads; ++t) {
      const GrowableBuffer<index_t>& rows_spilled = spill[static_cast<std::size_t>(t)];
      std::copy(rows_spilled.data(), rows_spilled.data() + rows_spilled.size(),
                out.indices.data() + spill_at[static_cast<std::size_t>(t)]);
    }
    parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t u = 0; u < units; ++u) {
        const auto [first, last] = slots_of(u);
        const std::size_t base = spill_at[static_cast<std::size_t>(unit_thread[u])];
        for (std::uint32_t s = first; s < last; ++s) {
          if ((slot_start[s] & kSpilled) != 0) slot_start[s] = base + (slot_start[s] & ~kSpilled);
        }
      }
    });
  }
  // The entries between rows get `value` in `values` (indices, and distances when asked for).
  const auto fill_gaps = [&](auto* values, auto value) {
    for (const auto& thread_gaps : gaps) {
      for (const auto& [begin, end] : thread_gaps) std::fill(values + begin, values + end, value);
    }
  };
  fill_gaps(out.indices.data(), kNoNeighbor);

  // Slot order to row order: scattered stores, but independent ones (a pass of their own is
  // faster than the same stores inside the search: docs/benchmarks.md, twentieth session).
  sized_for_overwrite(out.start, rows);
  sized_for_overwrite(out.count, rows);
  if (slots < rows) {
    std::fill(out.start.begin(), out.start.end(), std::size_t{0});
    std::fill(out.count.begin(), out.count.end(), index_t{0});
  }
  const auto signed_slots = static_cast<std::int64_t>(slots);
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t s = 0; s < signed_slots; ++s) {
      out.start[row_of[s]] = slot_start[s];
      out.count[row_of[s]] = slot_length[s];
    }
  });

  if (!with_distances) {
    out.distances.clear();
  } else {
    // Gaps get NaN, rows their distances.
    sized_for_overwrite(out.distances, out.indices.size());
    fill_gaps(out.distances.data(), std::numeric_limits<double>::quiet_NaN());
  }
  if (!with_distances && positions.ids == nullptr) return;
  const RowDistancesFn<Dim, T> row_distances = best_row_distances<Dim, T>();
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t s = 0; s < signed_slots; ++s) {
      index_t* row = out.indices.data() + slot_start[s];
      const std::uint32_t length = slot_length[s];
      double* distances = with_distances ? out.distances.data() + slot_start[s] : nullptr;
      if (positions.ids == nullptr) {
        if (s + 1 < signed_slots) {
          prefetch_points(points, out.indices.data() + slot_start[s + 1], slot_length[s + 1]);
        }
        measure_row_distances(row_distances, points, row_of[s], row, length, distances);
        continue;
      }
      if (distances != nullptr) {
        measure_row_distances(row_distances, positions.sorted, static_cast<index_t>(s), row, length,
                              distances);
      }
      for (std::uint32_t k = 0; k < length; ++k) row[k] = positions.ids[row[k]];
    }
  });
}

}  // namespace spatialhash::detail
