// Input validation and lattice construction: every check that names a bad input lives here.
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "engine_base.hpp"
#include "shortest.hpp"
#include "threads.hpp"

namespace spatialhash {

namespace {
const char* axis_name(int k) {
  return k == 0 ? "x" : (k == 1 ? "y" : "z");
}
}  // namespace

template <int Dim, class T>
PointsView<Dim, T> interleaved(std::span<const T> coords) {
  if (coords.size() % Dim != 0) {
    throw InvalidArgument("spatialhash: coordinate array has " + std::to_string(coords.size()) +
                          " values, not a multiple of the dimension " + std::to_string(Dim));
  }
  return PointsView<Dim, T>(coords.data(), coords.size() / Dim, Dim);
}

namespace detail {

void check_radius(double radius, std::string_view what) {
  if (!std::isfinite(radius) || !(radius > 0.0)) {
    throw InvalidArgument("spatialhash: " + std::string(what) + " must be finite and > 0, got " +
                          shortest(radius));
  }
  if (radius < kMinRadius || radius > kMaxRadius) {
    throw InvalidArgument("spatialhash: " + std::string(what) + " " + shortest(radius) +
                          " is outside the supported range [" + shortest(kMinRadius) + ", " +
                          shortest(kMaxRadius) +
                          "] (2^-500 to 2^500, where its square is a normal double)");
  }
}

int checked_threads(int threads) {
  if (threads > kMaxThreads) {
    throw InvalidArgument("spatialhash: " + std::to_string(threads) +
                          " threads requested, more than the limit of " +
                          std::to_string(kMaxThreads) + " (0 means all cores)");
  }
  return resolve_threads(threads);
}

template <int Dim>
GridGeometry<Dim> GridGeometry<Dim>::make(const std::array<double, Dim>& lower,
                                          const std::array<double, Dim>& upper, double radius,
                                          int reach) {
  const double edge_over_margin = radius / reach;
  GridGeometry g;
  g.reach = reach;
  g.lower = lower;
  g.upper = upper;
  g.origin = lower;
  g.cell_size = edge_over_margin * kCellMargin;
  // A radius near the top of the double range: one cell spans any finite extent.
  if (!std::isfinite(g.cell_size)) g.cell_size = std::numeric_limits<double>::max();
  g.inv_cell = 1.0 / g.cell_size;
  for (int k = 0; k < Dim; ++k) {
    const double extent = upper[k] - lower[k];
    if (!std::isfinite(extent)) {
      throw InvalidArgument(std::string("spatialhash: the extent of the points along ") +
                            axis_name(k) + " overflows double precision");
    }
    const double cells = std::floor(extent * g.inv_cell) + 1.0;
    if (cells > static_cast<double>(kMaxCellsPerAxis)) {
      throw InvalidArgument(std::string("spatialhash: radius ") + shortest(radius) +
                            " is too small for the extent " + shortest(extent) +
                            " of the points along " + axis_name(k) +
                            ": the lattice would need more than 2^30 cells on that axis");
    }
    g.dims[k] = static_cast<std::int64_t>(cells);
  }
  return g;
}

template <int Dim, class T>
PointBounds<Dim> point_bounds(PointsView<Dim, T> points, int threads) {
  if (points.count > 0 && points.data == nullptr) {
    throw InvalidArgument("spatialhash: null point data with a non-zero count");
  }
  if (points.stride < static_cast<std::size_t>(Dim)) {
    throw InvalidArgument("spatialhash: stride " + std::to_string(points.stride) +
                          " is smaller than the dimension " + std::to_string(Dim));
  }
  if (points.count >= std::numeric_limits<index_t>::max()) {
    throw InvalidArgument("spatialhash: " + std::to_string(points.count) +
                          " points exceed the 32-bit index limit");
  }
  // Bounding box in parallel; a non-finite value is located afterwards by a sequential scan so the
  // message names the first bad point.
  const int workers = checked_threads(threads);
  std::array<double, Dim> lower{}, upper{};
  for (int k = 0; k < Dim; ++k) {
    lower[k] = std::numeric_limits<double>::infinity();
    upper[k] = -std::numeric_limits<double>::infinity();
  }
  const auto n = static_cast<std::int64_t>(points.count);
  // One slot per thread, combined afterwards: no locks.
  struct Partial {
    std::array<double, Dim> lo, hi;
    bool finite = true;
  };
  std::vector<Partial> partial(static_cast<std::size_t>(workers), Partial{lower, upper, true});
#pragma omp parallel num_threads(workers)
  {
    // Accumulated in locals and stored once: the slots share cache lines.
    Partial mine{lower, upper, true};
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      for (int k = 0; k < Dim; ++k) {
        const double x = points.coord(static_cast<std::size_t>(i), k);
        mine.finite = mine.finite && std::isfinite(x);
        mine.lo[k] = std::min(mine.lo[k], x);
        mine.hi[k] = std::max(mine.hi[k], x);
      }
    }
    partial[static_cast<std::size_t>(thread_id())] = mine;
  }
  bool all_finite = true;
  for (const Partial& p : partial) {
    all_finite = all_finite && p.finite;
    for (int k = 0; k < Dim; ++k) {
      lower[k] = std::min(lower[k], p.lo[k]);
      upper[k] = std::max(upper[k], p.hi[k]);
    }
  }
  if (!all_finite) {
    for (std::size_t i = 0; i < points.count; ++i) {
      for (int k = 0; k < Dim; ++k) {
        const double x = points.coord(i, k);
        if (!std::isfinite(x)) {
          throw InvalidArgument("spatialhash: point " + std::to_string(i) + " has a non-finite " +
                                axis_name(k) + " coordinate (" + shortest(x) + ")");
        }
      }
    }
  }
  if (points.count == 0) lower = upper = std::array<double, Dim>{};
  return {lower, upper, workers};
}

template <int Dim, class T>
Context<Dim, T> make_point_context(PointsView<Dim, T> points, double radius, int threads) {
  check_radius(radius, "radius");
  Context<Dim, T> context;
  context.points = points;
  context.radius = radius;
  context.threads = point_bounds(points, threads).workers;
  return context;
}

template <int Dim, class T>
Context<Dim, T> make_context(PointsView<Dim, T> points, double radius, int threads) {
  check_radius(radius, "radius");
  const PointBounds<Dim> bounds = point_bounds(points, threads);
  Context<Dim, T> context;
  context.points = points;
  context.radius = radius;
  context.threads = bounds.workers;
  context.grid = GridGeometry<Dim>::make(bounds.lower, bounds.upper, radius);
  return context;
}

template struct GridGeometry<2>;
template struct GridGeometry<3>;
#define SPATIALHASH_INSTANTIATE(D, T)                                       \
  template Context<D, T> make_context(PointsView<D, T>, double, int);       \
  template Context<D, T> make_point_context(PointsView<D, T>, double, int); \
  template PointBounds<D> point_bounds(PointsView<D, T>, int);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace detail

#define SPATIALHASH_INSTANTIATE(D, T) template PointsView<D, T> interleaved(std::span<const T>);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash
