// PeriodicPairRule: the periodic neighbor rule as an inner search can apply it to the pairs its
// float band leaves undecided (EngineBase::takes_pair_rule), so that the inner engine's counts and
// full lists of the real points come out exactly as the rule has them.
//
// The rule (index.hpp) measures caller indices i < j as w_i against the image of j. The inner
// search measures real q against a ghost of o (q's neighbor across a face) as w_q against o's
// image: the rule's own measure when q < o, and for o < q the same pair from the other side, whose
// squared distance differs by a rounding. This rule measures such a pair as w_o against q's image
// shifted the other way, rounded as every image is (image_coordinate), and every other pair
// by its inner distance.
//
// Why deciding only the undecided pairs is enough (sound()): the band leaves at least
// 1.2 r^2 2^-21 on either side of r^2 undecided (float_band.hpp). Per axis the two sides'
// coordinate differences each round one image and themselves, off by at most 2^-53 of a coordinate
// (M, a bound on any image's magnitude) and of the difference (about r near the radius), so their
// squared distances differ by at most about 2.1 Dim 2^-52 r (M + 1.5 r). sound() asks for that
// with a fourfold margin: coordinates up to some 10^8 radii from the origin.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "spatialhash/box.hpp"
#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

#include "../exact.hpp"
#include "periodic_images.hpp"

namespace spatialhash::detail {

template <int Dim>
class PeriodicPairRule {
 public:
  PeriodicPairRule(const PeriodicImages<Dim>& images, const PeriodicBox<Dim>& box, double radius)
      : images_(images),
        coords_(images.coords.data(), images.size()),
        reals_(static_cast<index_t>(images.reals)),
        r2_(radius * radius) {
    for (int k = 0; k < Dim; ++k) edge_[k] = box.upper[k] - box.lower[k];
  }

  /// Whether an inner search may take this rule at `radius` in `box` (see the header).
  static bool sound(const PeriodicBox<Dim>& box, double radius) {
    double magnitude = 2.0 * radius;  // M
    for (int k = 0; k < Dim; ++k) {
      magnitude += 2.0 * (std::abs(box.lower[k]) + std::abs(box.upper[k]));
    }
    constexpr double kEpsilon = std::numeric_limits<double>::epsilon();  // 2^-52
    return 8.0 * Dim * kEpsilon * magnitude <= 0x1p-21 * radius;
  }

  /// Whether inner point `query` has inner point `candidate` as a neighbor.
  bool operator()(index_t query, index_t candidate) const {
    if (query < reals_ && candidate >= reals_) {
      const index_t ghost = candidate - reals_;
      if (images_.origin[ghost] < query) return across(query, ghost) <= r2_;
    }
    return distance_squared(coords_, query, candidate) <= r2_;
  }

  /// The squared distance of real `query` and the point that ghost `ghost` (a ghost's number,
  /// id - reals) images, origin < query, as the rule measures it: w_origin against query's image
  /// shifted the other way.
  double across(index_t query, index_t ghost) const {
    std::array<double, Dim> image;
    for (int k = 0; k < Dim; ++k) {
      const int s = -images_.shift[ghost][static_cast<std::size_t>(k)];
      image[k] = image_coordinate(coords_.coord(query, k), s, edge_[k]);
    }
    return distance_squared(coords_, images_.origin[ghost], image);
  }

 private:
  const PeriodicImages<Dim>& images_;
  PointsView<Dim, double> coords_;
  index_t reals_;
  double r2_;
  std::array<double, Dim> edge_{};
};

}  // namespace spatialhash::detail
