// Bad input: every case raises InvalidArgument with a message naming the problem and where, and
// leaves an existing index usable.
#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "oracle.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using spatialhash::Engine;
using spatialhash::Index;
using spatialhash::InvalidArgument;

class BadInput : public ::testing::TestWithParam<Engine> {};

TEST_P(BadInput, NonFiniteCoordinatesNameTheFirstBadPoint) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xyz = {0, 0, 0, 1, 1, 1, 2, nan, 2, 3, 3, inf};
  expect_error([&] { Index<3, double>(std::span<const double>(xyz), 1.0, {.engine = GetParam()}); },
               "point 2 has a non-finite y");
  std::vector<float> xy = {0, 0, 1, 1, std::numeric_limits<float>::infinity(), 0};
  expect_error([&] { Index<2, float>(std::span<const float>(xy), 1.0, {.engine = GetParam()}); },
               "point 2 has a non-finite x");
}

TEST_P(BadInput, BadRadius) {
  std::vector<double> xyz = {0, 0, 0, 1, 1, 1};
  for (double r : {0.0, -1.0, -2.5, std::nan(""), std::numeric_limits<double>::infinity()}) {
    expect_error([&] { Index<3, double>(std::span<const double>(xyz), r, {.engine = GetParam()}); },
                 "radius must be finite and > 0");
  }
}

TEST_P(BadInput, LengthNotMultipleOfDimension) {
  std::vector<float> xyz = {0, 0, 0, 1, 1};
  expect_error([&] { Index<3, float>(std::span<const float>(xyz), 1.0, {.engine = GetParam()}); },
               "5 values, not a multiple of the dimension 3");
}

TEST_P(BadInput, QueryRadiusLargerThanIndexRadiusLeavesIndexUsable) {
  std::vector<double> xy = {0, 0, 0.5, 0, 3, 3};
  Index<2, double> index(std::span<const double>(xy), 1.0, {.engine = GetParam()});
  expect_error([&] { index.pairs({.radius = 1.5}); }, "exceeds the index radius");
  expect_error([&] { index.neighbor_lists({.radius = 2.0}); }, "exceeds the index radius");
  expect_error([&] { index.neighbor_counts(-3.0); }, "query radius must be finite and > 0");
  expect_error([&] { index.ball({0, 0}, 1.01); }, "exceeds the index radius");
  expect_error([&] { index.ball({std::nan(""), 0}, 0.5); }, "non-finite");
  std::vector<double> queries = {0, 0, std::nan(""), 1};
  expect_error([&] { index.cross(spatialhash::PointsView<2, double>(queries.data(), 2)); },
               "query point 1");
  // Still usable and right afterwards.
  auto pairs = index.pairs();
  ASSERT_EQ(pairs.pairs.size(), 1u);
  EXPECT_EQ(pairs.pairs[0], (spatialhash::Pair{0, 1}));
}

TEST_P(BadInput, FailedUpdateLeavesIndexUnchanged) {
  std::vector<double> xy = {0, 0, 0.5, 0, 3, 3};
  Index<2, double> index(std::span<const double>(xy), 1.0, {.engine = GetParam()});
  std::vector<double> moved = {0, 0, std::nan(""), 0, 3, 3};
  expect_error([&] { index.update(std::span<const double>(moved)); }, "point 1 has a non-finite x");
  std::vector<double> fewer = {0, 0, 1, 1};
  expect_error([&] { index.update(std::span<const double>(fewer)); }, "update() got 2 points");
  EXPECT_EQ(index.pairs().pairs.size(), 1u);
}

TEST_P(BadInput, ExtentTooLargeForRadiusIsRefusedNotWrapped) {
  // 1e12 / 1e-6 = 1e18 cells along x: more than the lattice can address exactly.
  std::vector<double> xy = {0, 0, 1e12, 0};
  expect_error([&] { Index<2, double>(std::span<const double>(xy), 1e-6, {.engine = GetParam()}); },
               "too small for the extent");
}

INSTANTIATE_TEST_SUITE_P(AllEngines, BadInput, ::testing::ValuesIn(spatialhash::all_engines()),
                         [](const auto& info) {
                           return std::string(spatialhash::engine_name(info.param));
                         });

TEST(BadInputNames, UnknownEngineNameListsTheValidOnes) {
  expect_error([] { spatialhash::parse_engine("kdtree"); }, "valid: automatic, cell_list");
  EXPECT_EQ(spatialhash::parse_engine("hashed_grid"), Engine::hashed_grid);
}

}  // namespace

namespace {

TEST(BadInputOptions, OutOfRangeOptionsAreNamed) {
  std::vector<double> xyz = {0, 0, 0, 1, 1, 1};
  for (int subdivision : {-1, 3}) {
    expect_error(
        [&] {
          spatialhash::Index<3, double>(std::span<const double>(xyz), 1.0,
                                        {.cell_subdivision = subdivision});
        },
        "cell_subdivision must be 0, 1 or 2, got " + std::to_string(subdivision));
  }
  expect_error(
      [&] {
        spatialhash::Index<3, double>(std::span<const double>(xyz), 1.0,
                                      {.simd = static_cast<spatialhash::Simd>(9)});
      },
      "Options::simd holds 9, not a Simd value");
}

}  // namespace
