// Bad input: every case raises InvalidArgument with a message naming the problem and where, and
// leaves an existing index usable.
#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "for_each_dim_type.hpp"
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

// The bounds pass reads packed points in blocks of lanes, and each thread its own share: a bad
// value is found on any axis, anywhere (first block, middle, the tail after the last whole
// block), packed or strided.
TEST(BadInputBounds, NonFiniteFoundInEveryLaneAndTheTail) {
  for_each_dim_type([]<int Dim, class T>() {
    const std::size_t n = 101;
    for (std::size_t stride : {std::size_t{Dim}, std::size_t{Dim + 1}}) {
      for (std::size_t bad : {std::size_t{0}, std::size_t{17}, std::size_t{50}, n - 1}) {
        for (int k = 0; k < Dim; ++k) {
          for (T value : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                          -std::numeric_limits<T>::infinity()}) {
            std::vector<T> data(n * stride);
            for (std::size_t j = 0; j < data.size(); ++j) data[j] = static_cast<T>(j % 7);
            data[bad * stride + static_cast<std::size_t>(k)] = value;
            const std::string axis = k == 0 ? "x" : (k == 1 ? "y" : "z");
            expect_error(
                [&] {
                  Index<Dim, T>(spatialhash::PointsView<Dim, T>(data.data(), n, stride), 1.0,
                                {.threads = 2});
                },
                "point " + std::to_string(bad) + " has a non-finite " + axis);
          }
        }
      }
    }
  });
}

// A periodic index checks the caller's points in the pass that wraps them (no bounds pass): its
// packed path keeps runs of 8 points only when every value lies in the box (on an open axis:
// is finite), so a bad value anywhere (first run, second block of 4096 points, the tail after the
// last whole run), on a periodic or an open axis, packed or strided, is found and named.
TEST(BadInputPeriodic, NonFiniteFoundOnEveryAxisAndPath) {
  for_each_dim_type([]<int Dim, class T>() {
    const std::size_t n = 4096 + 13;
    for (const bool last_open : {false, true}) {
      spatialhash::PeriodicBox<Dim> box;
      for (int k = 0; k < Dim; ++k) {
        box.lower[k] = 0.0;
        box.upper[k] = 1.0;
        box.periodic[k] = !(last_open && k == Dim - 1);
      }
      for (std::size_t stride : {std::size_t{Dim}, std::size_t{Dim + 1}}) {
        for (std::size_t bad : {std::size_t{0}, std::size_t{4096 + 3}, n - 1}) {
          for (int k = 0; k < Dim; ++k) {
            for (T value : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                            -std::numeric_limits<T>::infinity()}) {
              std::vector<T> data(n * stride);
              for (std::size_t j = 0; j < data.size(); ++j) data[j] = static_cast<T>(j % 7) / 8;
              data[bad * stride + static_cast<std::size_t>(k)] = value;
              const std::string axis = k == 0 ? "x" : (k == 1 ? "y" : "z");
              SCOPED_TRACE((last_open ? "last axis open, stride " : "periodic, stride ") +
                           std::to_string(stride));
              expect_error(
                  [&] {
                    Index<Dim, T>(spatialhash::PointsView<Dim, T>(data.data(), n, stride), 0.1, box,
                                  {.threads = 2});
                  },
                  "point " + std::to_string(bad) + " has a non-finite " + axis);
            }
          }
        }
      }
    }
  });
}

TEST_P(BadInput, BadRadius) {
  std::vector<double> xyz = {0, 0, 0, 1, 1, 1};
  for (double r : {0.0, -1.0, -2.5, std::nan(""), std::numeric_limits<double>::infinity()}) {
    expect_error([&] { Index<3, double>(std::span<const double>(xyz), r, {.engine = GetParam()}); },
                 "radius must be finite and > 0");
  }
}

// Radii whose square is not a normal double: 1e300 would square to infinity (every pair a
// neighbor), 1e-310 is itself subnormal (its reciprocal overflows).
TEST_P(BadInput, RadiusOutsideTheSupportedRangeIsNamed) {
  std::vector<double> xyz = {0, 0, 0, 1, 1, 1};
  const auto make = [&](double r) {
    return Index<3, double>(std::span<const double>(xyz), r, {.engine = GetParam()});
  };
  expect_error([&] { make(1e300); }, "radius 1e+300 is outside the supported range");
  expect_error([&] { make(1e-310); }, "radius 1e-310 is outside the supported range");
  expect_error([&] { make(std::nextafter(spatialhash::kMaxRadius, 1e308)); }, "supported range");
  expect_error([&] { make(std::nextafter(spatialhash::kMinRadius, 0.0)); }, "supported range");
  EXPECT_EQ(make(spatialhash::kMaxRadius).pairs().pairs.size(), 1u);
  // At the smallest radius, points that far apart: one pair exactly at the radius.
  const double m = spatialhash::kMinRadius;
  std::vector<double> tiny = {0, 0, 0, m, 0, 0, 0, 0, 2 * m};
  const Index<3, double> smallest(std::span<const double>(tiny), m, {.engine = GetParam()});
  EXPECT_EQ(smallest.pairs().pairs.size(), 1u);
  const spatialhash::PeriodicBox<3> box{{0, 0, 0}, {10, 10, 10}, {true, true, true}};
  expect_error(
      [&] { Index<3, double>(std::span<const double>(xyz), 1e-200, box, {.engine = GetParam()}); },
      "radius 1e-200 is outside the supported range");
  const Index<3, double> index = make(1.0);
  expect_error([&] { index.pairs({.radius = 1e-300}); },
               "query radius 1e-300 is outside the supported range");
  expect_error([&] { index.ball({0, 0, 0}, 1e-160); }, "query radius 1e-160");
}

// Messages print numbers in their shortest exact form, not std::to_string's six decimals.
TEST_P(BadInput, MessagesPrintSmallNumbersExactly) {
  std::vector<double> xy = {0, 0, 1, 0};
  expect_error(
      [&] { Index<2, double>(std::span<const double>(xy), 1e-10, {.engine = GetParam()}); },
      "radius 1e-10 is too small for the extent 1 of the points along x");
  Index<2, double> index(std::span<const double>(xy), 1e-3, {.engine = GetParam()});
  expect_error([&] { index.pairs({.radius = 0.0015}); },
               "query radius 0.0015 exceeds the index radius 0.001");
}

TEST_P(BadInput, TooManyThreadsAreRefused) {
  std::vector<double> xyz = {0, 0, 0, 1, 1, 1};
  for (int threads : {spatialhash::kMaxThreads + 1, 100000, std::numeric_limits<int>::max()}) {
    expect_error(
        [&] {
          Index<3, double>(std::span<const double>(xyz), 1.0,
                           {.engine = GetParam(), .threads = threads});
        },
        std::to_string(threads) + " threads requested, more than the limit of 1024");
  }
  const spatialhash::Options at_limit{.engine = GetParam(), .threads = spatialhash::kMaxThreads};
  const Index<3, double> index(std::span<const double>(xyz), 2.0, at_limit);
  EXPECT_EQ(index.pairs().pairs.size(), 1u);
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
  // The refilled form leaves its vector as it was.
  std::vector<spatialhash::index_t> kept_counts{5, 6, 7};
  expect_error([&] { index.neighbor_counts(kept_counts, 2.0); }, "exceeds the index radius");
  EXPECT_EQ(kept_counts, (std::vector<spatialhash::index_t>{5, 6, 7}));
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

// The entry points besides Index that take a radius or a thread count check them alike.
TEST(BadInputOptions, OtherEntryPointsCheckRadiusAndThreads) {
  std::vector<double> xyz = {0, 0, 0, 1, 1, 1};
  const spatialhash::PointsView<3, double> view(xyz.data(), 2);
  expect_error([&] { spatialhash::morton_order(view, 1.0, 5000); }, "5000 threads requested");
  expect_error([&] { spatialhash::PointSets<3, double>(1e200); }, "outside the supported range");
  expect_error([&] { spatialhash::PointSets<3, double>(1.0, {.threads = 2000}); },
               "2000 threads requested");
  const std::vector<double> radii = {1.0, 1e-300};
  expect_error(
      [&] {
        spatialhash::SizedIndex<3, double>(std::span<const double>(xyz),
                                           std::span<const double>(radii),
                                           spatialhash::SizeRule::max);
      },
      "radius 1 is 1e-300, outside the supported range");
  const std::vector<double> ok = {1.0, 1.0};
  expect_error(
      [&] {
        spatialhash::SizedIndex<3, double>(std::span<const double>(xyz),
                                           std::span<const double>(ok), spatialhash::SizeRule::sum,
                                           {.index = {.threads = 1025}});
      },
      "1025 threads requested");
}

// A periodic box too long for its radius is refused with a message that says why the extent is
// the box's rather than the points'.
TEST(BadInputOptions, PeriodicBoxTooLongForTheRadiusIsExplained) {
  std::vector<double> xyz = {0, 0, 0, 0.5, 0.5, 0.5};
  const spatialhash::PeriodicBox<3> box{{0, 0, 0}, {1e7, 1, 1}, {true, false, false}};
  expect_error([&] { spatialhash::Index<3, double>(std::span<const double>(xyz), 1e-3, box); },
               "images across the periodic faces");
}

}  // namespace
