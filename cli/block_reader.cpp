// Block-wise input (see block_reader.hpp).
#include "block_reader.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "errors.hpp"

namespace spatialhash::cli {

namespace {
constexpr std::size_t kBlock = std::size_t{4} << 20;
constexpr std::size_t kMaxLine = std::size_t{64} << 20;
}  // namespace

void BlockReader::Closer::operator()(std::FILE* f) const {
  if (f != stdin) std::fclose(f);
}

BlockReader::BlockReader(const std::string& path, Progress& progress) : progress_(progress) {
  if (path == "-") {
    name_ = "<stdin>";
    file_.reset(stdin);
  } else {
    name_ = path;
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
      throw InputError("cannot open '" + path + "': " + std::strerror(errno));
    }
    if (S_ISDIR(info.st_mode)) throw InputError("cannot read '" + path + "': it is a directory");
    if (S_ISREG(info.st_mode)) size_ = static_cast<std::uint64_t>(info.st_size);
    file_.reset(std::fopen(path.c_str(), "rb"));
    if (!file_) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
  }
  buffer_.resize(kBlock);
}

bool BlockReader::fill(std::size_t min_capacity) {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (buffer_.size() < min_capacity) buffer_.resize(min_capacity);
  const std::size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_.get());
  if (got == 0) {
    if (std::ferror(file_.get())) {
      throw InputError("cannot read '" + name_ + "': " + std::strerror(errno));
    }
    eof_ = true;
    return false;
  }
  end_ += got;
  read_total_ += got;
  progress_.update(read_total_);
  return true;
}

bool BlockReader::request(std::size_t n) {
  while (end_ - begin_ < n) {
    if (!fill(std::max(buffer_.size(), n))) return false;
  }
  return true;
}

std::size_t BlockReader::read(char* destination, std::size_t n) {
  std::size_t copied = std::min(n, end_ - begin_);
  std::memcpy(destination, buffer_.data() + begin_, copied);
  consume(copied);
  while (copied < n && !eof_) {
    const std::size_t got = std::fread(destination + copied, 1, n - copied, file_.get());
    if (got == 0) {
      if (std::ferror(file_.get())) {
        throw InputError("cannot read '" + name_ + "': " + std::strerror(errno));
      }
      eof_ = true;
    }
    copied += got;
    consumed_ += got;
    read_total_ += got;
    progress_.update(read_total_);
  }
  return copied;
}

bool BlockReader::next_line(std::string_view& line) {
  while (true) {
    const char* start = buffer_.data() + begin_;
    const std::size_t length = end_ - begin_;
    const void* newline = std::memchr(start + scanned_, '\n', length - scanned_);
    if (newline != nullptr) {
      std::size_t size = static_cast<const char*>(newline) - start;
      const std::size_t used = size + 1;
      if (size > 0 && start[size - 1] == '\r') --size;
      line = std::string_view(start, size);
      consume(used);
      scanned_ = 0;
      ++line_number_;
      return true;
    }
    scanned_ = length;
    if (length >= kMaxLine) {
      throw InputError(name_ + ":" + std::to_string(line_number_ + 1) +
                       ": line is longer than 64 MiB (is this a text file?)");
    }
    // Grow only when the buffer is full of one partial line.
    const std::size_t capacity =
        begin_ == 0 && end_ == buffer_.size() ? buffer_.size() * 2 : buffer_.size();
    if (!fill(capacity)) {
      if (length == 0) return false;
      const char* rest = buffer_.data() + begin_;  // fill() may have moved the data
      std::size_t size = length;
      if (rest[size - 1] == '\r') --size;
      line = std::string_view(rest, size);
      consume(length);
      scanned_ = 0;
      ++line_number_;
      return true;
    }
  }
}

}  // namespace spatialhash::cli
