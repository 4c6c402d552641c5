// The extension module spatialhash._core: error translation, engine names, the Index type.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "distance_bins.hpp"
#include "numpy_out.hpp"
#include "py_index.hpp"
#include "spatialhash/types.hpp"
#include "transpose_rows.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, module) {
  module.doc() = "spatialhash C++ core (use the spatialhash package, not this module directly)";

  // Every bad input the library reports is a ValueError in Python.
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const spatialhash::InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  // The library's limits, for the package's own checks (errors named in Python's terms).
  module.attr("MIN_RADIUS") = spatialhash::kMinRadius;
  module.attr("MAX_RADIUS") = spatialhash::kMaxRadius;
  module.attr("MAX_THREADS") = spatialhash::kMaxThreads;

  module.def(
      "engine_names",
      [] {
        std::vector<std::string> names{
            std::string(spatialhash::engine_name(spatialhash::Engine::automatic))};
        for (spatialhash::Engine e : spatialhash::all_engines()) {
          names.emplace_back(spatialhash::engine_name(e));
        }
        return names;
      },
      "Names accepted by Index(engine=...), 'automatic' first.");
  module.def("split_rows", &spatialhash::python::split_rows, py::arg("offsets"), py::arg("indices"),
             "Object array of lists, one per CSR row.");
  module.def("transpose_rows", &spatialhash::python::transpose_rows, py::arg("offsets"),
             py::arg("indices"), py::arg("columns"), py::arg("threads") = 1,
             "(offsets, indices) of the transpose of a CSR matrix of `columns` columns, each row "
             "ascending.");
  module.def("pairs_to_set", &spatialhash::python::pairs_to_set, py::arg("pairs"),
             "Set of (i, j) tuples, one per row of an (m, 2) int64 array.");
  module.def("pairs_to_dict", &spatialhash::python::pairs_to_dict, py::arg("i"), py::arg("j"),
             py::arg("values"), "Dict {(i[k], j[k]): values[k]} of three 1-D arrays.");
  module.def("distance_bins", &spatialhash::python::distance_bins, py::arg("distances"),
             py::arg("thresholds"), py::arg("weights") = py::none(),
             "(bins, ties): distances binned by ascending thresholds (count_neighbors).");

  spatialhash::python::bind_index(module);
}
