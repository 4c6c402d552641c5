// `spatialhash counts`: the number of neighbors of every point.
#include <numeric>

#include "command_run.hpp"
#include "text_format.hpp"

namespace spatialhash::cli {

void run_counts(const SearchOptions& options) {
  check_radius(options.radius);
  if (options.distances) throw UsageError("--distances does not apply to counts");
  CommandRun run("counts", options, false);
  const PointSet& points = run.read();
  std::uint64_t total = 0;
  with_points(points, [&](auto dim, auto coords) {
    constexpr int Dim = decltype(dim)::value;
    using T = typename decltype(coords)::value_type;
    const auto index = run.build<Dim, T>(coords, options.radius);
    run.phase("search");
    const std::vector<index_t> counts =
        run.progress().while_running("counting neighbors", [&] { return index.neighbor_counts(); });
    total = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
    run.phase("write");
    write_counts(run.output(), run.writer_setup(points.size()), counts);
  });
  run.finish(with_commas(points.size()) + " points, " + with_commas(total / 2) + " pairs");
}

}  // namespace spatialhash::cli
