// BlockReader: the one way the input readers touch a file. It reads in large blocks, so parsing
// streams: memory stays at one block (plus the longest line) whatever the file size.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "progress.hpp"

namespace spatialhash::cli {

/// Sequential reader of a file or of standard input ("-"). Parsers look at available() and
/// consume() what they used, or pull lines with next_line(). Throws InputError on read errors.
class BlockReader {
 public:
  /// Opens `path` ("-" is standard input) and reports progress in bytes to `progress`.
  BlockReader(const std::string& path, Progress& progress);

  /// The name used in messages: the path, or "<stdin>".
  const std::string& name() const { return name_; }
  /// Size of a regular file in bytes; 0 when unknown (a pipe).
  std::uint64_t size() const { return size_; }
  /// Bytes consumed since the start of the input.
  std::uint64_t offset() const { return consumed_; }

  /// The bytes read and not yet consumed.
  std::string_view available() const { return {buffer_.data() + begin_, end_ - begin_}; }
  /// Reads until at least `n` bytes are available; false if the input ends first.
  bool request(std::size_t n);
  /// Drops the first `n` available bytes.
  void consume(std::size_t n) {
    begin_ += n;
    consumed_ += n;
  }
  /// Copies the next `n` bytes to `destination` (large copies bypass the buffer); returns the
  /// number copied, less than `n` only at the end of the input.
  std::size_t read(char* destination, std::size_t n);

  /// The next line without its "\n" or "\r\n"; false at the end of the input. The view stays
  /// valid until the next call on this reader. Throws InputError for a line over 64 MiB.
  bool next_line(std::string_view& line);
  /// 1-based number of the line last returned by next_line().
  std::uint64_t line_number() const { return line_number_; }

 private:
  struct Closer {
    void operator()(std::FILE* f) const;
  };
  /// Reads more input into the buffer, growing it to `min_capacity`; false at end of input.
  bool fill(std::size_t min_capacity);

  std::string name_;
  std::unique_ptr<std::FILE, Closer> file_;
  Progress& progress_;
  std::uint64_t size_ = 0;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;    ///< first unconsumed byte
  std::size_t end_ = 0;      ///< one past the last byte read
  std::size_t scanned_ = 0;  ///< bytes after begin_ already known to hold no newline
  bool eof_ = false;
  std::uint64_t consumed_ = 0;
  std::uint64_t read_total_ = 0;
  std::uint64_t line_number_ = 0;
};

}  // namespace spatialhash::cli
