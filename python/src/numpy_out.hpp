// Conversions from spatialhash's result containers to NumPy arrays. Index arrays become int64
// (NumPy's own index type); the loops over results run without the GIL.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "spatialhash/types.hpp"

namespace spatialhash::python {

namespace py = pybind11;

/// The threads a loop over `entries` result entries takes: `threads` from 2^16 entries, else one
/// (below that, waking threads costs more than the loop).
inline int threads_for_entries(std::int64_t entries, int threads) {
  constexpr std::int64_t kParallelEntries = 1 << 16;
  return entries > kParallelEntries ? threads : 1;
}

/// (m, 2) int64 array, one pair per row, first < second.
py::array_t<std::int64_t> pairs_to_numpy(std::span<const Pair> pairs, int threads);

/// (m, 2) int32 view of pairs, taking over the vector's memory (no copy). Only for indices below
/// 2^31 (the caller checks).
py::array_t<std::int32_t> pairs_to_numpy_int32(ResultVector<Pair>&& pairs);

/// PairOutput straight into the memory of an (m, 2) int64 array, one pair per row: no PairList
/// in between. Filled without the GIL; to_numpy() (with the GIL) hands the memory to NumPy.
class Int64PairOutput final : public PairOutput {
 public:
  void allocate(std::size_t count) override;
  void write(std::size_t at, std::span<const Pair> pairs) override {
    std::int64_t* dst = values_.data() + 2 * at;
    for (const Pair& p : pairs) {
      *dst++ = p.first;
      *dst++ = p.second;
    }
  }
  bool resizable() const override { return true; }
  void resize(std::size_t count) override { values_.resize(2 * count); }
  py::array_t<std::int64_t> to_numpy() &&;

 private:
  ResultVector<std::int64_t> values_;
};
/// int64 copy of an array of point indices; kNoNeighbor (never an index) becomes -1.
py::array_t<std::int64_t> indices_to_numpy(std::span<const index_t> indices, int threads);
/// int32 view of an array of point indices, taking over the vector's memory (no copy):
/// kNoNeighbor (all ones) reads as -1. Only for indices below 2^31 (the caller checks).
py::array_t<std::int32_t> indices_to_numpy_int32(ResultVector<index_t>&& indices);
/// CSR offsets as int64, taking over the vector's memory (no copy).
py::array_t<std::int64_t> offsets_to_numpy(ResultVector<std::size_t>&& offsets);
/// Distances as float64, taking over the vector's memory (no copy).
py::array_t<double> doubles_to_numpy(ResultVector<double>&& values);
/// Object array of Python lists: element q holds indices[offsets[q] .. offsets[q + 1]).
/// Throws ValueError unless offsets is a non-decreasing 1-D array within indices.
py::array split_rows(const py::array_t<std::int64_t, py::array::c_style>& offsets,
                     const py::array_t<std::int64_t, py::array::c_style>& indices);
/// Set of (i, j) tuples, one per row of an (m, 2) int64 array (query_pairs' output_type='set').
/// Throws ValueError for any other shape.
py::set pairs_to_set(const py::array_t<std::int64_t, py::array::c_style>& pairs);
/// Dict {(i[k], j[k]): values[k]} (sparse_distance_matrix's output_type='dict'); a repeated key
/// keeps its last value, as dict(zip(...)) does. Throws ValueError unless the three are 1-D
/// arrays of one length.
py::dict pairs_to_dict(const py::array_t<std::int64_t, py::array::c_style>& i,
                       const py::array_t<std::int64_t, py::array::c_style>& j,
                       const py::array_t<double, py::array::c_style>& values);

}  // namespace spatialhash::python
