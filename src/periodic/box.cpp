// Wrapping into a periodic box, and the checks a box must pass for a given radius.
#include "spatialhash/box.hpp"

#include <cmath>
#include <string>

#include "../shortest.hpp"
#include "periodic_engine.hpp"

namespace spatialhash {

double wrap_coordinate(double x, double lower, double upper) {
  if (x >= lower && x < upper) return x;  // points inside the box are never moved
  const double edge = upper - lower;
  const double w = x - std::floor((x - lower) / edge) * edge;
  // Rounding can leave w just outside the box, within a few rounding errors of |x| from a seam,
  // where lower and upper are the same point: that is `lower`. (Also catches x - lower
  // overflowing to infinity.)
  return w >= lower && w < upper ? w : lower;
}

template <int Dim>
std::array<double, Dim> wrap_into(const PeriodicBox<Dim>& box,
                                  const std::type_identity_t<std::array<double, Dim>>& x) {
  std::array<double, Dim> w = x;
  for (int k = 0; k < Dim; ++k) {
    if (box.periodic[k]) w[k] = wrap_coordinate(x[k], box.lower[k], box.upper[k]);
  }
  return w;
}

template std::array<double, 2> wrap_into<2>(const PeriodicBox<2>&, const std::array<double, 2>&);
template std::array<double, 3> wrap_into<3>(const PeriodicBox<3>&, const std::array<double, 3>&);

namespace detail {

namespace {

std::string axis_label(int k) {
  return "axis " + std::to_string(k) + " (" + (k == 0 ? "x" : (k == 1 ? "y" : "z")) + ")";
}

}  // namespace

template <int Dim>
void check_periodic_box(const PeriodicBox<Dim>& box, double radius) {
  for (int k = 0; k < Dim; ++k) {
    if (!box.periodic[k]) continue;
    const double lower = box.lower[k], upper = box.upper[k];
    if (!std::isfinite(lower) || !std::isfinite(upper) || !std::isfinite(upper - lower)) {
      throw InvalidArgument("spatialhash: periodic box bounds [" + shortest(lower) + ", " +
                            shortest(upper) + ") are not finite on " + axis_label(k));
    }
    if (!(upper > lower)) {
      throw InvalidArgument("spatialhash: periodic box upper bound " + shortest(upper) +
                            " is not above the lower bound " + shortest(lower) + " on " +
                            axis_label(k));
    }
    // Minimum image is unambiguous only below half the edge; the 1e-12 margin keeps it so
    // despite rounding (two images of one point are then never both within the radius).
    const double edge = upper - lower;
    if (!(radius * (1.0 + 1e-12) < edge / 2)) {
      throw InvalidArgument("spatialhash: radius " + shortest(radius) +
                            " is not below half the box edge " + shortest(edge) + " on " +
                            axis_label(k) +
                            " with a relative margin of 1e-12 (radius * (1 + 1e-12) < edge / 2; "
                            "minimum image would be ambiguous)");
    }
  }
}

template void check_periodic_box(const PeriodicBox<2>&, double);
template void check_periodic_box(const PeriodicBox<3>&, double);

}  // namespace detail

}  // namespace spatialhash
