// PLY header parsing (see ply_header.hpp).
#include "ply_header.hpp"

#include <array>
#include <limits>
#include <string_view>

#include "errors.hpp"
#include "text_format.hpp"
#include "text_rows.hpp"

namespace spatialhash::cli::ply {

namespace {

struct TypeName {
  std::string_view name;
  PlyType type;
};
constexpr std::array<TypeName, 16> kTypeNames{{{"char", PlyType::int8},
                                               {"int8", PlyType::int8},
                                               {"uchar", PlyType::uint8},
                                               {"uint8", PlyType::uint8},
                                               {"short", PlyType::int16},
                                               {"int16", PlyType::int16},
                                               {"ushort", PlyType::uint16},
                                               {"uint16", PlyType::uint16},
                                               {"int", PlyType::int32},
                                               {"int32", PlyType::int32},
                                               {"uint", PlyType::uint32},
                                               {"uint32", PlyType::uint32},
                                               {"float", PlyType::float32},
                                               {"float32", PlyType::float32},
                                               {"double", PlyType::float64},
                                               {"float64", PlyType::float64}}};

std::optional<PlyType> parse_type(std::string_view name) {
  for (const auto& entry : kTypeNames) {
    if (entry.name == name) return entry.type;
  }
  return std::nullopt;
}

}  // namespace

std::size_t size_of(PlyType t) {
  switch (t) {
    case PlyType::int8:
    case PlyType::uint8:
      return 1;
    case PlyType::int16:
    case PlyType::uint16:
      return 2;
    case PlyType::int32:
    case PlyType::uint32:
    case PlyType::float32:
      return 4;
    case PlyType::float64:
      return 8;
  }
  return 0;
}

Header read_header(BlockReader& reader) {
  constexpr std::uint64_t kMaxHeaderLines = 100000;
  const std::string& file = reader.name();
  const auto fail = [&](const std::string& what) {
    throw InputError(file + ":" + std::to_string(reader.line_number()) + ": " + what);
  };
  std::string_view line;
  if (!reader.next_line(line) || line != "ply") {
    throw InputError("'" + file + "' is not a PLY file (its first line is not \"ply\")");
  }
  Header header;
  bool have_format = false;
  while (true) {
    if (!reader.next_line(line)) {
      throw InputError(file + ": the PLY header ends without \"end_header\"");
    }
    if (reader.line_number() > kMaxHeaderLines) fail("no \"end_header\" in the first lines");
    const auto words = split_fields(line, 0);
    if (words.empty() || words[0] == "comment" || words[0] == "obj_info") continue;
    if (words[0] == "end_header") break;
    if (words[0] == "format") {
      if (words.size() < 2) fail("incomplete format line");
      if (words[1] == "ascii") {
        header.encoding = Encoding::ascii;
      } else if (words[1] == "binary_little_endian") {
        header.encoding = Encoding::little;
      } else if (words[1] == "binary_big_endian") {
        header.encoding = Encoding::big;
      } else {
        fail("unknown PLY format \"" + printable(words[1]) +
             "\" (expected ascii, binary_little_endian or binary_big_endian)");
      }
      have_format = true;
    } else if (words[0] == "element") {
      if (words.size() != 3) fail("expected \"element NAME COUNT\"");
      Element element;
      element.name = words[1];
      std::uint64_t count = 0;
      for (char c : words[2]) {
        if (c < '0' || c > '9' || count > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) {
          fail("bad element count \"" + printable(words[2]) + "\"");
        }
        count = count * 10 + static_cast<std::uint64_t>(c - '0');
      }
      element.count = count;
      header.elements.push_back(std::move(element));
    } else if (words[0] == "property") {
      if (header.elements.empty()) fail("property before any element");
      Property property;
      for (std::size_t w = 1; w < words.size(); ++w) {
        property.declaration += (w > 1 ? " " : "") + printable(words[w]);
      }
      if (words.size() == 5 && words[1] == "list") {
        const auto count_type = parse_type(words[2]), item_type = parse_type(words[3]);
        if (!count_type || !item_type) fail("unknown type in \"" + printable(line) + "\"");
        property.is_list = true;
        property.count_type = *count_type;
        property.type = *item_type;
        property.name = words[4];
      } else if (words.size() == 3) {
        const auto type = parse_type(words[1]);
        if (!type) fail("unknown property type \"" + printable(words[1]) + "\"");
        property.type = *type;
        property.name = words[2];
      } else {
        fail("expected \"property TYPE NAME\" or \"property list COUNT_TYPE ITEM_TYPE NAME\"");
      }
      header.elements.back().properties.push_back(std::move(property));
    } else {
      fail("unexpected header line \"" + printable(line) + "\"");
    }
  }
  if (!have_format) throw InputError(file + ": the PLY header has no format line");
  return header;
}

}  // namespace spatialhash::cli::ply
