// Parsing one coordinate from text with fast_float, classifying every way it can be unusable.
#pragma once

#include <fast_float/fast_float.h>

#include <cmath>
#include <string>
#include <string_view>

namespace spatialhash::cli {

/// The outcome of parsing one coordinate.
enum class NumberStatus { ok, not_a_number, nan, infinite, out_of_range };

/// Parses all of `text` as a finite value of type T (correctly rounded to T, not via double).
/// A leading '+' is accepted. Never throws.
template <class T>
NumberStatus parse_coordinate(std::string_view text, T& value) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;
  const auto result = fast_float::from_chars(first, last, value);
  if (result.ec != std::errc() || result.ptr != last || first == last) {
    return NumberStatus::not_a_number;
  }
  if (std::isnan(value)) return NumberStatus::nan;
  if (std::isinf(value)) {
    // A literal "inf"/"infinity" versus a number too large for T.
    const bool literal = text.find_first_of("iI") != std::string_view::npos;
    return literal ? NumberStatus::infinite : NumberStatus::out_of_range;
  }
  return NumberStatus::ok;
}

/// A sentence fragment for a failed parse of `text`, e.g. "expected a number, found \"abc\"".
std::string describe_number_problem(NumberStatus status, std::string_view text, bool single);

}  // namespace spatialhash::cli
