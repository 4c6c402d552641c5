// transpose_rows: CSR rows turned around by a counting sort (transpose_csr.hpp), for
// Index.query_ball_tree (the cross search's rows are the other points', the answer's rows this
// index's): O(entries), where NumPy's stable argsort of the column indices took two thirds of the
// call (10k points: 17.9 of 27.4 ms).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>

namespace spatialhash::python {

namespace py = pybind11;

using Int64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

/// The transpose of the CSR matrix (`offsets`, `indices`) whose column indices lie in [0,
/// `columns`): (offsets, indices) of `columns` rows, row c listing the rows of the input that
/// hold c, ascending (each row's entries in the input's row order), made on `threads` threads
/// (transpose_csr.hpp). Raises ValueError naming the first offset out of order or column out of
/// range, or a column count outside [0, 2^32].
py::tuple transpose_rows(const Int64Array& offsets, const Int64Array& indices, std::int64_t columns,
                         int threads);

}  // namespace spatialhash::python
