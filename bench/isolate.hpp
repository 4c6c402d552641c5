// Runs one contender in a forked child process, so that each gets its own peak-RSS figure, a
// crash or a runaway contender cannot take the harness down, and a time limit can be enforced.
#pragma once

#include <functional>
#include <string>

#include "measure.hpp"

namespace bench {

/// How a contender run ended.
enum class Status { ok, error, timeout, crashed };

std::string_view status_name(Status status);

struct Outcome {
  Status status = Status::ok;
  std::string reason;  ///< the exception message, signal or limit when not ok
  Measurement measurement;
  /// Peak resident set of the process that ran the contender (MiB). With isolation this is the
  /// child: the harness's memory at the fork (points, queries) plus what the contender used.
  double peak_rss_mib = 0.0;
  /// peak_rss_mib minus the harness's resident memory just before: the contender's own peak.
  /// Without isolation it is the growth of the process peak, a lower bound.
  double own_rss_mib = 0.0;
};

/// Runs `body` in a forked child (when `isolate`), killing it after `timeout_s` seconds of
/// wall-clock time; exceptions become Status::error with their message. Without isolation the
/// body runs in this process (no time limit, peak RSS is the process peak so far). The caller
/// must not have used OpenMP in this process when isolating (libgomp does not survive fork).
Outcome run_contender(const std::function<Measurement()>& body, bool isolate, double timeout_s);

}  // namespace bench
