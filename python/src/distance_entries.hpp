// distance_entries: the entries (i, j, distance) of Index.sparse_distance_matrix, written once
// from the search's neighbor lists in the form the caller asked for: NumPy's structured array
// (output_type='ndarray'), or three arrays for SciPy's sparse matrices (int32 indices where the
// shape allows, which SciPy would otherwise copy down to) and for dicts. Before, the package made
// int64 copies of the lists' indices, the row of every entry with np.repeat and then the
// structured array from those: three passes over the entries and as many fresh arrays (100k
// points, 2.6M entries: 35 of the call's ms after a 13 ms search).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "spatialhash/types.hpp"

namespace spatialhash::python {

namespace py = pybind11;

/// What distance_entries() returns.
enum class EntryForm {
  records,  ///< one structured array, fields i (intp), j (intp), v (float64)
  int64,    ///< a tuple (i, j, v) of int64, int64 and float64 arrays
  int32,    ///< the same with int32 indices (only for matrices of fewer than 2^31 rows and columns)
};

/// Parses "records", "int64" or "int32"; raises ValueError naming anything else.
EntryForm parse_entry_form(const std::string& name);

/// The entries of a sparse distance matrix from neighbor lists with distances over an index of
/// `indexed_points` points. Row q of `lists` holds matrix row q (the index's own lists; each
/// preceded by its diagonal entry (q, q, 0) when `diagonal`), or, when `lists_are_columns`,
/// matrix column q (cross queries: the entries' indices are their rows). Entries follow the
/// lists' order. Runs without the GIL on `threads` threads. Raises ValueError for the int32 form
/// of a matrix with 2^31 rows or columns or more.
py::object distance_entries(const NeighborLists& lists, std::size_t indexed_points,
                            bool lists_are_columns, bool diagonal, EntryForm form, int threads);

}  // namespace spatialhash::python
