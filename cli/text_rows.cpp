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
    while (pos_ < line_.size() && !is_blank(line_[pos_])) ++pos_;
    field = line_.substr(start, pos_ - start);
    column = start;
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

template <class T>
std::uint64_t parse_text_rows(BlockReader& reader, const TextLayout& layout, std::string_view first,
                              bool has_first, std::vector<T>& out) {
  const std::size_t dim = layout.fields.size();
  // slot[f] = which coordinate field f holds, or -1.
  const int max_field = *std::max_element(layout.fields.begin(), layout.fields.end());
  std::vector<int> slot(static_cast<std::size_t>(max_field) + 1, -1);
  for (std::size_t k = 0; k < dim; ++k) slot[layout.fields[k]] = static_cast<int>(k);

  const auto fail = [&](std::size_t column, int field, const std::string& what) {
    const int k = slot[field];
    throw InputError(reader.name() + ":" + std::to_string(reader.line_number()) + ":" +
                     std::to_string(column + 1) + ": " + layout.labels[k] + ": " + what);
  };

  std::uint64_t rows = 0;
  const std::uint64_t start_offset = reader.offset();
  std::array<T, kMaxDim> row{};
  std::string_view line = first;
  bool have = has_first;
  while (rows < layout.max_rows) {
    if (!have && !reader.next_line(line)) break;
    have = false;
    if (layout.skip_comments && is_blank_or_comment(line)) continue;
    FieldCursor cursor(line, layout.delimiter);
    std::string_view field;
    std::size_t column = 0;
    for (int f = 0; f <= max_field; ++f) {
      if (!cursor.next(field, column)) {
        // Name the first coordinate field the line is missing.
        for (int g = f; g <= max_field; ++g) {
          if (slot[g] >= 0) {
            fail(
                line.size(), g,
                "missing: the line has only " + std::to_string(f) + " field" + (f == 1 ? "" : "s"));
          }
        }
      }
      const int k = slot[f];
      if (k < 0) continue;
      const NumberStatus status = parse_coordinate(field, row[k]);
      if (status != NumberStatus::ok) {
        fail(column, f, describe_number_problem(status, field, std::is_same_v<T, float>));
      }
    }
    out.insert(out.end(), row.begin(), row.begin() + dim);
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
