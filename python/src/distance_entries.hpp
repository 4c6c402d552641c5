// distance_entries: the entries (i, j, distance) of Index.sparse_distance_matrix, written once
// from the search's neighbor lists in the form the caller asked for: NumPy's structured array
// (output_type='ndarray'), or three arrays for SciPy's sparse matrices, COO or CSR (int32
// indices where the shape allows, which SciPy would otherwise copy down to), and for dicts. Before,
// the package made int64 copies of the lists' indices, the row of every entry with np.repeat and
// then the structured array from those: three passes over the entries and as many fresh arrays
// (100k points, 2.6M entries: 35 of the call's ms after a 13 ms search).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "spatialhash/types.hpp"

namespace spatialhash::python {

namespace py = pybind11;

/// What distance_entries() returns.
enum class EntryLayout {
  records,  ///< one structured array, fields i (intp), j (intp), v (float64)
  coo,      ///< a tuple (i, j, v) of index, index and float64 arrays
  csr,      ///< a tuple (indptr, indices, data) of a CSR matrix, each row's columns ascending
};

/// Parses "records", "coo" or "csr"; raises ValueError naming anything else.
EntryLayout parse_entry_layout(const std::string& name);

/// The entries of a sparse distance matrix from neighbor lists with distances over an index of
/// `indexed_points` points. Row q of `lists` holds matrix row q (the index's own lists; with its
/// diagonal entry (q, q, 0) when `diagonal`, placed before the first index above q), or, when
/// `lists_are_columns`, matrix column q (cross queries: the entries' indices are their rows; the
/// matrix then has `indexed_points` rows). Records and COO entries follow the lists' order.
/// Indices are int64, or int32 when `int32` (records keep intp; CSR offsets only while the
/// entries' count fits in them too, else int64 throughout). Runs without the GIL on `threads`
/// threads (a CSR of lists that are columns on at most kMaxTransposeThreads, transpose_csr.hpp).
/// Raises ValueError for `int32` with 2^31 rows or columns or more.
py::object distance_entries(const NeighborLists& lists, std::size_t indexed_points,
                            bool lists_are_columns, bool diagonal, EntryLayout layout, bool int32,
                            int threads);

}  // namespace spatialhash::python
