// The oracle's pruned pair search (oracle::pairs, a sweep along the widest axis) against its
// reference, every one of the n(n-1)/2 comparisons (oracle::all_pairs): the same pairs on sets
// with many pairs at exactly r and within ulps of it on the swept axis, with ties on that axis,
// in 2D and 3D, and with a non-finite coordinate (no sweep).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "oracle.hpp"

namespace {

/// Points of an integer lattice of spacing `r` (neighbors at exactly r along each axis), each
/// coordinate moved by -2..2 ulps of itself or kept, plus uniform points in the same box.
template <int Dim>
std::vector<double> lattice_and_noise(double r, int side, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<int> ulps(-2, 2);
  std::uniform_real_distribution<double> u(0.0, side * r);
  std::vector<double> xyz;
  const int cells = Dim == 2 ? side * side : side * side * side;
  for (int c = 0; c < cells; ++c) {
    int rest = c;
    for (int k = 0; k < Dim; ++k) {
      double x = (rest % side) * r;
      rest /= side;
      for (int step = ulps(g); step != 0; step += step > 0 ? -1 : 1) {
        x = std::nextafter(x, step > 0 ? 1e300 : -1e300);
      }
      xyz.push_back(x);
    }
  }
  for (int i = 0; i < cells; ++i) {
    for (int k = 0; k < Dim; ++k) xyz.push_back(u(g));
  }
  return xyz;
}

TEST(Oracle, SweepFindsThePairsOfEveryComparison) {
  for (double r : {1.0, 0.1, 0.37, 3.0}) {
    const auto xyz2 = lattice_and_noise<2>(r, 24, 1);
    const auto want2 = oracle::all_pairs<2>(xyz2, r);
    EXPECT_GT(want2.size(), xyz2.size() / 2) << "r " << r;
    EXPECT_EQ(oracle::pairs<2>(xyz2, r), want2) << "r " << r;
    const auto xyz3 = lattice_and_noise<3>(r, 9, 2);
    const auto want3 = oracle::all_pairs<3>(xyz3, r);
    EXPECT_GT(want3.size(), xyz3.size() / 3) << "r " << r;
    EXPECT_EQ(oracle::pairs<3>(xyz3, r), want3) << "r " << r;
  }
}

TEST(Oracle, NonFiniteCoordinatesGetEveryComparison) {
  auto xyz = lattice_and_noise<3>(1.0, 5, 3);
  xyz[7] = std::numeric_limits<double>::quiet_NaN();
  xyz[20] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(oracle::pairs<3>(xyz, 1.0), oracle::all_pairs<3>(xyz, 1.0));
}

TEST(Oracle, ListsOfPairsAreSortedAndSymmetric) {
  const auto xyz = lattice_and_noise<2>(1.0, 10, 4);
  const auto lists = oracle::lists<2>(xyz, 1.0);
  const std::size_t n = xyz.size() / 2;
  ASSERT_EQ(lists.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const bool near = j != i && oracle::distance_squared<2>(&xyz[i * 2], &xyz[j * 2]) <= 1.0;
      EXPECT_EQ(std::binary_search(lists[i].begin(), lists[i].end(), j), near) << i << "," << j;
    }
    EXPECT_TRUE(std::is_sorted(lists[i].begin(), lists[i].end()));
  }
}

}  // namespace
