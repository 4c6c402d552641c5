// The shortest decimal text of a double, for error messages: std::to_string prints fixed
// notation with six decimals, which turns a radius of 1e-10 into "0.000000".
#pragma once

#include <charconv>
#include <string>

namespace spatialhash::detail {

/// The shortest decimal form that reads back as exactly `value` ("0.6", "1", "1e-10", "inf").
inline std::string shortest(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

}  // namespace spatialhash::detail
