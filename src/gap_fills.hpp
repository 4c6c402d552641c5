// Gap fills: the copies that finish an array compacted chunk by chunk in parallel. Each chunk
// moves the entries it keeps to its front; the entries of the later chunks that lie at or past
// the final length then fill the gaps below it, so only those move twice.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace spatialhash::detail {

/// A move of `count` entries from `from` to `to`, within one array (a gap fill here; a run of
/// rows in the periodic lists' in-place moves).
struct EntryMove {
  std::size_t from;
  std::size_t to;
  std::size_t count;
};

/// The copies that close the gaps of an array of chunks of `chunk` entries (the last one maybe
/// fewer), chunk c holding kept[c] entries at its front, `size` (their sum) in all. The entries
/// at or past `size` go, in order, to the gaps below it, in order. A gap and an entry never
/// share a slot, so the copies may run in any order, in parallel; each is at most `chunk` long.
inline std::vector<EntryMove> gap_fills(std::span<const std::size_t> kept, std::size_t chunk,
                                        std::size_t size) {
  std::vector<EntryMove> fills;
  std::size_t gap_chunk = 0;  // the next chunk whose gap is to be taken
  std::size_t gap = 0;        // the current gap: [gap, gap_end)
  std::size_t gap_end = 0;
  std::size_t from_chunk = 0;  // the next chunk whose entries past `size` are to be taken
  std::size_t from = 0;        // the current entries: [from, from_end)
  std::size_t from_end = 0;
  for (;;) {
    while (gap == gap_end && gap_chunk < kept.size()) {
      gap_end = std::min(size, (gap_chunk + 1) * chunk);
      gap = std::min(gap_end, gap_chunk * chunk + kept[gap_chunk]);
      ++gap_chunk;
    }
    while (from == from_end && from_chunk < kept.size()) {
      from_end = from_chunk * chunk + kept[from_chunk];
      from = std::min(from_end, std::max(size, from_chunk * chunk));
      ++from_chunk;
    }
    if (gap == gap_end || from == from_end) break;  // as many gaps as entries: both run out
    const std::size_t count = std::min({gap_end - gap, from_end - from, chunk});
    fills.push_back(EntryMove{from, gap, count});
    gap += count;
    from += count;
  }
  return fills;
}

}  // namespace spatialhash::detail
