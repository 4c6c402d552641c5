// Rows of a parallel search collected into CSR neighbor lists: the neighbor lists and batched
// cross queries of cell_list. The search runs in units of consecutive slots (a slot is one
// query: an indexed point or a cross-query position); its rows come out in slot order within a
// unit, in whatever order the threads finish the units, and land in the caller's row order.
// (NeighborRows, which need not be in row order, skip the buffers: collect_rows_unordered.hpp.)
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

#include "../engine_base.hpp"
#include "../growable_buffer.hpp"
#include "../index_vector.hpp"
#include "../list_scratch.hpp"
#include "../prefix_sum.hpp"
#include "../sort_rows.hpp"
#include "../threads.hpp"
#include "chunk_copy.hpp"
#include "estimate_room.hpp"
#include "row_distances.hpp"

namespace spatialhash::detail {

/// Sizes `lists` for rows of the given lengths by slot (slot t is row row_of[t]; rows no slot
/// covers stay empty), fills its offsets, and sets row_start[t] to where slot t's row starts.
inline void lay_out_rows(int threads, std::span<const index_t> row_of, std::size_t rows,
                         const WorkVector<std::uint32_t>& row_length, bool with_distances,
                         NeighborLists& lists, WorkVector<std::size_t>& row_start) {
  const std::size_t slots = row_of.size();
  // The offsets are written and then read at scattered places (row_of): in huge pages, their
  // page-table entries fit in the TLB (W1, 4M points, 1 thread: this function's perf samples
  // 591 -> 450; docs/benchmarks.md).
  sized_for_overwrite(lists.offsets, rows + 1);
  const auto signed_slots = static_cast<std::int64_t>(slots);
  if (slots < rows) {
    std::fill(lists.offsets.begin(), lists.offsets.end(), std::size_t{0});
  } else {
    lists.offsets[0] = 0;
  }
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t t = 0; t < signed_slots; ++t) lists.offsets[row_of[t] + 1] = row_length[t];
  });
  parallel_inclusive_scan(std::span<std::size_t>(lists.offsets), threads);
  sized_for_overwrite(lists.indices, lists.offsets[rows]);
  sized_for_overwrite(lists.distances, with_distances ? lists.offsets[rows] : 0);
  // Where each row goes, by slot: scattered reads, but independent ones that the processor
  // overlaps (where the rows are placed they would sit in a chain before each store).
  sized_for_overwrite(row_start, slots);
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t t = 0; t < signed_slots; ++t) row_start[t] = lists.offsets[row_of[t]];
  });
}

/// Rows of a search, collected into `lists` in CSR form. The work is `units` units taken by
/// `threads` threads dynamically, each with its own `Work` (the search's scratch); unit u covers
/// the slots [slots_of(u).first, .second) and run(u, work, count_only, emit) must call emit(slot,
/// ids, count) once for each of them, in order, with the same rows each time it runs (ids null when
/// count_only). Slot t's row is row row_of[t] of `lists` (rows that no slot covers stay empty).
/// With distances, row_of[t] must be a point of `points`. With positions.ids set (RowPositions,
/// row_distances.hpp), the rows hold sorted positions, slot t is the point at position t, and the
/// rows are turned into the caller's indices, and their distances measured, as they are placed;
/// request.sorted must then be false (rows are sorted by the caller's index as they are stored).
///
/// A unit's rows go to its thread's buffer and are copied once into place after the offsets are
/// known, while the buffers hold less than their budget: request.row_buffer_bytes shared evenly
/// between the threads. A unit that finds its thread's buffer full is deferred: searched for its
/// row lengths only (the filter skips the compress and store), then searched again writing each
/// row straight into place. When `estimate` alone exceeds the budget, or with
/// request.low_memory, every unit is deferred: memory touched for the first time is what makes a
/// large output slow (0.4-3 GB/s on the development VM, against 20 GB/s for memory the process
/// reuses), and a second search costs less than a gigabyte of fresh buffers (W3 at 4M points, 2.6
/// GB of lists, 2 threads: 1.6 s against 3.4-4.4 s buffered; docs/benchmarks.md). Each buffer is
/// reserved in huge pages for twice its thread's fair share of `estimate` entries plus a margin
/// (at most the whole estimate and the budget): pages never written cost nothing, and a thread
/// that takes more than its share while another is held up by the system still writes into huge
/// pages (growable_buffer.hpp; a unit that runs past the reservation grows the buffer by
/// realloc, in small pages). With every unit deferred the peak is the output plus 12 bytes per
/// slot; for outputs that fit the budget, 1.2-1.6x slower than buffered. Lists refilled in place
/// keep the buffers and the per-slot arrays for their next refill (ListScratch: fresh buffers
/// are pages the kernel zeroes first, 10% of a W2 refill's samples at 1M points).
/// With request.sorted, each row is sorted by index as it is stored (buffered: in its buffer;
/// deferred: in a copy before it is placed), so its distances come out in the same order.
template <class Work, int Dim, class T, class SlotsOf, class Run>
void collect_rows(int threads, const PointsView<Dim, T>& points, std::int64_t units,
                  std::span<const index_t> row_of, std::size_t rows, std::size_t estimate,
                  SlotsOf slots_of, Run run, const ListRequest& request, NeighborLists& lists,
                  const RowPositions<Dim, T>& positions = {}) {
  if (positions.ids != nullptr && request.sorted) {
    throw std::logic_error("spatialhash: rows of sorted positions cannot be sorted as stored");
  }
  const std::size_t slots = row_of.size();
  // Buffers only for an output estimated to fit the budget; a thread's buffer stops at its part of
  // the budget even so (the estimate comes from a sample).
  const std::size_t budget_entries = request.row_buffer_bytes / sizeof(index_t);
  const bool buffered = !request.low_memory && estimate <= budget_entries;
  const std::size_t budget = buffered ? budget_entries / static_cast<std::size_t>(threads) : 0;
  // Lists refilled in place keep the buffers and work arrays for the next refill (ListScratch);
  // lists filled for the first time, and searches without buffers, keep nothing.
  const bool keep = buffered && lists.indices.capacity() > 0;
  if (!keep) lists.scratch.release();
  ListScratchAccess::Held scratch = ListScratchAccess::take(lists.scratch);
  WorkVector<std::uint32_t>& row_length = scratch->row_length;  // per slot; all written
  sized_for_overwrite(row_length, slots);
  // A buffered unit's rows are contiguous in its thread's buffer, at unit_begin[u] of
  // unit_thread[u]; a deferred unit has unit_thread[u] = kDeferred.
  constexpr int kDeferred = -1;
  std::vector<GrowableBuffer<index_t>>& found = scratch->buffers;
  found.resize(static_cast<std::size_t>(threads));
  std::vector<std::size_t> unit_begin(static_cast<std::size_t>(units));
  std::vector<int> unit_thread(static_cast<std::size_t>(units));
  const std::size_t with_margin = room_for_estimate(estimate);
  const std::size_t share =
      std::min({budget, with_margin, 2 * with_margin / static_cast<std::size_t>(threads)});
  const bool sorted = request.sorted;
  const RowSortFn row_sort = best_row_sort();
  const RowDistancesFn<Dim, T> row_distances = best_row_distances<Dim, T>();
  parallel_region(threads, [&] {
    const int t = thread_id();
    // The thread's own buffer, handed over to `found` once its rows are in: the size it updates
    // for every row stays off the cache line the other threads' buffers share in `found` (W2, 1M
    // points, 2 threads: that line bouncing between the cores took about 8% of the engine's
    // samples; docs/benchmarks.md).
    // A buffer kept from the last refill serves when it holds at least half the share (the share
    // has a margin over the thread's expected part, and estimates vary from step to step) and at
    // most kKeptSlack times the share.
    constexpr std::size_t kKeptSlack = 4;
    GrowableBuffer<index_t> out = std::move(found[static_cast<std::size_t>(t)]);
    out.clear();
    if (2 * out.capacity() < share || out.capacity() > kKeptSlack * share) {
      out = GrowableBuffer<index_t>{};
    }
    if (share > 0 && out.capacity() == 0) {
      out.reserve_more(share);
      advise_huge_pages(out.data(), out.capacity() * sizeof(index_t));
    }
    Work work;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t u = 0; u < units; ++u) {
      if (out.size() >= budget) {
        unit_thread[u] = kDeferred;
        run(u, work, true, [&](std::uint32_t slot, const std::uint32_t*, std::uint32_t length) {
          row_length[slot] = length;
        });
        continue;
      }
      unit_begin[u] = out.size();
      unit_thread[u] = t;
      run(u, work, false, [&](std::uint32_t slot, const std::uint32_t* ids, std::uint32_t length) {
        // A row has kFilterSlack spare (block_filter.hpp): copied in chunks.
        index_t* row = out.reserve_more(length + kCopyChunk);
        store_row(ids, length, row, sorted, row_sort);
        out.grow(length);
        row_length[slot] = length;
      });
    }
    found[static_cast<std::size_t>(t)] = std::move(out);
  });
  WorkVector<std::size_t>& row_start = scratch->row_start;
  lay_out_rows(threads, row_of, rows, row_length, request.with_distances, lists, row_start);
  double* const distances = request.with_distances ? lists.distances.data() : nullptr;
  const auto place_row = [&](std::uint32_t t, const index_t* source) {
    const std::size_t dst = row_start[t];
    if (positions.ids != nullptr) {
      place_position_row(row_distances, positions, t, source, row_length[t],
                         lists.indices.data() + dst,
                         distances == nullptr ? nullptr : distances + dst);
      return;
    }
    copy_streaming(lists.indices.data() + dst, source, row_length[t]);
    if (distances != nullptr) {
      // Measured from the row's source: its copy in `lists` may still be in flight
      // (copy_streaming).
      measure_row_distances(row_distances, points, row_of[t], source, row_length[t],
                            distances + dst);
    }
  };
  // Neighbors at the caller's indices are prefetched a row ahead (row_distances.hpp).
  const bool prefetch_neighbors = distances != nullptr && positions.ids == nullptr;
  // Rows land at scattered places: the destination kAhead rows on is prefetched for writing, so
  // the misses overlap, and a row's whole lines are written without being read first
  // (copy_streaming: W3, 1M points, 2 threads, 5% faster; docs/benchmarks.md). Its distances,
  // written by plain stores, have every line prefetched (W3, 1M points, 1 thread, lists with
  // distances about 1.1x faster; docs/benchmarks.md).
  constexpr std::uint32_t kAhead = 8;
  constexpr std::uint32_t kDistancesPerLine = 64 / sizeof(double);
  const auto prefetch_destination = [&](std::uint32_t t) {
    __builtin_prefetch(lists.indices.data() + row_start[t], 1);
    if (distances == nullptr || row_length[t] == 0) return;
    const double* row = distances + row_start[t];
    for (std::uint32_t k = 0; k < row_length[t]; k += kDistancesPerLine) {
      __builtin_prefetch(row + k, 1);
    }
    __builtin_prefetch(row + row_length[t] - 1, 1);  // the last line of a row not line-aligned
  };
  std::atomic<bool> repeated = true;
  parallel_region(threads, [&] {
    Work work;
    std::vector<index_t> sorted_row;  // a deferred row's sorted copy
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t u = 0; u < units; ++u) {
      const auto slots = slots_of(u);  // no structured binding: the lambda below uses `last`
      const auto first = slots.first;
      const auto last = slots.second;
      if (unit_thread[u] == kDeferred) {
        run(u, work, false,
            [&](std::uint32_t slot, const std::uint32_t* ids, std::uint32_t length) {
              // The second search repeats the first exactly, with rows; never write past the
              // row even so.
              if (ids == nullptr || length != row_length[slot]) {
                repeated = false;
                return;
              }
              if (slot + kAhead < last) prefetch_destination(slot + kAhead);
              if (sorted) {
                sorted_row.resize(length);
                sort_row(row_sort, ids, sorted_row.data(), length);
                ids = sorted_row.data();
              }
              place_row(slot, ids);
            });
        continue;
      }
      const index_t* source =
          found[static_cast<std::size_t>(unit_thread[u])].data() + unit_begin[u];
      for (std::uint32_t t = first; t < last; ++t) {
        if (t + kAhead < last) prefetch_destination(t + kAhead);
        if (prefetch_neighbors && t + 1 < last) {
          prefetch_points(points, source + row_length[t], row_length[t + 1]);
        }
        place_row(t, source);
        source += row_length[t];
      }
    }
    streaming_done();
  });
  if (keep) ListScratchAccess::put(lists.scratch, std::move(scratch));
  if (!repeated) throw std::logic_error("spatialhash: the list search was not repeatable");
}

}  // namespace spatialhash::detail
