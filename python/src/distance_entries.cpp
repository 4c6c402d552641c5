// Sparse distance matrix entries (see distance_entries.hpp).
#include "distance_entries.hpp"

#include "../../src/threads.hpp"
#include "numpy_out.hpp"
#include "transpose_csr.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace spatialhash::python {

namespace {

/// One entry of the structured array: NumPy's fields i and j are intp, which this is.
struct Record {
  std::intptr_t i;
  std::intptr_t j;
  double v;
};

/// The structured dtype [("i", intp), ("j", intp), ("v", float64)] over Record's layout.
py::dtype record_dtype() {
  const py::dtype intp = py::dtype::of<std::intptr_t>();
  py::list names, formats, offsets;
  names.append("i");
  names.append("j");
  names.append("v");
  formats.append(intp);
  formats.append(intp);
  formats.append(py::dtype::of<double>());
  offsets.append(offsetof(Record, i));
  offsets.append(offsetof(Record, j));
  offsets.append(offsetof(Record, v));
  return {names, formats, offsets, static_cast<py::ssize_t>(sizeof(Record))};
}

/// Calls write(at, i, j, v) for every entry, at its position `at` in the output, rows of the
/// lists split among the threads (an entry's position is its list offset plus the diagonal
/// entries before it). Lists sorted ascending give rows sorted ascending, the diagonal included:
/// SciPy's tocsr() then finds its rows in canonical order and sorts nothing.
template <class Write>
void for_each_entry(const NeighborLists& lists, bool lists_are_columns, bool diagonal, int threads,
                    Write&& write) {
  const auto rows = static_cast<std::int64_t>(lists.offsets.empty() ? 0 : lists.offsets.size() - 1);
  const auto entries = static_cast<std::int64_t>(lists.indices.size()) + (diagonal ? rows : 0);
  py::gil_scoped_release nogil;
  detail::parallel_region(threads_for_entries(entries, threads), [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t q = 0; q < rows; ++q) {
      std::size_t at = lists.offsets[q] + (diagonal ? static_cast<std::size_t>(q) : 0);
      // The diagonal entry goes where it sorts: before the first neighbor above q.
      bool diagonal_due = diagonal;
      for (std::size_t k = lists.offsets[q]; k < lists.offsets[q + 1]; ++k, ++at) {
        const auto other = static_cast<std::int64_t>(lists.indices[k]);
        if (diagonal_due && other > q) {
          write(at++, q, q, 0.0);
          diagonal_due = false;
        }
        if (lists_are_columns) {
          write(at, other, q, lists.distances[k]);
        } else {
          write(at, q, other, lists.distances[k]);
        }
      }
      if (diagonal_due) write(at, q, q, 0.0);
    }
  });
}

template <class Index>
py::tuple coo_arrays(const NeighborLists& lists, bool lists_are_columns, bool diagonal, int threads,
                     py::ssize_t count) {
  py::array_t<Index> i(count), j(count);
  py::array_t<double> v(count);
  Index* is = i.mutable_data();
  Index* js = j.mutable_data();
  double* vs = v.mutable_data();
  for_each_entry(lists, lists_are_columns, diagonal, threads,
                 [=](std::size_t at, std::int64_t row, std::int64_t column, double distance) {
                   is[at] = static_cast<Index>(row);
                   js[at] = static_cast<Index>(column);
                   vs[at] = distance;
                 });
  return py::make_tuple(i, j, v);
}

/// (indptr, indices, data) of the matrix of `matrix_rows` rows, each row's columns ascending.
/// Lists that are rows already are CSR but for the diagonal: written in place. Lists that are
/// columns are turned around (transpose_csr).
template <class Index>
py::tuple csr_arrays(const NeighborLists& lists, std::size_t matrix_rows, bool lists_are_columns,
                     bool diagonal, int threads, py::ssize_t count) {
  py::array_t<Index> indptr(static_cast<py::ssize_t>(matrix_rows) + 1), indices(count);
  py::array_t<double> data(count);
  Index* starts = indptr.mutable_data();
  Index* columns = indices.mutable_data();
  double* values = data.mutable_data();
  if (!lists_are_columns) {
    const auto rows = static_cast<std::int64_t>(matrix_rows);
    {
      py::gil_scoped_release nogil;
      starts[0] = 0;  // NeighborLists' offsets begin at 0
      for (std::int64_t q = 1; q <= rows; ++q) {
        starts[q] = static_cast<Index>(lists.offsets[q] + (diagonal ? q : 0));
      }
    }
    for_each_entry(lists, false, diagonal, threads,
                   [=](std::size_t at, std::int64_t, std::int64_t column, double distance) {
                     columns[at] = static_cast<Index>(column);
                     values[at] = distance;
                   });
    return py::make_tuple(indptr, indices, data);
  }
  {
    py::gil_scoped_release nogil;
    const std::size_t lists_rows = lists.offsets.size() - 1;  // offsets begin at 0: never empty
    transpose_csr(
        lists.offsets, lists.indices, lists_rows, matrix_rows,
        threads_for_entries(static_cast<std::int64_t>(count), threads),
        [=](std::size_t i, std::size_t offset) { starts[i] = static_cast<Index>(offset); },
        [&](std::size_t at, std::size_t q, std::size_t k) {
          columns[at] = static_cast<Index>(q);
          values[at] = lists.distances[k];
        });
  }
  return py::make_tuple(indptr, indices, data);
}

}  // namespace

EntryLayout parse_entry_layout(const std::string& name) {
  if (name == "records") return EntryLayout::records;
  if (name == "coo") return EntryLayout::coo;
  if (name == "csr") return EntryLayout::csr;
  throw py::value_error("entry layout must be 'records', 'coo' or 'csr', got '" + name + "'");
}

py::object distance_entries(const NeighborLists& lists, std::size_t indexed_points,
                            bool lists_are_columns, bool diagonal, EntryLayout layout, bool int32,
                            int threads) {
  const std::size_t rows = lists.offsets.empty() ? 0 : lists.offsets.size() - 1;
  const std::size_t count = lists.indices.size() + (diagonal ? rows : 0);
  const auto signed_count = static_cast<py::ssize_t>(count);
  constexpr auto kInt32Max = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
  if (int32) {
    // Every index an entry holds is a row of the lists or one of the indexed points.
    const std::size_t bound = std::max(rows, indexed_points);
    if (bound > kInt32Max) {
      throw py::value_error("int32 entries need fewer than 2^31 rows and columns, got " +
                            std::to_string(bound));
    }
  }
  if (layout == EntryLayout::coo) {
    if (int32)
      return coo_arrays<std::int32_t>(lists, lists_are_columns, diagonal, threads, signed_count);
    return coo_arrays<std::int64_t>(lists, lists_are_columns, diagonal, threads, signed_count);
  }
  if (layout == EntryLayout::csr) {
    const std::size_t matrix_rows = lists_are_columns ? indexed_points : rows;
    // CSR offsets count entries: int32 only while they fit too.
    if (int32 && count <= kInt32Max) {
      return csr_arrays<std::int32_t>(lists, matrix_rows, lists_are_columns, diagonal, threads,
                                      signed_count);
    }
    return csr_arrays<std::int64_t>(lists, matrix_rows, lists_are_columns, diagonal, threads,
                                    signed_count);
  }
  py::array out(record_dtype(), std::vector<py::ssize_t>{signed_count});
  auto* records = static_cast<Record*>(out.mutable_data());
  for_each_entry(lists, lists_are_columns, diagonal, threads,
                 [=](std::size_t at, std::int64_t row, std::int64_t column, double distance) {
                   records[at] = {static_cast<std::intptr_t>(row),
                                  static_cast<std::intptr_t>(column), distance};
                 });
  return out;
}

}  // namespace spatialhash::python
