// End to end: every command (lists, counts, query, stats, pairs options, engines) against the
// brute-force oracle, reading CSV output.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>

#include "cli_inputs.hpp"
#include "cli_oracle.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using namespace clitest;

/// A 3-D and a 2-D data set on disk as .npy (float64), with the oracle's coordinates.
struct DataSet {
  TempDir dir;
  int dim;
  double r;
  std::vector<double> xyz;
  std::string path;
  DataSet(int dim_, std::size_t n, double box, double r_, std::uint64_t seed)
      : dim(dim_), r(r_), xyz(make_points(dim_, n, box, r_, seed)) {
    path = dir.file("points.npy");
    write_file(path, npy_bytes(xyz, n, dim, "<f8", false));
  }
  std::size_t n() const { return xyz.size() / dim; }
};

class Commands : public ::testing::TestWithParam<int> {};

TEST_P(Commands, ListsMatchBruteForce) {
  DataSet d(GetParam(), 300, 8.0, 1.0, 21);
  const Result res = run({"lists", d.path, "-r", "1", "--distances"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto rows = parse_rows(res.out);
  const auto want = oracle_lists(d.xyz, d.dim, d.r);
  ASSERT_EQ(rows.size(), d.n() + 1);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"point", "count", "neighbors", "distances"}));
  for (std::size_t i = 0; i < d.n(); ++i) {
    const auto& row = rows[i + 1];
    ASSERT_EQ(row.size(), 4u);
    EXPECT_EQ(std::stoull(row[0]), i);
    EXPECT_EQ(std::stoull(row[1]), want[i].size());
    EXPECT_EQ(numbers<std::size_t>(row[2]), want[i]) << "row " << i;
    const auto distances = numbers<double>(row[3]);
    ASSERT_EQ(distances.size(), want[i].size());
    for (std::size_t k = 0; k < want[i].size(); ++k) {
      EXPECT_EQ(distances[k], std::sqrt(distance_squared(d.xyz, d.dim, i, want[i][k])));
    }
  }
  EXPECT_NE(res.err.find("300 points"), std::string::npos) << res.err;
}

TEST_P(Commands, CountsMatchBruteForce) {
  DataSet d(GetParam(), 300, 8.0, 1.0, 22);
  const Result res = run({"counts", d.path, "-r", "1", "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto rows = parse_rows(res.out);
  const auto want = oracle_lists(d.xyz, d.dim, d.r);
  ASSERT_EQ(rows.size(), d.n() + 1);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"point", "count"}));
  for (std::size_t i = 0; i < d.n(); ++i) {
    EXPECT_EQ(std::stoull(rows[i + 1][1]), want[i].size()) << "point " << i;
  }
}

TEST_P(Commands, QueryAtPositionsMatchesBruteForce) {
  DataSet d(GetParam(), 300, 8.0, 1.0, 23);
  // An indexed point itself (found at distance 0), a position between points, one far away.
  std::vector<std::vector<double>> at = {{d.xyz.begin(), d.xyz.begin() + d.dim},
                                         std::vector<double>(d.dim, 4.0),
                                         std::vector<double>(d.dim, -50.0)};
  std::vector<std::string> args = {"query", d.path, "-r", "1", "--distances", "-q"};
  for (const auto& p : at) {
    std::string s;
    for (double v : p) s += (s.empty() ? "" : ",") + text(v);
    args.push_back("--at=" + s);
  }
  const Result res = run(args);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto rows = parse_rows(res.out);
  ASSERT_EQ(rows.size(), at.size() + 1);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"query", "count", "neighbors", "distances"}));
  for (std::size_t q = 0; q < at.size(); ++q) {
    const auto want = d.dim == 2 ? oracle::ball<2>(d.xyz, {at[q][0], at[q][1]}, d.r)
                                 : oracle::ball<3>(d.xyz, {at[q][0], at[q][1], at[q][2]}, d.r);
    EXPECT_EQ(numbers<std::size_t>(rows[q + 1][2]), want) << "query " << q;
  }
  EXPECT_FALSE(parse_rows(res.out)[1][2].empty());
}

TEST_P(Commands, QueryFileMatchesBruteForce) {
  DataSet d(GetParam(), 300, 8.0, 1.0, 24);
  const std::vector<double> probes = make_points(d.dim, 40, 8.0, 1.0, 99);
  write_file(d.dir.file("probes.csv"), delimited(probes, d.dim, ',', {}));
  const Result res = run({"query", d.path, "-r", "1", "--queries", d.dir.file("probes.csv"), "-o",
                          d.dir.file("hits.npz"), "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto files = read_zip(slurp(d.dir.file("hits.npz")));
  const auto offsets = parse_npy(files.at("offsets.npy")).values<std::int64_t>();
  const auto indices = parse_npy(files.at("indices.npy")).values<std::int64_t>();
  ASSERT_EQ(offsets.size(), 41u);
  for (std::size_t q = 0; q < 40; ++q) {
    std::vector<std::size_t> got(indices.begin() + offsets[q], indices.begin() + offsets[q + 1]);
    std::vector<std::size_t> want;
    if (d.dim == 2) {
      want = oracle::ball<2>(d.xyz, {probes[q * 2], probes[q * 2 + 1]}, d.r);
    } else {
      want = oracle::ball<3>(d.xyz, {probes[q * 3], probes[q * 3 + 1], probes[q * 3 + 2]}, d.r);
    }
    EXPECT_EQ(got, want) << "query " << q;
  }
}

TEST_P(Commands, PairsWithDistancesAndSort) {
  DataSet d(GetParam(), 300, 8.0, 1.0, 25);
  const Result res = run({"pairs", d.path, "-r", "1", "--distances", "--sort", "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto rows = parse_rows(res.out);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"first", "second", "distance"}));
  PairSet got;  // in output order: --sort must give lexicographic order
  for (std::size_t k = 1; k < rows.size(); ++k) {
    const std::size_t i = std::stoull(rows[k][0]), j = std::stoull(rows[k][1]);
    got.emplace_back(i, j);
    EXPECT_EQ(numbers<double>(rows[k][2]).at(0), std::sqrt(distance_squared(d.xyz, d.dim, i, j)));
  }
  EXPECT_EQ(got, oracle_pairs(d.xyz, d.dim, d.r));
}

TEST_P(Commands, EveryEngineAndThreadCountGivesTheSamePairs) {
  DataSet d(GetParam(), 250, 6.0, 1.0, 26);
  const PairSet want = oracle_pairs(d.xyz, d.dim, d.r);
  std::vector<std::string> engines = {"auto"};
  for (spatialhash::Engine e : spatialhash::all_engines()) {
    engines.emplace_back(spatialhash::engine_name(e));
  }
  for (const std::string& engine : engines) {
    for (const char* threads : {"1", "0"}) {
      const Result res =
          run({"pairs", d.path, "-r", "1", "--engine", engine, "--threads", threads, "-q"});
      ASSERT_EQ(res.exit_code, 0) << engine << ": " << res.err;
      EXPECT_EQ(pairs_of_csv(res.out), want) << "engine " << engine << ", threads " << threads;
    }
  }
}

TEST_P(Commands, StreamedAndBufferedPairsAgree) {
  // --max-buffer 0 streams (callback batches); the default builds these small results in memory
  // with the library's array queries. Both must equal the oracle. (Lists: the next test.)
  DataSet d(GetParam(), 300, 8.0, 1.0, 32);
  const PairSet want = oracle_pairs(d.xyz, d.dim, d.r);
  for (const char* buffer : {"0", "1024"}) {
    const Result res =
        run({"pairs", d.path, "-r", "1", "--distances", "--max-buffer", buffer, "-q"});
    ASSERT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(pairs_of_csv(res.out), want) << "--max-buffer " << buffer;
    for (const auto& row : parse_rows(res.out)) {
      if (row[0] == "first") continue;
      const std::size_t i = std::stoull(row[0]), j = std::stoull(row[1]);
      ASSERT_EQ(numbers<double>(row[2]).at(0), std::sqrt(distance_squared(d.xyz, d.dim, i, j)));
    }
  }
}

TEST_P(Commands, ListsEqualTheOracleInEveryMemoryTier) {
  // A rising --max-buffer budget takes lists through its three ways: streamed rows (parallel
  // blocks of ball queries), the library's low-memory search (the result fits once, not twice),
  // its buffered one. The phase
  // names in the summary line say which ran; every way must give the oracle's rows.
  DataSet d(GetParam(), 300, 8.0, 1.0, 33);
  const auto lists = oracle_lists(d.xyz, d.dim, d.r);
  bool streamed = false, low_memory = false, buffered = false;
  for (double mib = 0.001; mib < 10.0 && !buffered; mib *= 1.1) {
    const std::string budget = std::to_string(mib);
    const Result res = run({"lists", d.path, "-r", "1", "--distances", "--max-buffer", budget});
    ASSERT_EQ(res.exit_code, 0) << res.err;
    streamed = streamed || res.err.find(" search+write ") != std::string::npos;
    low_memory = low_memory || res.err.find(" low-memory search ") != std::string::npos;
    buffered = res.err.find(", search ") != std::string::npos;
    const auto rows = parse_rows(res.out);
    ASSERT_EQ(rows.size(), d.n() + 1);
    for (std::size_t i = 0; i < d.n(); ++i) {
      ASSERT_EQ(numbers<std::size_t>(rows[i + 1][2]), lists[i]) << "--max-buffer " << budget;
      const auto distances = numbers<double>(rows[i + 1][3]);
      for (std::size_t k = 0; k < lists[i].size(); ++k) {
        ASSERT_EQ(distances.at(k), std::sqrt(distance_squared(d.xyz, d.dim, i, lists[i][k])));
      }
    }
  }
  EXPECT_TRUE(streamed) << "never streamed";
  EXPECT_TRUE(low_memory) << "never took the low-memory search";
  EXPECT_TRUE(buffered) << "never took the buffered search";
}

TEST_P(Commands, TsvOutputHasTabs) {
  DataSet d(GetParam(), 200, 6.0, 1.0, 27);
  const Result res = run({"pairs", d.path, "-r", "1", "-o", d.dir.file("p.tsv"), "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(pairs_of_csv(slurp(d.dir.file("p.tsv")), '\t'), oracle_pairs(d.xyz, d.dim, d.r));
}

/// `s` without thousands separators ("1,234" -> "1234").
std::string plain(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  return s;
}

/// The value after `label` on its line of the stats report.
std::string report_value(const std::string& report, const std::string& label) {
  const std::size_t at = report.find("  " + label + " ");
  if (at == std::string::npos) return "";
  const std::size_t start = report.find_first_not_of(' ', at + 2 + label.size());
  return report.substr(start, report.find('\n', start) - start);
}

TEST_P(Commands, StatsReportsTheOracleNumbers) {
  DataSet d(GetParam(), 300, 8.0, 1.0, 28);
  const Result res = run({"stats", d.path, "-r", "1"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto lists = oracle_lists(d.xyz, d.dim, d.r);
  std::vector<std::size_t> counts;
  for (const auto& l : lists) counts.push_back(l.size());
  std::sort(counts.begin(), counts.end());
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  EXPECT_EQ(report_value(res.out, "points"),
            std::to_string(d.n()) + " (" + std::to_string(d.dim) + "-D, double)");
  EXPECT_EQ(plain(report_value(res.out, "pairs")), std::to_string(total / 2));
  const std::string neighbors = report_value(res.out, "neighbors");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      neighbors, m, std::regex(R"(min (\d+)  mean ([\d.]+)  median ([\d.]+)  max (\d+))")))
      << neighbors;
  EXPECT_EQ(std::stoull(m[1]), counts.front());
  EXPECT_NEAR(std::stod(m[2]), static_cast<double>(total) / d.n(), 0.0051);
  EXPECT_EQ(std::stod(m[3]), (counts[(d.n() - 1) / 2] + counts[d.n() / 2]) / 2.0);
  EXPECT_EQ(std::stoull(m[4]), counts.back());
  // The histogram's counts add up to the number of points.
  std::size_t binned = 0;
  const std::regex bin(R"(\|[# ]*\| (\d+))");
  for (auto it = std::sregex_iterator(res.out.begin(), res.out.end(), bin);
       it != std::sregex_iterator(); ++it) {
    binned += std::stoull((*it)[1]);
  }
  EXPECT_EQ(binned, d.n());
  // Cells used: distinct cells of edge r(1 + 2^-18) from the lower corner of the bounding box.
  std::vector<double> lower(d.dim, 1e300);
  for (std::size_t i = 0; i < d.n(); ++i) {
    for (int k = 0; k < d.dim; ++k) lower[k] = std::min(lower[k], d.xyz[i * d.dim + k]);
  }
  const double inv = 1.0 / (d.r * (1.0 + std::ldexp(1.0, -18)));
  std::set<std::vector<long>> cells;
  for (std::size_t i = 0; i < d.n(); ++i) {
    std::vector<long> c;
    for (int k = 0; k < d.dim; ++k) {
      c.push_back(static_cast<long>(std::floor((d.xyz[i * d.dim + k] - lower[k]) * inv)));
    }
    cells.insert(c);
  }
  const std::string used = report_value(res.out, "cells used");
  EXPECT_EQ(plain(used.substr(0, used.find(' '))), std::to_string(cells.size())) << used;
  for (const char* phase : {"read", "index", "counts"}) {
    EXPECT_NE(report_value(res.out, "time").find(phase), std::string::npos) << res.out;
  }
}

/// Mean number of neighbors by the oracle at radius r.
double oracle_mean(const DataSet& d, double r) {
  return 2.0 * static_cast<double>(oracle_pairs(d.xyz, d.dim, r).size()) / d.n();
}

TEST_P(Commands, SuggestedRadiusIsTheSmallestReachingTheTarget) {
  DataSet d(GetParam(), 400, 8.0, 1.0, 29);
  for (double target : {1.0, 6.0, 12.5}) {
    const Result res = run({"stats", d.path, "--target-neighbors", text(target)});
    ASSERT_EQ(res.exit_code, 0) << res.err;
    const std::string suggested = report_value(res.out, "suggested");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(suggested, m, std::regex(R"(^-r (\S+) for a mean of)")))
        << res.out;
    const double r = std::stod(m[1]);
    // With fewer than 1000 points the sample is every point: the suggestion is exact.
    EXPECT_NE(suggested.find("exact"), std::string::npos) << suggested;
    EXPECT_GE(oracle_mean(d, r), target) << "r = " << m[1];
    EXPECT_LT(oracle_mean(d, std::nextafter(r, 0.0)), target) << "r = " << m[1];
    // Without -r the report is computed at the suggested radius.
    EXPECT_EQ(report_value(res.out, "radius"), text(r) + " (suggested)");
    EXPECT_EQ(plain(report_value(res.out, "pairs")),
              std::to_string(oracle_pairs(d.xyz, d.dim, r).size()));
  }
}

INSTANTIATE_TEST_SUITE_P(Cli, Commands, ::testing::Values(2, 3),
                         [](const auto& info) { return std::to_string(info.param) + "d"; });

TEST(Summary, OneLineWithPointsPairsAndTime) {
  DataSet d(3, 200, 5.0, 1.0, 30);
  const Result res = run({"pairs", d.path, "-r", "1", "-o", d.dir.file("p.npy")});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const std::size_t pairs = oracle_pairs(d.xyz, 3, 1.0).size();
  EXPECT_TRUE(std::regex_match(
      res.err, std::regex("spatialhash pairs: 200 points, " + std::to_string(pairs) +
                          R"( pairs in [\d.]+ m?s \(read .*\) -> .*p\.npy\n)")))
      << res.err;
  EXPECT_EQ(res.out, "");
}

TEST(Summary, NoProgressBarWhenStandardErrorIsNotATerminal) {
  DataSet d(3, 200, 5.0, 1.0, 31);
  const Result res = run({"lists", d.path, "-r", "1", "-o", d.dir.file("l.npz")});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.err.find('\r'), std::string::npos);
  EXPECT_EQ(std::count(res.err.begin(), res.err.end(), '\n'), 1);
}

}  // namespace
