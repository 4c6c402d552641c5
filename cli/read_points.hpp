// Reading points: picks the reader for the file's format.
#pragma once

#include <string>

#include "point_set.hpp"
#include "progress.hpp"

namespace spatialhash::cli {

/// Parses a --format value ("auto", "csv", "tsv", "txt", "xyz", "ply", "npy"); throws UsageError.
InputFormat parse_input_format(const std::string& name);

/// Reads the points described by `spec`, showing a progress bar while reading. The format comes
/// from spec.format, else the file extension, else the file's first bytes (text by default).
/// Throws InputError (bad file) or UsageError (options that do not fit the file).
PointSet read_points(const InputSpec& spec, Progress& progress);

}  // namespace spatialhash::cli
