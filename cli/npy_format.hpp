// The .npy array format (NumPy's NEP 1): header parsing for the reader, header making for the
// writers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_reader.hpp"

namespace spatialhash::cli {

/// The header fields of a .npy file that matter here.
struct NpyHeader {
  std::string descr;  ///< dtype string, e.g. "<f8"
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
};

/// Reads and parses the header at the reader's position, leaving it at the first data byte.
/// Throws InputError for anything that is not a valid .npy header.
NpyHeader read_npy_header(BlockReader& reader);

/// "(1000, 3)" - the shape as NumPy prints it.
std::string shape_text(const std::vector<std::uint64_t>& shape);

/// Fixed size of the headers written by make_npy_header (a multiple of 64, as NumPy prefers).
inline constexpr std::size_t kNpyHeaderSize = 128;

/// A version 1.0 header of exactly kNpyHeaderSize bytes (padded with spaces). Any shape fits, so
/// a streaming writer can write it with a placeholder shape and overwrite it in place at the end.
std::string make_npy_header(const std::string& descr, const std::vector<std::uint64_t>& shape);

}  // namespace spatialhash::cli
