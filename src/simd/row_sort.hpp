// Row sort: orders one neighbor row (the `sorted` option of the list queries) by neighbor index,
// carrying distances along, by rank: an entry's place is the number of entries of its row that
// order before it. That is branch-free and, on the short rows neighbor lists have, faster than
// std::sort; the vector kernels count 8 or 16 entries' ranks at once (W1 1M lists, 28 entries
// per row, 2 threads: about 78 ms of sorting with the scalar kernel, 30 with AVX-512; see
// docs/benchmarks.md). The vector kernels sort rows without distances with a sorting network
// instead (bitonic merges of the row's entries laid out by columns): up to 256 entries in 1, 2,
// 4, 8 or 16 AVX-512 registers (on a Zen 5, `bench/row_sort`: a row of 28 in 12 ns, of 64 in 26
// ns, of 100 in 45 ns, of 200 in 90 ns), or up to 64 in one to eight AVX2 ones (row_sort_avx2.cpp;
// on the same Zen 5: a row of 28 in 19 ns, of 64 in 34 ns, of 131 through runs and merges in 173
// ns; on a Zen 3 before the layout by columns, 6-10x the scalar kernel and 9-18x std::sort). A
// scalar version for every machine, and AVX2 and AVX-512 ones chosen at run time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// The longest row a rank sort takes; sort_rows gives longer ones to std::sort.
inline constexpr std::size_t kRankSortMax = 64;

/// The longest row the AVX-512 kernel sorts whole without distances (its network in sixteen
/// registers); sort_row() sorts longer rows by runs of this length with that kernel.
inline constexpr std::size_t kNetworkMaxAvx512 = 256;

/// Batcher's odd-even merge sort on `n` (a power of two) places: writes its compare-exchanges, in
/// order, to `pairs` (when not null) as {lower place, upper place}, and returns how many there
/// are (1, 5, 19 and 63 for 2, 4, 8 and 16 places). The vector networks sort each lane's column
/// of registers with it.
constexpr int batcher_network(int n, std::array<int, 2>* pairs) {
  int count = 0;
  for (int p = 1; p < n; p *= 2) {
    for (int k = p; k >= 1; k /= 2) {
      for (int j = k % p; j + k < n; j += 2 * k) {
        for (int i = 0; i < k && i + j + k < n; ++i) {
          if ((i + j) / (2 * p) != (i + j + k) / (2 * p)) continue;
          if (pairs != nullptr) pairs[count] = {i + j, i + j + k};
          ++count;
        }
      }
    }
  }
  return count;
}

/// batcher_network(N), computed at compile time.
template <int N>
inline constexpr auto kBatcherNetwork = [] {
  std::array<std::array<int, 2>, static_cast<std::size_t>(batcher_network(N, nullptr))> pairs{};
  batcher_network(N, pairs.data());
  return pairs;
}();
static_assert(kBatcherNetwork<8>.size() == 19 && kBatcherNetwork<16>.size() == 63);

/// Writes the entries from[0 .. length) to ids[0 .. length) in ascending order, with
/// distances[k] (unless distances is null) moving with entry k; length <= kRankSortMax (without
/// distances, up to kNetworkMaxAvx512 for row_sort_avx512). `from` may
/// be `ids` (a sort in place) or a row elsewhere (the search's output: the collectors sort rows as
/// they store them, so that no copy lies between the search and the sort). Ranks are a
/// permutation only when the entries are distinct (they are in a neighbor row): a rank sort
/// checks that and returns false, writing nothing, when they are not. The sorting networks (rows
/// without distances, vector kernels) sort any row and return true.
using RowSortFn = bool (*)(const index_t* from, index_t* ids, double* distances,
                           std::size_t length);

bool row_sort_scalar(const index_t* from, index_t* ids, double* distances, std::size_t length);
bool row_sort_avx2(const index_t* from, index_t* ids, double* distances, std::size_t length);
bool row_sort_avx512(const index_t* from, index_t* ids, double* distances, std::size_t length);

/// Merges the ascending ranges a[0 .. na) and b[0 .. nb) into out[0 .. na + nb), ascending.
using RunMergeFn = void (*)(const index_t* a, std::size_t na, const index_t* b, std::size_t nb,
                            index_t* out);

/// The blocks the vector merges take at a time; sort_row pads runs to a multiple of the one it
/// uses.
inline constexpr std::size_t kMergeUnitAvx2 = 32, kMergeUnitAvx512 = 64;

/// RunMergeFn with AVX2: kMergeUnitAvx2 entries at a time through a bitonic merge of eight
/// registers. na and nb must be multiples of kMergeUnitAvx2, na at least kMergeUnitAvx2. Called
/// for the AVX2 row sort.
void merge_runs_avx2(const index_t* a, std::size_t na, const index_t* b, std::size_t nb,
                     index_t* out);
/// RunMergeFn with AVX-512: kMergeUnitAvx512 entries at a time through a bitonic merge of eight
/// registers. na and nb must be multiples of kMergeUnitAvx512, na at least kMergeUnitAvx512.
/// Called for the AVX-512 row sort.
void merge_runs_avx512(const index_t* a, std::size_t na, const index_t* b, std::size_t nb,
                       index_t* out);

/// The fastest row sort this build and processor run, at or below `limit`.
RowSortFn best_row_sort(Simd limit = Simd::automatic);

/// The longest row sort_row() sorts by runs, merged (8 KiB of stack).
inline constexpr std::size_t kMergeSortMax = 1024;

/// Writes one row of neighbor indices, from[0 .. length), to ids[0 .. length) in ascending order
/// (`from` may be `ids`; otherwise the two must not overlap) with `kernel` (best_row_sort()):
/// whole, up to the kernel's longest run (kNetworkMaxAvx512 entries with AVX-512, kRankSortMax
/// otherwise); by such runs, each sorted by `kernel` and then merged (32 or 64 entries at a time
/// with a vector kernel, one at a time without branches with the scalar one), up to kMergeSortMax;
/// by std::sort when it is longer or the kernel refuses a run (a rank sort, on a repeated index).
/// Out of line on purpose: the collectors call it from the search's row emission, where an inlined
/// std::sort would only add code.
void sort_row(RowSortFn kernel, const index_t* from, index_t* ids, std::size_t length);

/// Writes the row in rank order from its copies (keys, distance_copy) once `placed` (a bit per
/// rank) shows the ranks are a permutation of [0, length); returns whether they were.
inline bool place_by_rank(const index_t* keys, const double* distance_copy, const unsigned* ranks,
                          std::size_t length, index_t* ids, double* distances) {
  std::uint64_t placed = 0;
  for (std::size_t k = 0; k < length; ++k) placed |= std::uint64_t{1} << ranks[k];
  const std::uint64_t all = length == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << length) - 1;
  if (placed != all) return false;
  for (std::size_t k = 0; k < length; ++k) ids[ranks[k]] = keys[k];
  if (distances != nullptr) {
    for (std::size_t k = 0; k < length; ++k) distances[ranks[k]] = distance_copy[k];
  }
  return true;
}

}  // namespace spatialhash::detail
