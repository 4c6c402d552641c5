// Wrapping and ghost generation for periodic indexes: count per block of points, prefix sums,
// fill, so threads write disjoint ranges without locks.
#include "periodic_images.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../engine_base.hpp"
#include "../growable_buffer.hpp"
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

/// How many ghosts for_each_ghost() emits for `w`.
template <int Dim>
std::size_t ghost_count(const Geometry<Dim>& geometry, const std::array<double, Dim>& w) {
  std::size_t images = 1;
  for (int k = 0; k < Dim; ++k) images *= geometry.axis_images(w[k], k).count;
  return images - 1;
}

}  // namespace

template <int Dim, class T>
void make_periodic_images(PointsView<Dim, T> points, const PeriodicBox<Dim>& box, double radius,
                          int threads, PeriodicImages<Dim>& images) {
  const Geometry<Dim> geometry(box, radius);
  const std::size_t n = points.size();
  images.reals = n;
  // Room for the reals and as many ghosts (pages nothing writes cost no memory): at 1M points
  // this is a mapped block (mapped_blocks.hpp), outside the heap that the inner engine's build
  // reuses for its work arrays. A long-lived heap block of this size made that build fault its
  // arrays afresh each time (W2-like 1M points, 2 threads: 56 -> 31 ms a periodic build).
  // Tiny boxes, where most points have several ghosts, grow it once below.
  images.coords.clear();  // kept storage: nothing of the last image set is read
  images.coords.reserve(2 * n * Dim);
  sized_for_overwrite(images.coords, n * Dim);
  // Blocks of points: pass 1 wraps the points into place and counts each block's ghosts, pass 2
  // writes the ghosts of the points that have any from the block's offsets.
  constexpr std::size_t kBlock = 4096;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::size_t> block_ghosts(blocks + 1, 0), block_imaged(blocks + 1, 0);
  std::vector<std::uint8_t> has_ghosts(n);
  const auto block_count = static_cast<std::int64_t>(blocks);
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t b = 0; b < block_count; ++b) {
      std::size_t ghosts = 0, imaged = 0;
      const std::size_t last = std::min(n, (static_cast<std::size_t>(b) + 1) * kBlock);
      for (std::size_t i = static_cast<std::size_t>(b) * kBlock; i < last; ++i) {
        std::array<double, Dim> x;
        for (int k = 0; k < Dim; ++k) x[k] = points.coord(i, k);
        const std::array<double, Dim> w = wrap_into(box, x);
        for (int k = 0; k < Dim; ++k) images.coords[i * Dim + k] = w[k];
        const std::size_t own = ghost_count<Dim>(geometry, w);
        ghosts += own;
        imaged += own > 0;
        has_ghosts[i] = own > 0;
      }
      block_ghosts[b + 1] = ghosts;
      block_imaged[b + 1] = imaged;
    }
  });
  for (std::size_t b = 0; b < blocks; ++b) {
    block_ghosts[b + 1] += block_ghosts[b];
    block_imaged[b + 1] += block_imaged[b];
  }
  const std::size_t ghosts = block_ghosts[blocks];
  if (n + ghosts >= std::numeric_limits<index_t>::max()) {
    throw InvalidArgument("spatialhash: " + std::to_string(n) + " points and their " +
                          std::to_string(ghosts) +
                          " periodic images near the box faces exceed the 32-bit index limit");
  }
  images.coords.resize((n + ghosts) * Dim);  // uninitialized (ResultVector)
  sized_for_overwrite(images.origin, ghosts);
  sized_for_overwrite(images.shift, ghosts);
  sized_for_overwrite(images.imaged, block_imaged[blocks]);
  sized_for_overwrite(images.first_ghost, block_imaged[blocks] + 1);
  images.first_ghost[block_imaged[blocks]] = static_cast<index_t>(ghosts);
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t b = 0; b < block_count; ++b) {
      std::size_t g = block_ghosts[b], m = block_imaged[b];
      const std::size_t last = std::min(n, (static_cast<std::size_t>(b) + 1) * kBlock);
      for (std::size_t i = static_cast<std::size_t>(b) * kBlock; i < last; ++i) {
        if (!has_ghosts[i]) continue;
        images.imaged[m] = static_cast<index_t>(i);
        images.first_ghost[m] = static_cast<index_t>(g);
        ++m;
        std::array<double, Dim> w;
        for (int k = 0; k < Dim; ++k) w[k] = images.coords[i * Dim + k];
        for_each_ghost<Dim>(geometry, w,
                            [&](const std::array<std::int8_t, 3>& shift, const auto& coords) {
                              for (int k = 0; k < Dim; ++k)
                                images.coords[(n + g) * Dim + k] = coords[k];
                              images.origin[g] = static_cast<index_t>(i);
                              images.shift[g] = shift;
                              ++g;
                            });
      }
    }
  });
}

#define SPATIALHASH_INSTANTIATE(D, T)                                                      \
  template void make_periodic_images(PointsView<D, T>, const PeriodicBox<D>&, double, int, \
                                     PeriodicImages<D>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
