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

  /// The image of wrapped coordinate `w` shifted by `s` box edges along axis k.
  double shifted(double w, int s, int k) const { return image_coordinate(w, s, edge[k]); }
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

/// The least and greatest coordinate per axis of some points (+inf / -inf for none).
template <int Dim>
struct AxisBounds {
  std::array<double, Dim> lower, upper;
  AxisBounds() {
    lower.fill(std::numeric_limits<double>::infinity());
    upper.fill(-std::numeric_limits<double>::infinity());
  }
  void add(int k, double x) {
    lower[k] = std::min(lower[k], x);
    upper[k] = std::max(upper[k], x);
  }
  /// Takes in `other` (which may hold no points).
  void add(const AxisBounds& other) {
    for (int k = 0; k < Dim; ++k) {
      lower[k] = std::min(lower[k], other.lower[k]);
      upper[k] = std::max(upper[k], other.upper[k]);
    }
  }
};

/// Pass 1 for packed points (stride Dim), a run of kPoints points at a time: Geometry's tests as
/// one flat loop over the run's values (value j on axis j % Dim) against a constant per lane, all
/// selects, which the compiler vectorizes (point by point, the whole of make_periodic_images took
/// 14.7 ms for 1M float points on one thread of a Xeon VM, mostly this pass). An open axis never
/// wraps (its bounds the least finite double and +inf: every finite value lies inside) and has
/// no images (a NaN edge fails every reach test). A value that is not finite lies outside on
/// every axis, so the general path sees it (and make_periodic_images reports it).
template <int Dim>
struct PackedLanes {
  static constexpr std::size_t kPoints = 8;
  static constexpr std::size_t kValues = Dim * kPoints;
  using Lanes = std::array<double, kValues>;
  Lanes inside_low, inside_high, edge, low_reach, high_reach;

  /// Per lane over the runs of a block: the least and greatest value, and whether any value lay
  /// outside the box (non-zero).
  struct Tally {
    Lanes low, high, outside{};
    Tally() {
      low.fill(std::numeric_limits<double>::infinity());
      high.fill(-std::numeric_limits<double>::infinity());
    }
    bool inside() const {
      double any = 0.0;
      for (const double o : outside) any += o;
      return any == 0.0;
    }
    AxisBounds<Dim> bounds() const {
      AxisBounds<Dim> b;
      for (std::size_t j = 0; j < kValues; ++j) {
        const std::size_t k = j % Dim;
        b.lower[k] = std::min(b.lower[k], low[j]);
        b.upper[k] = std::max(b.upper[k], high[j]);
      }
      return b;
    }
  };

  explicit PackedLanes(const Geometry<Dim>& geometry) {
    constexpr double kInfinity = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < kValues; ++j) {
      const auto k = static_cast<int>(j % Dim);
      const bool periodic = geometry.box.periodic[k];
      inside_low[j] = periodic ? geometry.box.lower[k] : std::numeric_limits<double>::lowest();
      inside_high[j] = periodic ? geometry.box.upper[k] : kInfinity;
      edge[j] = periodic ? geometry.edge[k] : std::numeric_limits<double>::quiet_NaN();
      low_reach[j] = geometry.low_reach[k];
      high_reach[j] = geometry.high_reach[k];
    }
  }

  /// Writes the run's values as doubles to `wrapped` and each point's ghost count (the product
  /// of Geometry::axis_count over its axes, less one) to `own`, and takes the values into
  /// `tally`. Valid only if the tally then shows no value outside the box on a periodic axis:
  /// only the general path wraps.
  template <class T>
  void wrap_run(const T* values, double* wrapped, std::array<std::uint8_t, kPoints>& own,
                Tally& tally) const {
    Lanes images;
    for (std::size_t j = 0; j < kValues; ++j) {
      const double w = static_cast<double>(values[j]);
      wrapped[j] = w;
      const double below_inside = w >= inside_low[j] ? 0.0 : 1.0;
      tally.outside[j] += w < inside_high[j] ? below_inside : 1.0;
      tally.low[j] = w < tally.low[j] ? w : tally.low[j];
      tally.high[j] = w > tally.high[j] ? w : tally.high[j];
      const double below = w - edge[j], above = w + edge[j];
      const double below_low = below >= low_reach[j] ? 1.0 : 0.0;
      const double above_low = above >= low_reach[j] ? 1.0 : 0.0;
      images[j] = 1.0 + (below <= high_reach[j] ? below_low : 0.0) +
                  (above <= high_reach[j] ? above_low : 0.0);
    }
    for (std::size_t p = 0; p < kPoints; ++p) {
      double product = 1.0;
      for (std::size_t k = 0; k < static_cast<std::size_t>(Dim); ++k) {
        product *= images[p * Dim + k];
      }
      own[p] = static_cast<std::uint8_t>(product - 1.0);
    }
  }
};

/// Calls emit(shift, coords) for every ghost of wrapped point `w` (images other than itself).
/// A point with one ghost (near one face: about 96% of the points with ghosts among 1M uniform
/// points with 30 neighbors) takes it by selects; the others count through their images'
/// combinations, in the same order.
template <int Dim, class Emit>
void for_each_ghost(const Geometry<Dim>& geometry, const std::array<double, Dim>& w, Emit&& emit) {
  {
    std::array<std::int8_t, 3> shift{};
    std::array<double, Dim> coords;
    int images = 1;
    for (int k = 0; k < Dim; ++k) {
      const bool periodic = geometry.box.periodic[k];
      const double below = geometry.shifted(w[k], -1, k), above = geometry.shifted(w[k], 1, k);
      const bool has_below = periodic & geometry.within_reach(below, k);
      const bool has_above = periodic & geometry.within_reach(above, k);
      images *= 1 + int{has_below} + int{has_above};
      shift[k] = has_below ? std::int8_t{-1} : (has_above ? std::int8_t{1} : std::int8_t{0});
      coords[k] = has_below ? below : (has_above ? above : w[k]);
    }
    if (images == 2) {
      emit(shift, coords);
      return;
    }
    if (images == 1) return;
  }
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
  std::vector<AxisBounds<Dim>> block_bounds(blocks);
  // Per block: whether the general path met a value that is not finite (the packed path keeps
  // only finite ones). The caller's points are checked here, in the pass that reads them
  // (make_point_context makes none).
  std::vector<std::uint8_t> block_not_finite(blocks, 0);
  const auto block_count = static_cast<std::int64_t>(blocks);
  const PackedLanes<Dim> lanes(geometry);
  parallel_region(threads, [&] {
    // Local pointers: the byte stores below may alias anything, which would otherwise reload the
    // vectors' data pointers after each of them.
    const T* data = points.data;
    const std::size_t stride = points.stride;
    double* wrapped = images.coords.data();
    std::uint8_t* flags = has_ghosts.data();
    constexpr std::size_t kRun = PackedLanes<Dim>::kPoints;
    const bool packed = stride == static_cast<std::size_t>(Dim);
#pragma omp for schedule(static) nowait
    for (std::int64_t b = 0; b < block_count; ++b) {
      std::size_t ghosts = 0, imaged = 0;
      const std::size_t first = static_cast<std::size_t>(b) * kBlock;
      const std::size_t last = std::min(n, first + kBlock);
      const auto take = [&](std::size_t i, std::size_t own) {
        ghosts += own;
        imaged += own > 0;
        flags[i] = own > 0;
      };
      std::size_t i = first;
      AxisBounds<Dim>& bounds = block_bounds[static_cast<std::size_t>(b)];
      if (packed) {
        // The block's whole runs by the packed path, kept when all their points lie inside the
        // box (nearly always), else done again by the general path below.
        typename PackedLanes<Dim>::Tally tally;
        std::array<std::uint8_t, kRun> own;
        for (; i + kRun <= last; i += kRun) {
          lanes.wrap_run(data + i * Dim, wrapped + i * Dim, own, tally);
          for (std::size_t p = 0; p < kRun; ++p) take(i + p, own[p]);
        }
        if (tally.inside()) {
          bounds = tally.bounds();
        } else {
          i = first;
          ghosts = imaged = 0;
        }
      }
      // The general path: any stride, points outside the box.
      bool finite = true;
      for (; i < last; ++i) {
        std::size_t images_of_point = 1;
        for (int k = 0; k < Dim; ++k) {
          // wrap_into(), with the test of a point already inside the box (nearly all of them)
          // inline: wrap_coordinate() begins with the same one.
          double w = static_cast<double>(data[i * stride + k]);
          finite = finite && std::isfinite(w);
          if (box.periodic[k] && !(w >= box.lower[k] && w < box.upper[k])) {
            w = wrap_coordinate(w, box.lower[k], box.upper[k]);
          }
          wrapped[i * Dim + k] = w;
          bounds.add(k, w);
          images_of_point *= static_cast<std::size_t>(geometry.axis_count(w, k));
        }
        take(i, images_of_point - 1);  // the ghosts for_each_ghost() emits
      }
      block_not_finite[static_cast<std::size_t>(b)] = !finite;
      block_ghosts[b + 1] = ghosts;
      block_imaged[b + 1] = imaged;
    }
  });
  if (std::find(block_not_finite.begin(), block_not_finite.end(), 1) != block_not_finite.end()) {
    check_finite(points);  // throws, naming the first such point
  }
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
      AxisBounds<Dim>& bounds = block_bounds[static_cast<std::size_t>(b)];
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
                              for (int k = 0; k < Dim; ++k) bounds.add(k, image[k]);
                            });
      }
    }
  });
  AxisBounds<Dim> all;
  for (const AxisBounds<Dim>& b : block_bounds) all.add(b);
  images.lower = n > 0 ? all.lower : std::array<double, Dim>{};
  images.upper = n > 0 ? all.upper : std::array<double, Dim>{};
}

#define SPATIALHASH_INSTANTIATE(D, T)                                                      \
  template void make_periodic_images(PointsView<D, T>, const PeriodicBox<D>&, double, int, \
                                     PeriodicImages<D>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
