// Drawing of the progress bar (see progress.hpp).
#include "progress.hpp"

#include <cstdlib>

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "text_format.hpp"

namespace spatialhash::cli {

namespace {

constexpr auto kRedrawPeriod = std::chrono::milliseconds(100);
constexpr int kBarWidth = 24;
constexpr int kLineWidth = 79;

std::string amount(std::uint64_t value, ProgressUnit unit) {
  switch (unit) {
    case ProgressUnit::bytes:
      return human_bytes(value);
    case ProgressUnit::points:
      return with_commas(value) + " points";
    case ProgressUnit::pairs:
      return with_commas(value) + " pairs";
    case ProgressUnit::rows:
      return with_commas(value) + " rows";
    case ProgressUnit::none:
      return "";
  }
  return with_commas(value);
}

}  // namespace

bool progress_wanted(bool quiet) {
  return !quiet && isatty(STDERR_FILENO) == 1;
}

std::chrono::milliseconds progress_quiet_period() {
  const char* text = std::getenv("SPATIALHASH_PROGRESS_DELAY_MS");
  if (text == nullptr || *text == '\0') return std::chrono::seconds(1);
  char* end = nullptr;
  const long ms = std::strtol(text, &end, 10);
  if (*end != '\0' || ms < 0) return std::chrono::seconds(1);
  return std::chrono::milliseconds(ms);
}

void Progress::start(std::string label, std::uint64_t total, ProgressUnit unit) {
  finish();
  label_ = std::move(label);
  total_ = total;
  unit_ = unit;
  start_ = Clock::now();
  last_draw_ = start_;
  active_ = true;
}

void Progress::maybe_draw(std::uint64_t done) {
  const auto now = Clock::now();
  if (now - start_ < quiet_period_ || now - last_draw_ < kRedrawPeriod) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  std::string line = label_;
  if (total_ > 0) {
    line += "  ";
    const double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
    const int filled = static_cast<int>(fraction * kBarWidth);
    line += "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "] ";
    line += std::to_string(static_cast<int>(fraction * 100.0)) + "%  " +
            (unit_ == ProgressUnit::bytes ? human_bytes(done) : with_commas(done)) + " of " +
            amount(total_, unit_);
  } else if (unit_ != ProgressUnit::none) {
    line += "  " + amount(done, unit_);
  }
  line += "  " + format_seconds(seconds);
  if (line.size() > kLineWidth) line.resize(kLineWidth);
  std::fprintf(stderr, "\r%-*s", kLineWidth, line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::start_ticker() {
  if (!enabled_) return;
  ticker_ = std::jthread([this](std::stop_token stop) {
    while (!stop.stop_requested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      maybe_draw(0);
    }
  });
}

void Progress::stop_ticker() {
  if (ticker_.joinable()) {
    ticker_.request_stop();
    ticker_.join();
  }
}

void Progress::finish() {
  if (drawn_) {
    std::fprintf(stderr, "\r%*s\r", kLineWidth, "");
    std::fflush(stderr);
  }
  drawn_ = false;
  active_ = false;
}

}  // namespace spatialhash::cli
