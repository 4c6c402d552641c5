// Calls from inside the caller's own OpenMP parallel region. Nested regions then run on a team of
// one thread (unless the program enables nested parallelism), fewer than Options::threads asks
// for: every engine must share its work out by the team it gets. Before that was so, the default
// engine's radix sort and prefix sums left the slices of the missing threads undone: wrong lists
// from each thread, and a hang in one of them at 200k points.
#include <gtest/gtest.h>
#include <omp.h>

#include <random>
#include <string>

#include "check_against_oracle.hpp"
#include "datasets.hpp"
#include "engine_cases.hpp"
#include "sanitized_build.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

/// Uniform points in a long thin box, where the oracle's sweep along the long axis stays short.
/// 80000 of them take the default engine's build down every parallel path (radix sort threads
/// from 8192 keys, its top-digit pass from 65536, parallel prefix sums from 65536).
template <int Dim>
datasets::Dataset long_box(std::size_t n, std::uint64_t seed) {
  auto g = datasets::rng(seed);
  std::uniform_real_distribution<double> along(0.0, 4000.0), across(0.0, 10.0);
  datasets::Dataset d{"long_box", {}, 2.0};
  for (std::size_t i = 0; i < n; ++i) {
    d.xyz.push_back(along(g));
    for (int k = 1; k < Dim; ++k) d.xyz.push_back(across(g));
  }
  return d;
}

/// Restores the program's nesting setting when a test ends, whatever it set.
class NestingLevels {
 public:
  explicit NestingLevels(int levels) : saved_(omp_get_max_active_levels()) {
    omp_set_max_active_levels(levels);
  }
  ~NestingLevels() { omp_set_max_active_levels(saved_); }
  NestingLevels(const NestingLevels&) = delete;
  NestingLevels& operator=(const NestingLevels&) = delete;

 private:
  int saved_;
};

/// Every thread of a team of two checks an index of its own, each built with `options` (their
/// threads set to `threads`), with nested regions allowed `levels` deep (1: a team of one inside).
template <int Dim, class T>
void check_in_a_parallel_region(spatialhash::Options options, int levels, int threads,
                                const datasets::Dataset& d) {
  const NestingLevels nesting(levels);
  options.threads = threads;
  int inner_team = 0;
#pragma omp parallel num_threads(2)
  {
    SCOPED_TRACE("outer thread " + std::to_string(omp_get_thread_num()) + ", " +
                 std::to_string(Dim) + "D, nesting " + std::to_string(levels));
#pragma omp parallel num_threads(threads)
#pragma omp single
    {
#pragma omp atomic write
      inner_team = omp_get_num_threads();
    }
    check_against_oracle<Dim, T>(options, d);
  }
  if (levels == 1) {
    EXPECT_EQ(inner_team, 1) << "a nested region should have run on one thread";
  }
}

class NestedParallel : public ::testing::TestWithParam<spatialhash::Options> {};

// Each engine with its defaults (brute_force left out: O(n^2) at this size); under the
// sanitizers the default engine alone, the one whose work is shared out by thread (its radix
// sort and prefix sums), the others' loops being OpenMP worksharing loops.
std::vector<spatialhash::Options> nested_cases() {
  std::vector<spatialhash::Options> cases;
  for (spatialhash::Engine engine : spatialhash::all_engines()) {
    if (engine == spatialhash::Engine::brute_force) continue;
    if (kSanitizedBuild && engine != spatialhash::Engine::cell_list) continue;
    cases.push_back({.engine = engine});
  }
  return cases;
}

TEST_P(NestedParallel, TeamOfOneInsideTheCallersRegion) {
  // The other engines' loops are OpenMP worksharing loops, several blocks each at 20000 points.
  const std::size_t n = GetParam().engine == spatialhash::Engine::cell_list ? 80000 : 20000;
  check_in_a_parallel_region<3, float>(GetParam(), 1, 2, long_box<3>(n, 1));
}

INSTANTIATE_TEST_SUITE_P(Engines, NestedParallel, ::testing::ValuesIn(nested_cases()),
                         engine_case_label);

// The default engine in 2D, asking for more threads than the outer team has, and with nested
// teams allowed (two threads inside each of two: four on a machine of two cores).
TEST(NestedParallelDefault, TwoDimensionsAndNestedTeams) {
  // 48 s under the sanitizers (four threads on CI's two cores); the case above covers the same
  // code there.
  if (kSanitizedBuild) GTEST_SKIP() << "release build only";
  const spatialhash::Options options{.engine = spatialhash::Engine::cell_list};
  check_in_a_parallel_region<2, double>(options, 1, 3, long_box<2>(80000, 2));
  check_in_a_parallel_region<3, float>(options, 2, 2, long_box<3>(80000, 3));
}

}  // namespace
