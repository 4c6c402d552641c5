// The benchmark harness's repetition policy (bench/measure.hpp, repeat()): how many times a
// contender runs for a given budget, driven by scripted repetition times.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "../bench/measure.hpp"

namespace {

/// The repetition times repeat() records when each repetition takes the next of `script` ms.
std::vector<double> run_script(const bench::RepPolicy& policy, const std::vector<double>& script) {
  std::size_t next = 0;
  return bench::repeat(policy, [&] { return script.at(next++); });
}

TEST(BenchRepeat, FastRepetitionsRunAsOftenAsAsked) {
  EXPECT_EQ(run_script({5, 3000.0}, {10, 10, 10, 10, 10, 10}).size(), 5u);
  EXPECT_EQ(run_script({1, 3000.0}, {10, 10}).size(), 1u);
}

TEST(BenchRepeat, AFirstRepetitionOverTheBudgetRunsOnce) {
  EXPECT_EQ(run_script({5, 3000.0}, {3500, 10, 10}), (std::vector<double>{3500}));
}

// One cold repetition must not set the median: a run that reaches the budget on its second
// repetition still gets a third (the median of two would be their mean).
TEST(BenchRepeat, TheBudgetStopsNoRunBeforeItsThirdRepetition) {
  EXPECT_EQ(run_script({5, 3000.0}, {2800, 400, 400, 400, 400}),
            (std::vector<double>{2800, 400, 400}));
  EXPECT_EQ(run_script({5, 3000.0}, {100, 2950, 400, 400, 400}),
            (std::vector<double>{100, 2950, 400}));
}

TEST(BenchRepeat, TheBudgetStopsARunAfterItsThirdRepetition) {
  EXPECT_EQ(run_script({7, 3000.0}, {1000, 1000, 1000, 10, 10}).size(), 3u);
  EXPECT_EQ(run_script({7, 3000.0}, {500, 500, 500, 500, 500, 500, 500, 500}).size(), 6u);
}

TEST(BenchRepeat, FewerRepetitionsAskedThanTheMinimumAreKept) {
  EXPECT_EQ(run_script({2, 3000.0}, {2800, 400, 400}).size(), 2u);
}

}  // namespace
