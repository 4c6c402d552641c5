// PLY headers: the element and property declarations that say how to read a PLY body.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "block_reader.hpp"

namespace spatialhash::cli::ply {

/// Scalar types of PLY properties (each has two names: "float" and "float32", ...).
enum class PlyType { int8, uint8, int16, uint16, int32, uint32, float32, float64 };
/// How the body is stored.
enum class Encoding { ascii, little, big };

/// Bytes of a scalar of type `t`.
std::size_t size_of(PlyType t);

/// One property of an element; a list property has a count type and an item type.
struct Property {
  std::string name;
  std::string declaration;  ///< as written in the header, for messages
  bool is_list = false;
  PlyType type = PlyType::float32;  ///< the scalar type, or the item type of a list
  PlyType count_type = PlyType::uint8;
};

/// An element ("vertex", "face", ...): `count` records of `properties`.
struct Element {
  std::string name;
  std::uint64_t count = 0;
  std::vector<Property> properties;

  /// Bytes per record in binary files, if no property is a list.
  std::optional<std::size_t> fixed_size() const {
    std::size_t size = 0;
    for (const auto& p : properties) {
      if (p.is_list) return std::nullopt;
      size += size_of(p.type);
    }
    return size;
  }
  /// "float x, float y, uchar red": the declarations, for messages.
  std::string property_list() const {
    std::string out;
    for (const auto& p : properties) out += (out.empty() ? "" : ", ") + p.declaration;
    return out.empty() ? "none" : out;
  }
};

/// What a PLY header declares: the encoding and the elements, in file order.
struct Header {
  Encoding encoding = Encoding::ascii;
  std::vector<Element> elements;
};

/// Reads the header at the start of `reader` (through "end_header"), leaving the reader at the
/// first byte of the body. Throws InputError naming the line of anything it cannot read.
Header read_header(BlockReader& reader);

}  // namespace spatialhash::cli::ply
