// OutputFile: where a command's result goes. A file is written under a temporary name beside the
// target and renamed over it only by commit(), so a failed or interrupted run never leaves a file
// that looks complete. A symbolic link is written through (the temporary goes beside its final
// target, and the link stays); a FIFO or device is written directly, since renaming over it would
// replace it. SpillFile: scratch space for a second array that streams alongside the first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spatialhash::cli {

/// A buffered output: a file (through a temporary), a FIFO or device (directly), or standard
/// output ("-" or empty path). Every failure throws OutputError naming the file and the reason.
class OutputFile {
 public:
  /// Creates the temporary file (or opens the FIFO or device, which waits for a FIFO's reader)
  /// now, so an unwritable destination fails before any work. `seekable`: the caller will use
  /// write_at(), so a destination that cannot seek (a FIFO, a terminal) is refused with a
  /// UsageError.
  explicit OutputFile(const std::string& path, bool seekable = false);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~OutputFile();

  /// The target path, or "<stdout>".
  const std::string& name() const { return name_; }
  bool is_stdout() const { return fd_ == 1; }
  /// A directory for spill files: the target's (a link's final target's), or the temporary
  /// directory for a FIFO or device.
  const std::string& directory() const { return directory_; }

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

  std::string target_;     ///< where the temporary is renamed to: path, or a link's final target
  std::string name_;       ///< the path as given, for messages
  std::string directory_;  ///< see directory()
  std::string temp_;       ///< empty when writing directly (standard output, FIFO, device)
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
