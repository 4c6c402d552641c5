// NpyWriter: streams one .npy array whose length is not known in advance, into a plain file or
// into an entry of an .npz archive.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "npy_format.hpp"
#include "output_file.hpp"
#include "zip_writer.hpp"

namespace spatialhash::cli {

/// Where an array's bytes go. The header is reserved first and supplied at the end.
class ArraySink {
 public:
  virtual ~ArraySink() = default;
  virtual void begin(std::size_t header_size) = 0;
  virtual void write(const void* data, std::size_t size) = 0;
  virtual void end(std::string_view header) = 0;
};

/// The array is the whole output file (.npy): the header is patched in place.
class FileArraySink final : public ArraySink {
 public:
  explicit FileArraySink(OutputFile& out) : out_(out) {}
  void begin(std::size_t header_size) override;
  void write(const void* data, std::size_t size) override { out_.write(data, size); }
  void end(std::string_view header) override { out_.write_at(header_offset_, header); }

 private:
  OutputFile& out_;
  std::uint64_t header_offset_ = 0;
};

/// The array is an entry "<name>.npy" of a zip archive (.npz).
class ZipArraySink final : public ArraySink {
 public:
  ZipArraySink(ZipWriter& zip, std::string entry) : zip_(zip), entry_(std::move(entry)) {}
  void begin(std::size_t header_size) override { zip_.begin_entry(entry_, header_size); }
  void write(const void* data, std::size_t size) override { zip_.write(data, size); }
  void end(std::string_view header) override { zip_.end_entry(header); }

 private:
  ZipWriter& zip_;
  std::string entry_;
};

/// The NumPy dtype string of a little-endian V ("<i4", "<f8", ...).
template <class V>
std::string npy_descr() {
  if constexpr (std::is_floating_point_v<V>) return sizeof(V) == 4 ? "<f4" : "<f8";
  if constexpr (std::is_signed_v<V>) return "<i" + std::to_string(sizeof(V));
  return "<u" + std::to_string(sizeof(V));
}

/// Streams rows of `columns` values of type V (columns 0: a 1-D array). The .npy header is
/// written first with a placeholder shape and rewritten by finish() with the true row count;
/// make_npy_header pads every header to the same fixed size, so the rewrite never moves the data.
template <class V>
class NpyWriter {
 public:
  NpyWriter(ArraySink& sink, std::size_t columns) : sink_(sink), columns_(columns) {
    sink_.begin(kNpyHeaderSize);
    buffer_.reserve(kBufferValues);
  }

  void push(V value) {
    buffer_.push_back(value);
    if (buffer_.size() == kBufferValues) flush();
  }
  /// Writes what is buffered and the final header (rows = values pushed / columns).
  void finish() {
    flush();
    const std::uint64_t values = written_;
    std::vector<std::uint64_t> shape = {columns_ == 0 ? values : values / columns_};
    if (columns_ != 0) shape.push_back(columns_);
    sink_.end(make_npy_header(npy_descr<V>(), shape));
  }

 private:
  static constexpr std::size_t kBufferValues = (std::size_t{1} << 20) / sizeof(V);

  void flush() {
    if constexpr (std::endian::native == std::endian::big) {
      for (V& v : buffer_) v = to_little(v);
    }
    sink_.write(buffer_.data(), buffer_.size() * sizeof(V));
    written_ += buffer_.size();
    buffer_.clear();
  }
  static V to_little(V v) {
    unsigned char bytes[sizeof(V)];
    std::memcpy(bytes, &v, sizeof(V));
    for (std::size_t i = 0; i < sizeof(V) / 2; ++i) std::swap(bytes[i], bytes[sizeof(V) - 1 - i]);
    std::memcpy(&v, bytes, sizeof(V));
    return v;
  }

  ArraySink& sink_;
  std::size_t columns_;
  std::vector<V> buffer_;
  std::uint64_t written_ = 0;
};

}  // namespace spatialhash::cli
