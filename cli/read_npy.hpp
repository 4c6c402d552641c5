// Reader for NumPy .npy point arrays.
#pragma once

#include "block_reader.hpp"
#include "point_set.hpp"

namespace spatialhash::cli {

/// Reads a float32 or float64 array of shape (n, 2) or (n, 3), C or Fortran order, either byte
/// order. Anything else is refused with the array's dtype and shape.
PointSet read_npy(BlockReader& reader, const InputSpec& spec);

}  // namespace spatialhash::cli
