// `spatialhash query`: ball queries at positions given with --at or read from a file.
#include "command_run.hpp"
#include "parse_number.hpp"
#include "read_points.hpp"
#include "search_rows.hpp"
#include "text_format.hpp"

namespace spatialhash::cli {

namespace {

/// "x,y[,z]" -> coordinates; throws UsageError naming the bad part.
std::vector<double> parse_position(const std::string& text) {
  std::vector<double> values;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = std::string_view(text).substr(start, comma - start);
    double value = 0.0;
    const NumberStatus status = parse_coordinate(part, value);
    if (status != NumberStatus::ok) {
      throw UsageError("--at " + text + ": coordinate " + std::to_string(values.size() + 1) + ": " +
                       describe_number_problem(status, part, false));
    }
    values.push_back(value);
    if (comma == text.size()) break;
    start = comma + 1;
  }
  if (values.size() != 2 && values.size() != 3) {
    throw UsageError("--at " + text + ": expected x,y or x,y,z");
  }
  return values;
}

}  // namespace

void run_query(const QueryOptions& options) {
  check_radius(options.search.radius);
  if (options.at.empty() == options.queries.empty()) {
    throw UsageError("query needs positions: --at x,y,z (repeatable) or --queries FILE");
  }
  std::vector<std::vector<double>> at;
  for (const std::string& text : options.at) at.push_back(parse_position(text));
  if (same_file(options.queries, options.search.output)) {
    throw UsageError("-o '" + options.search.output +
                     "' is the --queries file; choose another name");
  }
  CommandRun run("query", options.search, true);
  const PointSet& points = run.read();

  // All query positions, interleaved, in double.
  std::vector<double> positions;
  if (!options.queries.empty()) {
    run.phase("read queries");
    InputSpec spec;
    spec.path = options.queries;
    spec.dim = points.dim;
    spec.precision = Precision::dual;
    PointSet queries = read_points(spec, run.progress());
    for (const std::string& text : queries.notes) run.note(text);
    positions = std::get<std::vector<double>>(std::move(queries.coords));
  } else {
    for (const auto& p : at) {
      if (static_cast<int>(p.size()) != points.dim) {
        throw UsageError("--at has " + std::to_string(p.size()) + " coordinates, but the points " +
                         "are " + std::to_string(points.dim) + "-D");
      }
      positions.insert(positions.end(), p.begin(), p.end());
    }
  }
  const std::size_t rows = positions.size() / static_cast<std::size_t>(points.dim);
  std::uint64_t hits = 0;
  with_points(points, [&](auto dim, auto coords) {
    constexpr int Dim = decltype(dim)::value;
    using T = typename decltype(coords)::value_type;
    const auto index = run.build<Dim, T>(coords, options.search.radius);
    run.phase("search+write");
    const auto writer = make_row_writer(run.output(), run.writer_setup(points.size(), "query"));
    run.progress().start("searching", rows, ProgressUnit::rows);
    const auto position_of = [&](std::size_t q) {
      typename Index<Dim, T>::Position p;
      for (int k = 0; k < Dim; ++k) p[k] = positions[q * Dim + k];
      return p;
    };
    hits = stream_rows(index, rows, position_of, false, options.search.distances, *writer,
                       run.progress());
    run.progress().finish();
    writer->finish();
  });
  run.finish(with_commas(points.size()) + " points, " + with_commas(rows) + " quer" +
             (rows == 1 ? "y" : "ies") + ", " + with_commas(hits) + " hit" +
             (hits == 1 ? "" : "s"));
}

}  // namespace spatialhash::cli
