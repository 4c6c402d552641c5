// Pair fold: a block of a periodic index's inner pairs cut to the pairs of the periodic rule and
// mapped, in place (ImageFold, engine_base.hpp; CellList::pairs_in_one_search). Pair (a, b),
// a < b, stays as it is where b is a point (b < first); where b is an image, it becomes
// (a, origin[b - first]) where that point lies above a, and is dropped otherwise (two images, or
// an image and a point after its own). Distances, where given, move with their pairs.
//
// The scalar kernel branches on each pair (without a branch it took 1.6x as long: origin[0] read
// for every point's pair); the vector ones test 8 (AVX-512) or 4 (AVX2) pairs at once, gather the
// images' points, and write the kept pairs with a compress (AVX-512) or a permutation from a table
// (AVX2), a block with no image in one copy. A scalar version for every machine, and AVX2 and
// AVX-512 ones chosen at run time.
#pragma once

#include <cstddef>

#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// Folds pairs[0 .. count) (and distances[0 .. count), unless null) in place as the header says,
/// the kept ones in order at the front; returns how many are kept. Every origin[k] < first.
using PairFoldFn = std::size_t (*)(Pair* pairs, double* distances, std::size_t count, index_t first,
                                   const index_t* origin);

std::size_t pair_fold_scalar(Pair* pairs, double* distances, std::size_t count, index_t first,
                             const index_t* origin);
std::size_t pair_fold_avx2(Pair* pairs, double* distances, std::size_t count, index_t first,
                           const index_t* origin);
std::size_t pair_fold_avx512(Pair* pairs, double* distances, std::size_t count, index_t first,
                             const index_t* origin);

/// The fastest pair fold this build and processor run, at or below `limit`.
PairFoldFn best_pair_fold(Simd limit = Simd::automatic);

/// The scalar fold of pairs[from .. count) onto the kept ones' end `kept` (<= from): the vector
/// kernels' tail. Returns the new end.
inline std::size_t pair_fold_tail(Pair* pairs, double* distances, std::size_t from,
                                  std::size_t count, std::size_t kept, index_t first,
                                  const index_t* origin) {
  for (std::size_t k = from; k < count; ++k) {
    const Pair p = pairs[k];
    const bool image = p.second >= first;
    const index_t mapped = image ? origin[p.second - first] : p.second;
    // Every pair written, the cursor passing the kept ones. With two images, p.first >= first >
    // mapped: dropped by the same test.
    pairs[kept] = Pair{p.first, mapped};
    if (distances != nullptr) distances[kept] = distances[k];
    kept += !image || p.first < mapped;
  }
  return kept;
}

}  // namespace spatialhash::detail
