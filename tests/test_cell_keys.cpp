// The build's key pass (src/simd/cell_keys.hpp): every SIMD level this processor runs against an
// oracle written here, bit by bit (the cell by the lattice rule floor((x - origin) * inv_cell),
// the Morton code by interleaving one bit at a time), on random points, points exactly on cell
// boundaries, padded strides, coarse keys, slabs (the slab along the last axis appended, by its
// own oracle: the fractional part of u times the slab count), 3D column keys (the Morton code of
// (x, y), then z in its own bits: the cell_list layout's column order), ranges whose length is not
// a multiple of the vector width, both outputs (key and index arrays, or packed records), the
// query mode of cross queries (points off the lattice, NaN, infinities, clamped cells), and
// update()'s key pass (the same keys compared with old ones, and coordinates relative to a frame).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "../src/simd/cell_keys.hpp"

namespace {

using spatialhash::Simd;
using spatialhash::detail::best_cell_keys;
using spatialhash::detail::best_key_changes;
using spatialhash::detail::CellKeyInput;
using spatialhash::detail::KeyChangeCount;
using spatialhash::detail::KeyChanges;

/// Morton code by definition: bit b of axis k goes to bit b * Dim + k.
template <int Dim>
std::uint64_t interleave(const std::array<std::uint64_t, Dim>& cell) {
  std::uint64_t code = 0;
  for (int b = 0; b * Dim < 64; ++b) {
    for (int k = 0; k < Dim && b * Dim + k < 64; ++k) {
      code |= ((cell[k] >> b) & 1u) << (b * Dim + k);
    }
  }
  return code;
}

/// update()'s key pass (key_changes) at `level` over [begin, end) of the points of `input`, whose
/// keys the oracle gave as `keys`: the same keys, compared with keys the points had (every third
/// the same, the others differing in a low bit or in a high one), the count of changed keys and
/// the OR of the differences, and each point's coordinates relative to an origin, the difference
/// taken in double and rounded to float; nothing written outside the range.
template <int Dim, class T>
void check_key_changes(Simd level, const CellKeyInput<Dim, T>& input, std::size_t begin,
                       std::size_t end, const std::vector<std::uint64_t>& keys) {
  const std::size_t size = keys.size();
  std::vector<std::uint64_t> was(size), now(size, ~std::uint64_t{0});
  std::vector<std::uint8_t> changed(size, 7);
  std::array<std::vector<float>, Dim> relative;
  KeyChanges<Dim> out{was.data(), {}, {}, changed.data(), now.data()};
  for (int k = 0; k < Dim; ++k) {
    relative[k].assign(size, -1.0f);
    out.relative[k] = relative[k].data();
    out.origin[k] = 3.1 * k - 7.3;  // not a float: the rounding after the subtraction matters
  }
  std::size_t expected_changed = 0;
  std::uint64_t expected_bits = 0;
  for (std::size_t i = 0; i < size; ++i) {
    was[i] =
        i % 3 == 0 ? keys[i] : keys[i] ^ (i % 3 == 1 ? std::uint64_t{1} : std::uint64_t{1} << 40);
    if (i >= begin && i < end && was[i] != keys[i]) {
      ++expected_changed;
      expected_bits |= was[i] ^ keys[i];
    }
  }
  const KeyChangeCount count = best_key_changes<Dim, T>(level)(input, begin, end, out);
  EXPECT_EQ(count.changed, expected_changed);
  EXPECT_EQ(count.differing_bits, expected_bits);
  for (std::size_t i = 0; i < size; ++i) {
    if (i < begin || i >= end) {
      EXPECT_EQ(now[i], ~std::uint64_t{0}) << "written outside the range at " << i;
      EXPECT_EQ(changed[i], 7) << "written outside the range at " << i;
      for (int k = 0; k < Dim; ++k) EXPECT_EQ(relative[k][i], -1.0f) << "at " << i;
      continue;
    }
    ASSERT_EQ(now[i], keys[i]) << "point " << i;
    ASSERT_EQ(changed[i], was[i] != keys[i] ? 1 : 0) << "point " << i;
    for (int k = 0; k < Dim; ++k) {
      const double x = static_cast<double>(input.data[i * input.stride + k]);
      ASSERT_EQ(relative[k][i], static_cast<float>(x - out.origin[k])) << "point " << i;
    }
  }
}

template <int Dim, class T>
void check_level(Simd level, std::size_t stride, double cell_size, int shift, int slab_bits,
                 int column_z_bits = -1) {
  SCOPED_TRACE(::testing::Message()
               << "Dim " << Dim << ", " << sizeof(T) * 8 << "-bit, stride " << stride << ", cell "
               << cell_size << ", shift " << shift << ", slab bits " << slab_bits
               << ", column z bits " << column_z_bits);
  std::mt19937_64 rng(17 + stride + static_cast<std::uint64_t>(shift));
  std::uniform_real_distribution<double> uniform(-3.0, 40.0);
  std::uniform_int_distribution<int> lattice(-6, 80);
  constexpr std::size_t kPoints = 1000 + 7;
  std::vector<T> data(kPoints * stride, T(0));
  for (std::size_t i = 0; i < kPoints; ++i) {
    for (int k = 0; k < Dim; ++k) {
      // Every third point sits exactly on a lattice plane, every fifth on a plane between two
      // (as exactly as T holds them).
      const double x = i % 3 == 0   ? lattice(rng) * cell_size
                       : i % 5 == 0 ? (lattice(rng) + 0.5) * cell_size
                                    : uniform(rng);
      data[i * stride + k] = static_cast<T>(x);
    }
  }
  CellKeyInput<Dim, T> input{data.data(), stride, {}, 1.0 / cell_size, shift};
  input.slab_bits = slab_bits;
  input.column_z_bits = column_z_bits;
  for (int k = 0; k < Dim; ++k) input.origin[k] = -4.0 - cell_size;
  const auto keys_of = best_cell_keys<Dim, T>(level);
  // A range that starts off any vector boundary and leaves a remainder.
  const std::size_t begin = 3, end = kPoints - 2;
  std::vector<std::uint64_t> keys(kPoints, ~std::uint64_t{0});
  std::vector<std::uint32_t> order(kPoints, 0xFFFFFFFFu);
  keys_of(input, begin, end, keys.data(), order.data());
  for (std::size_t i = 0; i < kPoints; ++i) {
    if (i < begin || i >= end) {
      EXPECT_EQ(keys[i], ~std::uint64_t{0}) << "written outside the range at " << i;
      EXPECT_EQ(order[i], 0xFFFFFFFFu) << "written outside the range at " << i;
      continue;
    }
    std::array<std::uint64_t, Dim> cell;
    std::uint64_t slab = 0;
    for (int k = 0; k < Dim; ++k) {
      const double u =
          (static_cast<double>(data[i * stride + k]) - input.origin[k]) * input.inv_cell;
      cell[k] = static_cast<std::uint64_t>(std::floor(u)) >> shift;
      if (k == Dim - 1) {
        slab = static_cast<std::uint64_t>(std::floor((u - std::floor(u)) * (1 << slab_bits)));
      }
    }
    std::uint64_t code = interleave<Dim>(cell);
    if constexpr (Dim == 3) {
      if (column_z_bits >= 0) {
        ASSERT_LT(cell[2], std::uint64_t{1} << column_z_bits) << "point " << i;
        code = interleave<2>({cell[0], cell[1]}) << column_z_bits | cell[2];
      }
    }
    ASSERT_EQ(keys[i], code << slab_bits | slab) << "point " << i;
    ASSERT_EQ(order[i], i);
  }
  check_key_changes<Dim, T>(level, input, begin, end, keys);
  // Packed records (no order array): code << 32 | index, the codes here fit in 32 bits.
  std::vector<std::uint64_t> packed(kPoints, ~std::uint64_t{0});
  keys_of(input, begin, end, packed.data(), nullptr);
  for (std::size_t i = 0; i < kPoints; ++i) {
    if (i < begin || i >= end) {
      EXPECT_EQ(packed[i], ~std::uint64_t{0}) << "written outside the range at " << i;
      continue;
    }
    ASSERT_LT(keys[i], std::uint64_t{1} << 32);
    ASSERT_EQ(packed[i], keys[i] << 32 | i) << "point " << i;
  }
}

/// Query mode: points anywhere (outside the bounds, NaN, infinities, huge values); the oracle
/// follows the rule of cell_keys.hpp with integer clamping.
template <int Dim, class T>
void check_queries(Simd level, std::size_t stride, double cell_size, int shift) {
  SCOPED_TRACE(::testing::Message()
               << "queries, Dim " << Dim << ", " << sizeof(T) * 8 << "-bit, stride " << stride
               << ", cell " << cell_size << ", shift " << shift);
  std::mt19937_64 rng(29 + stride + static_cast<std::uint64_t>(shift));
  std::uniform_real_distribution<double> uniform(-6.0, 40.0);
  const double specials[] = {std::nan(""), HUGE_VAL, -HUGE_VAL, 1e300, -1e300, -2.0, 30.0};
  constexpr std::size_t kPoints = 1000 + 5;
  std::vector<T> data(kPoints * stride, T(0));
  for (std::size_t i = 0; i < kPoints; ++i) {
    for (int k = 0; k < Dim; ++k) {
      const double x =
          i % 11 == 3 ? specials[(i / 11 + static_cast<std::size_t>(k)) % 7] : uniform(rng);
      data[i * stride + k] = static_cast<T>(x);
    }
  }
  CellKeyInput<Dim, T> input{data.data(), stride, {}, 1.0 / cell_size, shift};
  input.queries = true;
  for (int k = 0; k < Dim; ++k) {
    input.origin[k] = -4.0 - cell_size;
    input.lower[k] = -2.0;
    input.upper[k] = 30.0;
    input.last_cell[k] = 60.0 + k;  // below the cell of upper for small cells: clamping is tested
  }
  const auto keys_of = best_cell_keys<Dim, T>(level);
  const std::size_t begin = 1, end = kPoints;
  std::vector<std::uint64_t> keys(kPoints, 0), packed(kPoints, 0);
  std::vector<std::uint32_t> order(kPoints, 0);
  keys_of(input, begin, end, keys.data(), order.data());
  keys_of(input, begin, end, packed.data(), nullptr);
  std::size_t on_count = 0;
  for (std::size_t i = begin; i < end; ++i) {
    bool on = true;
    std::array<std::uint64_t, Dim> cell;
    for (int k = 0; k < Dim; ++k) {
      const double x = static_cast<double>(data[i * stride + k]);
      on = on && x >= input.lower[k] && x <= input.upper[k];
      if (!on) break;
      const auto c = static_cast<std::int64_t>(std::floor((x - input.origin[k]) * input.inv_cell));
      cell[k] = static_cast<std::uint64_t>(std::clamp<std::int64_t>(
                    c, 0, static_cast<std::int64_t>(input.last_cell[k]))) >>
                shift;
    }
    const std::uint64_t expected = on ? interleave<Dim>(cell) + 1 : 0;
    on_count += on;
    ASSERT_EQ(keys[i], expected) << "point " << i;
    ASSERT_EQ(order[i], i);
    ASSERT_EQ(packed[i], expected << 32 | i) << "point " << i;
  }
  EXPECT_GT(on_count, kPoints / 4);
  EXPECT_LT(on_count, kPoints);
}

template <int Dim, class T>
void check_all_levels() {
  for (Simd level : {Simd::scalar, Simd::avx2, Simd::avx512}) {
    if (!spatialhash::simd_available(level)) continue;
    SCOPED_TRACE(static_cast<int>(level));
    for (std::size_t stride : {std::size_t{Dim}, std::size_t{Dim + 2}}) {
      for (double cell_size : {0.5, 0.1, 0.37}) {
        for (int shift : {0, 3}) {
          for (int slab_bits : {0, 1, 2}) {
            check_level<Dim, T>(level, stride, cell_size, shift, slab_bits);
            // Column keys (3D, full resolution): z in 9 bits (cells up to 441 here), or 11.
            if (Dim == 3 && shift == 0) {
              for (int z_bits : {9, 11})
                check_level<Dim, T>(level, stride, cell_size, shift, slab_bits, z_bits);
            }
          }
          check_queries<Dim, T>(level, stride, cell_size, shift);
        }
      }
    }
  }
}

TEST(CellKeys, EveryLevelMatchesTheOracle2DFloat) {
  check_all_levels<2, float>();
}
TEST(CellKeys, EveryLevelMatchesTheOracle2DDouble) {
  check_all_levels<2, double>();
}
TEST(CellKeys, EveryLevelMatchesTheOracle3DFloat) {
  check_all_levels<3, float>();
}
TEST(CellKeys, EveryLevelMatchesTheOracle3DDouble) {
  check_all_levels<3, double>();
}

}  // namespace
