// dense_grid refuses a lattice too large for its cell table (one far outlier is enough), with a
// message that names the cell count and the engines to use instead; every other engine indexes
// the same points and agrees with the oracle.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "check_against_oracle.hpp"
#include "oracle.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using spatialhash::Engine;
using spatialhash::Index;

/// A 10 x 10 x 10 lattice of spacing 1 (extent 9 per axis) plus, if asked, one point at
/// x = 1e5. With r = 0.5 the cell edge is 0.5 * (1 + 2^-18), so the lattice has
/// floor(9 / edge) + 1 = 18 cells along y and z and floor(1e5 / edge) + 1 = 200000 along x:
/// 64,800,000 cells for 1001 points, far above dense_grid's limit of max(16 n, 2^22).
datasets::Dataset lattice_with_outlier(bool outlier) {
  datasets::Dataset d{outlier ? "lattice_plus_far_outlier" : "lattice", {}, 0.5};
  for (int z = 0; z < 10; ++z)
    for (int y = 0; y < 10; ++y)
      for (int x = 0; x < 10; ++x) d.xyz.insert(d.xyz.end(), {double(x), double(y), double(z)});
  if (outlier) d.xyz.insert(d.xyz.end(), {1e5, 0.0, 0.0});
  return d;
}

TEST(DenseGridLimits, FarOutlierIsRefusedWithAClearMessage) {
  const auto d = lattice_with_outlier(true);
  try {
    Index<3, double> index(std::span<const double>(d.xyz), d.radius,
                           {.engine = Engine::dense_grid});
    FAIL() << "dense_grid accepted a lattice of 64800000 cells for 1001 points";
  } catch (const spatialhash::InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_TRUE(is_dense_grid_refusal(e)) << message;
    EXPECT_NE(message.find("64800000 cells"), std::string::npos) << message;
    EXPECT_NE(message.find("1001 points"), std::string::npos) << message;
    EXPECT_NE(message.find("Engine::hashed_grid"), std::string::npos) << message;
    EXPECT_NE(message.find("default engine"), std::string::npos) << message;
  }
}

TEST(DenseGridLimits, SamePointsWithoutTheOutlierAreAccepted) {
  check_against_oracle<3, double>(Engine::dense_grid, lattice_with_outlier(false));
  const auto d = lattice_with_outlier(false);
  Index<3, double> index(std::span<const double>(d.xyz), d.radius, {.engine = Engine::dense_grid});
  EXPECT_EQ(index.pairs().pairs.size(), oracle::pairs<3>(d.xyz, d.radius).size());
}

TEST(DenseGridLimits, UpdateThatAddsAFarOutlierIsRefusedAndLeavesTheIndexUnchanged) {
  const auto before = lattice_with_outlier(false);
  std::vector<double> moved = before.xyz;
  moved[0] = 1e5;  // point 0 flies off along x
  Index<3, double> index(std::span<const double>(before.xyz), before.radius,
                         {.engine = Engine::dense_grid});
  try {
    index.update(std::span<const double>(moved));
    FAIL() << "dense_grid accepted an update to a lattice of about 6.5e7 cells";
  } catch (const spatialhash::InvalidArgument& e) {
    EXPECT_TRUE(is_dense_grid_refusal(e)) << e.what();
  }
  // Still indexes the points as they were (`before.xyz` is unchanged and still borrowed).
  const auto got = index.pairs({.sorted = true});
  const auto want = oracle::pairs<3>(before.xyz, before.radius);
  ASSERT_EQ(got.pairs.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got.pairs[k].first, want[k].first);
    EXPECT_EQ(got.pairs[k].second, want[k].second);
  }
}

/// Every other engine indexes the set with the outlier and matches the oracle on every query.
class OtherEnginesWithFarOutlier : public ::testing::TestWithParam<Engine> {};

TEST_P(OtherEnginesWithFarOutlier, Succeed) {
  const auto d = lattice_with_outlier(true);
  EXPECT_NO_THROW(
      (Index<3, double>(std::span<const double>(d.xyz), d.radius, {.engine = GetParam()})));
  check_against_oracle<3, double>(GetParam(), d);
}

std::vector<Engine> engines_but_dense_grid() {
  std::vector<Engine> engines;
  for (Engine e : spatialhash::all_engines()) {
    if (e != Engine::dense_grid) engines.push_back(e);
  }
  return engines;
}

INSTANTIATE_TEST_SUITE_P(AllButDenseGrid, OtherEnginesWithFarOutlier,
                         ::testing::ValuesIn(engines_but_dense_grid()), [](const auto& info) {
                           return std::string(spatialhash::engine_name(info.param));
                         });

}  // namespace
