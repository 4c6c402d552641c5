// Result conversions (see numpy_out.hpp).
#include "numpy_out.hpp"

#include "../../src/growable_buffer.hpp"  // sized_for_overwrite: the library's huge-page sizing
#include "../../src/threads.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace spatialhash::python {

namespace {

/// A 1-D NumPy array over the memory of `values`, which moves into a capsule that the array
/// keeps alive: the data is never copied.
/// With `columns` > 1, the array has shape (size / columns, columns).
template <class Out, class In>
py::array_t<Out> adopt(ResultVector<In>&& values, py::ssize_t columns = 1) {
  static_assert(sizeof(In) % sizeof(Out) == 0, "adopt() reads each element as whole Outs");
  constexpr auto kPerElement = static_cast<py::ssize_t>(sizeof(In) / sizeof(Out));
  const auto rows = static_cast<py::ssize_t>(values.size()) * kPerElement / columns;
  std::vector<py::ssize_t> shape{rows};
  if (columns > 1) shape.push_back(columns);
  if (values.empty()) return py::array_t<Out>(shape);
  auto owner = std::make_unique<ResultVector<In>>(std::move(values));
  const auto* data = reinterpret_cast<const Out*>(owner->data());
  py::capsule base(owner.get(), [](void* p) { delete static_cast<ResultVector<In>*>(p); });
  owner.release();  // the capsule owns the vector from here on
  return py::array_t<Out>(shape, data, base);
}

/// Python ints for a run of indices, one per distinct value, shared by every container that holds
/// it (ints are immutable): a point's index sits in about as many rows or pairs as it has
/// neighbors, and allocating an int per entry was most of a conversion (100k points, 3M list
/// entries: 174 ms, against the search's 8 ms; docs/python.md). Only where the values are
/// non-negative and not much more spread out than there are entries, so that the table stays
/// within a few pointers per entry; otherwise each call makes a new int.
class SharedInts {
 public:
  explicit SharedInts(std::span<const std::int64_t> values) {
    std::int64_t lowest = 0, highest = -1;
    for (const std::int64_t v : values) {
      lowest = std::min(lowest, v);
      highest = std::max(highest, v);
    }
    const auto entries = static_cast<std::int64_t>(values.size());
    if (lowest >= 0 && highest < 4 * entries + 1024) {
      table_.resize(static_cast<std::size_t>(highest + 1));
      shared_ = true;
    }
  }
  /// A new reference to an int of value `value` (a value of the run given to the constructor).
  PyObject* new_reference(std::int64_t value) {
    if (!shared_) return py::int_(value).release().ptr();
    py::object& one = table_[static_cast<std::size_t>(value)];
    if (!one) one = py::int_(value);
    return one.inc_ref().ptr();
  }

 private:
  std::vector<py::object> table_;
  bool shared_ = false;
};

/// No cyclic garbage collection while it lives: each new list or tuple is a container that the
/// collector would otherwise traverse again and again, with every one made before it, as they
/// pile up (100k points: 96 ms of lists with it, 39 without; docs/python.md). The collector runs
/// again (if it ran before) when this ends, also on an exception. PyGC_Disable is Python 3.10's;
/// 3.9 converts with the collector on.
class CollectorPause {
 public:
  CollectorPause() {
#if PY_VERSION_HEX >= 0x030A0000
    was_enabled_ = PyGC_Disable();
#endif
  }
  ~CollectorPause() {
#if PY_VERSION_HEX >= 0x030A0000
    if (was_enabled_ == 1) PyGC_Enable();
#endif
  }
  CollectorPause(const CollectorPause&) = delete;
  CollectorPause& operator=(const CollectorPause&) = delete;

 private:
  [[maybe_unused]] int was_enabled_ = 0;
};

}  // namespace

void Int64PairOutput::allocate(std::size_t count) {
  // In huge pages, as NumPy does for its own large arrays, and as the library's result arrays.
  detail::sized_for_overwrite(values_, 2 * count);
}

py::array_t<std::int64_t> Int64PairOutput::to_numpy() && {
  return adopt<std::int64_t>(std::move(values_), 2);
}

py::array_t<std::int32_t> pairs_to_numpy_int32(ResultVector<Pair>&& pairs) {
  static_assert(sizeof(Pair) == 2 * sizeof(std::int32_t) && offsetof(Pair, second) == 4,
                "a Pair reads as two int32");
  return adopt<std::int32_t>(std::move(pairs), 2);
}

py::array_t<std::int64_t> pairs_to_numpy(std::span<const Pair> pairs, int threads) {
  const auto m = static_cast<std::int64_t>(pairs.size());
  py::array_t<std::int64_t> out(std::vector<py::ssize_t>{m, 2});
  std::int64_t* dst = out.mutable_data();
  {
    py::gil_scoped_release nogil;
    detail::parallel_region(threads_for_entries(m, threads), [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t k = 0; k < m; ++k) {
        dst[2 * k] = pairs[k].first;
        dst[2 * k + 1] = pairs[k].second;
      }
    });
  }
  return out;
}

py::array_t<std::int64_t> indices_to_numpy(std::span<const index_t> indices, int threads) {
  const auto m = static_cast<std::int64_t>(indices.size());
  py::array_t<std::int64_t> out(std::vector<py::ssize_t>{m});
  std::int64_t* dst = out.mutable_data();
  {
    py::gil_scoped_release nogil;
    detail::parallel_region(threads_for_entries(m, threads), [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t k = 0; k < m; ++k) {
        dst[k] = indices[k] == kNoNeighbor ? std::int64_t{-1} : std::int64_t{indices[k]};
      }
    });
  }
  return out;
}

py::array_t<std::int32_t> indices_to_numpy_int32(ResultVector<index_t>&& indices) {
  return adopt<std::int32_t>(std::move(indices));
}

py::array_t<std::int64_t> offsets_to_numpy(ResultVector<std::size_t>&& offsets) {
  // Offsets count results held in memory, so they are far below 2^63: same bits as int64.
  return adopt<std::int64_t>(std::move(offsets));
}

py::array_t<double> doubles_to_numpy(ResultVector<double>&& values) {
  return adopt<double>(std::move(values));
}

py::array split_rows(const py::array_t<std::int64_t, py::array::c_style>& offsets,
                     const py::array_t<std::int64_t, py::array::c_style>& indices) {
  if (offsets.ndim() != 1 || offsets.size() < 1 || indices.ndim() != 1) {
    throw py::value_error("split_rows: offsets must be 1-D and non-empty, indices 1-D");
  }
  const std::int64_t* off = offsets.data();
  const std::int64_t* idx = indices.data();
  const auto rows = static_cast<py::ssize_t>(offsets.size() - 1);
  for (py::ssize_t q = 0; q <= rows; ++q) {
    const bool bad = off[q] < 0 || off[q] > indices.size() || (q > 0 && off[q] < off[q - 1]);
    if (bad) throw py::value_error("split_rows: offset " + std::to_string(q) + " is out of order");
  }
  SharedInts ints(std::span<const std::int64_t>(idx, static_cast<std::size_t>(off[rows])));
  const CollectorPause pause;
  py::array out(py::dtype("O"), std::vector<py::ssize_t>{rows});
  auto** slots = static_cast<PyObject**>(out.mutable_data());
  for (py::ssize_t q = 0; q < rows; ++q) {
    py::list row(static_cast<std::size_t>(off[q + 1] - off[q]));
    for (std::int64_t k = off[q]; k < off[q + 1]; ++k) {
      PyList_SET_ITEM(row.ptr(), k - off[q], ints.new_reference(idx[k]));
    }
    Py_XDECREF(slots[q]);  // NumPy fills new object arrays with None (or NULL)
    slots[q] = row.release().ptr();
  }
  return out;
}

py::set pairs_to_set(const py::array_t<std::int64_t, py::array::c_style>& pairs) {
  if (pairs.ndim() != 2 || pairs.shape(1) != 2) {
    throw py::value_error("pairs_to_set: pairs must have shape (m, 2)");
  }
  const std::int64_t* values = pairs.data();
  const auto entries = static_cast<std::size_t>(pairs.size());
  SharedInts ints(std::span<const std::int64_t>(values, entries));
  const CollectorPause pause;
  py::set out;
  for (std::size_t k = 0; k < entries; k += 2) {
    const py::tuple pair(2);
    PyTuple_SET_ITEM(pair.ptr(), 0, ints.new_reference(values[k]));
    PyTuple_SET_ITEM(pair.ptr(), 1, ints.new_reference(values[k + 1]));
    if (PySet_Add(out.ptr(), pair.ptr()) != 0) throw py::error_already_set();
  }
  return out;
}

py::dict pairs_to_dict(const py::array_t<std::int64_t, py::array::c_style>& i,
                       const py::array_t<std::int64_t, py::array::c_style>& j,
                       const py::array_t<double, py::array::c_style>& values) {
  if (i.ndim() != 1 || j.ndim() != 1 || values.ndim() != 1 || j.shape(0) != i.shape(0) ||
      values.shape(0) != i.shape(0)) {
    throw py::value_error("pairs_to_dict: i, j and values must be 1-D arrays of one length");
  }
  const auto entries = static_cast<std::size_t>(i.shape(0));
  SharedInts first(std::span<const std::int64_t>(i.data(), entries));
  SharedInts second(std::span<const std::int64_t>(j.data(), entries));
  const CollectorPause pause;
  py::dict out;
  for (std::size_t k = 0; k < entries; ++k) {
    const py::tuple pair(2);
    PyTuple_SET_ITEM(pair.ptr(), 0, first.new_reference(i.data()[k]));
    PyTuple_SET_ITEM(pair.ptr(), 1, second.new_reference(j.data()[k]));
    const py::float_ value(values.data()[k]);
    if (PyDict_SetItem(out.ptr(), pair.ptr(), value.ptr()) != 0) throw py::error_already_set();
  }
  return out;
}

}  // namespace spatialhash::python
