// Morton (Z-order) codes: interleave the bits of cell coordinates so that sorting by code keeps
// cells that are close in space close in memory.
#pragma once

#include <array>
#include <cstdint>

namespace spatialhash::detail {

/// One step of spreading bits apart: x = (x | x << shift) & mask.
struct SpreadStep {
  int shift;
  std::uint64_t mask;
};
/// The steps of spread_bits_2 and spread_bits_3, in order (the SIMD key kernels, simd/cell_keys,
/// run the same steps on vector lanes).
inline constexpr std::array<SpreadStep, 5> kSpreadSteps2{{{16, 0x0000FFFF0000FFFFull},
                                                          {8, 0x00FF00FF00FF00FFull},
                                                          {4, 0x0F0F0F0F0F0F0F0Full},
                                                          {2, 0x3333333333333333ull},
                                                          {1, 0x5555555555555555ull}}};
inline constexpr std::array<SpreadStep, 5> kSpreadSteps3{{{32, 0x001F00000000FFFFull},
                                                          {16, 0x001F0000FF0000FFull},
                                                          {8, 0x100F00F00F00F00Full},
                                                          {4, 0x10C30C30C30C30C3ull},
                                                          {2, 0x1249249249249249ull}}};
/// The input bits spread_bits_2 and spread_bits_3 keep.
inline constexpr std::uint64_t kSpreadInput2 = 0xFFFFFFFFull;
inline constexpr std::uint64_t kSpreadInput3 = 0x1FFFFFull;

/// Spreads the low 32 bits of x so bit k moves to bit 2k.
constexpr std::uint64_t spread_bits_2(std::uint64_t x) {
  x &= kSpreadInput2;
  for (const SpreadStep& step : kSpreadSteps2) x = (x | (x << step.shift)) & step.mask;
  return x;
}

/// Spreads the low 21 bits of x so bit k moves to bit 3k.
constexpr std::uint64_t spread_bits_3(std::uint64_t x) {
  x &= kSpreadInput3;
  for (const SpreadStep& step : kSpreadSteps3) x = (x | (x << step.shift)) & step.mask;
  return x;
}

/// Inverse of spread_bits_2: gathers bits 0, 2, 4, ... of x into the low 32 bits.
constexpr std::uint32_t compact_bits_2(std::uint64_t x) {
  x &= 0x5555555555555555ull;
  x = (x | (x >> 1)) & 0x3333333333333333ull;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFull;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFull;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFull;
  return static_cast<std::uint32_t>(x);
}

/// Inverse of spread_bits_3: gathers bits 0, 3, 6, ... of x into the low 21 bits.
constexpr std::uint32_t compact_bits_3(std::uint64_t x) {
  x &= 0x1249249249249249ull;
  x = (x | (x >> 2)) & 0x10C30C30C30C30C3ull;
  x = (x | (x >> 4)) & 0x100F00F00F00F00Full;
  x = (x | (x >> 8)) & 0x001F0000FF0000FFull;
  x = (x | (x >> 16)) & 0x001F00000000FFFFull;
  x = (x | (x >> 32)) & 0x00000000001FFFFFull;
  return static_cast<std::uint32_t>(x);
}

/// Morton code of non-negative cell coordinates; each must fit in 64 / Dim bits.
template <int Dim>
constexpr std::uint64_t morton_code(const std::array<std::uint32_t, Dim>& c) {
  if constexpr (Dim == 2) {
    return spread_bits_2(c[0]) | (spread_bits_2(c[1]) << 1);
  } else {
    return spread_bits_3(c[0]) | (spread_bits_3(c[1]) << 1) | (spread_bits_3(c[2]) << 2);
  }
}

/// The cell coordinates of a Morton code (inverse of morton_code).
template <int Dim>
constexpr std::array<std::uint32_t, Dim> morton_decode(std::uint64_t code) {
  if constexpr (Dim == 2) {
    return {compact_bits_2(code), compact_bits_2(code >> 1)};
  } else {
    return {compact_bits_3(code), compact_bits_3(code >> 1), compact_bits_3(code >> 2)};
  }
}

/// Bits of a Morton code per axis.
template <int Dim>
inline constexpr int kMortonBitsPerAxis = Dim == 2 ? 32 : 21;

}  // namespace spatialhash::detail
