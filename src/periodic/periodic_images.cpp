// Wrapping and ghost generation for periodic indexes: count per point, prefix sums, fill, so
// threads write disjoint ranges without locks.
#include "periodic_images.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "../engine_base.hpp"
#include "../threads.hpp"

namespace spatialhash::detail {

namespace {

/// The images of one wrapped point along one axis: shift 0 (always) and those of -1, +1 that lie
/// within the margin of the box.
struct AxisImages {
  std::array<std::int8_t, 3> shift{};
  std::array<double, 3> coord{};
  int count = 0;
};

template <int Dim>
struct Geometry {
  PeriodicBox<Dim> box;
  std::array<double, Dim> edge{};
  std::array<double, Dim> margin{};

  Geometry(const PeriodicBox<Dim>& b, double radius) : box(b) {
    for (int k = 0; k < Dim; ++k) {
      edge[k] = b.upper[k] - b.lower[k];
      // Radius plus rounding: an image within the radius of a wrapped point (every coordinate
      // difference then within r(1 + 4 eps) in magnitude) always lies inside this margin.
      const double scale = std::abs(b.lower[k]) + std::abs(b.upper[k]);
      margin[k] = radius * (1.0 + 1e-9) + 4.0 * std::numeric_limits<double>::epsilon() * scale;
    }
  }

  AxisImages axis_images(double w, int k) const {
    AxisImages images;
    images.coord[0] = w;
    images.count = 1;
    if (!box.periodic[k]) return images;
    for (std::int8_t s : {std::int8_t{-1}, std::int8_t{1}}) {
      const double g = w + s * edge[k];
      if (g >= box.lower[k] - margin[k] && g <= box.upper[k] + margin[k]) {
        images.shift[images.count] = s;
        images.coord[images.count] = g;
        ++images.count;
      }
    }
    return images;
  }
};

/// Calls emit(shift, coords) for every ghost of wrapped point `w` (images other than itself).
template <int Dim, class Emit>
void for_each_ghost(const Geometry<Dim>& geometry, const std::array<double, Dim>& w, Emit&& emit) {
  std::array<AxisImages, Dim> axes;
  for (int k = 0; k < Dim; ++k) axes[k] = geometry.axis_images(w[k], k);
  std::array<int, 3> pick{};  // an odometer over the per-axis choices; pick all 0 is the point
  while (true) {
    int k = 0;
    while (k < Dim && ++pick[k] == axes[k].count) pick[k++] = 0;
    if (k == Dim) return;
    std::array<std::int8_t, 3> shift{};
    std::array<double, Dim> coords;
    for (int a = 0; a < Dim; ++a) {
      shift[a] = axes[a].shift[pick[a]];
      coords[a] = axes[a].coord[pick[a]];
    }
    emit(shift, coords);
  }
}

}  // namespace

template <int Dim, class T>
PeriodicImages<Dim> make_periodic_images(PointsView<Dim, T> points, const PeriodicBox<Dim>& box,
                                         double radius, int threads) {
  const Geometry<Dim> geometry(box, radius);
  const std::size_t n = points.size();
  const auto count = static_cast<std::int64_t>(n);
  PeriodicImages<Dim> images;
  images.reals = n;
  std::vector<double> wrapped(n * Dim);
  std::vector<std::size_t> first_ghost(n + 1, 0);
#pragma omp parallel for schedule(static) num_threads(usable_threads(threads))
  for (std::int64_t i = 0; i < count; ++i) {
    std::array<double, Dim> x;
    for (int k = 0; k < Dim; ++k) x[k] = points.coord(static_cast<std::size_t>(i), k);
    const std::array<double, Dim> w = wrap_into(box, x);
    for (int k = 0; k < Dim; ++k) wrapped[i * Dim + k] = w[k];
    std::size_t ghosts = 0;
    for_each_ghost<Dim>(geometry, w, [&](const auto&, const auto&) { ++ghosts; });
    first_ghost[i + 1] = ghosts;
  }
  for (std::size_t i = 0; i < n; ++i) first_ghost[i + 1] += first_ghost[i];
  const std::size_t ghosts = first_ghost[n];
  if (n + ghosts >= std::numeric_limits<index_t>::max()) {
    throw InvalidArgument("spatialhash: " + std::to_string(n) + " points and their " +
                          std::to_string(ghosts) +
                          " periodic images near the box faces exceed the 32-bit index limit");
  }
  images.coords = std::move(wrapped);
  images.coords.resize((n + ghosts) * Dim);
  images.origin.resize(ghosts);
  images.shift.resize(ghosts);
#pragma omp parallel for schedule(static) num_threads(usable_threads(threads))
  for (std::int64_t i = 0; i < count; ++i) {
    std::array<double, Dim> w;
    for (int k = 0; k < Dim; ++k) w[k] = images.coords[i * Dim + k];
    std::size_t g = first_ghost[i];
    for_each_ghost<Dim>(geometry, w,
                        [&](const std::array<std::int8_t, 3>& shift, const auto& coords) {
                          for (int k = 0; k < Dim; ++k)
                            images.coords[(n + g) * Dim + k] = coords[k];
                          images.origin[g] = static_cast<index_t>(i);
                          images.shift[g] = shift;
                          ++g;
                        });
  }
  return images;
}

#define SPATIALHASH_INSTANTIATE(D, T)                                                              \
  template PeriodicImages<D> make_periodic_images(PointsView<D, T>, const PeriodicBox<D>&, double, \
                                                  int);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
