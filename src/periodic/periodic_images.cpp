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
#include "../index_vector.hpp"
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
  /// An image is kept when it lies in [low_reach, high_reach]: the box widened by the margin.
  std::array<double, Dim> low_reach{}, high_reach{};

  Geometry(const PeriodicBox<Dim>& b, double radius) : box(b) {
    for (int k = 0; k < Dim; ++k) {
      edge[k] = b.upper[k] - b.lower[k];
      // Radius plus rounding: an image within the radius of a wrapped point (every coordinate
      // difference then within r(1 + 4 eps) in magnitude) always lies inside this margin.
      const double scale = std::abs(b.lower[k]) + std::abs(b.upper[k]);
      const double margin =
          radius * (1.0 + 1e-9) + 4.0 * std::numeric_limits<double>::epsilon() * scale;
      low_reach[k] = b.lower[k] - margin;
      high_reach[k] = b.upper[k] + margin;
    }
  }

  /// The image of wrapped coordinate `w` shifted by `s` box edges along axis k, rounded once.
  double shifted(double w, int s, int k) const { return s < 0 ? w - edge[k] : w + edge[k]; }
  bool within_reach(double g, int k) const { return g >= low_reach[k] && g <= high_reach[k]; }

  AxisImages axis_images(double w, int k) const {
    AxisImages images;
    images.coord[0] = w;
    images.count = 1;
    if (!box.periodic[k]) return images;
    for (std::int8_t s : {std::int8_t{-1}, std::int8_t{1}}) {
      const double g = shifted(w, s, k);
      if (within_reach(g, k)) {
        images.shift[images.count] = s;
        images.coord[images.count] = g;
        ++images.count;
      }
    }
    return images;
  }
  /// axis_images(w, k).count, without the records (the same tests).
  int axis_count(double w, int k) const {
    if (!box.periodic[k]) return 1;
    return 1 + static_cast<int>(within_reach(shifted(w, -1, k), k)) +
           static_cast<int>(within_reach(shifted(w, 1, k), k));
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
  WorkVector<std::uint8_t> has_ghosts;  // every flag written by pass 1: no zeroing
  sized_for_overwrite(has_ghosts, n);
  const auto block_count = static_cast<std::int64_t>(blocks);
  parallel_region(threads, [&] {
    // Local pointers: the byte stores below may alias anything, which would otherwise reload the
    // vectors' data pointers after each of them.
    const T* data = points.data;
    const std::size_t stride = points.stride;
    double* wrapped = images.coords.data();
    std::uint8_t* flags = has_ghosts.data();
#pragma omp for schedule(static) nowait
    for (std::int64_t b = 0; b < block_count; ++b) {
      std::size_t ghosts = 0, imaged = 0;
      const std::size_t last = std::min(n, (static_cast<std::size_t>(b) + 1) * kBlock);
      for (std::size_t i = static_cast<std::size_t>(b) * kBlock; i < last; ++i) {
        std::size_t images_of_point = 1;
        for (int k = 0; k < Dim; ++k) {
          // wrap_into(), with the test of a point already inside the box (nearly all of them)
          // inline: wrap_coordinate() begins with the same one.
          double w = static_cast<double>(data[i * stride + k]);
          if (box.periodic[k] && !(w >= box.lower[k] && w < box.upper[k])) {
            w = wrap_coordinate(w, box.lower[k], box.upper[k]);
          }
          wrapped[i * Dim + k] = w;
          images_of_point *= static_cast<std::size_t>(geometry.axis_count(w, k));
        }
        const std::size_t own = images_of_point - 1;  // the ghosts for_each_ghost() emits
        ghosts += own;
        imaged += own > 0;
        flags[i] = own > 0;
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
    // Local pointers, as in pass 1 (the shifts' byte stores may alias anything).
    double* coords = images.coords.data();
    index_t* origin = images.origin.data();
    std::array<std::int8_t, 3>* shifts = images.shift.data();
    index_t* imaged = images.imaged.data();
    index_t* first_ghost = images.first_ghost.data();
    const std::uint8_t* flags = has_ghosts.data();
    // The block's imaged points are listed first, so that their wrapped coordinates, written by
    // pass 1 and long out of the caches, are prefetched a few points ahead (about one point in
    // nine has ghosts at 1M uniform points: too sparse for the hardware's prefetcher).
    std::array<std::uint32_t, kBlock> listed;
    constexpr std::size_t kAhead = 8;
#pragma omp for schedule(static) nowait
    for (std::int64_t b = 0; b < block_count; ++b) {
      std::size_t g = block_ghosts[b], m = block_imaged[b];
      const std::size_t first = static_cast<std::size_t>(b) * kBlock;
      const std::size_t last = std::min(n, first + kBlock);
      std::size_t count = 0;
      for (std::size_t i = first; i < last; ++i) {
        listed[count] = static_cast<std::uint32_t>(i - first);
        count += flags[i];
      }
      for (std::size_t j = 0; j < count; ++j) {
        if (j + kAhead < count) __builtin_prefetch(coords + (first + listed[j + kAhead]) * Dim);
        const std::size_t i = first + listed[j];
        imaged[m] = static_cast<index_t>(i);
        first_ghost[m] = static_cast<index_t>(g);
        ++m;
        std::array<double, Dim> w;
        for (int k = 0; k < Dim; ++k) w[k] = coords[i * Dim + k];
        for_each_ghost<Dim>(geometry, w,
                            [&](const std::array<std::int8_t, 3>& shift, const auto& image) {
                              for (int k = 0; k < Dim; ++k) coords[(n + g) * Dim + k] = image[k];
                              origin[g] = static_cast<index_t>(i);
                              shifts[g] = shift;
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
