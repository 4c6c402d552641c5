// Reordering along space-filling curves: the orders are permutations; the Morton order sorts by
// Z-order keys computed independently here (cells in double, bits interleaved one by one); the
// Hilbert order steps between face-neighboring cells on a full lattice; permutations round trip;
// a search on reordered points finds the brute-force pairs once mapped back; bad input is named.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "expect_error.hpp"
#include "oracle.hpp"
#include "spatialhash/reorder.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using spatialhash::index_t;

bool is_permutation_of_n(const std::vector<index_t>& perm, std::size_t n) {
  std::vector<index_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t k = 0; k < sorted.size(); ++k) {
    if (sorted[k] != k) return false;
  }
  return sorted.size() == n;
}

/// Z-order key by plain bit interleaving: bit b of axis k goes to bit b * Dim + k.
template <int Dim>
std::uint64_t slow_morton(const std::array<std::uint64_t, Dim>& cell) {
  std::uint64_t key = 0;
  for (int b = 0; b < 64 / Dim; ++b) {
    for (int k = 0; k < Dim; ++k) key |= ((cell[k] >> b) & 1u) << (b * Dim + k);
  }
  return key;
}

template <int Dim>
std::vector<double> random_points(std::size_t n, double box, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-box / 3, box);
  std::vector<double> xyz(n * Dim);
  for (double& x : xyz) x = u(g);
  return xyz;
}

template <int Dim>
void check_morton_order(const std::vector<double>& xyz, double cell_size, int threads = 0) {
  const std::size_t n = xyz.size() / Dim;
  const auto perm = spatialhash::morton_order<Dim, double>(
      spatialhash::interleaved<Dim, double>(xyz), cell_size, threads);
  ASSERT_TRUE(is_permutation_of_n(perm, n));
  std::array<double, Dim> lower;
  lower.fill(std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) lower[k] = std::min(lower[k], xyz[i * Dim + k]);
  }
  const auto key = [&](index_t i) {
    std::array<std::uint64_t, Dim> cell;
    for (int k = 0; k < Dim; ++k) {
      cell[k] = static_cast<std::uint64_t>(std::floor((xyz[i * Dim + k] - lower[k]) / cell_size));
    }
    return slow_morton<Dim>(cell);
  };
  for (std::size_t k = 1; k < n; ++k) {
    const auto a = key(perm[k - 1]), b = key(perm[k]);
    ASSERT_LE(a, b) << "keys out of order at position " << k;
    if (a == b) {
      ASSERT_LT(perm[k - 1], perm[k]) << "ties not by original index at " << k;
    }
  }
}

TEST(Reorder, MortonOrderSortsByIndependentZOrderKeys) {
  check_morton_order<2>(random_points<2>(5000, 40.0, 1), 1.5);
  check_morton_order<3>(random_points<3>(5000, 20.0, 2), 0.7);
  // Many points per cell: ties by original index.
  check_morton_order<3>(random_points<3>(3000, 3.0, 3), 1.0);
  // Float input.
  const auto xyz = random_points<3>(2000, 10.0, 4);
  const std::vector<float> f(xyz.begin(), xyz.end());
  const auto perm_f =
      spatialhash::morton_order<3, float>(spatialhash::interleaved<3, float>(f), 0.5);
  check_morton_order<3>(std::vector<double>(f.begin(), f.end()), 0.5);
  const std::vector<double> widened(f.begin(), f.end());
  const auto perm_d =
      spatialhash::morton_order<3, double>(spatialhash::interleaved<3, double>(widened), 0.5, 1);
  EXPECT_EQ(perm_f, perm_d);
}

TEST(Reorder, MortonOrderFromInsideTheCallersParallelRegion) {
  // Each thread of the caller's team sorts with two threads asked for; nested regions run on
  // one (tests/test_nested_parallel.cpp): the sort must cover every key all the same.
  const auto xyz = random_points<3>(60000, 40.0, 5);
  const int saved = omp_get_max_active_levels();
  omp_set_max_active_levels(1);
#pragma omp parallel num_threads(2)
  check_morton_order<3>(xyz, 1.0, 2);
  omp_set_max_active_levels(saved);
}

template <int Dim>
void check_hilbert_adjacency(int bits) {
  // One point at the center of every cell of a 2^bits lattice, in shuffled order.
  const std::size_t side = std::size_t{1} << bits;
  std::size_t n = 1;
  for (int k = 0; k < Dim; ++k) n *= side;
  std::vector<std::size_t> cells(n);
  std::iota(cells.begin(), cells.end(), std::size_t{0});
  std::shuffle(cells.begin(), cells.end(), std::mt19937_64(bits));
  std::vector<double> xyz;
  for (std::size_t c : cells) {
    for (int k = 0; k < Dim; ++k, c /= side) xyz.push_back(static_cast<double>(c % side) + 0.5);
  }
  const auto perm =
      spatialhash::hilbert_order<Dim, double>(spatialhash::interleaved<Dim, double>(xyz), 1.0);
  ASSERT_TRUE(is_permutation_of_n(perm, n));
  for (std::size_t k = 1; k < n; ++k) {
    double manhattan = 0.0;
    for (int a = 0; a < Dim; ++a) {
      manhattan += std::abs(xyz[perm[k] * Dim + a] - xyz[perm[k - 1] * Dim + a]);
    }
    ASSERT_EQ(manhattan, 1.0) << "positions " << k - 1 << " and " << k << " are not face neighbors";
  }
  for (int a = 0; a < Dim; ++a) EXPECT_EQ(xyz[perm[0] * Dim + a], 0.5) << "starts at the origin";
}

TEST(Reorder, HilbertOrderStepsBetweenFaceNeighbors) {
  for (int bits = 1; bits <= 6; ++bits) check_hilbert_adjacency<2>(bits);
  for (int bits = 1; bits <= 4; ++bits) check_hilbert_adjacency<3>(bits);
}

TEST(Reorder, HilbertOrderOfArbitraryPointsIsAPermutationGroupingCells) {
  const auto xyz = random_points<3>(4000, 6.0, 5);
  const auto perm =
      spatialhash::hilbert_order<3, double>(spatialhash::interleaved<3, double>(xyz), 1.0, 2);
  ASSERT_TRUE(is_permutation_of_n(perm, 4000));
  // Points of one cell are contiguous and in original order; the same with one thread.
  double lower[3] = {xyz[0], xyz[1], xyz[2]};
  for (std::size_t i = 0; i < 4000; ++i) {
    for (int k = 0; k < 3; ++k) lower[k] = std::min(lower[k], xyz[i * 3 + k]);
  }
  const auto cell = [&](index_t i) {
    std::array<long, 3> c;
    for (int k = 0; k < 3; ++k) c[k] = static_cast<long>(std::floor(xyz[i * 3 + k] - lower[k]));
    return c;
  };
  std::vector<std::array<long, 3>> finished;
  for (std::size_t k = 1; k < perm.size(); ++k) {
    if (cell(perm[k]) == cell(perm[k - 1])) {
      ASSERT_LT(perm[k - 1], perm[k]);
    } else {
      finished.push_back(cell(perm[k - 1]));
    }
  }
  std::sort(finished.begin(), finished.end());
  EXPECT_EQ(std::adjacent_find(finished.begin(), finished.end()), finished.end())
      << "a cell appears in two runs";
  const auto single_thread =
      spatialhash::hilbert_order<3, double>(spatialhash::interleaved<3, double>(xyz), 1.0, 1);
  EXPECT_EQ(perm, single_thread);
}

TEST(Reorder, ApplyAndInverseRoundTrip) {
  std::mt19937_64 g(6);
  std::vector<index_t> perm(1000);
  std::iota(perm.begin(), perm.end(), index_t{0});
  std::shuffle(perm.begin(), perm.end(), g);
  std::vector<double> xyz(3000);
  for (double& x : xyz) x = std::uniform_real_distribution<double>(0, 1)(g);
  const auto moved = spatialhash::apply_permutation<double>(xyz, perm, 3);
  for (std::size_t k = 0; k < perm.size(); ++k) {
    for (int a = 0; a < 3; ++a) ASSERT_EQ(moved[k * 3 + a], xyz[perm[k] * 3 + a]);
  }
  const auto inverse = spatialhash::inverse_permutation(perm);
  for (std::size_t i = 0; i < perm.size(); ++i) ASSERT_EQ(perm[inverse[i]], i);
  EXPECT_EQ(spatialhash::apply_permutation<double>(moved, inverse, 3), xyz);
  std::vector<double> in_place = xyz;
  spatialhash::apply_permutation_in_place<double>(in_place, perm, 3);
  EXPECT_EQ(in_place, moved);
  // A struct per particle.
  struct Particle {
    float mass;
    int kind;
  };
  std::vector<Particle> particles(1000);
  for (std::size_t i = 0; i < particles.size(); ++i) {
    particles[i] = {static_cast<float>(i), static_cast<int>(i % 7)};
  }
  const auto sorted = spatialhash::apply_permutation<Particle>(particles, perm);
  for (std::size_t k = 0; k < perm.size(); ++k) ASSERT_EQ(sorted[k].mass, perm[k]);
}

TEST(Reorder, SearchOnReorderedPointsMapsBackToTheBruteForcePairs) {
  for (bool hilbert : {false, true}) {
    const auto xyz = random_points<3>(3000, 12.0, 7);
    const double r = 0.9;
    const auto view = spatialhash::interleaved<3, double>(xyz);
    const auto perm = hilbert ? spatialhash::hilbert_order<3, double>(view, r)
                              : spatialhash::morton_order<3, double>(view, r);
    const auto sorted = spatialhash::apply_permutation<double>(xyz, perm, 3);
    spatialhash::Index<3, double> index(std::span<const double>(sorted), r);
    std::vector<std::pair<std::size_t, std::size_t>> got;
    for (const auto& [a, b] : index.pairs().pairs) {
      got.emplace_back(std::min(perm[a], perm[b]), std::max(perm[a], perm[b]));
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, oracle::pairs<3>(xyz, r)) << (hilbert ? "hilbert" : "morton");
  }
}

TEST(Reorder, BadInputIsNamed) {
  std::vector<double> xy = {0, 0, 1, 1, 2, std::numeric_limits<double>::quiet_NaN(), 3, 3};
  const auto view = spatialhash::interleaved<2, double>(xy);
  expect_error([&] { spatialhash::morton_order<2, double>(view, 1.0); },
               "point 2 has a non-finite y");
  xy[5] = 2;
  expect_error([&] { spatialhash::hilbert_order<2, double>(view, 0.0); }, "cell_size");
  expect_error([&] { spatialhash::hilbert_order<2, double>(view, std::nan("")); }, "cell_size");
  std::vector<double> wide = {0, 0, 0, 1e9, 0, 0};
  expect_error(
      [&] { spatialhash::morton_order<3, double>(spatialhash::interleaved<3, double>(wide), 1.0); },
      "along x");

  const std::vector<index_t> repeated = {0, 2, 1, 2};
  expect_error([&] { spatialhash::inverse_permutation(repeated); }, "position 3 repeats index 2");
  const std::vector<index_t> beyond = {0, 4, 1, 2};
  expect_error([&] { spatialhash::inverse_permutation(beyond); }, "position 1 holds 4");
  const std::vector<index_t> perm = {1, 0, 2};
  const std::vector<float> seven(7, 1.0f);
  expect_error([&] { spatialhash::apply_permutation<float>(seven, perm, 2); },
               "7 values with 2 per particle");
  expect_error([&] { spatialhash::apply_permutation<float>(seven, perm, 0); }, "components");
  std::vector<float> six(6, 1.0f);
  expect_error([&] { spatialhash::apply_permutation_in_place<float>(six, repeated, 1); },
               "does not match");
  const auto none = spatialhash::morton_order<2, double>(
      spatialhash::interleaved<2, double>(std::span<const double>()), 1.0);
  EXPECT_TRUE(none.empty());
}

}  // namespace
