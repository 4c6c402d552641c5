// Shared steps of the search commands (see command_run.hpp).
#include "command_run.hpp"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "read_points.hpp"
#include "text_format.hpp"

namespace spatialhash::cli {

Engine engine_from_name(const std::string& name) {
  if (name == "auto") return Engine::automatic;
  try {
    return parse_engine(name);
  } catch (const InvalidArgument&) {
    std::string valid = "auto";
    for (Engine e : all_engines()) valid += ", " + std::string(engine_name(e));
    throw UsageError("--engine: unknown engine '" + name + "' (valid: " + valid + ")");
  }
}

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty() || a == "-" || b == "-") return false;
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

void check_radius(double radius) {
  if (!std::isfinite(radius) || !(radius > 0.0)) {
    throw UsageError("-r/--radius must be a finite number > 0, got " + shortest(radius));
  }
}

CommandRun::CommandRun(std::string command, const SearchOptions& options, bool output_rows,
                       bool text_output)
    : command_(std::move(command)),
      options_(options),
      progress_(progress_wanted(options.quiet), progress_quiet_period()),
      started_(Clock::now()) {
  engine_ = engine_from_name(options.engine);
  if (options.threads < 0) throw UsageError("--threads must be >= 0 (0 means all cores)");
  // Checked here, before any work: far more threads than cores make OpenMP fail to start them
  // (or crash) midway; the library would refuse them only at index construction.
  if (options.threads > kMaxThreads) {
    throw UsageError("--threads " + std::to_string(options.threads) +
                     " is more than the limit of " + std::to_string(kMaxThreads) +
                     " (0 means all cores)");
  }
  if (text_output) {
    const std::string& path = options.output;
    const bool txt = path.size() > 4 && path.compare(path.size() - 4, 4, ".txt") == 0;
    if (!path.empty() && path != "-" && !txt) {
      throw UsageError("-o: " + command_ + " writes a text report; use a name ending in .txt");
    }
  } else {
    check_writable(writer_setup(0), output_rows);
  }
  if (same_file(options.input.path, options.output)) {
    throw UsageError("-o '" + options.output + "' is the input file; choose another output name");
  }
  // .npy and .npz headers are patched after the data, so their destination must be seekable.
  const OutputFormat format = text_output ? OutputFormat::csv : writer_setup(0).format;
  output_.emplace(options.output, format == OutputFormat::npy || format == OutputFormat::npz);
}

WriterSetup CommandRun::writer_setup(std::size_t point_count, std::string row_label) const {
  WriterSetup setup;
  setup.format = output_format(options_.output);
  setup.with_distances = options_.distances;
  setup.point_count = point_count;
  setup.row_label = std::move(row_label);
  return setup;
}

PointSet& CommandRun::read() {
  phase("read");
  points_ = read_points(options_.input, progress_);
  for (const std::string& text : points_.notes) note(text);
  return points_;
}

void CommandRun::phase(std::string name) {
  const auto now = Clock::now();
  if (!current_.empty()) {
    phases_.emplace_back(current_, std::chrono::duration<double>(now - current_start_).count());
  }
  current_ = std::move(name);
  current_start_ = now;
}

double CommandRun::seconds(const std::string& name) const {
  double total = 0.0;
  for (const auto& [phase, s] : phases_) {
    if (phase == name) total += s;
  }
  if (name == current_) {
    total += std::chrono::duration<double>(Clock::now() - current_start_).count();
  }
  return total;
}

void CommandRun::note(const std::string& text) const {
  if (!options_.quiet) std::fprintf(stderr, "spatialhash: note: %s\n", text.c_str());
}

void CommandRun::finish(const std::string& what) {
  phase("");
  output_->commit();
  progress_.finish();
  if (options_.quiet) return;
  const double total = std::chrono::duration<double>(Clock::now() - started_).count();
  std::string detail;
  for (const auto& [name, s] : phases_) {
    detail += (detail.empty() ? "" : ", ") + name + " " + format_seconds(s);
  }
  std::string line = "spatialhash " + command_ + ": " + what + " in " + format_seconds(total);
  if (!detail.empty()) line += " (" + detail + ")";
  if (!output_->is_stdout()) line += " -> " + output_->name();
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace spatialhash::cli
