// The run-time choice of SIMD kernels (src/simd/kernel_choice.hpp), against its rule written out
// here from simd_available(): for every cap, the widest level at or below it that this build and
// processor run; and every kernel family (block filter, key pass, row distances, row sort, pair
// fold) picks one build per level by that choice: a distinct build for each level that runs, the
// scalar one at the scalar cap, and never a null kernel.
#include <gtest/gtest.h>

#include <array>
#include <set>

#include "../src/simd/block_filter.hpp"
#include "../src/simd/cell_keys.hpp"
#include "../src/simd/distance_kernels.hpp"
#include "../src/simd/kernel_choice.hpp"
#include "../src/simd/pair_fold.hpp"
#include "../src/simd/row_sort.hpp"

namespace {

using spatialhash::Simd;
using spatialhash::simd_available;
using spatialhash::detail::kernel_level;

/// The concrete levels, widest first.
constexpr std::array<Simd, 3> kWidestFirst{Simd::avx512, Simd::avx2, Simd::scalar};

/// The rule, written out: the first level, widest first, that is no wider than `limit` and runs.
Simd expected_level(Simd limit) {
  bool allowed = limit == Simd::automatic || limit == Simd::avx512;
  for (Simd level : kWidestFirst) {
    allowed = allowed || level == limit;
    if (allowed && simd_available(level)) return level;
  }
  return Simd::scalar;
}

TEST(KernelChoice, EveryCapGetsTheWidestLevelThatRunsAtOrBelowIt) {
  EXPECT_TRUE(simd_available(Simd::scalar));
  EXPECT_TRUE(simd_available(Simd::automatic));
  for (Simd limit : {Simd::automatic, Simd::avx512, Simd::avx2, Simd::scalar}) {
    SCOPED_TRACE(static_cast<int>(limit));
    const Simd level = kernel_level(limit);
    EXPECT_EQ(level, expected_level(limit));
    EXPECT_NE(level, Simd::automatic);
    EXPECT_TRUE(simd_available(level));
  }
  EXPECT_EQ(kernel_level(Simd::scalar), Simd::scalar);
  EXPECT_EQ(kernel_level(Simd::automatic), kernel_level(Simd::avx512));
}

TEST(KernelChoice, ChooseKernelReturnsTheChosenLevelsBuild) {
  using Fn = int (*)();
  const Fn wide = [] { return 512; }, narrow = [] { return 2; }, plain = [] { return 1; };
  for (Simd limit : {Simd::automatic, Simd::avx512, Simd::avx2, Simd::scalar}) {
    SCOPED_TRACE(static_cast<int>(limit));
    const int expected = kernel_level(limit) == Simd::avx512 ? 512
                         : kernel_level(limit) == Simd::avx2 ? 2
                                                             : 1;
    EXPECT_EQ(spatialhash::detail::choose_kernel<Fn>(limit, wide, narrow, plain)(), expected);
  }
}

/// A family's choice per level: a build for every level, distinct among the levels that run,
/// the same for caps that choose the same level.
template <class Fn, class Best>
void check_family(Best best) {
  std::set<Fn> distinct;
  for (Simd level : kWidestFirst) {
    const Fn kernel = best(level);
    ASSERT_NE(kernel, nullptr);
    if (kernel_level(level) == level) distinct.insert(kernel);
    EXPECT_EQ(kernel, best(kernel_level(level)));
  }
  EXPECT_EQ(best(Simd::automatic), best(kernel_level(Simd::automatic)));
  std::size_t running = 0;
  for (Simd level : kWidestFirst) running += simd_available(level) ? 1 : 0;
  EXPECT_EQ(distinct.size(), running);
}

TEST(KernelChoice, EveryKernelFamilyFollowsTheChoice) {
  using namespace spatialhash::detail;
  check_family<BlockFilterFn<3>>([](Simd s) { return best_block_filter<3>(s); });
  check_family<BlockFilterFn<2>>([](Simd s) { return best_block_filter<2>(s); });
  check_family<CellKeysFn<3, float>>([](Simd s) { return best_cell_keys<3, float>(s); });
  check_family<CellKeysFn<2, double>>([](Simd s) { return best_cell_keys<2, double>(s); });
  check_family<RowDistancesFn<3, double>>([](Simd s) { return best_row_distances<3, double>(s); });
  check_family<RowDistancesFn<2, float>>([](Simd s) { return best_row_distances<2, float>(s); });
  check_family<RowSortFn>([](Simd s) { return best_row_sort(s); });
  check_family<PairFoldFn>([](Simd s) { return best_pair_fold(s); });
  EXPECT_EQ(best_pair_fold(Simd::scalar), &pair_fold_scalar);
  EXPECT_EQ(best_row_sort(Simd::scalar), &row_sort_scalar);
  EXPECT_EQ(best_block_filter<3>(Simd::scalar), &block_filter_scalar<3>);
}

}  // namespace
