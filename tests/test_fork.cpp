// A child process forked after the library started its OpenMP threads (what Python's
// multiprocessing does by default on Linux). GNU libgomp's thread pool does not survive fork():
// a team of more than one thread in the child waited forever for pool threads that were not
// copied. The child's searches now run on one thread (usable_threads, src/threads.hpp) and must
// still give the oracle's lists, from an index it builds and from one it inherited.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <vector>

#include "datasets.hpp"
#include "oracle.hpp"
#include "rows_of.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

TEST(Fork, ChildSearchesAfterTheParentStartedItsThreads) {
  const datasets::Dataset d = datasets::uniform<3>(20000, 25.0, 1.2, 7);
  const std::vector<float> coords(d.xyz.begin(), d.xyz.end());
  const auto want = oracle::lists<3>(oracle::widen(coords), d.radius);
  const spatialhash::Options options{.threads = 2};
  const spatialhash::ListOptions sorted{.sorted = true};

  // The parent's own searches start the OpenMP thread pool.
  const spatialhash::Index<3, float> inherited(coords, d.radius, options);
  ASSERT_EQ(rows_of(inherited.neighbor_lists(sorted)), want);

  const pid_t child = fork();
  ASSERT_NE(child, -1) << "fork failed";
  if (child == 0) {
    // A hang ends the child by SIGALRM, which the parent reports; gtest is not used here.
    alarm(60);
    const spatialhash::Index<3, float> built(coords, d.radius, options);
    const bool right = rows_of(built.neighbor_lists(sorted)) == want &&
                       rows_of(inherited.neighbor_lists(sorted)) == want &&
                       built.neighbor_counts().size() == want.size();
    _exit(right ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
      << "the child hung (no result within 60 s)";
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's lists differ from the oracle's";

  // The parent keeps its threads.
  EXPECT_EQ(rows_of(inherited.neighbor_lists(sorted)), want);
}

}  // namespace
