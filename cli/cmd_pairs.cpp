// `spatialhash pairs`: every unordered pair within the radius. Results estimated to fit the
// --max-buffer budget (and every --sort run) come from the library's parallel pairs(); larger
// ones stream to the writer in the batches of the callback API, never held whole.
#include <cmath>

#include "command_run.hpp"
#include "search_rows.hpp"
#include "text_format.hpp"

namespace spatialhash::cli {

void run_pairs(const PairsOptions& options) {
  const SearchOptions& search = options.search;
  check_radius(search.radius);
  CommandRun run("pairs", search, false);
  const PointSet& points = run.read();
  const std::size_t n = points.size();
  std::uint64_t found = 0;
  with_points(points, [&](auto dim, auto coords) {
    constexpr int Dim = decltype(dim)::value;
    using T = typename decltype(coords)::value_type;
    const auto index = run.build<Dim, T>(coords, search.radius);
    const auto writer = make_pair_writer(run.output(), run.writer_setup(n));
    const double pair_bytes = sizeof(Pair) + (search.distances ? 8.0 : 0.0);
    // The library's pair list may hold up to twice its result while assembling it.
    if (options.sort || run.fits_in_memory(static_cast<double>(n) *
                                           sample_mean_neighbors(index, coords) * pair_bytes)) {
      run.phase("search");
      const PairList list = run.progress().while_running("searching", [&] {
        return index.pairs(ListOptions{
            .radius = kIndexRadius, .sorted = options.sort, .with_distances = search.distances});
      });
      run.phase("write");
      run.progress().start("writing", list.pairs.size(), ProgressUnit::pairs);
      constexpr std::size_t kChunk = std::size_t{1} << 16;
      const std::span<const Pair> pairs(list.pairs);
      const std::span<const double> distances(list.distances);
      for (std::size_t at = 0; at < pairs.size(); at += kChunk) {
        const std::size_t count = std::min(kChunk, pairs.size() - at);
        writer->add(pairs.subspan(at, count),
                    distances.empty() ? distances : distances.subspan(at, count));
        run.progress().update(at + count);
      }
      found = pairs.size();
    } else {
      run.phase("search+write");
      run.progress().start("searching", 0, ProgressUnit::pairs);
      std::vector<Pair> batch_pairs;
      std::vector<double> batch_distances;
      index.for_each_pair_batch([&](std::span<const PairHit> batch) {
        batch_pairs.clear();
        batch_distances.clear();
        for (const PairHit& h : batch) {
          batch_pairs.push_back({h.first, h.second});
          if (search.distances) batch_distances.push_back(std::sqrt(h.distance_squared));
        }
        writer->add(batch_pairs, batch_distances);
        found += batch.size();
        run.progress().update(found);
      });
    }
    run.progress().finish();
    writer->finish();
  });
  run.finish(with_commas(n) + " points, " + with_commas(found) + " pairs");
}

}  // namespace spatialhash::cli
