// `spatialhash lists`: the full neighbor list of every point (CSR). Results estimated to fit the
// --max-buffer budget come from the library's parallel neighbor_lists(): its default search
// holds the lists twice for a moment, its low-memory one (ListOptions::low_memory) once plus 12
// bytes per point (with distances) or an eighth more plus 8 bytes per point (without: written
// into the output itself and compacted there), so a result that fits only once takes the latter.
// Larger ones stream row by row from parallel blocks of ball queries.
#include "command_run.hpp"
#include "search_rows.hpp"
#include "text_format.hpp"

namespace spatialhash::cli {

void run_lists(const SearchOptions& options) {
  check_radius(options.radius);
  CommandRun run("lists", options, true);
  const PointSet& points = run.read();
  const std::size_t n = points.size();
  std::uint64_t entries = 0;
  with_points(points, [&](auto dim, auto coords) {
    constexpr int Dim = decltype(dim)::value;
    using T = typename decltype(coords)::value_type;
    const auto index = run.build<Dim, T>(coords, options.radius);
    const auto writer = make_row_writer(run.output(), run.writer_setup(n));
    const double rows = static_cast<double>(n);
    const double bytes = rows * (sample_mean_neighbors(index, coords) *
                                     (sizeof(index_t) + (options.distances ? 8.0 : 0.0)) +
                                 sizeof(std::size_t));
    const bool buffered = run.fits_in_memory(2.0 * bytes);
    const double low_memory_bytes =
        options.distances ? bytes + 12.0 * rows : bytes * 1.125 + 8.0 * rows;
    if (buffered || run.fits_in_memory(low_memory_bytes)) {
      run.phase(buffered ? "search" : "low-memory search");
      const NeighborLists lists = run.progress().while_running("searching", [&] {
        return index.neighbor_lists(ListOptions{.radius = kIndexRadius,
                                                .sorted = true,
                                                .with_distances = options.distances,
                                                .low_memory = !buffered});
      });
      run.phase("write");
      run.progress().start("writing", n, ProgressUnit::points);
      entries = write_rows(lists, *writer, run.progress());
    } else {
      run.phase("search+write");
      run.progress().start("searching", n, ProgressUnit::points);
      const auto position_of = [&](std::size_t i) {
        typename Index<Dim, T>::Position p;
        for (int k = 0; k < Dim; ++k) p[k] = static_cast<double>(coords[i * Dim + k]);
        return p;
      };
      entries =
          stream_rows(index, n, position_of, true, options.distances, *writer, run.progress());
    }
    run.progress().finish();
    writer->finish();
  });
  run.finish(
      with_commas(n) + " points, " + with_commas(entries / 2) + " pairs, " +
      fixed_decimals(n > 0 ? static_cast<double>(entries) / static_cast<double>(n) : 0.0, 2) +
      " neighbors per point");
}

}  // namespace spatialhash::cli
