#include "distance_bins.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace spatialhash::python {

namespace {

std::span<const double> values_of(const DoubleArray& array, const char* name) {
  if (array.ndim() != 1) throw py::value_error(std::string(name) + " must be a 1-D array");
  return {array.data(), static_cast<std::size_t>(array.size())};
}

/// The number of thresholds <= x: a binary search of a fixed number of steps whose choices are
/// conditional moves, not branches (distances fall into bins at random: std::upper_bound's
/// mispredicted branches took 12 ns a distance with 11 thresholds).
std::size_t thresholds_at_or_below(std::span<const double> s, double x) {
  std::size_t count = 0;
  for (std::size_t step = std::bit_floor(s.size()); step > 0; step >>= 1) {
    const bool further = count + step <= s.size() && s[count + step - 1] <= x;
    count += further ? step : 0;
  }
  return count;
}

/// Adds each distance's weight (1 without weights) to its bin and marks the thresholds it ties.
template <class Sum>
void bin(std::span<const double> d, std::span<const double> s, const double* weights,
         std::vector<Sum>& bins, std::vector<std::uint8_t>& ties) {
  for (std::size_t e = 0; e < d.size(); ++e) {
    const std::size_t b = thresholds_at_or_below(s, d[e]);
    if (b > 0 && s[b - 1] == d[e]) ties[b - 1] = 1;
    if constexpr (std::is_same_v<Sum, double>) {
      bins[b] += weights[e];
    } else {
      bins[b] += 1;
    }
  }
}

template <class T>
py::array_t<T> to_numpy(const std::vector<T>& values) {
  py::array_t<T> out(static_cast<py::ssize_t>(values.size()));
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

}  // namespace

py::tuple distance_bins(const DoubleArray& distances, const DoubleArray& thresholds,
                        const std::optional<DoubleArray>& weights) {
  const std::span<const double> d = values_of(distances, "distances");
  const std::span<const double> s = values_of(thresholds, "thresholds");
  if (!std::is_sorted(s.begin(), s.end())) throw py::value_error("thresholds must be ascending");
  std::span<const double> w;
  if (weights) {
    w = values_of(*weights, "weights");
    if (w.size() != d.size()) throw py::value_error("weights must match distances in length");
  }
  std::vector<std::uint8_t> ties(s.size(), 0);
  std::vector<std::int64_t> counts;
  std::vector<double> sums;
  {
    const py::gil_scoped_release nogil;
    if (weights) {
      sums.assign(s.size() + 1, 0.0);
      bin(d, s, w.data(), sums, ties);
    } else {
      counts.assign(s.size() + 1, 0);
      bin(d, s, nullptr, counts, ties);
    }
  }
  py::array_t<bool> tied(static_cast<py::ssize_t>(ties.size()));
  std::copy(ties.begin(), ties.end(), tied.mutable_data());
  if (weights) return py::make_tuple(to_numpy(sums), tied);
  return py::make_tuple(to_numpy(counts), tied);
}

}  // namespace spatialhash::python
