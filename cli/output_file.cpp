// Temporary-then-rename output and spill files (see output_file.hpp).
#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "errors.hpp"

namespace spatialhash::cli {

namespace {

constexpr std::size_t kBuffer = std::size_t{1} << 20;

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// The contents of symbolic link `path`; empty if it cannot be read.
std::string read_link(const std::string& path) {
  std::vector<char> buffer(256);
  while (true) {
    const ssize_t n = ::readlink(path.c_str(), buffer.data(), buffer.size());
    if (n < 0) return "";
    if (static_cast<std::size_t>(n) < buffer.size()) return std::string(buffer.data(), n);
    buffer.resize(buffer.size() * 2);
  }
}

/// The file `path` finally names through symbolic links, so that the temporary is renamed onto
/// it and the links stay; `path` itself when it is no link. A dangling link leads to the missing
/// file at the end of its chain, which the rename creates (as a shell's `>` would).
std::string final_target(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return path;
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    std::string target(real);
    std::free(real);
    return target;
  }
  std::string current = path;
  for (int hop = 0; hop < 40; ++hop) {  // 40: Linux's own limit on links in one lookup
    if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return current;
    const std::string link = read_link(current);
    if (link.empty()) return current;
    current = link.front() == '/' ? link : directory_of(current) + "/" + link;
  }
  throw OutputError("cannot write '" + path + "': " + std::strerror(ELOOP));
}

std::string temp_directory() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

UsageError not_seekable(const std::string& path) {
  return UsageError("-o '" + path +
                    "' is a pipe or terminal, which cannot go back to complete the header of a "
                    ".npy or .npz output; write it to a regular file (or .csv/.tsv to a pipe)");
}

/// Opens a new file "<directory>/.<base>.<tag>-<pid>-<k>" exclusively; returns fd and path.
std::pair<int, std::string> create_unique(const std::string& directory, const std::string& base,
                                          const char* tag, const std::string& target) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::string path = directory + "/." + base + "." + tag + "-" +
                             std::to_string(::getpid()) + "-" + std::to_string(attempt);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return {fd, path};
    if (errno != EEXIST) {
      throw OutputError("cannot create '" + target + "': " + std::strerror(errno) +
                        " (while creating a temporary file in '" + directory + "')");
    }
  }
  throw OutputError("cannot create a temporary file for '" + target + "' in '" + directory + "'");
}

void write_all(int fd, const char* data, std::size_t size, const std::string& name) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw OutputError("cannot write '" + name + "': " + std::strerror(errno));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace

OutputFile::OutputFile(const std::string& path, bool seekable) : name_(path), buffer_(kBuffer) {
  if (path.empty() || path == "-") {
    name_ = "<stdout>";
    fd_ = 1;
    return;
  }
  struct stat info {};
  const bool exists = ::stat(path.c_str(), &info) == 0;  // follows links
  if (exists && S_ISDIR(info.st_mode)) {
    throw OutputError("cannot write '" + path + "': it is a directory");
  }
  if (exists && !S_ISREG(info.st_mode)) {
    // A FIFO or device: renaming a file over it would replace it (and a FIFO's reader would get
    // nothing), so it is written in place; a failed run cannot take back what it wrote there.
    // Checked before open(), which waits for a FIFO's reader.
    if (seekable && (S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode))) throw not_seekable(path);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) throw OutputError("cannot write '" + path + "': " + std::strerror(errno));
    if (seekable && ::lseek(fd, 0, SEEK_CUR) < 0) {
      ::close(fd);
      throw not_seekable(path);
    }
    fd_ = fd;
    directory_ = temp_directory();
    return;
  }
  target_ = final_target(path);
  directory_ = directory_of(target_);
  auto [fd, temp] = create_unique(directory_, base_of(target_), "tmp", path);
  fd_ = fd;
  temp_ = temp;
}

OutputFile::~OutputFile() {
  if (fd_ > 1) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void OutputFile::flush() {
  if (used_ == 0) return;
  const std::size_t n = used_;
  used_ = 0;
  write_all(fd_, buffer_.data(), n, name_);
}

void OutputFile::write(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  position_ += size;
  if (used_ + size <= buffer_.size()) {
    std::memcpy(buffer_.data() + used_, bytes, size);
    used_ += size;
    return;
  }
  flush();
  if (size >= buffer_.size()) {
    write_all(fd_, bytes, size, name_);
  } else {
    std::memcpy(buffer_.data(), bytes, size);
    used_ = size;
  }
}

void OutputFile::write_at(std::uint64_t offset, std::string_view bytes) {
  flush();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw OutputError("cannot write '" + name_ + "': " + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
}

void OutputFile::commit() {
  flush();
  if (fd_ == 1) {
    committed_ = true;
    return;
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw OutputError("cannot write '" + name_ + "': " + std::strerror(errno));
  if (!temp_.empty() && ::rename(temp_.c_str(), target_.c_str()) != 0) {
    throw OutputError("cannot create '" + name_ + "': " + std::strerror(errno));
  }
  committed_ = true;
}

SpillFile::SpillFile(const std::string& directory, const std::string& output_name)
    : output_name_(output_name) {
  auto [fd, path] = create_unique(directory, base_of(output_name), "spill", output_name);
  ::close(fd);
  fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  const int error = errno;
  ::unlink(path.c_str());
  if (fd_ < 0)
    throw OutputError("cannot create a scratch file: " + std::string(std::strerror(error)));
  buffer_.reserve(kBuffer);
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SpillFile::write(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  if (buffer_.size() + size > kBuffer) flush();
  if (size >= kBuffer) {
    write_all(fd_, bytes, size, output_name_ + " (scratch file)");
  } else {
    buffer_.insert(buffer_.end(), bytes, bytes + size);
  }
  size_ += size;
}

void SpillFile::flush() {
  write_all(fd_, buffer_.data(), buffer_.size(), output_name_ + " (scratch file)");
  buffer_.clear();
}

std::size_t SpillFile::read_block(std::uint64_t offset, std::vector<char>& block) {
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), size_ - offset));
  std::size_t done = 0;
  while (done < want) {
    const ssize_t n =
        ::pread(fd_, block.data() + done, want - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw OutputError("cannot read back the scratch file of '" + output_name_ +
                        "': " + (n < 0 ? std::strerror(errno) : "unexpected end"));
    }
    done += static_cast<std::size_t>(n);
  }
  return want;
}

}  // namespace spatialhash::cli
