// CandidateRuns (src/simd/block_filter.hpp), the runs of candidate indices one filter call tests:
// add() keeps the non-empty runs in order, and clip() (a half search's runs after its block's
// first query) keeps exactly the candidates at or after its bound, in order, for random runs and
// bounds, into another object or into the runs themselves. The reference is the plain list of
// candidate indices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "../src/simd/block_filter.hpp"

namespace {

using spatialhash::detail::CandidateRuns;
using spatialhash::detail::kMaxRuns;

/// Every candidate index of `runs`, in the order a filter meets them.
std::vector<std::uint32_t> candidates(const CandidateRuns& runs) {
  std::vector<std::uint32_t> all;
  for (int i = 0; i < runs.count; ++i) {
    EXPECT_LT(runs.run[i].begin, runs.run[i].end) << "run " << i << " is empty";
    for (std::uint32_t c = runs.run[i].begin; c < runs.run[i].end; ++c) all.push_back(c);
  }
  return all;
}

TEST(CandidateRuns, ClipKeepsTheCandidatesFromItsBound) {
  std::mt19937_64 g(77);
  for (int trial = 0; trial < 4000; ++trial) {
    // Up to kMaxRuns runs between sorted cuts, some of them empty (equal cuts), as a column
    // search makes them: ascending and apart.
    const int added = std::uniform_int_distribution<int>(0, kMaxRuns)(g);
    std::vector<std::uint32_t> cuts(2 * static_cast<std::size_t>(added));
    for (auto& cut : cuts) cut = std::uniform_int_distribution<std::uint32_t>(0, 60)(g);
    std::sort(cuts.begin(), cuts.end());
    CandidateRuns runs;
    std::vector<std::uint32_t> expected;
    for (int i = 0; i < added; ++i) {
      runs.add(cuts[2 * i], cuts[2 * i + 1]);
      for (std::uint32_t c = cuts[2 * i]; c < cuts[2 * i + 1]; ++c) expected.push_back(c);
    }
    ASSERT_EQ(candidates(runs), expected) << "trial " << trial;

    const auto from = std::uniform_int_distribution<std::uint32_t>(0, 64)(g);
    std::vector<std::uint32_t> after;
    for (std::uint32_t c : expected) {
      if (c >= from) after.push_back(c);
    }
    CandidateRuns clipped;
    clipped.add(100, 200);  // whatever it held before is replaced
    clipped.clip(runs, from);
    ASSERT_EQ(candidates(clipped), after) << "trial " << trial << ", from " << from;
    runs.clip(runs, from);  // in place: each run is read before any is written over it
    ASSERT_EQ(candidates(runs), after) << "trial " << trial << ", from " << from << " in place";
  }
}

}  // namespace
