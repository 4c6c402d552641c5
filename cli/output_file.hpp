// OutputFile: where a command's result goes. A file is written under a temporary name beside the
// target and renamed over it only by commit(), so a failed or interrupted run never leaves a file
// that looks complete. SpillFile: scratch space for a second array that streams alongside the
// first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spatialhash::cli {

/// A buffered output: a file (through a temporary) or standard output ("-" or empty path).
/// Every failure throws OutputError naming the file and the reason.
class OutputFile {
 public:
  /// Creates the temporary file now, so an unwritable destination fails before any work.
  explicit OutputFile(const std::string& path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~OutputFile();

  /// The target path, or "<stdout>".
  const std::string& name() const { return name_; }
  bool is_stdout() const { return fd_ == 1; }
  /// The directory the target lives in (for spill files).
  std::string directory() const;

  void write(const void* data, std::size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  /// Bytes written so far.
  std::uint64_t position() const { return position_; }
  /// Overwrites bytes already written (a header fixed up at the end). Not for standard output.
  void write_at(std::uint64_t offset, std::string_view bytes);
  /// Flushes, closes and renames the temporary file onto the target.
  void commit();

 private:
  void flush();

  std::string path_;
  std::string name_;
  std::string temp_;
  int fd_ = -1;
  std::vector<char> buffer_;
  std::size_t used_ = 0;
  std::uint64_t position_ = 0;
  bool committed_ = false;
};

/// An anonymous scratch file in `directory` (unlinked at once, so it never outlives the process)
/// that collects bytes to copy into the output later.
class SpillFile {
 public:
  SpillFile(const std::string& directory, const std::string& output_name);
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;
  ~SpillFile();

  void write(const void* data, std::size_t size);
  std::uint64_t size() const { return size_; }
  /// Hands the collected bytes, in order, to `sink` in blocks.
  template <class Sink>
  void replay(Sink&& sink) {
    flush();
    std::vector<char> block(kBlock);
    for (std::uint64_t offset = 0; offset < size_;) {
      const std::size_t n = read_block(offset, block);
      sink(block.data(), n);
      offset += n;
    }
  }

 private:
  static constexpr std::size_t kBlock = std::size_t{1} << 20;
  void flush();
  std::size_t read_block(std::uint64_t offset, std::vector<char>& block);

  std::string output_name_;
  int fd_ = -1;
  std::vector<char> buffer_;
  std::uint64_t size_ = 0;
};

}  // namespace spatialhash::cli
