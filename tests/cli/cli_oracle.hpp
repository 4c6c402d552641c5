// Helpers that turn the tool's CSV output into sets and compare them with the brute-force oracle
// (tests/oracle.hpp, which shares no code with the library or the tool).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cli_harness.hpp"
#include "oracle.hpp"

namespace clitest {

using PairSet = std::vector<std::pair<std::size_t, std::size_t>>;

/// Sorted pairs of a `pairs` CSV output (header "first,second[,distance]").
inline PairSet pairs_of_csv(const std::string& out, char sep = ',') {
  const auto rows = parse_rows(out, sep);
  PairSet pairs;
  if (rows.empty()) {
    ADD_FAILURE() << "no header row";
    return pairs;
  }
  EXPECT_EQ(rows[0].at(0), "first");
  EXPECT_EQ(rows[0].at(1), "second");
  for (std::size_t r = 1; r < rows.size(); ++r) {
    pairs.emplace_back(std::stoull(rows[r].at(0)), std::stoull(rows[r].at(1)));
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

/// The oracle's pairs for interleaved coordinates of dimension `dim`.
inline PairSet oracle_pairs(const std::vector<double>& xyz, int dim, double r) {
  const auto p = dim == 2 ? oracle::pairs<2>(xyz, r) : oracle::pairs<3>(xyz, r);
  return PairSet(p.begin(), p.end());
}

inline std::vector<std::vector<std::size_t>> oracle_lists(const std::vector<double>& xyz, int dim,
                                                          double r) {
  return dim == 2 ? oracle::lists<2>(xyz, r) : oracle::lists<3>(xyz, r);
}

/// Squared distance of points i and j, in the order the neighbor rule sums it.
inline double distance_squared(const std::vector<double>& xyz, int dim, std::size_t i,
                               std::size_t j) {
  return dim == 2 ? oracle::distance_squared<2>(&xyz[i * 2], &xyz[j * 2])
                  : oracle::distance_squared<3>(&xyz[i * 3], &xyz[j * 3]);
}

/// Arguments: a command, then the pieces.
inline std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace clitest
