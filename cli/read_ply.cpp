// PLY reader: after the header (ply_header.hpp), a fixed-stride fast path for binary vertices, a
// per-record walk for records with list properties, and a token walk for ascii.
#include "read_ply.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "errors.hpp"
#include "parse_number.hpp"
#include "ply_header.hpp"
#include "text_format.hpp"
#include "text_rows.hpp"

namespace spatialhash::cli {

namespace {

using ply::Element;
using ply::Encoding;
using ply::Header;
using ply::PlyType;
using ply::Property;
using ply::size_of;

/// Raw bytes of a scalar in file order -> value, honouring the file's byte order.
template <class U>
U load(const char* p, bool big) {
  U value;
  std::memcpy(&value, p, sizeof(U));
  if (big != (std::endian::native == std::endian::big)) {
    if constexpr (sizeof(U) == 2) {
      std::uint16_t bits = std::bit_cast<std::uint16_t>(value);
      value = std::bit_cast<U>(static_cast<std::uint16_t>(__builtin_bswap16(bits)));
    } else if constexpr (sizeof(U) == 4) {
      value = std::bit_cast<U>(__builtin_bswap32(std::bit_cast<std::uint32_t>(value)));
    } else if constexpr (sizeof(U) == 8) {
      value = std::bit_cast<U>(__builtin_bswap64(std::bit_cast<std::uint64_t>(value)));
    }
  }
  return value;
}

/// A list count (any integer type) as an unsigned number; nullopt if negative.
std::optional<std::uint64_t> load_count(const char* p, PlyType t, bool big) {
  std::int64_t value = 0;
  switch (t) {
    case PlyType::int8:
      value = load<std::int8_t>(p, big);
      break;
    case PlyType::uint8:
      value = load<std::uint8_t>(p, big);
      break;
    case PlyType::int16:
      value = load<std::int16_t>(p, big);
      break;
    case PlyType::uint16:
      value = load<std::uint16_t>(p, big);
      break;
    case PlyType::int32:
      value = load<std::int32_t>(p, big);
      break;
    case PlyType::uint32:
      value = load<std::uint32_t>(p, big);
      break;
    case PlyType::float32:
    case PlyType::float64:
      return std::nullopt;
  }
  if (value < 0) return std::nullopt;
  return static_cast<std::uint64_t>(value);
}

/// Reads the element records of a PLY body, one element after another.
template <class T>
class BodyReader {
 public:
  BodyReader(BlockReader& reader, const Header& header)
      : reader_(reader), header_(header), big_(header.encoding == Encoding::big) {}

  /// Skips all records of `element`.
  void skip(const Element& element) {
    if (header_.encoding == Encoding::ascii) {
      for (std::uint64_t i = 0; i < element.count; ++i) next_ascii_line(element, i);
      return;
    }
    if (const auto size = element.fixed_size()) {
      skip_fixed(element, *size);
      return;
    }
    for (std::uint64_t i = 0; i < element.count; ++i) walk_record(element, i, nullptr);
  }

  /// Reads the coordinates `fields` (property indices) of every vertex into `out`.
  void read_vertices(const Element& element, const std::vector<int>& fields, std::vector<T>& out) {
    fields_ = fields;
    out.reserve(reservation(element));
    if (header_.encoding == Encoding::ascii) {
      for (std::uint64_t i = 0; i < element.count; ++i) ascii_vertex(element, i, out);
      return;
    }
    const auto size = element.fixed_size();
    if (!size) {
      std::array<T, 3> row{};
      for (std::uint64_t i = 0; i < element.count; ++i) {
        walk_record(element, i, row.data());
        out.insert(out.end(), row.begin(), row.begin() + fields.size());
      }
      return;
    }
    // Byte offset of each coordinate within a record (fields are in x, y, z order, which need
    // not be the property order).
    std::vector<std::size_t> offsets;
    for (int field : fields) {
      std::size_t at = 0;
      for (int p = 0; p < field; ++p) at += size_of(element.properties[p].type);
      offsets.push_back(at);
    }
    const std::size_t per_chunk = std::max<std::size_t>(1, kChunk / *size);
    std::uint64_t done = 0;
    while (done < element.count) {
      std::size_t want =
          static_cast<std::size_t>(std::min<std::uint64_t>(element.count - done, per_chunk));
      if (!reader_.request(want * *size)) {
        want = reader_.available().size() / *size;
        if (want == 0) truncated(element, done);
      }
      const char* base = reader_.available().data();
      for (std::size_t r = 0; r < want; ++r) {
        for (std::size_t k = 0; k < fields.size(); ++k) {
          const Property& property = element.properties[fields[k]];
          out.push_back(decode(base + r * *size + offsets[k], property, done + r));
        }
      }
      reader_.consume(want * *size);
      done += want;
    }
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 20;

  /// Records reserved up front when the input size is unknown (a pipe): the header's count is
  /// only a claim, so the vector grows as records arrive beyond this.
  static constexpr std::uint64_t kUnknownSizeRecords = std::uint64_t{1} << 12;

  /// Skips `element.count` binary records of `size` bytes each.
  void skip_fixed(const Element& element, std::size_t size) {
    // count * size may overflow (a hostile count): saturate. No input holds 2^64 bytes, so the
    // skip then ends with a truncation error naming the records present.
    std::uint64_t total = 0;
    if (__builtin_mul_overflow(element.count, std::uint64_t{size}, &total)) {
      total = std::numeric_limits<std::uint64_t>::max();
    }
    for (std::uint64_t skipped = 0; skipped < total;) {
      const std::size_t step =
          static_cast<std::size_t>(std::min<std::uint64_t>(total - skipped, kChunk));
      if (!reader_.request(step)) truncated(element, (skipped + reader_.available().size()) / size);
      reader_.consume(step);
      skipped += step;
    }
  }

  std::size_t reservation(const Element& element) const {
    std::uint64_t count = std::min(element.count, kUnknownSizeRecords);
    if (reader_.size() > 0) {
      // Never reserve for more records than the rest of the file can hold (an ascii record
      // takes at least one character and a separator per property).
      const std::uint64_t left = reader_.size() - std::min(reader_.size(), reader_.offset());
      const std::size_t min_record = header_.encoding == Encoding::ascii
                                         ? 2 * element.properties.size()
                                         : element.fixed_size().value_or(1);
      count = std::min(element.count, left / std::max<std::size_t>(min_record, 1));
    }
    return static_cast<std::size_t>(std::min<std::uint64_t>(count, std::uint64_t{1} << 32)) *
           fields_.size();
  }

  [[noreturn]] void truncated(const Element& element, std::uint64_t done) const {
    throw InputError(reader_.name() + ": the file ends after " + std::to_string(done) + " of " +
                     std::to_string(element.count) + " \"" + element.name + "\" records");
  }

  T decode(const char* p, const Property& property, std::uint64_t vertex) const {
    double value = property.type == PlyType::float32 ? static_cast<double>(load<float>(p, big_))
                                                     : load<double>(p, big_);
    return checked(value, property, vertex);
  }

  T checked(double value, const Property& property, std::uint64_t vertex) const {
    const T narrowed = static_cast<T>(value);
    if (!std::isfinite(value) || !std::isfinite(narrowed)) {
      const std::string what = std::isnan(value)   ? "is NaN"
                               : std::isinf(value) ? "is infinite"
                                                   : "(" + std::to_string(value) +
                                                         ") is out of range for float (try "
                                                         "--precision double)";
      throw InputError(reader_.name() + ": vertex " + std::to_string(vertex) + ": " +
                       property.name + " " + what + "; coordinates must be finite");
    }
    return narrowed;
  }

  /// Walks one binary record with list properties; stores the coordinates in `row` if given.
  void walk_record(const Element& element, std::uint64_t index, T* row) {
    for (std::size_t p = 0; p < element.properties.size(); ++p) {
      const Property& property = element.properties[p];
      std::uint64_t items = 1;
      if (property.is_list) {
        const std::size_t count_size = size_of(property.count_type);
        if (!reader_.request(count_size)) truncated(element, index);
        const auto count = load_count(reader_.available().data(), property.count_type, big_);
        if (!count) {
          throw InputError(reader_.name() + ": record " + std::to_string(index) + " of \"" +
                           element.name + "\" has a bad list length for " + property.name);
        }
        reader_.consume(count_size);
        items = *count;
      }
      const std::uint64_t bytes = items * size_of(property.type);
      if (row != nullptr && !property.is_list) {
        for (std::size_t k = 0; k < fields_.size(); ++k) {
          if (fields_[k] == static_cast<int>(p)) {
            if (!reader_.request(bytes)) truncated(element, index);
            row[k] = decode(reader_.available().data(), property, index);
          }
        }
      }
      for (std::uint64_t left = bytes; left > 0;) {
        const std::size_t step = static_cast<std::size_t>(std::min<std::uint64_t>(left, kChunk));
        if (!reader_.request(step)) truncated(element, index);
        reader_.consume(step);
        left -= step;
      }
    }
  }

  std::string_view next_ascii_line(const Element& element, std::uint64_t index) {
    std::string_view line;
    do {
      if (!reader_.next_line(line)) truncated(element, index);
    } while (is_blank_or_comment(line));
    return line;
  }

  void ascii_vertex(const Element& element, std::uint64_t index, std::vector<T>& out) {
    const std::string_view line = next_ascii_line(element, index);
    FieldCursor cursor(line, 0);
    std::array<T, 3> row{};
    std::string_view token;
    std::size_t column = 0;
    const auto where = [&](std::size_t at) {
      return reader_.name() + ":" + std::to_string(reader_.line_number()) + ":" +
             std::to_string(at + 1) + ": vertex " + std::to_string(index) + ": ";
    };
    for (std::size_t p = 0; p < element.properties.size(); ++p) {
      const Property& property = element.properties[p];
      if (!cursor.next(token, column)) {
        throw InputError(where(line.size()) + "the line ends before property " + property.name);
      }
      if (property.is_list) {
        std::uint64_t count = 0;
        for (char c : token) {
          if (c < '0' || c > '9') {
            throw InputError(where(column) + "bad list length \"" + printable(token) + "\"");
          }
          count = count * 10 + static_cast<std::uint64_t>(c - '0');
        }
        for (std::uint64_t i = 0; i < count; ++i) {
          if (!cursor.next(token, column)) {
            throw InputError(where(line.size()) + "the line ends inside list " + property.name);
          }
        }
        continue;
      }
      for (std::size_t k = 0; k < fields_.size(); ++k) {
        if (fields_[k] != static_cast<int>(p)) continue;
        const NumberStatus status = parse_coordinate(token, row[k]);
        if (status != NumberStatus::ok) {
          throw InputError(where(column) + property.name + ": " +
                           describe_number_problem(status, token, std::is_same_v<T, float>));
        }
      }
    }
    out.insert(out.end(), row.begin(), row.begin() + fields_.size());
  }

  BlockReader& reader_;
  const Header& header_;
  bool big_;
  std::vector<int> fields_;
};

constexpr int kAbsent = -1;    ///< no property of that name
constexpr int kUnusable = -2;  ///< a property of that name that is not a float or double scalar

/// The index of the float or double scalar property `name` of `element`, else kAbsent or
/// kUnusable.
int find_coordinate(const Element& element, std::string_view name) {
  int found = kAbsent;
  for (std::size_t p = 0; p < element.properties.size(); ++p) {
    const Property& property = element.properties[p];
    if (property.name != name) continue;
    if (!property.is_list &&
        (property.type == PlyType::float32 || property.type == PlyType::float64)) {
      return static_cast<int>(p);
    }
    found = kUnusable;
  }
  return found;
}

template <class T>
std::vector<T> read_body(BlockReader& reader, const Header& header, std::size_t vertex_element,
                         const std::vector<int>& fields) {
  BodyReader<T> body(reader, header);
  for (std::size_t e = 0; e < vertex_element; ++e) body.skip(header.elements[e]);
  std::vector<T> coords;
  body.read_vertices(header.elements[vertex_element], fields, coords);
  return coords;
}

}  // namespace

PointSet read_ply(BlockReader& reader, const InputSpec& spec) {
  if (!spec.columns.empty()) {
    throw UsageError("--columns applies to CSV/TSV/text input only; '" + reader.name() +
                     "' is a PLY file (its vertex x, y, z are used)");
  }
  const Header header = ply::read_header(reader);
  std::size_t vertex = header.elements.size();
  for (std::size_t e = 0; e < header.elements.size(); ++e) {
    if (header.elements[e].name == "vertex") vertex = e;
  }
  if (vertex == header.elements.size()) {
    std::string names;
    for (const auto& e : header.elements) names += (names.empty() ? "" : ", ") + printable(e.name);
    throw InputError(
        "unsupported PLY file '" + reader.name() +
        "': it has no \"vertex\" element (elements: " + (names.empty() ? "none" : names) + ")");
  }
  const Element& element = header.elements[vertex];
  if (element.count >= std::numeric_limits<std::uint32_t>::max()) {
    throw InputError("'" + reader.name() + "' declares " + std::to_string(element.count) +
                     " vertices, more than spatialhash can index (2^32 - 2)");
  }
  const int x = find_coordinate(element, "x"), y = find_coordinate(element, "y");
  const int z = find_coordinate(element, "z");
  // A z that exists but cannot be read (an int, a list) is refused, not dropped: reading such a
  // file as 2-D would silently lose a dimension. --dim 2 asks for x and y only.
  const int dim = spec.dim != 0 ? spec.dim : (z == kAbsent ? 2 : 3);
  if (x < 0 || y < 0 || (dim == 3 && z < 0)) {
    const bool only_z = x >= 0 && y >= 0 && spec.dim == 0;
    throw InputError(
        "unsupported PLY file '" + reader.name() + "': spatialhash needs vertex " +
        "properties x, y" + (dim == 3 ? ", z" : "") +
        " of type float or double; its vertex properties are: " + element.property_list() +
        (only_z ? " (pass --dim 2 to read x and y only)" : ""));
  }
  std::vector<int> fields = {x, y};
  if (dim == 3) fields.push_back(z);
  const bool file_single = element.properties[x].type == PlyType::float32 &&
                           element.properties[y].type == PlyType::float32 &&
                           (dim == 2 || element.properties[z].type == PlyType::float32);
  const bool single = spec.precision == Precision::single ||
                      (spec.precision == Precision::automatic && file_single);
  PointSet points;
  points.dim = dim;
  if (single) {
    points.coords = read_body<float>(reader, header, vertex, fields);
  } else {
    points.coords = read_body<double>(reader, header, vertex, fields);
  }
  const char* encoding = header.encoding == Encoding::ascii    ? "ascii"
                         : header.encoding == Encoding::little ? "binary little endian"
                                                               : "binary big endian";
  points.description =
      reader.name() + " (PLY " + encoding + ", " + std::to_string(element.count) + " vertices)";
  return points;
}

}  // namespace spatialhash::cli
