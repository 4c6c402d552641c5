// transpose_csr: the one counting sort that turns CSR rows around, for query_ball_tree
// (transpose_rows.hpp) and for sparse_distance_matrix's CSR against positions
// (distance_entries.hpp): in both, the cross search's rows are the positions' and the answer's
// rows the index's points'.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "../../src/threads.hpp"

namespace spatialhash::python {

/// Most threads transpose_csr shares its work among: each holds a count per output row.
inline constexpr int kMaxTransposeThreads = 4;

/// Turns `in_rows` CSR rows (offsets[0 .. in_rows], entries' columns in columns[]) around into
/// `out_rows` rows. Writes the transposed offsets by start(c, offset) for c in [0, out_rows], then
/// calls place(at, q, k) for entry k of input row q, `at` being its place among the transposed
/// entries: each output row lists its input rows ascending (and an input row's entries of one
/// column in order). Every column must lie in [0, out_rows): the caller checks. Runs on a team
/// of up to `threads` threads (at most kMaxTransposeThreads), each taking a range of input rows:
/// it counts its entries per output row, and the counts of the threads before it say where its
/// entries of each output row go, so that no two threads share a cursor and no entry is read
/// twice (serial, the placement had taken 36 of the 49 ms of a 100k-position CSR). Call it
/// without the GIL.
template <class Offsets, class Columns, class Start, class Place>
void transpose_csr(const Offsets& offsets, const Columns& columns, std::size_t in_rows,
                   std::size_t out_rows, int threads, Start&& start, Place&& place) {
  const auto most = static_cast<std::size_t>(std::clamp(threads, 1, kMaxTransposeThreads));
  // cursor[t * out_rows + c]: part t's count of output row c, then where its next entry of row
  // c goes. The counting team (which may be smaller than asked) sets the parts, one a thread;
  // the placing team, which may be smaller again, takes them in turn.
  std::vector<std::size_t> cursor(most * out_rows, 0);
  std::size_t team = 1;
  const auto my_rows = [&](std::size_t part) {
    return std::pair{in_rows * part / team, in_rows * (part + 1) / team};
  };
  detail::parallel_region(static_cast<int>(most), [&] {
    const auto me = static_cast<std::size_t>(detail::thread_id());
#pragma omp single
    team = static_cast<std::size_t>(detail::team_size());
    // (the single's barrier: every thread sees the team's size)
    std::size_t* mine = cursor.data() + me * out_rows;
    const auto [first, last] = my_rows(me);
    for (auto k = static_cast<std::size_t>(offsets[first]);
         k < static_cast<std::size_t>(offsets[last]); ++k) {
      ++mine[static_cast<std::size_t>(columns[k])];
    }
  });
  std::size_t total = 0;
  for (std::size_t c = 0; c < out_rows; ++c) {
    start(c, total);
    for (std::size_t t = 0; t < team; ++t) {
      const std::size_t count = cursor[t * out_rows + c];
      cursor[t * out_rows + c] = total;
      total += count;
    }
  }
  start(out_rows, total);
  detail::parallel_region(static_cast<int>(team), [&] {
    const auto placers = static_cast<std::size_t>(detail::team_size());
    for (auto part = static_cast<std::size_t>(detail::thread_id()); part < team; part += placers) {
      std::size_t* mine = cursor.data() + part * out_rows;
      const auto [first, last] = my_rows(part);
      for (std::size_t q = first; q < last; ++q) {
        const auto end = static_cast<std::size_t>(offsets[q + 1]);
        for (auto k = static_cast<std::size_t>(offsets[q]); k < end; ++k) {
          place(mine[static_cast<std::size_t>(columns[k])]++, q, k);
        }
      }
    }
  });
}

}  // namespace spatialhash::python
