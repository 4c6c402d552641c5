// CommandRun: the steps every search command shares - checking options, opening the output,
// reading the points, building the index, timing each phase and printing the summary.
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "errors.hpp"
#include "output_file.hpp"
#include "progress.hpp"
#include "result_writers.hpp"
#include "spatialhash/spatialhash.hpp"

namespace spatialhash::cli {

/// Engine from its name ("auto" or any engine_name()); throws UsageError listing the choices.
Engine engine_from_name(const std::string& name);

/// Whether two paths name the same existing file (standard streams never do).
bool same_file(const std::string& a, const std::string& b);

/// Checks a radius given on the command line; throws UsageError.
void check_radius(double radius);

template <int Dim, class T>
Index<Dim, T> build_index(std::span<const T> coords, double radius, Options options);

/// One run of a search command. Construction validates the options and opens the output (so a
/// bad destination fails before any work); the rest follows the order of the phases.
class CommandRun {
 public:
  /// `output_rows` says whether the output is neighbor lists (for the .npy check).
  CommandRun(std::string command, const SearchOptions& options, bool output_rows,
             bool text_output = false);

  /// Reads the points (timed as "read") and prints any reader notes.
  PointSet& read();
  PointSet& points() { return points_; }
  Progress& progress() { return progress_; }
  OutputFile& output() { return *output_; }
  const SearchOptions& options() const { return options_; }
  WriterSetup writer_setup(std::size_t point_count, std::string row_label = "point") const;
  Options index_options() const { return Options{engine_, options_.threads}; }

  /// Builds the index (timed as "index", with a progress indicator).
  template <int Dim, class T>
  Index<Dim, T> build(std::span<const T> coords, double radius) {
    phase("index");
    return progress_.while_running(
        "indexing", [&] { return build_index<Dim, T>(coords, radius, index_options()); });
  }

  /// Whether `bytes` of memory for a result may be used (--max-buffer). The caller counts what
  /// the library holds while assembling it (the array queries may hold the result twice).
  bool fits_in_memory(double bytes) const {
    return bytes <= options_.max_buffer_mib * 1024.0 * 1024.0;
  }

  /// Ends the current phase (if any) and starts timing `name`.
  void phase(std::string name);
  /// Seconds spent in a phase so far (0 if it never ran).
  double seconds(const std::string& name) const;
  /// Commits the output and prints "spatialhash CMD: <what>, <time> (<phases>) -> OUT" unless
  /// quiet.
  void finish(const std::string& what);
  /// A note on standard error ("spatialhash: note: ..."), unless quiet.
  void note(const std::string& text) const;

 private:
  using Clock = std::chrono::steady_clock;

  std::string command_;
  SearchOptions options_;
  Engine engine_ = Engine::automatic;
  Progress progress_;
  std::optional<OutputFile> output_;
  PointSet points_;
  Clock::time_point started_;
  std::vector<std::pair<std::string, double>> phases_;
  std::string current_;
  Clock::time_point current_start_;
};

/// Builds an index, turning the library's InvalidArgument (a radius the data cannot use, an
/// engine not available) into a UsageError.
template <int Dim, class T>
Index<Dim, T> build_index(std::span<const T> coords, double radius, Options options) {
  try {
    return Index<Dim, T>(coords, radius, options);
  } catch (const InvalidArgument& e) {
    std::string message = e.what();
    const std::string prefix = "spatialhash: ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    throw UsageError(message);
  }
}

/// Calls f(std::integral_constant<int, Dim>{}, std::span<const T>) for the points' dimension
/// and precision.
template <class F>
void with_points(const PointSet& points, F&& f) {
  std::visit(
      [&](const auto& coords) {
        using T = typename std::decay_t<decltype(coords)>::value_type;
        const std::span<const T> view(coords);
        if (points.dim == 2) {
          f(std::integral_constant<int, 2>{}, view);
        } else {
          f(std::integral_constant<int, 3>{}, view);
        }
      },
      points.coords);
}

}  // namespace spatialhash::cli
