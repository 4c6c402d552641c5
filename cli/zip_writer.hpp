// ZipWriter: the container of .npz files - a zip archive of stored (uncompressed) entries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "output_file.hpp"

namespace spatialhash::cli {

/// Writes a zip archive of stored entries, one after another, into an OutputFile. Entries may
/// exceed 4 GiB: every local header carries a ZIP64 size field, and the central directory uses
/// ZIP64 records where a size or offset needs them (NumPy's zipfile reads both).
class ZipWriter {
 public:
  explicit ZipWriter(OutputFile& out) : out_(out) {}

  /// Starts an entry. Its first `deferred` bytes are reserved now (written as zeros) and
  /// supplied by end_entry(): an .npy header whose shape is known only at the end.
  void begin_entry(const std::string& name, std::size_t deferred);
  void write(const void* data, std::size_t size);
  /// Completes the entry: fills the reserved bytes and the local header's CRC and sizes.
  void end_entry(std::string_view deferred_bytes);
  /// Writes the central directory; call once, after the last entry.
  void finish();

 private:
  struct Entry {
    std::string name;
    std::uint64_t header_offset = 0;
    std::uint64_t size = 0;
    std::uint32_t crc = 0;
  };

  OutputFile& out_;
  std::vector<Entry> entries_;
  Entry current_;
  std::size_t deferred_ = 0;
  std::uint32_t tail_crc_ = 0;  ///< CRC of the entry's bytes after the deferred ones
};

}  // namespace spatialhash::cli
