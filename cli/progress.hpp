// Progress: a one-line progress bar on standard error for phases that take a while.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>

namespace spatialhash::cli {

/// What a progress counter counts; decides how the numbers are printed.
enum class ProgressUnit { bytes, points, pairs, rows, none };

/// A progress bar on standard error. It draws nothing unless enabled (standard error is a terminal
/// and --quiet was not given) and the current phase has run for more than a second, so quick runs
/// and redirected output never see it. Not thread-safe: update it from one thread.
class Progress {
 public:
  /// `quiet_period`: how long a phase runs before its bar appears (progress_quiet_period()).
  explicit Progress(bool enabled, std::chrono::milliseconds quiet_period = std::chrono::seconds(1))
      : enabled_(enabled), quiet_period_(quiet_period) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { finish(); }

  /// Begins a phase. `total` 0 means unknown: a running count is shown instead of a bar.
  void start(std::string label, std::uint64_t total, ProgressUnit unit);
  /// Reports `done` units of the current phase; redraws at most ten times a second.
  void update(std::uint64_t done) {
    if (enabled_ && active_) maybe_draw(done);
  }
  /// Ends the phase and erases the bar if one was drawn.
  void finish();

  /// Runs `work`, a blocking call that reports no progress of its own (building the index, an
  /// array query), while a background thread shows `label` and the elapsed time.
  template <class F>
  decltype(auto) while_running(std::string label, F&& work) {
    start(std::move(label), 0, ProgressUnit::none);
    start_ticker();
    struct Stop {
      Progress& p;
      ~Stop() {
        p.stop_ticker();
        p.finish();
      }
    } stop{*this};
    return std::forward<F>(work)();
  }

 private:
  using Clock = std::chrono::steady_clock;
  void maybe_draw(std::uint64_t done);
  void start_ticker();
  void stop_ticker();

  bool enabled_;
  std::chrono::milliseconds quiet_period_;
  bool active_ = false;
  bool drawn_ = false;
  std::string label_;
  std::uint64_t total_ = 0;
  ProgressUnit unit_ = ProgressUnit::bytes;
  Clock::time_point start_{};
  Clock::time_point last_draw_{};
  std::jthread ticker_;  ///< redraws during while_running(); the only drawer while it runs
};

/// Whether progress bars should be drawn: standard error is a terminal and not `quiet`.
bool progress_wanted(bool quiet);
/// One second, or SPATIALHASH_PROGRESS_DELAY_MS milliseconds when that is set to a number (the
/// tests set 0 to see the bar without waiting on a slow phase).
std::chrono::milliseconds progress_quiet_period();

}  // namespace spatialhash::cli
