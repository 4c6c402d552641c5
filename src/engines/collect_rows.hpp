// Rows of a parallel search collected into CSR neighbor lists: the neighbor lists and batched
// cross queries of cell_list. The search runs in units of consecutive slots (a slot is one
// query: an indexed point or a cross-query position); its rows come out in slot order within a
// unit, in whatever order the threads finish the units, and land in the caller's row order.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

#include "../engine_base.hpp"
#include "../exact.hpp"
#include "../growable_buffer.hpp"
#include "../prefix_sum.hpp"
#include "../threads.hpp"
#include "chunk_copy.hpp"

namespace spatialhash::detail {

/// Rows of a search, collected into `lists` in CSR form. The work is `units` units taken by
/// `threads` threads dynamically, each with its own `Work` (the search's scratch); unit u covers
/// the slots [slots_of(u).first, .second) and run(u, work, count_only, emit) must call emit(slot,
/// ids, count) once for each of them, in order, with the same rows each time it runs (ids null when
/// count_only). Slot t's row is row row_of[t] of `lists` (rows that no slot covers stay empty).
/// With distances, row_of[t] must be a point of `points`.
///
/// By default rows go to per-thread buffers, each reserved in huge pages for twice its fair
/// share of `estimate` entries plus a margin (at most the whole estimate): pages never written
/// cost nothing, and a thread that takes more than its share while another is held up by the
/// system still writes into huge pages (growable_buffer.hpp; a thread that needs more grows by
/// realloc, in small pages; a first reservation stops at kMaxShare entries, 1 GiB, since a
/// sample can overshoot). The rows are then copied once into place. With request.low_memory
/// the search runs twice instead: once for the row lengths, once writing each row straight
/// into place (no buffers: the peak is the output plus 12 bytes per slot; 1.2-1.6x slower,
/// docs/benchmarks.md). The counting search skips the filter's compress and store.
template <class Work, int Dim, class T, class SlotsOf, class Run>
void collect_rows(int threads, const PointsView<Dim, T>& points, std::int64_t units,
                  std::span<const index_t> row_of, std::size_t rows, std::size_t estimate,
                  SlotsOf slots_of, Run run, const ListRequest& request, NeighborLists& lists) {
  const std::size_t slots = row_of.size();
  ResultVector<std::uint32_t> row_length;  // per slot; every one is written
  sized_for_overwrite(row_length, slots);
  // Buffered: a unit's rows are contiguous in its thread's buffer, at unit_begin[u] of
  // unit_thread[u].
  std::vector<GrowableBuffer<index_t>> found;
  std::vector<std::size_t> unit_begin;
  std::vector<int> unit_thread;
  // Low memory: every unit searched with `emit`, which must only touch its slot's row.
  const auto search_all_units = [&](bool count_only, const auto& emit) {
#pragma omp parallel num_threads(threads)
    {
      Work work;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t u = 0; u < units; ++u) run(u, work, count_only, emit);
    }
  };
  if (request.low_memory) {
    search_all_units(true, [&](std::uint32_t slot, const std::uint32_t*, std::uint32_t length) {
      row_length[slot] = length;
    });
  } else {
    found.resize(static_cast<std::size_t>(threads));
    unit_begin.resize(static_cast<std::size_t>(units));
    unit_thread.resize(static_cast<std::size_t>(units));
    constexpr std::size_t kMaxShare = std::size_t{1} << 28;
    const std::size_t with_margin = estimate * 5 / 4 + (std::size_t{1} << 16);
    const std::size_t share =
        std::min({kMaxShare, with_margin, 2 * with_margin / static_cast<std::size_t>(threads)});
#pragma omp parallel num_threads(threads)
    {
      const int t = thread_id();
      GrowableBuffer<index_t>& out = found[static_cast<std::size_t>(t)];
      out.reserve_more(share);
      advise_huge_pages(out.data(), out.capacity() * sizeof(index_t));
      Work work;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t u = 0; u < units; ++u) {
        unit_begin[u] = out.size();
        unit_thread[u] = t;
        run(u, work, false,
            [&](std::uint32_t slot, const std::uint32_t* ids, std::uint32_t length) {
              // A row has kFilterSlack spare (block_filter.hpp): copied in chunks.
              copy_in_chunks(out.reserve_more(length + kCopyChunk), ids, length);
              out.grow(length);
              row_length[slot] = length;
            });
      }
    }
  }
  if (slots < rows) {
    lists.offsets.assign(rows + 1, 0);
  } else {
    lists.offsets.resize(rows + 1);
    lists.offsets[0] = 0;
  }
  const auto signed_slots = static_cast<std::int64_t>(slots);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t t = 0; t < signed_slots; ++t) lists.offsets[row_of[t] + 1] = row_length[t];
  parallel_inclusive_scan(std::span<std::size_t>(lists.offsets), threads);
  sized_for_overwrite(lists.indices, lists.offsets[rows]);
  sized_for_overwrite(lists.distances, request.with_distances ? lists.offsets[rows] : 0);
  // Where each row goes, by slot: scattered reads, but independent ones that the processor
  // overlaps (in the copy below they would sit in a chain before each store).
  ResultVector<std::size_t> row_start;
  sized_for_overwrite(row_start, slots);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t t = 0; t < signed_slots; ++t) row_start[t] = lists.offsets[row_of[t]];
  const auto place_row = [&](std::uint32_t t, const index_t* source) {
    const std::size_t dst = row_start[t];
    copy_exact(lists.indices.data() + dst, source, row_length[t]);
    if (request.with_distances) {
      for (std::uint32_t k = 0; k < row_length[t]; ++k) {
        lists.distances[dst + k] = std::sqrt(distance_squared(points, row_of[t], source[k]));
      }
    }
  };
  if (request.low_memory) {
    std::atomic<bool> repeated = true;
    search_all_units(false,
                     [&](std::uint32_t slot, const std::uint32_t* ids, std::uint32_t length) {
                       // The second search repeats the first exactly; never write past the row
                       // even so.
                       if (length != row_length[slot]) {
                         repeated = false;
                         return;
                       }
                       // Rows land at scattered places: the destination kAhead slots on is
                       // prefetched.
                       constexpr std::uint32_t kAhead = 16;
                       if (slot + kAhead < slots) {
                         __builtin_prefetch(lists.indices.data() + row_start[slot + kAhead], 1);
                       }
                       place_row(slot, ids);
                     });
    if (!repeated) throw std::logic_error("spatialhash: the list search was not repeatable");
    return;
  }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t u = 0; u < units; ++u) {
    const index_t* source = found[static_cast<std::size_t>(unit_thread[u])].data() + unit_begin[u];
    const auto [first, last] = slots_of(u);
    // Rows land at scattered places: the destination kAhead rows on is prefetched for
    // writing, so the misses overlap.
    constexpr std::uint32_t kAhead = 8;
    for (std::uint32_t t = first; t < last; ++t) {
      if (t + kAhead < last) __builtin_prefetch(lists.indices.data() + row_start[t + kAhead], 1);
      place_row(t, source);
      source += row_length[t];
    }
  }
}

}  // namespace spatialhash::detail
