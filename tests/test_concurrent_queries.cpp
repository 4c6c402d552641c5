// Queries on one index from several of the caller's own threads at once (std::thread, each query
// itself on OpenMP threads). Every query is const and keeps its scratch space in the call, so
// they may overlap: a simulation's worker threads can share one index. Each thread runs every
// kind of query, twice, and each result must be the oracle's.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <barrier>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "datasets.hpp"
#include "engine_cases.hpp"
#include "oracle.hpp"
#include "rows_of.hpp"
#include "sanitized_build.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using Rows = std::vector<std::vector<std::size_t>>;
using Pairs = std::vector<std::pair<std::size_t, std::size_t>>;

Rows sorted_rows(Rows rows) {
  for (auto& row : rows) std::sort(row.begin(), row.end());
  return rows;
}

Rows rows_of_neighbor_rows(const spatialhash::NeighborRows& rows) {
  Rows result(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto row = rows.row(i);
    result[i].assign(row.begin(), row.end());
  }
  return sorted_rows(std::move(result));
}

/// What every query must return, from the oracle.
struct Expected {
  Rows lists;
  Pairs pairs;
  std::vector<std::size_t> counts;
  std::vector<std::array<double, 3>> centers;
  Rows balls;  // of `centers`
  Rows cross;  // of `centers` as a query set
};

Expected expected_results(const datasets::Dataset& d) {
  Expected e;
  e.pairs = oracle::pairs<3>(d.xyz, d.radius);
  e.lists = oracle::lists_of_pairs(d.xyz.size() / 3, e.pairs);
  for (const auto& row : e.lists) e.counts.push_back(row.size());
  for (std::size_t q = 0; q < 200; ++q) {
    const std::size_t i = (q * 7919) % (d.xyz.size() / 3);
    e.centers.push_back({d.xyz[i * 3] + 0.3, d.xyz[i * 3 + 1] - 0.2, d.xyz[i * 3 + 2]});
    e.balls.push_back(oracle::ball<3>(d.xyz, e.centers.back(), d.radius));
  }
  e.cross = e.balls;
  return e;
}

/// Every kind of query once on `index`; the names of those whose results differ from `e`'s.
/// `together` waits for the other threads before each kind, so that the same kinds overlap.
std::vector<std::string> mismatches(const spatialhash::Index<3, float>& index, const Expected& e,
                                    std::span<const double> centers_xyz, std::barrier<>& together) {
  std::vector<std::string> wrong;
  auto check = [&wrong, &together](bool right, const char* name) {
    if (!right) wrong.emplace_back(name);
    together.arrive_and_wait();
  };
  together.arrive_and_wait();
  check(rows_of(index.neighbor_lists({.sorted = true})) == e.lists, "neighbor_lists sorted");
  check(sorted_rows(rows_of(index.neighbor_lists())) == e.lists, "neighbor_lists");
  check(rows_of_neighbor_rows(index.neighbor_rows()) == e.lists, "neighbor_rows");

  const spatialhash::PairList pairs = index.pairs({.sorted = true});
  Pairs got;
  for (const spatialhash::Pair& pair : pairs.pairs) got.emplace_back(pair.first, pair.second);
  check(got == e.pairs, "pairs");

  Pairs visited;
  index.for_each_pair(
      [&visited](std::size_t i, std::size_t j, double) { visited.emplace_back(i, j); });
  std::sort(visited.begin(), visited.end());
  check(visited == e.pairs, "for_each_pair");

  const auto counts = index.neighbor_counts();
  check(std::equal(counts.begin(), counts.end(), e.counts.begin(), e.counts.end()),
        "neighbor_counts");

  std::vector<spatialhash::index_t> ball;
  bool balls_right = true;
  for (std::size_t q = 0; q < e.centers.size(); ++q) {
    index.ball(e.centers[q], spatialhash::kIndexRadius, ball, true);
    balls_right =
        balls_right && std::equal(ball.begin(), ball.end(), e.balls[q].begin(), e.balls[q].end());
  }
  check(balls_right, "ball");

  const spatialhash::PointsView<3, double> queries(centers_xyz.data(), centers_xyz.size() / 3);
  check(rows_of(index.cross(queries, {.sorted = true})) == e.cross, "cross");
  check(rows_of_neighbor_rows(index.cross_rows(queries)) == e.cross, "cross_rows");
  return wrong;
}

class ConcurrentQueries : public ::testing::TestWithParam<spatialhash::Options> {};

// Points of the shared index. Sanitized builds take fewer at the same density (the brute-force
// oracle, O(n^2), ran once per engine case: 29 s of the sanitized tests' CPU time on CI's two
// cores); still 20 or more work blocks for the index's two threads.
constexpr std::size_t kSharedIndexPoints = kSanitizedBuild ? 6000 : 20000;

TEST_P(ConcurrentQueries, FourThreadsShareOneIndex) {
  const double side = 28.0 * std::cbrt(kSharedIndexPoints / 20000.0);
  const datasets::Dataset d = datasets::uniform<3>(kSharedIndexPoints, side, 1.2, 11);
  const std::vector<float> coords(d.xyz.begin(), d.xyz.end());
  const datasets::Dataset widened{d.name, oracle::widen(coords), d.radius};
  const Expected e = expected_results(widened);
  std::vector<double> centers_xyz;
  for (const auto& c : e.centers) centers_xyz.insert(centers_xyz.end(), c.begin(), c.end());

  spatialhash::Options options = GetParam();
  options.threads = 2;
  const spatialhash::Index<3, float> index(coords, d.radius, options);

  constexpr int kThreads = 4;
  std::vector<std::vector<std::string>> wrong(kThreads);
  std::barrier together(kThreads);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      for (int round = 0; round < 2; ++round) {
        for (std::string& name : mismatches(index, e, centers_xyz, together))
          wrong[t].push_back(name);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  for (int t = 0; t < kThreads; ++t) {
    for (const std::string& name : wrong[t]) ADD_FAILURE() << "thread " << t << ": " << name;
  }
}

// Each engine with its defaults (brute_force left out: O(n^2) per query, and nothing it keeps
// between calls), the default engine's other lattices and SIMD levels included.
std::vector<spatialhash::Options> concurrent_cases() {
  std::vector<spatialhash::Options> cases;
  for (const spatialhash::Options& options : engine_cases()) {
    if (options.engine != spatialhash::Engine::brute_force) cases.push_back(options);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Engines, ConcurrentQueries, ::testing::ValuesIn(concurrent_cases()),
                         engine_case_label);

}  // namespace
