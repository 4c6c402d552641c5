// The extension type spatialhash._core.Index: owns an AnyIndex and the NumPy array it borrows.
#pragma once

#include <pybind11/pybind11.h>

namespace spatialhash::python {

/// Adds class `Index` to the extension module.
void bind_index(pybind11::module_& module);

}  // namespace spatialhash::python
