// make_periodic_images (src/periodic/periodic_images.hpp) against its contract, point by point:
// the reals are wrap_into() of the input; each ghost is an image of its real point by a shift of
// -1, 0 or +1 box edges per periodic axis (0 on open ones), numbered in the order of their points;
// every image within the radius of the box on every axis is present and none lies far beyond it;
// the bounds are the least and greatest coordinates. Packed input (its fast path) and the same
// points at a wider stride (the general path) give the same images.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "../src/periodic/periodic_images.hpp"
#include "for_each_dim_type.hpp"
#include "spatialhash/box.hpp"

namespace {

using spatialhash::index_t;
using spatialhash::PeriodicBox;
using spatialhash::PointsView;
using spatialhash::detail::make_periodic_images;
using spatialhash::detail::PeriodicImages;

using Shift = std::array<std::int8_t, 3>;

/// Points in `box` widened by `spread` edges on each side (spread 0: inside), a few of them on
/// the faces (just below the upper one for spread 0), in a flat array of `stride` values a point
/// (lower and upper are exact in float).
template <int Dim, class T>
std::vector<T> make_points(const PeriodicBox<Dim>& box, std::size_t n, double spread,
                           std::size_t stride, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> values(n * stride, T{-7});
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) {
      const double edge = box.upper[k] - box.lower[k];
      std::uniform_real_distribution<double> u(box.lower[k] - spread * edge,
                                               box.upper[k] + spread * edge);
      T x = static_cast<T>(u(rng));
      if (i % 97 == 3) x = static_cast<T>(box.lower[k]);
      // On the upper face (wrapped to the lower one) only where points may lie outside: one
      // such point sends its block of 4096 down the general path.
      if (i % 89 == 5) {
        x = static_cast<T>(box.upper[k]);
        if (spread == 0.0) x = std::nextafter(x, -std::numeric_limits<T>::infinity());
      }
      values[i * stride + static_cast<std::size_t>(k)] = x;
    }
  }
  return values;
}

/// Wrapped coordinate `w` shifted by `s` edges, as the images store it (one rounding).
double shifted(double w, int s, double edge) {
  return s == 0 ? w : (s < 0 ? w - edge : w + edge);
}

template <int Dim, class T>
void check_images(const PeriodicBox<Dim>& box, double radius, PointsView<Dim, T> points,
                  const PeriodicImages<Dim>& images) {
  const std::size_t n = points.size();
  ASSERT_EQ(images.reals, n);
  ASSERT_EQ(images.size(), n + images.ghosts());
  ASSERT_EQ(images.shift.size(), images.ghosts());
  ASSERT_EQ(images.first_ghost.size(), images.imaged.size() + 1);
  std::array<double, Dim> edge{};
  for (int k = 0; k < Dim; ++k) edge[k] = box.upper[k] - box.lower[k];
  const auto coord = [&](std::size_t id, int k) { return images.coords[id * Dim + k]; };
  // The reals: wrap_into() of the input.
  for (std::size_t i = 0; i < n; ++i) {
    std::array<double, Dim> x{};
    for (int k = 0; k < Dim; ++k) x[k] = points.coord(i, k);
    const std::array<double, Dim> w = spatialhash::wrap_into<Dim>(box, x);
    for (int k = 0; k < Dim; ++k) {
      ASSERT_EQ(coord(i, k), w[k]) << "point " << i << " axis " << k;
    }
  }
  // The ghosts, point by point: the expected set is every image (shift not all 0, 0 on open
  // axes) within the radius of the box on every periodic axis; those farther than 1.01 radii
  // must not be there; those between may be (rounding margin).
  std::size_t g = 0, m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::set<Shift> found;
    const bool has_ghosts = m < images.imaged.size() && images.imaged[m] == i;
    if (has_ghosts) {
      ASSERT_EQ(images.first_ghost[m], g) << "point " << i;
      const std::size_t end = images.first_ghost[m + 1];
      ASSERT_GT(end, g) << "point " << i;
      for (; g < end; ++g) {
        const index_t id = static_cast<index_t>(n + g);
        ASSERT_EQ(images.origin[g], i) << "ghost " << g;
        ASSERT_EQ(images.original(id), i);
        const Shift s = images.shift[g];
        ASSERT_TRUE(found.insert(s).second) << "ghost " << g << " repeats a shift";
        bool all_zero = true;
        for (int k = 0; k < Dim; ++k) {
          all_zero = all_zero && s[k] == 0;
          ASSERT_TRUE(s[k] >= -1 && s[k] <= 1);
          if (!box.periodic[k]) {
            ASSERT_EQ(s[k], 0) << "open axis " << k;
          }
          ASSERT_EQ(coord(id, k), shifted(coord(i, k), s[k], edge[k])) << "ghost " << g;
          if (box.periodic[k]) {
            ASSERT_GE(coord(id, k), box.lower[k] - 1.01 * radius) << "ghost " << g;
            ASSERT_LE(coord(id, k), box.upper[k] + 1.01 * radius) << "ghost " << g;
          }
        }
        ASSERT_FALSE(all_zero) << "ghost " << g;
      }
      ++m;
    }
    // Every image within the radius of the box is present.
    std::array<int, Dim> s{};
    s.fill(-1);
    while (true) {
      bool wanted = false, inside = true;
      for (int k = 0; k < Dim; ++k) {
        if (s[k] != 0 && !box.periodic[k]) inside = false;
        wanted = wanted || s[k] != 0;
        const double x = shifted(coord(i, k), s[k], edge[k]);
        inside = inside &&
                 (!box.periodic[k] || (x >= box.lower[k] - radius && x <= box.upper[k] + radius));
      }
      if (wanted && inside) {
        Shift key{};
        for (int k = 0; k < Dim; ++k) key[k] = static_cast<std::int8_t>(s[k]);
        ASSERT_TRUE(found.contains(key)) << "point " << i << " lacks an image";
      }
      int k = 0;
      while (k < Dim && ++s[k] == 2) s[k++] = -1;
      if (k == Dim) break;
    }
  }
  ASSERT_EQ(m, images.imaged.size());
  ASSERT_EQ(g, images.ghosts());
  // The bounds: the least and greatest coordinates of every id.
  for (int k = 0; k < Dim; ++k) {
    double lo = 0, hi = 0;
    for (std::size_t id = 0; id < images.size(); ++id) {
      lo = id == 0 ? coord(id, k) : std::min(lo, coord(id, k));
      hi = id == 0 ? coord(id, k) : std::max(hi, coord(id, k));
    }
    EXPECT_EQ(images.lower[k], lo) << "axis " << k;
    EXPECT_EQ(images.upper[k], hi) << "axis " << k;
  }
}

/// Images of the points packed and at a wider stride, each checked, and the two identical.
template <int Dim, class T>
void check_both_paths(const PeriodicBox<Dim>& box, double radius, std::size_t n, double spread,
                      int threads, std::uint64_t seed) {
  SCOPED_TRACE(::testing::Message()
               << Dim << "D, " << sizeof(T) << "-byte values, " << n << " points, spread " << spread
               << ", " << threads << " threads");
  const std::vector<T> packed = make_points<Dim, T>(box, n, spread, Dim, seed);
  std::vector<T> wide((n + 1) * (Dim + 1), T{-7});
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < Dim; ++k) wide[i * (Dim + 1) + k] = packed[i * Dim + k];
  }
  PeriodicImages<Dim> a, b;
  const PointsView<Dim, T> packed_view(packed.data(), n);
  make_periodic_images(packed_view, box, radius, threads, a);
  ASSERT_NO_FATAL_FAILURE(check_images(box, radius, packed_view, a));
  make_periodic_images(PointsView<Dim, T>(wide.data(), n, Dim + 1), box, radius, threads, b);
  EXPECT_TRUE(std::equal(a.coords.begin(), a.coords.end(), b.coords.begin(), b.coords.end()));
  EXPECT_TRUE(std::equal(a.origin.begin(), a.origin.end(), b.origin.begin(), b.origin.end()));
  EXPECT_TRUE(std::equal(a.shift.begin(), a.shift.end(), b.shift.begin(), b.shift.end()));
  EXPECT_TRUE(std::equal(a.imaged.begin(), a.imaged.end(), b.imaged.begin(), b.imaged.end()));
  EXPECT_EQ(a.lower, b.lower);
  EXPECT_EQ(a.upper, b.upper);
}

TEST(PeriodicImages, MatchTheirContractOnBothPaths) {
  for_each_dim_type([]<int Dim, class T>() {
    PeriodicBox<Dim> box;
    for (int k = 0; k < Dim; ++k) {
      box.lower[k] = -1.5 + k;
      box.upper[k] = 2.25 + 2 * k;
      box.periodic[k] = true;
    }
    // Several blocks of 4096 points and a partial run of 8; inside the box, then one point in
    // about a hundred outside it (the general path for its block), then every point outside.
    check_both_paths<Dim, T>(box, 0.3, 9003, 0.0, 2, 1);
    check_both_paths<Dim, T>(box, 0.3, 5001, 0.004, 1, 2);
    check_both_paths<Dim, T>(box, 0.3, 997, 3.0, 2, 3);
    // One open axis: no images along it, the points stay where they are.
    box.periodic[Dim - 1] = false;
    check_both_paths<Dim, T>(box, 0.45, 4103, 0.0, 2, 4);
    check_both_paths<Dim, T>(box, 0.45, 301, 0.5, 1, 5);
  });
}

TEST(PeriodicImages, NoPointsHaveNoImagesAndZeroBounds) {
  const PeriodicBox<3> box{{0, 0, 0}, {1, 1, 1}, {true, true, true}};
  PeriodicImages<3> images;
  make_periodic_images(PointsView<3, float>(nullptr, 0), box, 0.1, 2, images);
  EXPECT_EQ(images.size(), 0u);
  EXPECT_EQ(images.lower, (std::array<double, 3>{}));
  EXPECT_EQ(images.upper, (std::array<double, 3>{}));
}

}  // namespace
