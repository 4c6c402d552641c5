// `spatialhash stats`: what a user runs first on a new data set - size, extent, neighbor
// statistics with a histogram, lattice occupancy, time per phase, and a suggested radius.
#include <algorithm>
#include <cstdio>
#include <numeric>

#include "bounding_box.hpp"
#include "command_run.hpp"
#include "radius_suggestion.hpp"
#include "text_format.hpp"

namespace spatialhash::cli {

namespace {

/// Report lines: a label column, then the value.
class Report {
 public:
  void line(const std::string& label, const std::string& value) {
    std::string padded = "  " + label;
    padded.resize(16, ' ');
    text_ += padded + value + "\n";
  }
  void raw(const std::string& text) { text_ += text; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

/// Neighbor-count statistics from the per-point counts.
struct CountSummary {
  std::uint64_t min = 0, max = 0, total = 0;
  double mean = 0.0, median = 0.0;
  std::vector<std::uint64_t> frequency;  ///< frequency[c] = points with c neighbors
};

CountSummary summarize(std::span<const index_t> counts) {
  CountSummary s;
  if (counts.empty()) return s;
  s.min = *std::min_element(counts.begin(), counts.end());
  s.max = *std::max_element(counts.begin(), counts.end());
  s.total = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
  s.mean = static_cast<double>(s.total) / static_cast<double>(counts.size());
  s.frequency.assign(s.max + 1, 0);
  for (index_t c : counts) ++s.frequency[c];
  // Median: the middle value (the mean of the two middle ones for an even count).
  const std::uint64_t n = counts.size(), lo = (n - 1) / 2, hi = n / 2;
  std::uint64_t seen = 0;
  double lo_value = -1.0;
  for (std::uint64_t c = 0; c <= s.max; ++c) {
    seen += s.frequency[c];
    if (lo_value < 0.0 && seen > lo) lo_value = static_cast<double>(c);
    if (seen > hi) {
      s.median = (lo_value + static_cast<double>(c)) / 2.0;
      break;
    }
  }
  return s;
}

/// About ten bins of equal width over 0..max, as rows "lo-hi |####    | count".
std::string histogram(const CountSummary& s) {
  constexpr std::uint64_t kBins = 10;
  constexpr std::size_t kBar = 40;
  const std::uint64_t values = s.max + 1;
  const std::uint64_t width = values <= kBins + 2 ? 1 : (values + kBins - 1) / kBins;
  std::vector<std::uint64_t> bins((values + width - 1) / width, 0);
  for (std::uint64_t c = 0; c < values; ++c) bins[c / width] += s.frequency[c];
  const std::uint64_t peak = *std::max_element(bins.begin(), bins.end());
  std::string out;
  for (std::size_t b = 0; b < bins.size(); ++b) {
    const std::uint64_t lo = b * width, hi = std::min(s.max, lo + width - 1);
    std::string label =
        width == 1 ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
    const auto filled =
        peak == 0 ? 0 : static_cast<std::size_t>((bins[b] * kBar + peak - 1) / peak);
    char row[160];
    std::snprintf(row, sizeof row, "    %11s |%-*s| %s\n", label.c_str(), static_cast<int>(kBar),
                  std::string(filled, '#').c_str(), with_commas(bins[b]).c_str());
    out += row;
  }
  return out;
}

}  // namespace

void run_stats(const StatsOptions& options) {
  const SearchOptions& search = options.search;
  const bool want_suggestion = options.target_neighbors != 0.0;
  if (want_suggestion &&
      !(options.target_neighbors > 0.0 && std::isfinite(options.target_neighbors))) {
    throw UsageError("--target-neighbors must be a number > 0");
  }
  if (search.radius == 0.0 && !want_suggestion) {
    throw UsageError("stats needs -r RADIUS, or --target-neighbors K to suggest one");
  }
  if (search.radius != 0.0) check_radius(search.radius);
  if (search.distances) throw UsageError("--distances does not apply to stats");
  CommandRun run("stats", search, false, true);
  const PointSet& points = run.read();
  Report report;
  std::uint64_t pairs = 0;
  with_points(points, [&](auto dim, auto coords) {
    constexpr int Dim = decltype(dim)::value;
    using T = typename decltype(coords)::value_type;
    run.phase("bounding box");
    const Box<Dim> box = bounding_box<Dim, T>(coords);
    report.line("input", points.description);
    report.line("points", with_commas(points.size()) + " (" + std::to_string(Dim) + "-D, " +
                              (std::is_same_v<T, float> ? "float" : "double") + ")");
    std::string extent;
    const char* axes[] = {"x", "y", "z"};
    for (int k = 0; k < Dim; ++k) {
      extent += std::string(k > 0 ? "  " : "") + axes[k] + " [" + shortest(box.lower[k]) + ", " +
                shortest(box.upper[k]) + "]";
    }
    report.line("bounding box", extent);

    double radius = search.radius;
    std::string suggestion;
    if (want_suggestion) {
      run.phase("suggest");
      const RadiusSuggestion s =
          suggest_radius<Dim, T>(coords, box, options.target_neighbors, run.index_options());
      const std::string target = shortest(options.target_neighbors);
      if (!s.radius) {
        suggestion = "no radius gives a mean of " + target + " neighbors with " +
                     with_commas(points.size()) + " points";
      } else {
        const std::string basis =
            s.sample == points.size()
                ? "exact: mean " + fixed_decimals(s.mean, 3) + " over all points"
                : "estimated: mean " + fixed_decimals(s.mean, 3) + " over " +
                      with_commas(s.sample) + " sampled points";
        suggestion =
            "-r " + shortest(*s.radius) + " for a mean of " + target + " neighbors (" + basis + ")";
        if (*s.radius == 0.0) {
          suggestion += "; radius 0: that many neighbors coincide";
        }
      }
      if (radius == 0.0) {
        if (!s.radius || *s.radius == 0.0) {
          throw UsageError("no usable radius for --target-neighbors " + target + " (" + suggestion +
                           "); pass -r");
        }
        radius = *s.radius;
      }
    }
    report.line("radius", shortest(radius) + (search.radius == 0.0 ? " (suggested)" : ""));

    const auto index = run.build<Dim, T>(coords, radius);
    report.line("engine", std::string(engine_name(index.engine())) + ", " +
                              std::to_string(index.threads()) + " thread" +
                              (index.threads() == 1 ? "" : "s"));
    run.phase("counts");
    const std::vector<index_t> counts =
        run.progress().while_running("counting neighbors", [&] { return index.neighbor_counts(); });
    const CountSummary summary = summarize(counts);
    pairs = summary.total / 2;
    run.phase("cells");
    const CellStats cells = run.progress().while_running(
        "counting cells", [&] { return cell_stats<Dim, T>(coords, box, radius); });
    run.phase("report");

    report.line("pairs", with_commas(pairs));
    report.line("neighbors", "min " + std::to_string(summary.min) + "  mean " +
                                 fixed_decimals(summary.mean, 2) + "  median " +
                                 shortest(summary.median) + "  max " + std::to_string(summary.max));
    if (!counts.empty()) {
      report.line("histogram", "(neighbors per point: number of points)");
      report.raw(histogram(summary));
    }
    const std::string total = cells.total < 0x1p63
                                  ? with_commas(static_cast<std::uint64_t>(cells.total))
                                  : shortest(cells.total);
    report.line("cells used",
                with_commas(cells.used) + " of " + total + " (edge " + shortest(cells.edge) + ", " +
                    fixed_decimals(cells.used > 0 ? static_cast<double>(points.size()) /
                                                        static_cast<double>(cells.used)
                                                  : 0.0,
                                   2) +
                    " points per used cell)");
    if (want_suggestion) report.line("suggested", suggestion);
  });
  std::string times;
  for (const char* phase : {"read", "bounding box", "suggest", "index", "counts", "cells"}) {
    const double s = run.seconds(phase);
    if (s > 0.0)
      times += (times.empty() ? "" : ", ") + std::string(phase) + " " + format_seconds(s);
  }
  report.line("time", times);
  run.output().write(report.text());
  run.finish(with_commas(points.size()) + " points, " + with_commas(pairs) + " pairs");
}

}  // namespace spatialhash::cli
