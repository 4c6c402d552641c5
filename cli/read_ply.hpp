// Reader for PLY point files (ascii, binary little and big endian).
#pragma once

#include "block_reader.hpp"
#include "point_set.hpp"

namespace spatialhash::cli {

/// Reads the x, y[, z] properties (float or double) of the "vertex" element; other properties
/// and elements are skipped. Anything else is refused with the file's vertex property list.
PointSet read_ply(BlockReader& reader, const InputSpec& spec);

}  // namespace spatialhash::cli
