// CRC-32 by table lookup, eight bytes per step (slicing-by-8), and combination of CRCs by
// GF(2) matrix powers.
#include "crc32.hpp"

#include <array>
#include <bit>
#include <cstring>

namespace spatialhash::cli {

namespace {

constexpr std::uint32_t kPolynomial = 0xEDB88320u;

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

/// tables[0] is the classic byte table; tables[k][b] advances tables[k-1][b] by one zero byte.
constexpr Tables make_tables() {
  Tables tables{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1u) ? (c >> 1) ^ kPolynomial : c >> 1;
    tables[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::size_t b = 0; b < 256; ++b) {
      const std::uint32_t prev = tables[k - 1][b];
      tables[k][b] = (prev >> 8) ^ tables[0][prev & 0xffu];
    }
  }
  return tables;
}

constexpr Tables kTables = make_tables();

/// A linear map on 32-bit CRC states over GF(2): column i is the image of bit i.
using Matrix = std::array<std::uint32_t, 32>;

std::uint32_t apply(const Matrix& m, std::uint32_t v) {
  std::uint32_t out = 0;
  for (int i = 0; v != 0; ++i, v >>= 1) {
    if (v & 1u) out ^= m[i];
  }
  return out;
}

Matrix multiply(const Matrix& a, const Matrix& b) {  // a after b
  Matrix out{};
  for (int i = 0; i < 32; ++i) out[i] = apply(a, b[i]);
  return out;
}

/// The effect of one zero bit on the (pre-inverted) CRC register.
Matrix one_zero_bit() {
  Matrix m{};
  m[0] = kPolynomial;
  for (int i = 1; i < 32; ++i) m[i] = 1u << (i - 1);
  return m;
}

}  // namespace

std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
  // The eight-byte step reads words in little-endian order; other hosts take the byte loop.
  while (std::endian::native == std::endian::little && size >= 8) {
    std::uint32_t low, high;
    std::memcpy(&low, p, 4);
    std::memcpy(&high, p + 4, 4);
    low ^= c;
    c = kTables[7][low & 0xffu] ^ kTables[6][(low >> 8) & 0xffu] ^ kTables[5][(low >> 16) & 0xffu] ^
        kTables[4][low >> 24] ^ kTables[3][high & 0xffu] ^ kTables[2][(high >> 8) & 0xffu] ^
        kTables[1][(high >> 16) & 0xffu] ^ kTables[0][high >> 24];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xffu];
  return ~c;
}

std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t size_b) {
  // CRC(a || b) = Z^(8*|b|)(CRC(a)) ^ CRC(b), where Z is the register map of one zero bit: the
  // register inversions at start and end of each CRC cancel out in the xor. Z^(8n) by squaring.
  Matrix power = one_zero_bit();
  for (int i = 0; i < 3; ++i) power = multiply(power, power);  // one zero byte
  std::uint32_t crc = crc_a;
  for (std::uint64_t n = size_b; n != 0; n >>= 1) {
    if (n & 1u) crc = apply(power, crc);
    power = multiply(power, power);
  }
  return crc ^ crc_b;
}

}  // namespace spatialhash::cli
