#include "transpose_rows.hpp"

#include <string>
#include <utility>
#include <vector>

#include "numpy_out.hpp"
#include "transpose_csr.hpp"

namespace spatialhash::python {

py::tuple transpose_rows(const Int64Array& offsets, const Int64Array& indices, std::int64_t columns,
                         int threads) {
  if (offsets.ndim() != 1 || offsets.size() < 1 || indices.ndim() != 1) {
    throw py::value_error("transpose_rows: offsets must be 1-D and non-empty, indices 1-D");
  }
  // Columns are point indices (32-bit in the library): a larger count is a mistake, whose
  // offsets alone would be a huge allocation.
  constexpr std::int64_t kMaxColumns = std::int64_t{1} << 32;
  if (columns < 0 || columns > kMaxColumns) {
    throw py::value_error("transpose_rows: columns must be in [0, 2^32], got " +
                          std::to_string(columns));
  }
  const std::int64_t* in_offsets = offsets.data();
  const std::int64_t* in_indices = indices.data();
  const auto rows = static_cast<std::int64_t>(offsets.size() - 1);
  for (std::int64_t q = 0; q <= rows; ++q) {
    const bool bad = in_offsets[q] < 0 || in_offsets[q] > indices.size() ||
                     (q > 0 && in_offsets[q] < in_offsets[q - 1]) || (q == 0 && in_offsets[0] != 0);
    if (bad) {
      throw py::value_error("transpose_rows: offset " + std::to_string(q) + " is out of order");
    }
  }
  const std::int64_t entries = in_offsets[rows];
  for (std::int64_t k = 0; k < entries; ++k) {
    if (in_indices[k] < 0 || in_indices[k] >= columns) {
      throw py::value_error("transpose_rows: index " + std::to_string(in_indices[k]) +
                            " at entry " + std::to_string(k) + " is outside [0, " +
                            std::to_string(columns) + ")");
    }
  }
  py::array_t<std::int64_t> out_offsets(columns + 1);
  py::array_t<std::int64_t> out_indices(entries);
  std::int64_t* starts = out_offsets.mutable_data();
  std::int64_t* transposed = out_indices.mutable_data();
  {
    py::gil_scoped_release nogil;
    transpose_csr(
        in_offsets, in_indices, static_cast<std::size_t>(rows), static_cast<std::size_t>(columns),
        threads_for_entries(entries, threads),
        [=](std::size_t c, std::size_t offset) { starts[c] = static_cast<std::int64_t>(offset); },
        [=](std::size_t at, std::size_t q, std::size_t) {
          transposed[at] = static_cast<std::int64_t>(q);
        });
  }
  return py::make_tuple(std::move(out_offsets), std::move(out_indices));
}

}  // namespace spatialhash::python
