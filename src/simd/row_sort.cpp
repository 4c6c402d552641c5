// The scalar row sort (see row_sort.hpp) and the run-time choice of row sort.
#include "row_sort.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "kernel_choice.hpp"

namespace spatialhash::detail {

bool row_sort_scalar(const index_t* from, index_t* ids, double* distances, std::size_t length) {
  std::array<index_t, kRankSortMax> keys;
  std::array<double, kRankSortMax> distance_copy;
  std::array<unsigned, kRankSortMax> ranks;
  std::copy(from, from + length, keys.begin());
  if (distances != nullptr) std::copy(distances, distances + length, distance_copy.begin());
  for (std::size_t k = 0; k < length; ++k) {
    unsigned rank = 0;
    for (std::size_t j = 0; j < length; ++j) rank += keys[j] < keys[k] ? 1u : 0u;
    ranks[k] = rank;
  }
  return place_by_rank(keys.data(), distance_copy.data(), ranks.data(), length, ids, distances);
}

namespace {

/// Merges the sorted ranges a[0 .. na) and b[0 .. nb) into out[0 .. na + nb) without a branch on
/// the data: the rows are random indices, so a branch per entry would mispredict half the time.
/// (Two chains at once, one from the fronts and one from the backs, were slower: their bounds
/// checks cost more than the overlap gained.)
void merge_branch_free(const index_t* a, std::size_t na, const index_t* b, std::size_t nb,
                       index_t* out) {
  const index_t* const a_end = a + na;
  const index_t* const b_end = b + nb;
  while (a != a_end && b != b_end) {
    const index_t x = *a, y = *b;
    const bool take_b = y < x;
    *out++ = take_b ? y : x;
    a += take_b ? 0 : 1;
    b += take_b ? 1 : 0;
  }
  out = std::copy(a, a_end, out);
  std::copy(b, b_end, out);
}

/// How sort_row uses a kernel on long rows: the longest run the kernel sorts whole without
/// distances, the merge of runs, and the block the merge takes at a time (runs are padded to a
/// multiple of it).
struct KernelRuns {
  std::size_t run;
  RunMergeFn merge;
  std::size_t unit;
};

/// The runs that go with `kernel`: with AVX-512, runs of 256 (its network in sixteen registers)
/// merged 64 entries at a time (on a Zen 5, against the AVX2 merge's 16 at a time,
/// `bench/row_sort`: rows of 131 entries 197-199 -> 134-135 ns, of 800 2.0-2.1 -> 1.1 us); with
/// AVX2 runs of 64 merged 32 at a time; without a vector kernel runs of 64 merged one entry at a
/// time.
KernelRuns runs_for(RowSortFn kernel) {
  // A kernel this build leaves out is null here, and `kernel` never is.
  if (kernel == SPATIALHASH_AVX512_KERNEL(&row_sort_avx512)) {
    return {kNetworkMaxAvx512, SPATIALHASH_AVX512_KERNEL(&merge_runs_avx512), kMergeUnitAvx512};
  }
  if (kernel == SPATIALHASH_AVX2_KERNEL(&row_sort_avx2)) {
    return {kRankSortMax, SPATIALHASH_AVX2_KERNEL(&merge_runs_avx2), kMergeUnitAvx2};
  }
  return {kRankSortMax, &merge_branch_free, 1};
}

/// Sorts a row of runs.run < length <= kMergeSortMax entries from `from` into `ids`: runs of
/// runs.run sorted by `kernel` into a buffer on the stack padded with the largest index to a
/// multiple of the merge's unit (a padded run is still sorted, and entries equal to the padding
/// are indistinguishable from it; kMergeSortMax and every run length are multiples of every unit),
/// merged pairwise back and forth between two buffers, and the first `length` entries copied to
/// `ids`. Returns false, writing nothing to `ids`, when the kernel refuses a run (a repeated
/// index).
bool sort_by_runs(RowSortFn kernel, const KernelRuns& runs, const index_t* from, index_t* ids,
                  std::size_t length) {
  static_assert(kMergeSortMax % kMergeUnitAvx512 == 0 && kRankSortMax % kMergeUnitAvx512 == 0 &&
                kNetworkMaxAvx512 % kMergeUnitAvx512 == 0 &&
                kMergeUnitAvx512 % kMergeUnitAvx2 == 0);
  const std::size_t padded = (length + runs.unit - 1) / runs.unit * runs.unit;
  index_t first[kMergeSortMax], second[kMergeSortMax];  // entries written before they are read
  for (std::size_t start = 0; start < length; start += runs.run) {
    const std::size_t run = std::min(runs.run, length - start);
    if (!kernel(from + start, first + start, nullptr, run)) return false;
  }
  std::fill(first + length, first + padded, std::numeric_limits<index_t>::max());
  index_t* source = first;
  index_t* target = second;
  for (std::size_t run = runs.run; run < padded; run *= 2) {
    for (std::size_t start = 0; start < padded; start += 2 * run) {
      const std::size_t middle = std::min(start + run, padded);
      const std::size_t end = std::min(start + 2 * run, padded);
      runs.merge(source + start, middle - start, source + middle, end - middle, target + start);
    }
    std::swap(source, target);
  }
  std::copy(source, source + length, ids);
  return true;
}

}  // namespace

void sort_row(RowSortFn kernel, const index_t* from, index_t* ids, std::size_t length) {
  // Every kernel takes rows of up to kRankSortMax whole: those, the most common, are decided
  // before runs_for() (whose result, passed on the stack, cost short rows about 0.5 ns).
  if (length <= kRankSortMax || length <= runs_for(kernel).run) {
    if (kernel(from, ids, nullptr, length)) return;
  } else if (length <= kMergeSortMax) {
    if (sort_by_runs(kernel, runs_for(kernel), from, ids, length)) return;
  }
  if (from != ids) std::copy(from, from + length, ids);
  std::sort(ids, ids + length);
}

RowSortFn best_row_sort(Simd limit) {
  return choose_kernel<RowSortFn>(limit, SPATIALHASH_AVX512_KERNEL(&row_sort_avx512),
                                  SPATIALHASH_AVX2_KERNEL(&row_sort_avx2), &row_sort_scalar);
}

}  // namespace spatialhash::detail
