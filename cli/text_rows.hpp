// Streaming parser for the rows of a delimited text file: the engine under the CSV/TSV/whitespace
// and XYZ readers. It parses straight out of the reader's buffer into the coordinate vector.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "block_reader.hpp"

namespace spatialhash::cli {

/// Splits one line into fields. With a delimiter (',' or '\t') fields are trimmed of blanks and of
/// enclosing double quotes; without one (0), fields are runs of non-blank characters, or a
/// double-quoted run (blanks allowed inside) followed by a blank or the end of the line, returned
/// without its quotes.
class FieldCursor {
 public:
  FieldCursor(std::string_view line, char delimiter) : line_(line), delimiter_(delimiter) {}
  /// The next field and the 0-based character column where it starts; false after the last.
  bool next(std::string_view& field, std::size_t& column);

 private:
  std::string_view line_;
  char delimiter_;
  std::size_t pos_ = 0;
  bool done_ = false;
};

/// All fields of a line (for headers and format detection).
std::vector<std::string_view> split_fields(std::string_view line, char delimiter);

/// True for lines that hold no data: blank, or a comment starting with '#'.
bool is_blank_or_comment(std::string_view line);

/// Consumes a UTF-8 byte order mark at the reader's position, if there is one (call it before
/// the first line of a text file is read).
void skip_utf8_bom(BlockReader& reader);

/// Where the coordinates sit in each line of a text file.
struct TextLayout {
  char delimiter = 0;               ///< ',' or '\t'; 0 means fields separated by runs of blanks
  std::vector<int> fields;          ///< 0-based field of each coordinate, in x, y[, z] order
  std::vector<std::string> labels;  ///< how messages name each coordinate's column
  std::uint64_t max_rows = std::numeric_limits<std::uint64_t>::max();
  bool skip_comments = true;  ///< skip lines starting with '#' (and blank lines)
  /// When non-zero, every row must have exactly this many fields (more or fewer is an error);
  /// when 0, fields past the last coordinate are ignored.
  std::size_t exact_fields = 0;
  /// What exact_fields comes from, for messages: "the first data line (line 3)".
  std::string exact_source;
};

/// Parses rows until the end of the input (or layout.max_rows rows), appending each row's
/// coordinates to `out`. `first` is a data line already taken from the reader (empty view: none).
/// Throws InputError naming file, line, column and field for anything that is not a finite
/// number. Returns the number of rows parsed.
template <class T>
std::uint64_t parse_text_rows(BlockReader& reader, const TextLayout& layout, std::string_view first,
                              bool has_first, std::vector<T>& out);

}  // namespace spatialhash::cli
