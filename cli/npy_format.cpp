// .npy header parsing and making (see npy_format.hpp).
#include "npy_format.hpp"

#include <cstring>

#include "errors.hpp"

namespace spatialhash::cli {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

/// The text after `key` in the header dictionary, with leading blanks skipped; npos if absent.
std::size_t value_of(const std::string& dict, const std::string& key) {
  for (const char quote : {'\'', '"'}) {
    const std::string quoted = quote + key + quote;
    std::size_t at = dict.find(quoted);
    if (at == std::string::npos) continue;
    at = dict.find(':', at + quoted.size());
    if (at == std::string::npos) return at;
    ++at;
    while (at < dict.size() && dict[at] == ' ') ++at;
    return at;
  }
  return std::string::npos;
}

}  // namespace

NpyHeader read_npy_header(BlockReader& reader) {
  const std::string& file = reader.name();
  const auto bad = [&](const std::string& what) -> InputError {
    return InputError("'" + file + "' is not a valid .npy file: " + what);
  };
  if (!reader.request(kMagicSize + 4) ||
      std::memcmp(reader.available().data(), kMagic, kMagicSize) != 0) {
    throw bad("it does not start with the .npy magic string");
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(reader.available().data());
  const int major = bytes[6];
  std::size_t length = 0, prefix = 0;
  if (major == 1) {
    length = bytes[8] | (std::size_t{bytes[9]} << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (!reader.request(12)) throw bad("the header is truncated");
    bytes = reinterpret_cast<const unsigned char*>(reader.available().data());
    length = bytes[8] | (std::size_t{bytes[9]} << 8) | (std::size_t{bytes[10]} << 16) |
             (std::size_t{bytes[11]} << 24);
    prefix = 12;
  } else {
    throw bad("unknown format version " + std::to_string(major));
  }
  if (length > (std::size_t{1} << 24)) throw bad("the header length is implausible");
  if (!reader.request(prefix + length)) throw bad("the header is truncated");
  const std::string dict(reader.available().substr(prefix, length));
  reader.consume(prefix + length);

  NpyHeader header;
  std::size_t at = value_of(dict, "descr");
  if (at == std::string::npos) throw bad("the header has no 'descr'");
  if (dict[at] == '[') {
    throw InputError("'" + file +
                     "' holds a structured dtype; spatialhash reads plain float32 or float64 "
                     "arrays of shape (n, 2) or (n, 3)");
  }
  const char quote = dict[at];
  const std::size_t end = dict.find(quote, at + 1);
  if ((quote != '\'' && quote != '"') || end == std::string::npos) throw bad("bad 'descr'");
  header.descr = dict.substr(at + 1, end - at - 1);

  at = value_of(dict, "fortran_order");
  if (at == std::string::npos) throw bad("the header has no 'fortran_order'");
  header.fortran_order = dict.compare(at, 4, "True") == 0;

  at = value_of(dict, "shape");
  if (at == std::string::npos || dict[at] != '(') throw bad("the header has no 'shape'");
  const std::size_t close = dict.find(')', at);
  if (close == std::string::npos) throw bad("bad 'shape'");
  std::uint64_t value = 0;
  bool digits = false;
  for (std::size_t i = at + 1; i <= close; ++i) {
    const char c = dict[i];
    if (c >= '0' && c <= '9') {
      if (value > (~std::uint64_t{0} - 9) / 10) throw bad("a dimension overflows");
      value = value * 10 + static_cast<std::uint64_t>(c - '0');
      digits = true;
    } else if (c == ',' || c == ')') {
      if (digits) header.shape.push_back(value);
      value = 0;
      digits = false;
    } else if (c != ' ' && c != 'L') {
      throw bad("bad 'shape'");
    }
  }
  return header;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  }
  return out + (shape.size() == 1 ? ",)" : ")");
}

std::string make_npy_header(const std::string& descr, const std::vector<std::uint64_t>& shape) {
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  const std::size_t dict_size = kNpyHeaderSize - 10;
  dict.resize(dict_size - 1, ' ');
  dict += '\n';
  std::string header(kMagic, kMagicSize);
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dict_size & 0xff);
  header += static_cast<char>(dict_size >> 8);
  return header + dict;
}

}  // namespace spatialhash::cli
