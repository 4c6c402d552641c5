// Rows of a parallel search collected into CSR neighbor lists without row buffers: each row is
// written straight into the output's own storage, into a region reserved for its bucket of
// caller rows, and the regions are then compacted in place in row order. cell_list uses it for
// lists without distances (sorted or not) larger than the row-buffer budget (collect_rows.hpp),
// for those of many points (ListRequest::in_place_from_rows, where it is as fast as the buffers
// or faster), and for all of them with ListOptions::low_memory, where it replaces a count search
// followed by a second, writing search. Sorted rows are sorted where they are first written.
//
// Layout of the output's index array during the search:
//
//   [ gap | region 0 | region 1 | ... | region B-1 ]
//
// Bucket b holds the caller rows [b << shift, (b + 1) << shift). Its region is sized from the
// sampled estimate of entries, shared between the buckets in proportion to a weight per row
// that the search supplies (cell_list: the row's cell population, so that buckets of rows in
// dense places get larger regions even when the caller's rows are spatially sorted), plus a
// margin. Threads claim chunks of a region with an atomic cursor and write rows into them as
// [row, length, ids...]; the unused end of a chunk is a hole ([kHole, length, ...] or one
// kHole1). A row that finds its region full goes to its thread's spill buffer.
//
// Compaction: bucket b's final range [final_start[b], final_start[b + 1]) starts at or before
// region b (invariant checked after the search: final_start[b + 1] <= region_start[b + 1] for
// every b; the gap absorbs early buckets that came out larger than their regions). A thread takes
// the buckets in order, copies bucket b's region into a scratch of its own (in cache), marks it
// copied, waits until every region that b's final range meets has been copied (all of them
// buckets <= b, taken earlier: no thread waits on a later bucket, so no cycle), then writes b's
// rows in row order at their final places and the rows' offsets.
//
// When the spill outgrows its budget, or the invariant fails (estimates far too low), the
// collection gives up (InPlaceOutcome::done false, `lists` empty); the caller then falls back to
// collect_rows (count first, then write into place). Either way the memory is bounded by the
// regions plus the spill budget (with low_memory, a sixteenth of the estimate).
//
// Measured (docs/benchmarks.md, thirty-fourth and thirty-fifth sessions), against count-then-
// write: W3 at 4M points, 2 threads, 1.3x as fast on shuffled input and 1.7x on spatially sorted
// input (sorted lists 1.15x, their rows' sort dominates), for 9% more peak memory; low_memory at
// 1M points, 2 threads, 1.6-2.4x as fast on W1 and W2 and 1.1x on W3, for 6-8% more. Below the
// budget and below 1.25M points the per-thread buffers stay the default: writing to hundreds of
// regions at once slows the search more than the compaction saves where rows are long (W3 at 1M
// points 1.2-1.4x slower in place; W1 and W2 within noise); from 1.25M points the buffers' fresh
// pages cost more than that (forty-second and forty-third sessions).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "spatialhash/types.hpp"

#include "../engine_base.hpp"
#include "../growable_buffer.hpp"
#include "../sort_rows.hpp"
#include "../threads.hpp"
#include "chunk_copy.hpp"

namespace spatialhash::detail {

namespace in_place_detail {
// Hole markers where a row's index would be: no row has these indices, since an index holds
// fewer than 2^32 - 1 points (validate.cpp), so row indices stay below 0xFFFFFFFE.
inline constexpr index_t kHole = 0xFFFFFFFFu;   // [kHole, length, length items] skipped
inline constexpr index_t kHole1 = 0xFFFFFFFEu;  // one item skipped
/// With ListOptions::low_memory the spill holds at most this share of the estimate.
inline constexpr std::size_t kLowMemorySpillShare = 16;

/// Marks [at, end) as a hole that the compaction skips.
inline void mark_hole(index_t* at, const index_t* end) {
  const auto left = static_cast<std::size_t>(end - at);
  if (left >= 2) {
    at[0] = kHole;
    at[1] = static_cast<index_t>(left - 2);
  } else if (left == 1) {
    at[0] = kHole1;
  }
}
}  // namespace in_place_detail

/// What collect_rows_in_place did.
struct InPlaceOutcome {
  bool done = false;             ///< false: gave up, `lists` empty
  std::size_t buckets = 0;       ///< buckets of caller rows
  std::size_t spilled_rows = 0;  ///< rows that found their region full
};

/// Collects the rows of `units` units of search into `lists` (see the header comment). run(u,
/// work, count_only, emit) must call emit(slot, ids, count) once for each slot of unit u, ids with
/// kFilterSlack readable items past count; slot t is caller row row_of[t], and every row in [0,
/// rows) must be covered by exactly one slot. weigh(u, add) calls add(slot, weight) for the slots
/// of unit u (weights >= 0, about proportional to the rows' lengths). With request.sorted each
/// row is sorted by index where it is first written (in cache); request.in_place tunes the
/// regions; the request's other fields must be unset (no distances, low_memory aside). Gives up
/// (done false, `lists` empty) as the header comment says.
template <class Work, class Weigh, class Run>
InPlaceOutcome collect_rows_in_place(int threads, std::int64_t units,
                                     std::span<const index_t> row_of, std::size_t rows,
                                     std::size_t estimate, Weigh weigh, Run run,
                                     const ListRequest& request, NeighborLists& lists) {
  using namespace in_place_detail;
  if (request.with_distances) {
    throw std::logic_error("spatialhash: rows collected in place carry no distances");
  }
  const InPlaceTuning& tuning = request.in_place;
  const bool sorted = request.sorted;
  const RowSortFn row_sort = best_row_sort();
  const auto thread_count = static_cast<std::size_t>(threads);
  lists.offsets.clear();
  lists.indices.clear();
  lists.distances.clear();
  // Buckets of 2^shift rows, each expected to hold about half a region's entries or more.
  const double per_row =
      rows == 0 ? 0.0 : static_cast<double>(estimate) / static_cast<double>(rows);
  int shift = 10;
  while ((std::size_t{1} << shift) < rows &&
         per_row * static_cast<double>(std::size_t{2} << shift) <=
             static_cast<double>(tuning.region_entries)) {
    ++shift;
  }
  const std::size_t bucket_rows = std::size_t{1} << shift;
  const std::size_t buckets = std::max<std::size_t>(1, (rows + bucket_rows - 1) >> shift);
  InPlaceOutcome outcome{.buckets = buckets};

  // The estimate shared between the buckets by weight.
  std::vector<double> weight(buckets, 0.0);
  parallel_region(threads, [&] {
    std::vector<double> mine(buckets, 0.0);
#pragma omp for schedule(static)
    for (std::int64_t u = 0; u < units; ++u) {
      weigh(u, [&](std::uint32_t slot, double w) { mine[row_of[slot] >> shift] += w; });
    }
#pragma omp critical
    for (std::size_t b = 0; b < buckets; ++b) weight[b] += mine[b];
  });
  double total_weight = 0.0;
  for (const double w : weight) total_weight += w;
  std::vector<std::size_t> region_start(buckets + 1);
  std::vector<std::size_t> region_size(buckets);
  std::size_t largest = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t in_bucket = std::min(bucket_rows, rows - b * bucket_rows);
    const double share = total_weight > 0.0
                             ? static_cast<double>(estimate) * weight[b] / total_weight
                             : per_row * static_cast<double>(in_bucket);
    // The share plus the margin, the rows' headers, and the slack of a chunk per thread.
    region_size[b] =
        static_cast<std::size_t>(std::ceil(std::max(0.0, share * (1.0 + tuning.margin)))) +
        2 * in_bucket + thread_count * (tuning.chunk + kCopyChunk) + 64;
    largest = std::max(largest, region_size[b]);
  }
  // A hole's length is one index_t: regions past that (billions of entries for 1024 rows) are
  // left to collect_rows.
  if (largest >= std::size_t{kHole1}) return outcome;
  region_start[0] = largest;  // the gap
  for (std::size_t b = 0; b < buckets; ++b) region_start[b + 1] = region_start[b] + region_size[b];
  sized_for_overwrite(lists.indices, region_start[buckets]);
  index_t* const out = lists.indices.data();

  // The search: rows into their buckets' regions, or spilled.
  std::unique_ptr<std::atomic<std::size_t>[]> claimed(new std::atomic<std::size_t>[buckets]);
  for (std::size_t b = 0; b < buckets; ++b) claimed[b].store(0, std::memory_order_relaxed);
  std::atomic<bool> given_up = false;
  std::vector<GrowableBuffer<index_t>> spill(thread_count);
  std::vector<std::vector<std::size_t>> entries_of(thread_count);
  // With low_memory the spill stays under a sixteenth of the estimate, so that the peak stays
  // within about an eighth of the output (the regions' margin is the other sixteenth).
  // The budget is shared: a thread whose rows land in full regions may spill more than its share
  // while another spills nothing.
  const std::size_t spill_entries =
      request.low_memory ? std::min(tuning.spill_entries, estimate / kLowMemorySpillShare)
                         : tuning.spill_entries;
  std::atomic<std::size_t> spill_taken = 0;
  parallel_region(threads, [&] {
    const auto t = static_cast<std::size_t>(thread_id());
    // The thread's open chunk in each bucket's region: [cursor, end).
    std::vector<index_t*> cursor(buckets, nullptr), end(buckets, nullptr);
    std::vector<std::size_t> entries(buckets, 0);
    GrowableBuffer<index_t> spilled;
    Work work;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t u = 0; u < units; ++u) {
      if (given_up.load(std::memory_order_relaxed)) continue;
      run(u, work, false, [&](std::uint32_t slot, const std::uint32_t* ids, std::uint32_t length) {
        const index_t row = row_of[slot];
        const std::size_t b = row >> shift;
        entries[b] += length;
        // Header, row, and the overrun of copy_in_chunks.
        const std::size_t need = std::size_t{length} + 2 + kCopyChunk;
        if (static_cast<std::size_t>(end[b] - cursor[b]) < need) {
          if (cursor[b] != nullptr) mark_hole(cursor[b], end[b]);
          cursor[b] = end[b] = nullptr;
          const std::size_t size = std::max(tuning.chunk, need);
          const std::size_t at = claimed[b].fetch_add(size, std::memory_order_relaxed);
          index_t* const region = out + region_start[b];
          if (at + size <= region_size[b]) {
            cursor[b] = region + at;
            end[b] = cursor[b] + size;
          } else {
            if (at < region_size[b]) mark_hole(region + at, region + region_size[b]);
            const std::size_t kept = std::size_t{length} + 2;
            if (spill_taken.fetch_add(kept, std::memory_order_relaxed) + kept > spill_entries) {
              given_up.store(true, std::memory_order_relaxed);
              return;
            }
            index_t* const s = spilled.reserve_more(need);
            s[0] = row;
            s[1] = length;
            store_row(ids, length, s + 2, sorted, row_sort);
            spilled.grow(std::size_t{length} + 2);
            return;
          }
        }
        index_t* const p = cursor[b];
        p[0] = row;
        p[1] = length;
        store_row(ids, length, p + 2, sorted, row_sort);
        cursor[b] = p + 2 + length;
        // The next row of this bucket goes right after: its lines are prefetched for writing
        // (rows go to many regions at once, which the hardware prefetcher does not follow).
        const index_t* const stop = std::min<index_t*>(cursor[b] + length + 2, end[b]);
        for (const index_t* line = cursor[b] + 16; line < stop; line += 16) {
          __builtin_prefetch(line, 1);
        }
      });
    }
    for (std::size_t b = 0; b < buckets; ++b) {
      if (cursor[b] != nullptr) mark_hole(cursor[b], end[b]);
    }
    spill[t] = std::move(spilled);
    entries_of[t] = std::move(entries);
  });

  std::vector<std::size_t> final_start(buckets + 1, 0);
  for (std::size_t b = 0; b < buckets; ++b) {
    std::size_t in_bucket = 0;
    for (const auto& e : entries_of) in_bucket += e.empty() ? 0 : e[b];
    final_start[b + 1] = final_start[b] + in_bucket;
  }
  bool fits = !given_up.load();
  for (std::size_t b = 0; fits && b < buckets; ++b) {
    fits = final_start[b + 1] <= region_start[b + 1];
  }
  if (!fits) {
    lists.indices = {};
    return outcome;
  }
  // Spilled rows by bucket (few: at most the spill budget).
  std::vector<std::vector<const index_t*>> spilled_of(buckets);
  for (const auto& s : spill) {
    for (std::size_t p = 0; p < s.size(); p += 2 + std::size_t{s.data()[p + 1]}) {
      spilled_of[s.data()[p] >> shift].push_back(s.data() + p);
      ++outcome.spilled_rows;
    }
  }

  // The compaction, bucket after bucket.
  sized_for_overwrite(lists.offsets, rows + 1);
  lists.offsets[0] = 0;
  std::unique_ptr<std::atomic<bool>[]> copied(new std::atomic<bool>[buckets]);
  for (std::size_t b = 0; b < buckets; ++b) copied[b].store(false, std::memory_order_relaxed);
  std::atomic<std::size_t> next_bucket = 0;
  const auto region_at = [&](std::size_t at) {  // the region holding entry `at` (0 in the gap)
    const auto it = std::upper_bound(region_start.begin(), region_start.end(), at);
    return it == region_start.begin() ? std::size_t{0}
                                      : static_cast<std::size_t>(it - region_start.begin()) - 1;
  };
  parallel_region(threads, [&] {
    std::vector<index_t> scratch;
    std::vector<index_t> length_of(bucket_rows);
    std::vector<const index_t*> row_at(bucket_rows);
    for (;;) {
      const std::size_t b = next_bucket.fetch_add(1);
      if (b >= buckets) break;
      const std::size_t used = std::min(claimed[b].load(std::memory_order_relaxed), region_size[b]);
      scratch.resize(used);
      // An empty region may have no storage behind it (memcpy must not see a null pointer).
      if (used > 0) std::memcpy(scratch.data(), out + region_start[b], used * sizeof(index_t));
      copied[b].store(true, std::memory_order_release);
      const std::size_t first_row = b * bucket_rows;
      const std::size_t in_bucket = std::min(bucket_rows, rows - first_row);
      std::fill_n(length_of.begin(), in_bucket, index_t{0});
      for (std::size_t p = 0; p < used;) {
        const index_t head = scratch[p];
        if (head == kHole1) {
          ++p;
          continue;
        }
        const index_t length = scratch[p + 1];
        if (head != kHole) {
          length_of[head - first_row] = length;
          row_at[head - first_row] = scratch.data() + p + 2;
        }
        p += 2 + std::size_t{length};
      }
      for (const index_t* record : spilled_of[b]) {
        length_of[record[0] - first_row] = record[1];
        row_at[record[0] - first_row] = record + 2;
      }
      if (final_start[b + 1] > region_start[0]) {
        const std::size_t last = std::min(b, region_at(final_start[b + 1] - 1) + 1);
        for (std::size_t r = region_at(final_start[b]); r < last; ++r) {
          while (!copied[r].load(std::memory_order_acquire)) {
#if defined(__SSE2__)
            _mm_pause();
#endif
          }
        }
      }
      std::size_t at = final_start[b];
      for (std::size_t i = 0; i < in_bucket; ++i) {
        copy_exact(out + at, row_at[i], length_of[i]);
        at += length_of[i];
        lists.offsets[first_row + i + 1] = at;
      }
    }
  });
  lists.indices.resize(final_start[buckets]);
  // The regions' margins past the end: pages the lists would otherwise hold for nothing.
  release_pages_past_end(lists.indices);
  outcome.done = true;
  return outcome;
}

}  // namespace spatialhash::detail
