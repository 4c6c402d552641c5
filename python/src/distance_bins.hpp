// distance_bins: pair distances binned by sorted thresholds, for Index.count_neighbors
// (python/spatialhash/_pair_counts.py), one pass without the GIL instead of NumPy's two sorted
// searches per entry.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>

namespace spatialhash::python {

namespace py = pybind11;

using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

/// (bins, ties) of `distances` against ascending `thresholds` (K of them): bins has K + 1
/// entries, bins[b] the number (the sum of `weights`, when given) of distances d with exactly
/// b thresholds <= d; ties[k] is true when some d equals thresholds[k] and no later threshold
/// does. bins is int64 without weights, float64 with.
py::tuple distance_bins(const DoubleArray& distances, const DoubleArray& thresholds,
                        const std::optional<DoubleArray>& weights);

}  // namespace spatialhash::python
