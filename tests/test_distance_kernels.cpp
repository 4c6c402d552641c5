// The distance kernels of lists with distances (src/simd/distance_kernels.hpp): every SIMD level
// this processor runs against an oracle written here (each coordinate widened to double, the
// differences squared and summed axis by axis, a correctly rounded square root), compared bit for
// bit, in 2D and 3D, float and double, on tight and padded strides, for every row length from 0
// to 40 and some longer ones (remainders of every size after the vector steps), with the view's
// last point in every lane of a vector (its 3D load would read past the caller's array: the
// array here ends right after its coordinates, which the sanitizer build checks), rows that
// repeat one neighbor, zero distances, distances that overflow to infinity, and outputs at every
// alignment, with guards around each row that must stay untouched.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "../src/simd/distance_kernels.hpp"

namespace {

using spatialhash::index_t;
using spatialhash::PointsView;
using spatialhash::Simd;
using spatialhash::detail::best_row_distances;

constexpr double kGuard = -12345.0;

template <int Dim, class T>
double oracle(const std::vector<T>& data, std::size_t stride, const std::array<double, Dim>& from,
              index_t id) {
  double sum = 0.0;
  for (int k = 0; k < Dim; ++k) {
    const double d = static_cast<double>(data[id * stride + static_cast<std::size_t>(k)]) -
                     from[static_cast<std::size_t>(k)];
    sum += d * d;
  }
  return std::sqrt(sum);
}

template <int Dim, class T>
void check_level(Simd level, std::size_t stride) {
  SCOPED_TRACE(::testing::Message() << "level " << static_cast<int>(level) << ", Dim " << Dim
                                    << ", " << sizeof(T) * 8 << "-bit, stride " << stride);
  constexpr std::size_t kPoints = 301;
  std::mt19937_64 rng(7 + stride + sizeof(T));
  std::uniform_real_distribution<double> uniform(-50.0, 50.0);
  // Exactly as long as the view: nothing after the last point's coordinates.
  std::vector<T> data((kPoints - 1) * stride + Dim);
  for (std::size_t i = 0; i < kPoints; ++i) {
    for (std::size_t k = 0; k < Dim; ++k) {
      // Every seventh point far out, so that some squared distances overflow (in double only).
      const double scale = i % 7 == 3 ? (sizeof(T) == sizeof(double) ? 1e200 : 1e30) : 1.0;
      data[i * stride + k] = static_cast<T>(uniform(rng) * scale);
    }
  }
  const PointsView<Dim, T> points(data.data(), kPoints, stride);
  const index_t last = kPoints - 1;
  const auto kernel = best_row_distances<Dim, T>(level);
  std::uniform_int_distribution<index_t> any_point(0, last);
  std::vector<std::uint32_t> lengths;
  for (std::uint32_t length = 0; length <= 40; ++length) lengths.push_back(length);
  for (std::uint32_t length : {63u, 64u, 65u, 100u, 257u}) lengths.push_back(length);
  for (const std::uint32_t length : lengths) {
    for (int variant = 0; variant < 4; ++variant) {
      std::vector<index_t> ids(length);
      for (auto& id : ids) id = any_point(rng);
      // Variants: random ids; the last point at a moving place; a run of consecutive points
      // ending at the last; one neighbor repeated (the query itself: distance 0).
      const std::array<double, Dim> from = [&] {
        std::array<double, Dim> at{};
        const index_t query = any_point(rng);
        for (std::size_t k = 0; k < Dim; ++k) {
          at[k] = variant == 3 ? static_cast<double>(data[query * stride + k]) : uniform(rng);
        }
        if (variant == 3) std::fill(ids.begin(), ids.end(), query);
        return at;
      }();
      if (variant == 1 && length > 0) ids[(length * 5 + 3) % length] = last;
      if (variant == 2) {
        for (std::uint32_t k = 0; k < length; ++k) ids[k] = last - (length - 1 - k) % kPoints;
      }
      // Outputs at every 8-byte alignment within a line, with guards around the row.
      const std::size_t shift = length % 8;
      std::vector<double> out(8 + shift + length + 8, kGuard);
      double* row = out.data() + 8 + shift;
      kernel(points, from, ids.data(), length, row);
      for (std::uint32_t k = 0; k < length; ++k) {
        const double want = oracle<Dim>(data, stride, from, ids[k]);
        ASSERT_EQ(std::memcmp(&row[k], &want, sizeof(double)), 0)
            << "length " << length << ", variant " << variant << ", entry " << k << " (point "
            << ids[k] << "): " << row[k] << " against " << want;
      }
      for (std::size_t g = 0; g < out.size(); ++g) {
        if (out.data() + g >= row && out.data() + g < row + length) continue;
        ASSERT_EQ(out[g], kGuard) << "length " << length << ", variant " << variant
                                  << ": written outside the row at " << g;
      }
    }
  }
}

template <int Dim, class T>
void check_every_level() {
  for (const Simd level : {Simd::scalar, Simd::avx2, Simd::avx512}) {
    if (!spatialhash::simd_available(level)) continue;
    for (const std::size_t stride :
         {std::size_t{Dim}, std::size_t{Dim + 1}, std::size_t{Dim + 3}}) {
      check_level<Dim, T>(level, stride);
    }
  }
}

TEST(DistanceKernels, MatchTheDoubleRuleIn3dFloat) {
  check_every_level<3, float>();
}
TEST(DistanceKernels, MatchTheDoubleRuleIn3dDouble) {
  check_every_level<3, double>();
}
TEST(DistanceKernels, MatchTheDoubleRuleIn2dFloat) {
  check_every_level<2, float>();
}
TEST(DistanceKernels, MatchTheDoubleRuleIn2dDouble) {
  check_every_level<2, double>();
}

TEST(DistanceKernels, TheBestLevelIsTheFastestAvailable) {
  // The automatic choice is one of the levels, and never one this processor lacks.
  const auto automatic = best_row_distances<3, float>(Simd::automatic);
  if (spatialhash::simd_available(Simd::avx512)) {
    EXPECT_EQ(automatic, (best_row_distances<3, float>(Simd::avx512)));
  } else if (spatialhash::simd_available(Simd::avx2)) {
    EXPECT_EQ(automatic, (best_row_distances<3, float>(Simd::avx2)));
  } else {
    EXPECT_EQ(automatic, (best_row_distances<3, float>(Simd::scalar)));
  }
}

}  // namespace
