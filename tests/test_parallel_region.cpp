// parallel_region() (src/threads.hpp), through which every parallel region of the library goes:
// its body's orphaned work-sharing constructs must bind to the team it asks for. A team of one
// outside any region runs the body directly on the calling thread; a larger team shares each
// loop out once; called from inside the caller's own active region, it must open a team of its
// own, so that each caller thread's call still covers every iteration (bound to the caller's
// team instead, the loop would be split between the caller's threads: half a result each).
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "../src/threads.hpp"

namespace {

using spatialhash::detail::parallel_region;
using spatialhash::detail::team_size;

constexpr std::int64_t kIterations = 1000;

/// What one call of parallel_region() did: how often its body ran, in how large a team, how
/// often each loop iteration ran, how often its `single` ran, whether a region was active.
struct RegionRun {
  std::atomic<int> bodies = 0, singles = 0, team = 0;
  std::atomic<bool> in_parallel = false;
  std::vector<std::atomic<int>> hits = std::vector<std::atomic<int>>(kIterations);

  void body() {
    bodies.fetch_add(1);
    team.store(team_size());
    if (omp_in_parallel()) in_parallel.store(true);
#pragma omp for schedule(dynamic, 7)
    for (std::int64_t i = 0; i < kIterations; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1);
#pragma omp single
    singles.fetch_add(1);
#pragma omp barrier
  }

  void expect_each_iteration_once(const char* what) const {
    for (std::int64_t i = 0; i < kIterations; ++i) {
      ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << what << ": iteration " << i;
    }
    EXPECT_EQ(singles.load(), 1) << what;
  }
};

TEST(ParallelRegion, TeamOfOneRunsTheBodyOnTheCallingThread) {
  RegionRun run;
  parallel_region(1, [&] { run.body(); });
  EXPECT_EQ(run.bodies.load(), 1);
  EXPECT_EQ(run.team.load(), 1);
  EXPECT_FALSE(run.in_parallel.load()) << "a team of one opened a region";
  run.expect_each_iteration_once("one thread");
}

TEST(ParallelRegion, LargerTeamSharesEachLoopOnce) {
  RegionRun run;
  parallel_region(2, [&] { run.body(); });
  // OMP_DYNAMIC or a thread limit may give fewer threads: the body runs once per team member.
  EXPECT_EQ(run.bodies.load(), run.team.load());
  EXPECT_GE(run.team.load(), 1);
  if (!omp_get_dynamic() && omp_get_thread_limit() >= 2) {
    EXPECT_EQ(run.team.load(), 2) << "two threads asked, none to hold them back";
  }
  run.expect_each_iteration_once("two threads");
}

TEST(ParallelRegion, InsideTheCallersRegionEachCallHasATeamOfItsOwn) {
  for (const int threads : {1, 2}) {
    std::vector<RegionRun> runs(2);
    int outer_team = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
      outer_team = omp_get_num_threads();
      parallel_region(
          threads, [&] { runs[static_cast<std::size_t>(omp_get_ancestor_thread_num(1))].body(); });
    }
    for (int t = 0; t < outer_team; ++t) {
      SCOPED_TRACE("caller thread " + std::to_string(t) + ", " + std::to_string(threads) +
                   " threads asked");
      runs[static_cast<std::size_t>(t)].expect_each_iteration_once("nested");
    }
  }
}

}  // namespace
