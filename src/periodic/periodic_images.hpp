// PeriodicImages: the point set a periodic index actually searches: the wrapped points followed
// by ghost images of those near the faces of the box.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "spatialhash/box.hpp"
#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// Point id a < `reals` is the wrapped point a itself; a ghost g = reals + k is the image
/// w_origin[k] + shift[k] * L of a real point, stored rounded to double (exactly how the periodic
/// neighbor rule defines the image). Ghosts are the images, with shift components in {-1, 0, 1}
/// on periodic axes (0 on open ones, not all 0), that lie within `margin` of the box on every
/// axis, margin >= the radius plus rounding: every image within the radius of a wrapped point
/// (the only images the rule can pair) is therefore present.
template <int Dim>
struct PeriodicImages {
  std::vector<double> coords;  ///< Dim values per id: reals first, then ghosts
  std::size_t reals = 0;
  std::vector<index_t> origin;                    ///< per ghost: the real point it images
  std::vector<std::array<std::int8_t, 3>> shift;  ///< per ghost: its offset in box edges

  std::size_t size() const { return coords.size() / Dim; }
  bool is_ghost(index_t id) const { return id >= reals; }
  /// The caller's index of any id (itself for a real point).
  index_t original(index_t id) const { return is_ghost(id) ? origin[id - reals] : id; }
  std::array<std::int8_t, 3> shift_of(index_t id) const {
    return is_ghost(id) ? shift[id - reals] : std::array<std::int8_t, 3>{};
  }
};

/// Wraps `points` into `box` (wrap_into) and adds their ghosts for searches up to `radius`.
/// Inputs are already validated (finite points, check_periodic_box).
template <int Dim, class T>
PeriodicImages<Dim> make_periodic_images(PointsView<Dim, T> points, const PeriodicBox<Dim>& box,
                                         double radius, int threads);

}  // namespace spatialhash::detail
