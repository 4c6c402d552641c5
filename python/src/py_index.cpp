// spatialhash._core.Index: the thin layer between NumPy arrays and AnyIndex. Argument policy
// (conversions, defaults, SciPy-compatible signatures) lives in the Python package; this layer
// checks what it is handed, releases the GIL around every search and converts the results.
#include "py_index.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "any_index.hpp"
#include "distance_entries.hpp"
#include "numpy_out.hpp"

namespace spatialhash::python {

namespace {

using QueryArray = py::array_t<double, py::array::c_style>;

/// The most threads an index may ask for: far above any real machine, low enough that a typo
/// cannot make the OpenMP runtime try to start millions of threads.
constexpr int kMaxThreads = 1024;

/// Interleaved coordinates of a C-contiguous, aligned (n, 2) or (n, 3) float32/float64 array.
Coords coords_of(const py::array& points) {
  const bool single = py::isinstance<py::array_t<float>>(points);
  if (!single && !py::isinstance<py::array_t<double>>(points)) {
    throw py::type_error("points must be a float32 or float64 array, got dtype " +
                         py::str(points.dtype()).cast<std::string>());
  }
  if (points.ndim() != 2 || (points.shape(1) != 2 && points.shape(1) != 3)) {
    throw py::value_error("points must have shape (n, 2) or (n, 3), got " +
                          py::str(points.attr("shape")).cast<std::string>());
  }
  const auto address = reinterpret_cast<std::uintptr_t>(points.data());
  if (!(points.flags() & py::array::c_style) || address % points.itemsize() != 0) {
    throw py::value_error("points must be a C-contiguous, aligned array");
  }
  const auto count = static_cast<std::size_t>(points.size());
  if (single) return std::span<const float>(static_cast<const float*>(points.data()), count);
  return std::span<const double>(static_cast<const double*>(points.data()), count);
}

/// Query positions as interleaved doubles, checked against the index dimension.
std::span<const double> positions_of(const QueryArray& queries, int dim) {
  if (queries.ndim() != 2 || queries.shape(1) != dim) {
    throw py::value_error("query positions must have shape (m, " + std::to_string(dim) + "), got " +
                          py::str(queries.attr("shape")).cast<std::string>());
  }
  return {queries.data(), static_cast<std::size_t>(queries.size())};
}

py::object distances_or_none(ResultVector<double>&& distances, bool wanted) {
  if (!wanted) return py::none();
  return doubles_to_numpy(std::move(distances));
}

/// List options set by name (the struct may grow fields; the rest keep their defaults).
ListOptions list_options(double radius, bool sorted, bool with_distances) {
  ListOptions options;
  options.radius = radius;
  options.sorted = sorted;
  options.with_distances = with_distances;
  return options;
}

/// Point indices or counts as NumPy: int32 over the library's memory (no copy) when `int32`,
/// else an int64 copy.
py::array index_array(ResultVector<index_t>&& values, bool int32, int threads) {
  if (int32) return indices_to_numpy_int32(std::move(values));
  return indices_to_numpy(values, threads);
}

/// (offsets, indices, distances or None) of CSR lists.
py::tuple csr_to_numpy(NeighborLists&& lists, bool with_distances, int threads,
                       bool int32 = false) {
  auto indices = index_array(std::move(lists.indices), int32, threads);
  return py::make_tuple(offsets_to_numpy(std::move(lists.offsets)), indices,
                        distances_or_none(std::move(lists.distances), with_distances));
}

/// (start, count, indices, distances or None) of rows where the search wrote them.
py::tuple rows_to_numpy(NeighborRows&& rows, bool with_distances, int threads, bool int32) {
  auto indices = index_array(std::move(rows.indices), int32, threads);
  auto count = index_array(std::move(rows.count), int32, threads);
  return py::make_tuple(offsets_to_numpy(std::move(rows.start)), count, indices,
                        distances_or_none(std::move(rows.distances), with_distances));
}

class PyIndex {
 private:
  /// Runs a search without the GIL, excluded from concurrent update() calls.
  template <class F>
  auto search(F&& run) const {
    py::gil_scoped_release nogil;
    std::shared_lock lock(mutex_);
    return run(*index_);
  }

 public:
  /// An empty `boxsize` means no periodic box (see make_any_index for the convention).
  PyIndex(py::array points, double radius, const std::string& engine, int threads,
          const std::vector<double>& boxsize)
      : points_(std::move(points)) {
    const Coords coords = coords_of(points_);
    if (threads < 0 || threads > kMaxThreads) {
      throw py::value_error("threads must be between 0 (all cores) and " +
                            std::to_string(kMaxThreads) + ", got " + std::to_string(threads));
    }
    Options options;  // fields set by name: the struct may grow
    options.engine = parse_engine(engine);
    options.threads = threads;
    const int dim = static_cast<int>(points_.shape(1));
    {
      py::gil_scoped_release nogil;
      index_ = make_any_index(dim, coords, radius, options, boxsize);
    }
    // update() keeps all of these, so they are read here once and never race with it.
    dim_ = index_->dim();
    size_ = index_->size();
    radius_ = index_->radius();
    engine_ = std::string(engine_name(index_->engine()));
    threads_ = index_->threads();
    single_ = std::holds_alternative<std::span<const float>>(coords);
  }

  int dim() const { return dim_; }
  std::size_t size() const { return size_; }
  double radius() const { return radius_; }
  std::string engine() const { return engine_; }
  int threads() const { return threads_; }
  bool single_precision() const { return single_; }

  /// int32 indices hold point indices and counts below 2^31: refused for a larger index.
  void check_int32(bool int32) const {
    if (int32 && size_ > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
      throw py::value_error("index_dtype int32 holds point indices below 2^31, but the index has " +
                            std::to_string(size_) + " points: use int64");
    }
  }

  py::tuple pairs(double radius, bool sorted, bool with_distances, bool int32) const {
    check_int32(int32);
    if (!sorted && !with_distances && !int32) {
      // The common case (query_pairs): written straight into the array's memory.
      Int64PairOutput out;
      search([&](const AnyIndex& index) { index.pairs(out, radius); });
      return py::make_tuple(std::move(out).to_numpy(), py::none());
    }
    PairList list = search([&](const AnyIndex& index) {
      return index.pairs(list_options(radius, sorted, with_distances));
    });
    // int32: the library's own array (a Pair is two 32-bit indices), no int64 copy.
    py::array pairs = int32 ? py::array(pairs_to_numpy_int32(std::move(list.pairs)))
                            : py::array(pairs_to_numpy(list.pairs, threads()));
    return py::make_tuple(pairs, distances_or_none(std::move(list.distances), with_distances));
  }

  py::tuple neighbor_lists(double radius, bool sorted, bool with_distances, bool low_memory,
                           bool int32, bool half) const {
    check_int32(int32);
    ListOptions options = list_options(radius, sorted, with_distances);
    options.low_memory = low_memory;
    options.half = half;
    NeighborLists lists =
        search([&](const AnyIndex& index) { return index.neighbor_lists(options); });
    return csr_to_numpy(std::move(lists), with_distances, threads(), int32);
  }

  /// The entries of the index's sparse distance matrix with itself, in `layout`
  /// (distance_entries.hpp): the sorted neighbor lists with distances (each pair's distance in
  /// both of its rows, so the matrix is symmetric in a periodic box too) and each row's diagonal
  /// entry, rows ascending.
  py::object self_distance_entries(double radius, const std::string& layout, bool int32) const {
    const EntryLayout parsed = parse_entry_layout(layout);
    std::size_t points = 0;  // the index's size at the search (an update() may follow)
    const NeighborLists lists = search([&](const AnyIndex& index) {
      points = index.size();
      return index.neighbor_lists(list_options(radius, true, true));
    });
    return distance_entries(lists, points, /*lists_are_columns=*/false, /*diagonal=*/true, parsed,
                            int32, threads());
  }

  /// The entries of the sparse distance matrix of the index (rows) against query positions
  /// (columns), in `layout` (records and COO column by column, each column's rows ascending).
  py::object cross_distance_entries(const QueryArray& queries, double radius,
                                    const std::string& layout, bool int32) const {
    const EntryLayout parsed = parse_entry_layout(layout);
    const std::span<const double> positions = positions_of(queries, dim());
    std::size_t points = 0;  // the index's size at the search (an update() may follow)
    const NeighborLists lists = search([&](const AnyIndex& index) {
      points = index.size();
      return index.cross(positions, list_options(radius, true, true));
    });
    return distance_entries(lists, points, /*lists_are_columns=*/true, /*diagonal=*/false, parsed,
                            int32, threads());
  }

  py::tuple neighbor_rows(double radius, bool sorted, bool with_distances, bool int32,
                          bool half) const {
    check_int32(int32);
    ListOptions options = list_options(radius, sorted, with_distances);
    options.half = half;
    NeighborRows rows = search([&](const AnyIndex& index) { return index.neighbor_rows(options); });
    return rows_to_numpy(std::move(rows), with_distances, threads(), int32);
  }

  py::array_t<std::int64_t> neighbor_counts(double radius) const {
    const std::vector<index_t> counts =
        search([&](const AnyIndex& index) { return index.neighbor_counts(radius); });
    return indices_to_numpy(counts, threads());
  }

  py::tuple cross(const QueryArray& queries, double radius, bool sorted, bool with_distances,
                  bool int32) const {
    check_int32(int32);
    const std::span<const double> positions = positions_of(queries, dim());
    NeighborLists lists = search([&](const AnyIndex& index) {
      return index.cross(positions, list_options(radius, sorted, with_distances));
    });
    return csr_to_numpy(std::move(lists), with_distances, threads(), int32);
  }

  py::tuple cross_rows(const QueryArray& queries, double radius, bool sorted, bool with_distances,
                       bool int32) const {
    check_int32(int32);
    const std::span<const double> positions = positions_of(queries, dim());
    NeighborRows rows = search([&](const AnyIndex& index) {
      return index.cross_rows(positions, list_options(radius, sorted, with_distances));
    });
    return rows_to_numpy(std::move(rows), with_distances, threads(), int32);
  }

  py::tuple balls(const QueryArray& queries, const QueryArray& radii, bool sorted) const {
    const std::span<const double> positions = positions_of(queries, dim());
    if (radii.ndim() != 1) throw py::value_error("radii must be a 1-D array");
    const std::span<const double> r(radii.data(), static_cast<std::size_t>(radii.size()));
    NeighborLists lists =
        search([&](const AnyIndex& index) { return index.balls(positions, r, sorted); });
    return csr_to_numpy(std::move(lists), false, threads());
  }

  /// The indexed points within `radius` of one position, as a list of ints: a single position's
  /// query_ball_point without the batch's arrays (80 us through them before the batch was
  /// skipped for few positions, 7.8 us after, and 3 us here; docs/python.md).
  py::list ball(const QueryArray& position, double radius, bool sorted) const {
    if (position.ndim() != 1 || position.shape(0) != dim()) {
      throw py::value_error("query position must have shape (" + std::to_string(dim()) +
                            ",), got " + py::str(position.attr("shape")).cast<std::string>());
    }
    std::vector<index_t> found;
    search([&](const AnyIndex& index) {
      index.ball({position.data(), static_cast<std::size_t>(dim())}, radius, sorted, found);
    });
    py::list out(found.size());
    for (std::size_t k = 0; k < found.size(); ++k) {
      PyList_SET_ITEM(out.ptr(), static_cast<py::ssize_t>(k), py::int_(found[k]).release().ptr());
    }
    return out;
  }

  py::array_t<std::int64_t> ball_counts(const QueryArray& queries, const QueryArray& radii) const {
    const std::span<const double> positions = positions_of(queries, dim());
    if (radii.ndim() != 1) throw py::value_error("radii must be a 1-D array");
    const std::span<const double> r(radii.data(), static_cast<std::size_t>(radii.size()));
    const std::vector<index_t> counts =
        search([&](const AnyIndex& index) { return index.ball_counts(positions, r); });
    return indices_to_numpy(counts, threads());
  }

  void update(py::array points) {
    const Coords coords = coords_of(points);
    if (points.shape(1) != dim()) {
      throw py::value_error("update() needs points with " + std::to_string(dim()) +
                            " coordinates, got " + std::to_string(points.shape(1)));
    }
    if (single_precision() != std::holds_alternative<std::span<const float>>(coords)) {
      throw py::type_error("update() needs points of the dtype the index was built with");
    }
    {
      py::gil_scoped_release nogil;
      std::unique_lock lock(mutex_);
      index_->update(coords);
      // Swapping handles touches no reference count, so it needs no GIL; the old array is
      // released when `points` goes out of scope, with the GIL held again.
      std::swap(points_, points);
    }
  }

 private:
  py::array points_;  ///< the coordinates index_ borrows; kept alive here
  int dim_ = 0;
  std::size_t size_ = 0;
  double radius_ = 0.0;
  std::string engine_;
  int threads_ = 1;
  bool single_ = false;
  std::unique_ptr<AnyIndex> index_;
  mutable std::shared_mutex mutex_;  ///< searches share it, update() takes it alone
};

}  // namespace

void bind_index(py::module_& module) {
  py::class_<PyIndex>(module, "Index",
                      "Low-level index over a C-contiguous float32/float64 (n, 2|3) array. Use "
                      "spatialhash.Index, which converts input and offers SciPy-style methods.")
      .def(py::init<py::array, double, const std::string&, int, const std::vector<double>&>(),
           py::arg("points"), py::arg("radius"), py::arg("engine") = "automatic",
           py::arg("threads") = 0, py::arg("boxsize") = std::vector<double>{})
      .def_property_readonly("dim", &PyIndex::dim)
      .def_property_readonly("size", &PyIndex::size)
      .def_property_readonly("radius", &PyIndex::radius)
      .def_property_readonly("engine", &PyIndex::engine)
      .def_property_readonly("threads", &PyIndex::threads)
      .def_property_readonly("single_precision", &PyIndex::single_precision)
      .def("pairs", &PyIndex::pairs, py::arg("radius"), py::arg("sorted"),
           py::arg("with_distances"), py::arg("int32"),
           "(pairs (m, 2) int64 or int32, distances float64 or None)")
      .def("neighbor_lists", &PyIndex::neighbor_lists, py::arg("radius"), py::arg("sorted"),
           py::arg("with_distances"), py::arg("low_memory"), py::arg("int32"), py::arg("half"),
           "(offsets int64, indices int64 or int32, distances or None)")
      .def("neighbor_rows", &PyIndex::neighbor_rows, py::arg("radius"), py::arg("sorted"),
           py::arg("with_distances"), py::arg("int32"), py::arg("half"),
           "(start int64, count and indices int64 or int32 (-1 outside the rows), distances or "
           "None)")
      .def("self_distance_entries", &PyIndex::self_distance_entries, py::arg("radius"),
           py::arg("layout"), py::arg("int32"),
           "Sparse distance matrix entries with itself: 'records' (structured i, j, v), 'coo' "
           "(i, j, v) or 'csr' (indptr, indices, data), indices int32 or int64; rows ascending, "
           "diagonal included")
      .def("cross_distance_entries", &PyIndex::cross_distance_entries, py::arg("queries"),
           py::arg("radius"), py::arg("layout"), py::arg("int32"),
           "Sparse distance matrix entries against query positions (the columns), in the "
           "layouts of self_distance_entries")
      .def("neighbor_counts", &PyIndex::neighbor_counts, py::arg("radius"))
      .def("cross", &PyIndex::cross, py::arg("queries"), py::arg("radius"), py::arg("sorted"),
           py::arg("with_distances"), py::arg("int32"),
           "CSR neighbors of each query position, one radius")
      .def("cross_rows", &PyIndex::cross_rows, py::arg("queries"), py::arg("radius"),
           py::arg("sorted"), py::arg("with_distances"), py::arg("int32"),
           "(start, count, indices (-1 outside the rows), distances or None) of each query")
      .def("balls", &PyIndex::balls, py::arg("queries"), py::arg("radii"), py::arg("sorted"),
           "CSR neighbors of each query position, one radius per position")
      .def("ball", &PyIndex::ball, py::arg("position"), py::arg("radius"), py::arg("sorted"),
           "List of the indexed points within radius of one position")
      .def("ball_counts", &PyIndex::ball_counts, py::arg("queries"), py::arg("radii"),
           "Number of neighbors of each query position, one radius per position")
      .def("update", &PyIndex::update, py::arg("points"));
}

}  // namespace spatialhash::python
