// Readers for text point files: CSV, TSV, whitespace-separated columns, and XYZ.
#pragma once

#include "block_reader.hpp"
#include "point_set.hpp"

namespace spatialhash::cli {

/// Reads delimited text. `delimiter` is ',' or '\t' to force one, ' ' for runs of blanks, or 0
/// to detect it from the first data line. A header row is detected (or forced by spec.header);
/// coordinate columns come from spec.columns, else header names x, y, z, else the column count.
/// Blank lines and lines starting with '#' are skipped.
PointSet read_text(BlockReader& reader, const InputSpec& spec, char delimiter);

/// Reads an XYZ file. The molecular layout (atom count, comment line, then "element x y z" rows)
/// is read as one frame, and a note says if more frames follow; a file not starting with an atom
/// count is read as whitespace-separated columns (the point-cloud .xyz convention).
PointSet read_xyz(BlockReader& reader, const InputSpec& spec);

}  // namespace spatialhash::cli
