// CSV / TSV / whitespace text reader: header detection and choice of the coordinate columns.
#include "read_text.hpp"

#include <algorithm>
#include <cctype>

#include "errors.hpp"
#include "parse_number.hpp"
#include "text_format.hpp"
#include "text_rows.hpp"

namespace spatialhash::cli {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

/// ',' if the line has a comma; '\t' if tabs split it into non-empty fields without blanks
/// (tabs used as padding among blanks do not count); otherwise ' ' (runs of blanks).
char detect_delimiter(std::string_view line) {
  if (line.find(',') != std::string_view::npos) return ',';
  if (line.find('\t') != std::string_view::npos) {
    const auto fields = split_fields(line, '\t');
    if (std::none_of(fields.begin(), fields.end(), [](std::string_view f) {
          return f.empty() || f.find(' ') != std::string_view::npos;
        })) {
      return '\t';
    }
  }
  return ' ';
}

bool looks_like_header(const std::vector<std::string_view>& fields) {
  for (std::string_view field : fields) {
    double value = 0.0;
    if (parse_coordinate(field, value) == NumberStatus::not_a_number) return true;
  }
  return false;
}

/// Finds a header name: exact match first, then a unique case-insensitive one; -1 if none.
int find_name(const std::vector<std::string>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  int found = -1;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (lower(header[i]) == lower(name)) {
      if (found >= 0) return -1;
      found = static_cast<int>(i);
    }
  }
  return found;
}

/// The 0-based fields holding the coordinates (see read_text() for the rules).
std::vector<int> choose_columns(const InputSpec& spec, const std::string& file,
                                const std::vector<std::string>& header, std::size_t field_count) {
  std::vector<int> fields;
  if (!spec.columns.empty()) {
    if (spec.columns.size() != 2 && spec.columns.size() != 3) {
      throw UsageError("--columns needs 2 or 3 columns (x,y or x,y,z), got " +
                       std::to_string(spec.columns.size()));
    }
    if (spec.dim != 0 && static_cast<std::size_t>(spec.dim) != spec.columns.size()) {
      throw UsageError("--dim " + std::to_string(spec.dim) + " disagrees with the " +
                       std::to_string(spec.columns.size()) + " columns given to --columns");
    }
    for (const std::string& token : spec.columns) {
      int field = header.empty() ? -1 : find_name(header, token);
      if (field < 0 && all_digits(token)) {
        const long number = token.size() > 9 ? 1000000000L : std::stol(token);
        if (number == 0) throw UsageError("--columns: columns are numbered from 1, not 0");
        field = static_cast<int>(number - 1);
      }
      if (field < 0) {
        if (header.empty()) {
          throw UsageError("--columns: '" + file +
                           "' has no header row, so give columns by number (1, 2, ...), not \"" +
                           token + "\"");
        }
        throw UsageError("--columns: no column \"" + token + "\" in the header of '" + file +
                         "' (columns: " + join(header) + ")");
      }
      if (std::find(fields.begin(), fields.end(), field) != fields.end()) {
        throw UsageError("--columns: column \"" + token + "\" is given twice");
      }
      fields.push_back(field);
    }
    return fields;
  }
  if (!header.empty()) {
    const int x = find_name(header, "x"), y = find_name(header, "y"), z = find_name(header, "z");
    if (x >= 0 && y >= 0) {
      const int dim = spec.dim != 0 ? spec.dim : (z >= 0 ? 3 : 2);
      if (dim == 3 && z < 0) {
        throw UsageError("--dim 3, but the header of '" + file + "' has no z column (columns: " +
                         join(header) + "); pick columns with --columns");
      }
      fields = {x, y};
      if (dim == 3) fields.push_back(z);
      return fields;
    }
  }
  int dim = spec.dim;
  if (dim == 0) {
    if (field_count == 2 || field_count == 3) {
      dim = static_cast<int>(field_count);
    } else {
      throw UsageError("'" + file + "' has " + std::to_string(field_count) + " column" +
                       (field_count == 1 ? "" : "s") +
                       ", so the coordinates are ambiguous: name them with --columns (for "
                       "example --columns 2,3,4, numbered from 1, or header names), or pass "
                       "--dim 2|3 to use the first columns");
    }
  }
  for (int k = 0; k < dim; ++k) fields.push_back(k);
  return fields;
}

/// Without --columns or --dim the coordinates follow from the shape of the table, so every row
/// must have as many fields as its first line (`line`: the header row, or else the first data
/// row); with them, fields after the coordinates are ignored.
void require_equal_rows(TextLayout& layout, const InputSpec& spec, bool header,
                        std::size_t field_count, std::uint64_t line) {
  if (!spec.columns.empty() || spec.dim != 0) return;
  layout.exact_fields = field_count;
  layout.exact_source = std::string(header ? "the header row" : "the first data line") + " (line " +
                        std::to_string(line) + ")";
}

template <class T>
std::vector<T> parse_body(BlockReader& reader, const TextLayout& layout, std::string_view first,
                          bool has_first) {
  std::vector<T> coords;
  parse_text_rows(reader, layout, first, has_first, coords);
  return coords;
}

}  // namespace

PointSet read_text(BlockReader& reader, const InputSpec& spec, char delimiter) {
  const auto next_data_line = [&](std::string& out) {
    std::string_view view;
    while (reader.next_line(view)) {
      if (!is_blank_or_comment(view)) {
        out.assign(view);
        return true;
      }
    }
    return false;
  };
  // The first significant line may be a header; the delimiter is then detected on the first
  // data row (header names may contain blanks), and both must have the same number of fields.
  skip_utf8_bom(reader);  // else "\xEF\xBB\xBF0" would make the first row look like a header
  std::string first, data;
  const bool found = next_data_line(first);
  const std::uint64_t first_line = reader.line_number();
  const char guess = delimiter != 0 ? delimiter : detect_delimiter(first);
  const bool header = found && (spec.header == HeaderMode::present ||
                                (spec.header == HeaderMode::automatic &&
                                 looks_like_header(split_fields(first, guess == ' ' ? 0 : guess))));
  bool has_data = found && !header;
  if (header) {
    has_data = next_data_line(data);
  } else {
    data = first;
  }
  if (delimiter == 0) delimiter = has_data ? detect_delimiter(data) : guess;
  TextLayout layout;
  layout.delimiter = delimiter == ' ' ? 0 : delimiter;
  std::vector<std::string> names;
  if (header) {
    for (std::string_view name : split_fields(first, layout.delimiter)) names.emplace_back(name);
  }
  const std::size_t data_fields = has_data ? split_fields(data, layout.delimiter).size() : 0;
  if (header && has_data && names.size() != data_fields) {
    const char* separated = layout.delimiter == ','    ? "commas"
                            : layout.delimiter == '\t' ? "tabs"
                                                       : "blanks";
    throw InputError(reader.name() + ":" + std::to_string(reader.line_number()) +
                     ": the header row has " + std::to_string(names.size()) +
                     " fields but the first data row has " + std::to_string(data_fields) +
                     " (fields separated by " + separated +
                     "); name the format with --format csv|tsv|txt, or pass --header no");
  }

  if (!found && spec.dim == 0 && spec.columns.size() != 2 && spec.columns.size() != 3) {
    throw InputError("'" + reader.name() +
                     "' holds no data rows, so the dimension is unknown (pass --dim 2|3)");
  }
  if (found) {
    const std::size_t field_count = has_data ? data_fields : names.size();
    layout.fields = choose_columns(spec, reader.name(), names, field_count);
    require_equal_rows(layout, spec, header, field_count, first_line);
  } else {
    const int dim = spec.dim != 0 ? spec.dim : static_cast<int>(spec.columns.size());
    for (int k = 0; k < dim; ++k) layout.fields.push_back(k);
  }
  std::string columns;
  for (int field : layout.fields) {
    std::string label = "column " + std::to_string(field + 1);
    const bool named = header && static_cast<std::size_t>(field) < names.size();
    if (named) label += " (\"" + printable(names[field]) + "\")";
    layout.labels.push_back(label);
    if (!columns.empty()) columns += ',';
    columns += named ? names[field] : std::to_string(field + 1);
  }

  PointSet points;
  points.dim = static_cast<int>(layout.fields.size());
  if (spec.precision == Precision::single) {
    points.coords = parse_body<float>(reader, layout, data, has_data);
  } else {
    points.coords = parse_body<double>(reader, layout, data, has_data);
  }
  const char* kind = layout.delimiter == ',' ? "CSV" : layout.delimiter == '\t' ? "TSV" : "text";
  points.description =
      reader.name() + " (" + kind + (header ? " with header" : "") + ", columns " + columns + ")";
  return points;
}

}  // namespace spatialhash::cli
