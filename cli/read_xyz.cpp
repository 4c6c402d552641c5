// XYZ reader: the molecular layout (count, comment, "element x y z" rows), one frame.
#include <algorithm>

#include "errors.hpp"
#include "read_text.hpp"
#include "text_rows.hpp"

namespace spatialhash::cli {

namespace {

/// The atom count if `line` is nothing but a non-negative integer (the first line of a molecular
/// XYZ file); -1 otherwise.
long long atom_count(std::string_view line) {
  const auto fields = split_fields(line, 0);
  if (fields.size() != 1 || fields[0].size() > 12) return -1;
  long long count = 0;
  for (char c : fields[0]) {
    if (c < '0' || c > '9') return -1;
    count = count * 10 + (c - '0');
  }
  return count;
}

/// The first line of the input without its line end ("\n" or "\r\n"), read ahead (not consumed).
std::string_view first_line(BlockReader& reader) {
  reader.request(4096);
  std::string_view line = reader.available();
  line = line.substr(0, std::min(line.find('\n'), line.size()));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

template <class T>
std::vector<T> parse_frame(BlockReader& reader, const TextLayout& layout) {
  std::vector<T> coords;
  const std::uint64_t rows = parse_text_rows(reader, layout, {}, false, coords);
  if (rows < layout.max_rows) {
    throw InputError(reader.name() + ": the file ends after " + std::to_string(rows) + " of the " +
                     std::to_string(layout.max_rows) + " atoms its first line announces");
  }
  return coords;
}

}  // namespace

PointSet read_xyz(BlockReader& reader, const InputSpec& spec) {
  skip_utf8_bom(reader);
  const long long count = atom_count(first_line(reader));
  if (count < 0) {
    PointSet points = read_text(reader, spec, ' ');
    points.description += " [XYZ read as plain columns: no atom count on line 1]";
    return points;
  }
  if (!spec.columns.empty()) {
    throw UsageError("--columns does not apply to a molecular XYZ file such as '" + reader.name() +
                     "' (its columns are element, x, y, z)");
  }
  std::string_view line;
  reader.next_line(line);  // the atom count
  if (!reader.next_line(line) && count > 0) {
    throw InputError(reader.name() + ": the file ends after the atom count (no comment line)");
  }
  TextLayout layout;
  layout.delimiter = 0;
  const int dim = spec.dim != 0 ? spec.dim : 3;
  const char* names[] = {"x", "y", "z"};
  for (int k = 0; k < dim; ++k) {
    layout.fields.push_back(k + 1);
    layout.labels.push_back("column " + std::to_string(k + 2) + " (" + names[k] + ")");
  }
  layout.max_rows = static_cast<std::uint64_t>(count);

  PointSet points;
  points.dim = dim;
  if (spec.precision == Precision::single) {
    points.coords = parse_frame<float>(reader, layout);
  } else {
    points.coords = parse_frame<double>(reader, layout);
  }
  points.description = reader.name() + " (XYZ, " + std::to_string(count) + " atoms)";
  while (reader.next_line(line)) {
    if (!is_blank_or_comment(line)) {
      points.notes.push_back("only the first frame (" + std::to_string(count) + " atoms) of '" +
                             reader.name() + "' was read; more data follows at line " +
                             std::to_string(reader.line_number()));
      break;
    }
  }
  return points;
}

}  // namespace spatialhash::cli
