// Neighbor lists (or query results) row by row, two ways: streamed from parallel blocks of ball
// queries (memory: one block), or from the library's parallel CSR result when it is small enough
// to hold. Also the estimate that chooses between them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <vector>

#include "progress.hpp"
#include "result_writers.hpp"
#include "spatialhash/spatialhash.hpp"

namespace spatialhash::cli {

/// Row r's hits are the indexed points within the index radius of position_of(r), minus point r
/// itself when `exclude_self` (full lists: the ball around point i holds i at distance 0;
/// coincident points with other indices stay, as the neighbor rule says). Each row reaches the
/// writer sorted by index. Returns the total number of hits.
template <int Dim, class T, class PositionOf>
std::uint64_t stream_rows(const Index<Dim, T>& index, std::size_t rows, PositionOf position_of,
                          bool exclude_self, bool with_distances, RowWriter& writer,
                          Progress& progress) {
  // A block's size adapts so that it holds about kTargetHits hits.
  constexpr std::size_t kTargetHits = std::size_t{1} << 21;
  constexpr std::size_t kMaxBlock = std::size_t{1} << 16;
  const int threads = index.threads();

  /// The rows of one thread's share of a block, concatenated.
  struct Piece {
    std::vector<Hit> row;  ///< scratch for sorting one row
    std::vector<index_t> indices;
    std::vector<double> distances;
    std::vector<std::size_t> ends;  ///< end of each row within indices
  };
  std::vector<Piece> pieces(static_cast<std::size_t>(threads) * 4);
  std::uint64_t total = 0;
  std::size_t block = 1024;
  for (std::size_t begin = 0; begin < rows;) {
    const std::size_t end = std::min(rows, begin + block);
    const auto count = static_cast<std::int64_t>(pieces.size());
    std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t p = 0; p < count; ++p) {
      Piece& piece = pieces[p];
      piece.indices.clear();
      piece.distances.clear();
      piece.ends.clear();
      const std::size_t span = end - begin;
      const std::size_t first = begin + span * p / count, last = begin + span * (p + 1) / count;
      try {
        for (std::size_t r = first; r < last; ++r) {
          piece.row.clear();
          index.for_each_in_ball_batch(position_of(r), kIndexRadius,
                                       [&](std::span<const Hit> batch) {
                                         for (const Hit& h : batch) {
                                           if (!exclude_self || h.index != r) {
                                             piece.row.push_back(h);
                                           }
                                         }
                                       });
          std::sort(piece.row.begin(), piece.row.end(),
                    [](const Hit& a, const Hit& b) { return a.index < b.index; });
          for (const Hit& h : piece.row) {
            piece.indices.push_back(h.index);
            if (with_distances) piece.distances.push_back(std::sqrt(h.distance_squared));
          }
          piece.ends.push_back(piece.indices.size());
        }
      } catch (...) {
#pragma omp critical(spatialhash_cli_rows)
        if (!failure) failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
    std::size_t block_hits = 0;
    for (const Piece& piece : pieces) {
      std::size_t start = 0;
      for (std::size_t stop : piece.ends) {
        const std::span<const index_t> neighbors(piece.indices.data() + start, stop - start);
        writer.add_row(neighbors, with_distances ? std::span<const double>(
                                                       piece.distances.data() + start, stop - start)
                                                 : std::span<const double>());
        start = stop;
      }
      block_hits += piece.indices.size();
    }
    total += block_hits;
    progress.update(end);
    // Next block: aim at kTargetHits hits from this block's density.
    const double per_row = static_cast<double>(block_hits) / static_cast<double>(end - begin);
    const double wanted = per_row > 0 ? static_cast<double>(kTargetHits) / per_row : kMaxBlock;
    block = static_cast<std::size_t>(std::clamp(wanted, 1.0, static_cast<double>(kMaxBlock)));
    begin = end;
  }
  return total;
}

/// Hands the rows of a CSR result to the writer in order. Returns the number of entries.
inline std::uint64_t write_rows(const NeighborLists& lists, RowWriter& writer, Progress& progress) {
  const bool with_distances = !lists.distances.empty();
  for (std::size_t i = 0; i < lists.size(); ++i) {
    const std::size_t begin = lists.offsets[i], count = lists.count(i);
    writer.add_row(std::span<const index_t>(lists.indices).subspan(begin, count),
                   with_distances ? std::span<const double>(lists.distances).subspan(begin, count)
                                  : std::span<const double>());
    if (i % 65536 == 0) progress.update(i);
  }
  return lists.indices.size();
}

/// Mean number of neighbors per point, measured with ball queries around up to 2000 evenly
/// spaced points: the estimate that decides whether a result is small enough to build in memory.
template <int Dim, class T>
double sample_mean_neighbors(const Index<Dim, T>& index, std::span<const T> coords) {
  constexpr std::size_t kSample = 2000;
  const std::size_t n = coords.size() / Dim;
  if (n == 0) return 0.0;
  const std::size_t s = std::min(n, kSample);
  std::uint64_t hits = 0;
  for (std::size_t j = 0; j < s; ++j) {
    const std::size_t i = j * n / s;
    typename Index<Dim, T>::Position p;
    for (int k = 0; k < Dim; ++k) p[k] = static_cast<double>(coords[i * Dim + k]);
    index.for_each_in_ball_batch(p, kIndexRadius,
                                 [&](std::span<const Hit> batch) { hits += batch.size(); });
    hits -= 1;  // the point itself
  }
  return static_cast<double>(hits) / static_cast<double>(s);
}

}  // namespace spatialhash::cli
