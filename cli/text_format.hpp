// Small text formatting helpers shared by the report, the progress bar and the writers.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace spatialhash::cli {

/// 1234567 -> "1,234,567".
std::string with_commas(std::uint64_t value);
/// 1536 -> "1.5 KiB".
std::string human_bytes(std::uint64_t bytes);
/// 0.0123 -> "12.3 ms", 3.2 -> "3.20 s".
std::string format_seconds(double seconds);
/// `value` with a fixed number of decimals: fixed_decimals(2.345, 2) -> "2.35".
std::string fixed_decimals(double value, int decimals);
/// `text` safe to quote in a message: bytes outside printable ASCII become \xNN, and anything
/// past `limit` characters becomes "...".
std::string printable(std::string_view text, std::size_t limit = 60);
/// The shortest text that reads back as exactly `value` ("0.1", "1e-300").
std::string shortest(double value);

/// Appends the shortest round-trip form of `value` to `out`. Writers use this on hot paths.
inline void append_number(std::string& out, double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}
inline void append_number(std::string& out, float value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}
inline void append_number(std::string& out, std::uint64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

}  // namespace spatialhash::cli
