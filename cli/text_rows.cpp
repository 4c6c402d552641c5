// The streaming row parser (see text_rows.hpp).
#include "text_rows.hpp"

#include <algorithm>
#include <array>

#include "errors.hpp"
#include "parse_number.hpp"

namespace spatialhash::cli {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

constexpr int kMaxDim = 3;
/// Rows parsed before the output is reserved from an estimate of the row count.
constexpr std::uint64_t kRowsBeforeReserve = 1024;

}  // namespace

bool FieldCursor::next(std::string_view& field, std::size_t& column) {
  if (done_) return false;
  if (delimiter_ == 0) {
    while (pos_ < line_.size() && is_blank(line_[pos_])) ++pos_;
    if (pos_ == line_.size()) {
      done_ = true;
      return false;
    }
    const std::size_t start = pos_;
    column = start;
    if (line_[start] == '"') {
      // A quoted field ends at a quote followed by a blank or the end of the line; anything
      // else (no closing quote, text after it) is an ordinary run of non-blanks.
      const std::size_t close = line_.find('"', start + 1);
      if (close != std::string_view::npos &&
          (close + 1 == line_.size() || is_blank(line_[close + 1]))) {
        field = line_.substr(start + 1, close - start - 1);
        pos_ = close + 1;
        return true;
      }
    }
    while (pos_ < line_.size() && !is_blank(line_[pos_])) ++pos_;
    field = line_.substr(start, pos_ - start);
    return true;
  }
  const std::size_t start = pos_;
  const std::size_t end = std::min(line_.find(delimiter_, start), line_.size());
  std::string_view raw = line_.substr(start, end - start);
  column = start;
  while (column < end && is_blank(line_[column])) ++column;
  field = trim(raw);
  if (end == line_.size()) {
    done_ = true;
  } else {
    pos_ = end + 1;
  }
  return true;
}

std::vector<std::string_view> split_fields(std::string_view line, char delimiter) {
  std::vector<std::string_view> fields;
  FieldCursor cursor(line, delimiter);
  std::string_view field;
  std::size_t column = 0;
  while (cursor.next(field, column)) fields.push_back(field);
  return fields;
}

bool is_blank_or_comment(std::string_view line) {
  for (char c : line) {
    if (is_blank(c)) continue;
    return c == '#';
  }
  return true;
}

void skip_utf8_bom(BlockReader& reader) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (reader.request(kBom.size()) && reader.available().substr(0, kBom.size()) == kBom) {
    reader.consume(kBom.size());
  }
}

namespace {

/// The coordinate fields of a layout in file order, so a row is parsed in one pass over its fields
/// whatever the column numbers (no table indexed by column: --columns 999999999 costs nothing).
struct FieldOrder {
  std::array<int, kMaxDim> field{};               ///< 0-based field numbers, ascending
  std::array<std::size_t, kMaxDim> coordinate{};  ///< which coordinate each one holds
  std::size_t size = 0;

  /// `fields`: a layout's coordinate fields (2 or 3 of them, all different).
  explicit FieldOrder(const std::vector<int>& fields)
      : size(std::min<std::size_t>(fields.size(), kMaxDim)) {
    for (std::size_t i = 0; i < size; ++i) {
      field[i] = fields[i];
      coordinate[i] = i;
    }
    for (std::size_t i = 1; i < size; ++i) {  // insertion sort by field
      for (std::size_t j = i; j > 0 && field[j - 1] > field[j]; --j) {
        std::swap(field[j - 1], field[j]);
        std::swap(coordinate[j - 1], coordinate[j]);
      }
    }
  }
};

/// Parses the coordinates of rows into `out`, checking each row's field count if asked.
template <class T>
class RowParser {
 public:
  RowParser(BlockReader& reader, const TextLayout& layout)
      : reader_(reader), layout_(layout), order_(layout.fields) {}

  void parse(std::string_view line, std::vector<T>& out) {
    FieldCursor cursor(line, layout_.delimiter);
    std::string_view token;
    std::size_t column = 0, seen = 0;  // `seen`: fields taken from the cursor so far
    for (std::size_t i = 0; i < order_.size; ++i) {
      const std::size_t k = order_.coordinate[i];
      while (seen <= static_cast<std::size_t>(order_.field[i])) {
        if (!cursor.next(token, column)) {
          fail(line.size(), k,
               "missing: the line has only " + std::to_string(seen) + " field" +
                   (seen == 1 ? "" : "s"));
        }
        ++seen;
      }
      const NumberStatus status = parse_coordinate(token, row_[k]);
      if (status != NumberStatus::ok) {
        fail(column, k, describe_number_problem(status, token, std::is_same_v<T, float>));
      }
    }
    if (layout_.exact_fields != 0) check_field_count(cursor, seen, line.size());
    out.insert(out.end(), row_.begin(), row_.begin() + static_cast<std::ptrdiff_t>(order_.size));
  }

 private:
  [[noreturn]] void fail(std::size_t column, std::size_t k, const std::string& what) const {
    throw InputError(where(column) + layout_.labels[k] + ": " + what);
  }

  std::string where(std::size_t column) const {
    return reader_.name() + ":" + std::to_string(reader_.line_number()) + ":" +
           std::to_string(column + 1) + ": ";
  }

  /// Throws unless the line has exactly layout.exact_fields fields (`seen` are already taken).
  void check_field_count(FieldCursor& cursor, std::size_t seen, std::size_t line_size) const {
    const std::size_t expected = layout_.exact_fields;
    std::string_view token;
    std::size_t column = line_size, extra_at = line_size;
    // Usually a single call: the cursor has nothing after the last expected field.
    while (seen <= expected && cursor.next(token, column)) {
      if (++seen > expected) extra_at = column;
    }
    if (seen == expected) return;
    while (cursor.next(token, column)) ++seen;  // count them all for the message
    throw InputError(where(seen > expected ? extra_at : line_size) + "the line has " +
                     std::to_string(seen) + " field" + (seen == 1 ? "" : "s") + ", but " +
                     layout_.exact_source + " has " + std::to_string(expected) +
                     " (rows must have the same number of fields; with --columns or --dim, "
                     "fields after the coordinates are ignored)");
  }

  BlockReader& reader_;
  const TextLayout& layout_;
  FieldOrder order_;
  std::array<T, kMaxDim> row_{};
};

}  // namespace

template <class T>
std::uint64_t parse_text_rows(BlockReader& reader, const TextLayout& layout, std::string_view first,
                              bool has_first, std::vector<T>& out) {
  RowParser<T> parser(reader, layout);
  std::uint64_t rows = 0;
  const std::uint64_t start_offset = reader.offset();
  const std::size_t dim = layout.fields.size();
  std::string_view line = first;
  bool have = has_first;
  while (rows < layout.max_rows) {
    if (!have && !reader.next_line(line)) break;
    have = false;
    if (layout.skip_comments && is_blank_or_comment(line)) continue;
    parser.parse(line, out);
    ++rows;
    if (rows == kRowsBeforeReserve && reader.size() > 0) {
      // Reserve for the whole file from the bytes per row so far (untouched capacity costs no
      // resident memory, and it spares the copies of repeated growth).
      const double per_row =
          static_cast<double>(reader.offset() - start_offset) / static_cast<double>(rows);
      const double estimate = static_cast<double>(reader.size() - start_offset) / per_row * 1.05;
      const double capped = std::min(estimate, static_cast<double>(layout.max_rows));
      if (capped < 4e9) out.reserve(static_cast<std::size_t>(capped + 16.0) * dim);
    }
  }
  return rows;
}

template std::uint64_t parse_text_rows(BlockReader&, const TextLayout&, std::string_view, bool,
                                       std::vector<float>&);
template std::uint64_t parse_text_rows(BlockReader&, const TextLayout&, std::string_view, bool,
                                       std::vector<double>&);

}  // namespace spatialhash::cli
