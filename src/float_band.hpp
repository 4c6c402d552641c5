// FloatBand: how the float fast path stays exact.
//
// The cell_list engine keeps a float copy of the points relative to an origin (each point's float
// frame's: cell_list_layout.hpp) and computes squared distances d2f in float between points and
// queries of one frame. A float rounding is off by at most 2^-24 of its result, plus 2^-150 where
// the result is subnormal (below 2^-126 an ulp is 2^-149 whatever the magnitude). With E the
// largest |coordinate - origin| (queries included; at most a frame's extent), each stored
// coordinate is off by at most e1 = 1.1 * 2^-24 * E + 2^-150, each float difference by at most
// delta = 2 e1 + 2^-23 (1.1 r + 2 e1) (a difference that is subnormal is exact), and for a
// candidate whose true distance or float distance is within 1.05 r, |d2f - d2| <=
// Dim * delta * (2.2 r + delta) + 1.2 r^2 2^-21 (float rounding of the sum) + Dim * 2^-150
// (squares and sums in the subnormal range: without this term a radius of 1e-23, whose square
// rounds to 0 in float, would call every candidate a neighbor for sure) + r^2 2^-49 (rounding of
// the double rule itself). Twice that is the band:
//   d2f <= lo  => a neighbor for sure;  d2f > hi  => not a neighbor for sure;  otherwise the pair
// is re-decided with the double rule. When delta > 0.05 r (coordinates too large for float to say
// anything) lo = -inf and hi = +inf: every candidate is decided in double. NaN float distances
// (float overflow) are treated as borderline as well.
#pragma once

#include <cmath>
#include <limits>

namespace spatialhash::detail {

struct FloatBand {
  float lo;  ///< d2f <= lo: certainly within r
  float hi;  ///< d2f > hi: certainly beyond r
};

inline FloatBand make_float_band(double radius, double extent, int dim) {
  constexpr double kUlp = 0x1p-24;
  constexpr double kSubnormal = 0x1p-150;  // the largest rounding error below 2^-126
  const double e1 = 1.1 * kUlp * extent + kSubnormal;
  const double delta = 2.0 * e1 + 2.0 * kUlp * (1.1 * radius + 2.0 * e1);
  const double r2 = radius * radius;
  const float inf = std::numeric_limits<float>::infinity();
  if (!(delta <= 0.05 * radius) || !(r2 < 1e37)) return {-inf, inf};
  const double band = 2.0 * (dim * delta * (2.2 * radius + delta) + 1.2 * r2 * 0x1p-21 +
                             dim * kSubnormal + r2 * 0x1p-49);
  // Round outwards so the float thresholds never narrow the band.
  float lo = static_cast<float>(r2 - band);
  if (static_cast<double>(lo) > r2 - band) lo = std::nextafter(lo, -inf);
  float hi = static_cast<float>(r2 + band);
  if (static_cast<double>(hi) < r2 + band) hi = std::nextafter(hi, inf);
  return {lo, hi};
}

}  // namespace spatialhash::detail
