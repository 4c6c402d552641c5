// The scalar pair fold and the run-time choice among the pair folds (see pair_fold.hpp).
#include "pair_fold.hpp"

#include "kernel_choice.hpp"

namespace spatialhash::detail {

std::size_t pair_fold_scalar(Pair* pairs, double* distances, std::size_t count, index_t first,
                             const index_t* origin) {
  return pair_fold_tail(pairs, distances, 0, count, 0, first, origin);
}

PairFoldFn best_pair_fold(Simd limit) {
  return choose_kernel<PairFoldFn>(limit, SPATIALHASH_AVX512_KERNEL(&pair_fold_avx512),
                                   SPATIALHASH_AVX2_KERNEL(&pair_fold_avx2), &pair_fold_scalar);
}

}  // namespace spatialhash::detail
