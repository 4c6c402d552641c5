// `spatialhash query`: ball queries at positions given with --at or read from a file.
#include <sys/stat.h>

#include <string>

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

/// Whether two paths name the same existing FIFO, socket or device: a stream that a second
/// reader would find already consumed.
bool same_stream(const std::string& a, const std::string& b) {
  if (!same_file(a, b)) return false;
  struct stat info {};
  return ::stat(a.c_str(), &info) == 0 && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode);
}

}  // namespace

void run_query(const QueryOptions& options) {
  check_radius(options.search.radius);
  if (options.at.empty() == options.queries.empty()) {
    throw UsageError("query needs positions: --at x,y,z (repeatable) or --queries FILE");
  }
  std::vector<std::vector<double>> at;
  for (const std::string& text : options.at) at.push_back(parse_position(text));
  if (options.queries == "-" && options.search.input.path == "-") {
    throw UsageError(
        "FILE and --queries are both - (standard input), which can be read only once;"
        " give one of them as a file");
  }
  if (same_stream(options.queries, options.search.input.path)) {
    throw UsageError("FILE and --queries are the same pipe or device '" + options.queries +
                     "', which can be read only once; give one of them as a file");
  }
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
    // The query file's dimension is inferred from the file itself (dim 0), never forced to the
    // points': forcing it would silently drop a z column from 3-D queries against 2-D points.
    InputSpec spec;
    spec.path = options.queries;
    spec.precision = Precision::dual;
    PointSet queries;
    try {
      queries = read_points(spec, run.progress());
    } catch (const UsageError& e) {
      // Such as an ambiguous column count; the reader's hint names the points file's options.
      throw UsageError(std::string("--queries: ") + e.what() +
                       " (--columns and --dim apply to FILE only; the query file needs x,y[,z] "
                       "header names or exactly " +
                       std::to_string(points.dim) + " columns)");
    }
    for (const std::string& text : queries.notes) run.note(text);
    if (queries.dim != points.dim) {
      throw InputError("--queries '" + options.queries + "' holds " + std::to_string(queries.dim) +
                       "-D positions, but the points of '" + options.search.input.path + "' are " +
                       std::to_string(points.dim) +
                       "-D; query positions need the points' dimension");
    }
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
