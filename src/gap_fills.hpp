// Gap fills: the copies that finish an array compacted chunk by chunk in parallel. Each chunk
// moves the entries it keeps to its front; the entries of the later chunks that lie at or past
// the final length then fill the gaps below it, so only those move twice.
//
// Runs moved in place: runs of one array that keep their order, each moving by its own distance
// (the periodic lists' rows between rows that change length), in an order that never writes over
// a run not yet moved, and in segments that may move at the same time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
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

/// Calls move(m) for every run of `moves` (runs of one array in ascending order, of their sources
/// and of their destinations alike; sources disjoint, destinations disjoint) in an order that
/// never writes over a run not yet moved: a run moving down at once (every run below it has
/// moved, and the runs keep their order), a run moving up once every run whose entries its
/// destination covers has moved (the highest first).
template <class Move>
void move_runs_in_place(std::span<const EntryMove> moves, Move&& move) {
  std::vector<EntryMove> waiting;  // moving up; the last one highest
  for (const EntryMove& m : moves) {
    // Every run below this one has been read: a waiting run whose destination ends below this
    // one's entries may move.
    while (!waiting.empty() && waiting.back().to + waiting.back().count <= m.from) {
      move(waiting.back());
      waiting.pop_back();
    }
    if (m.to < m.from) {
      move(m);
    } else {
      waiting.push_back(m);
    }
  }
  while (!waiting.empty()) {
    move(waiting.back());
    waiting.pop_back();
  }
}

/// Runs of moves (as move_runs_in_place takes them) cut into segments that may move at the same
/// time, each by move_runs_in_place, and the runs between them, whose entries are to be copied
/// aside before the segments move and written to their destinations after.
struct RunSegments {
  std::vector<std::pair<std::size_t, std::size_t>> segments;  ///< [first, end) of the runs
  std::vector<std::size_t> aside;                             ///< the runs between segments
};

/// Cuts `moves` into at most `parts` segments, each ending near an equal share of the entries. Two
/// segments may move at the same time when neither writes what the other reads: the destinations
/// of the one below end at or below the first source of the one above, and those of the one above
/// begin at or above the end of the last source of the one below (runs and destinations keep
/// their order, so the runs next to the cut decide). Where the runs next to an equal share move
/// too far for that, a few runs there are set aside instead (at most kAsideRuns a side, together
/// at most an eighth of a share), their sources then free to be written over; fewer segments
/// where even that fails.
inline RunSegments independent_segments(std::span<const EntryMove> moves, int parts) {
  constexpr std::size_t kAsideRuns = 4;
  RunSegments cut;
  const std::size_t runs = moves.size();
  std::size_t first = 0;  // of the current segment
  if (parts > 1 && runs > 1) {
    std::vector<std::size_t> before(runs + 1, 0);  // entries of the runs before each
    for (std::size_t k = 0; k < runs; ++k) before[k + 1] = before[k] + moves[k].count;
    const std::size_t share_entries = before[runs] / static_cast<std::size_t>(parts);
    for (int p = 1; p < parts; ++p) {
      const std::size_t share = share_entries * static_cast<std::size_t>(p);
      // The first run that begins at or past the share.
      const auto at = static_cast<std::size_t>(
          std::lower_bound(before.begin(), before.begin() + static_cast<std::ptrdiff_t>(runs),
                           share) -
          before.begin());
      for (std::size_t w = 0; w <= kAsideRuns; ++w) {
        // Runs [at - w, at + w) set aside; the segments end below and begin above them.
        if (at < first + w + 1 || at + w >= runs) break;
        const EntryMove& low = moves[at - w - 1];
        const EntryMove& high = moves[at + w];
        if (before[at + w] - before[at - w] > share_entries / 8) break;
        if (low.to + low.count <= high.from && high.to >= low.from + low.count) {
          cut.segments.emplace_back(first, at - w);
          for (std::size_t k = at - w; k < at + w; ++k) cut.aside.push_back(k);
          first = at + w;
          break;
        }
      }
    }
  }
  cut.segments.emplace_back(first, runs);
  return cut;
}

}  // namespace spatialhash::detail
