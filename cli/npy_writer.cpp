// File sink of the streaming .npy writer (see npy_writer.hpp).
#include "npy_writer.hpp"

namespace spatialhash::cli {

void FileArraySink::begin(std::size_t header_size) {
  header_offset_ = out_.position();
  const std::string placeholder(header_size, ' ');
  out_.write(placeholder);
}

}  // namespace spatialhash::cli
