// Messages for unusable coordinates (see parse_number.hpp).
#include "parse_number.hpp"

#include "text_format.hpp"

namespace spatialhash::cli {

std::string describe_number_problem(NumberStatus status, std::string_view text, bool single) {
  const std::string shown = printable(text, 40);
  switch (status) {
    case NumberStatus::ok:
      return "ok";
    case NumberStatus::not_a_number:
      return text.empty() ? "expected a number, found an empty field"
                          : "expected a number, found \"" + shown + "\"";
    case NumberStatus::nan:
      return "value is NaN (\"" + shown + "\"); coordinates must be finite";
    case NumberStatus::infinite:
      return "value is infinite (\"" + shown + "\"); coordinates must be finite";
    case NumberStatus::out_of_range:
      return "value " + shown + " is out of range for " + (single ? "float" : "double") +
             (single ? " (try --precision double)" : "");
  }
  return "unknown problem";
}

}  // namespace spatialhash::cli
