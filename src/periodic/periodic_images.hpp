// PeriodicImages: the point set a periodic index actually searches: the wrapped points followed
// by ghost images of those near the faces of the box.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "spatialhash/box.hpp"
#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

#include "../index_vector.hpp"

namespace spatialhash::detail {

/// Wrapped coordinate `w` shifted by `shift` (-1, 0 or 1) box edges of length `edge`, rounded
/// once: every image coordinate the periodic index stores or measures is this double.
inline double image_coordinate(double w, int shift, double edge) {
  return shift == 0 ? w : (shift < 0 ? w - edge : w + edge);
}

/// Point id a < `reals` is the wrapped point a itself; a ghost g = reals + k is the image
/// w_origin[k] + shift[k] * L of a real point, stored rounded to double (exactly how the periodic
/// neighbor rule defines the image). Ghosts are the images, with shift components in {-1, 0, 1}
/// on periodic axes (0 on open ones, not all 0), that lie within `margin` of the box on every
/// axis, margin >= the radius plus rounding: every image within the radius of a wrapped point
/// (the only images the rule can pair) is therefore present.
///
/// Invariants: ghosts are numbered in the order of their real points (origin ascending), so the
/// ghosts of imaged[m] are ids reals + first_ghost[m] .. reals + first_ghost[m + 1]. A ghost lies
/// on or beyond a periodic face, so only a real point within the radius of a face can be within
/// the radius of a ghost, and such a point is within the margin of that face: it has a ghost of
/// its own and is in `imaged`. The rows of every other real point hold real points only.
template <int Dim>
struct PeriodicImages {
  IndexVector<double> coords;  ///< Dim values per id: reals first, then ghosts
  std::size_t reals = 0;
  IndexVector<index_t> origin;                    ///< per ghost: the real point it images
  IndexVector<std::array<std::int8_t, 3>> shift;  ///< per ghost: its offset in box edges
  IndexVector<index_t> imaged;                    ///< the real points that have ghosts, ascending
  IndexVector<index_t> first_ghost;  ///< per imaged point and one more: its first ghost - reals
  /// The least and greatest coordinate per axis over every id (all 0 with no points), found
  /// while the images are made: the inner engine's lattice needs no pass of its own over them.
  std::array<double, Dim> lower{}, upper{};

  std::size_t size() const { return coords.size() / Dim; }
  std::size_t ghosts() const { return origin.size(); }
  bool is_ghost(index_t id) const { return id >= reals; }
  /// The caller's index of any id (itself for a real point).
  index_t original(index_t id) const { return is_ghost(id) ? origin[id - reals] : id; }
  std::array<std::int8_t, 3> shift_of(index_t id) const {
    return is_ghost(id) ? shift[id - reals] : std::array<std::int8_t, 3>{};
  }
};

/// Wraps `points` into `box` (wrap_into) and adds their ghosts for searches up to `radius`,
/// written into `images`, whose arrays' storage is reused (an update()'s spare images: nothing
/// allocated once they have grown). Inputs are already validated (finite points,
/// check_periodic_box). If it throws, `images` holds no valid image set.
template <int Dim, class T>
void make_periodic_images(PointsView<Dim, T> points, const PeriodicBox<Dim>& box, double radius,
                          int threads, PeriodicImages<Dim>& images);

}  // namespace spatialhash::detail
