// spatialhash command-line tool: option parsing (CLI11), dispatch to the commands, and the
// mapping of every failure to a message and an exit status.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "commands.hpp"
#include "errors.hpp"
#include "read_points.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using namespace spatialhash::cli;

constexpr const char* kExitStatus =
    "\nExit status: 0 success, 2 usage error (bad or missing option), 3 input error (file "
    "missing,\nmalformed, unsupported), 4 output error (cannot create or write -o), 1 anything "
    "else\n(out of memory, internal error). A failed run leaves no output file behind.\n";

constexpr const char* kInputHelp =
    "\nInput: CSV/TSV/whitespace text with or without a header row (coordinates: --columns, else\n"
    "header names x,y,z, else 2 or 3 columns), XYZ, PLY (ascii or binary; vertex x,y,z float or\n"
    "double), NumPy .npy (float32/float64, shape (n,2) or (n,3)). - reads text from standard\n"
    "input.\n";

constexpr const char* kOutputHelp =
    "Output (-o, by extension): .csv or .tsv (with a header row), .npy, .npz; none or - writes\n"
    "CSV to standard output. numpy.load() reads .npy and .npz directly.\n";

/// What the main program keeps of the parsed options, one struct per command.
struct Parsed {
  PairsOptions pairs;
  SearchOptions lists, counts;
  StatsOptions stats;
  QueryOptions query;
  GenerateOptions generate;
  // Raw strings turned into enums after parsing.
  std::string format = "auto", header = "auto", precision = "auto";
};

/// A floating-point option's value as typed, checked before CLI11 converts it, which reads an
/// empty value or one below double's range as 0 and one beyond it as inf: each named as given
/// instead (CLI11 prefixes the option's name). For every floating-point option.
std::string number_text_error(const std::string& text) {
  if (text.find_first_not_of(" \t") == std::string::npos) return "empty value";
  errno = 0;
  const double value = std::strtod(text.c_str(), nullptr);
  if (errno == ERANGE && std::isinf(value)) return "'" + text + "' is beyond double's range";
  if (errno == ERANGE && value == 0.0) return "'" + text + "' is below double's range (0)";
  return {};
}

void add_search_options(CLI::App* app, SearchOptions& o, Parsed& raw, bool radius_required,
                        bool distances) {
  app->add_option("FILE", o.input.path, "points file, or - for text on standard input")->required();
  auto* radius = app->add_option("-r,--radius", o.radius, "search radius (pairs at distance <= R)")
                     ->check(CLI::Validator(number_text_error, ""));
  if (radius_required) radius->required();
  app->add_option("--dim", o.input.dim, "2 or 3 (inferred from the file when unambiguous)")
      ->check(CLI::IsMember({2, 3}));
  app->add_option("--columns", o.input.columns,
                  "coordinate columns of a text file, by header name or number from 1 (x,y[,z])")
      ->delimiter(',')
      ->allow_extra_args(false);
  app->add_option("--header", raw.header, "text header row: auto, yes, no (default auto)")
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  app->add_option("--format", raw.format,
                  "input format: auto, csv, tsv, txt, xyz, ply, npy (default: by extension)");
  app->add_option("--engine", o.engine,
                  "search engine: auto (default) or a name such as "
                  "cell_list, hashed_grid, brute_force");
  app->add_option("--threads", o.threads,
                  "worker threads, at most " + std::to_string(spatialhash::kMaxThreads) +
                      " (default 0: all cores)");
  app->add_option("--precision", raw.precision,
                  "coordinates as float or double (default auto: as stored; double for text)")
      ->check(CLI::IsMember({"auto", "float", "double"}));
  app->add_option("-o,--output", o.output, "output file; the format follows the extension");
  app->add_flag("-q,--quiet", o.quiet, "no progress bar, notes or summary");
  if (distances) app->add_flag("--distances", o.distances, "also write the distance of each pair");
}

/// --max-buffer, for the commands that can build their result in memory.
void add_buffer_option(CLI::App* app, SearchOptions& o) {
  app->add_option("--max-buffer", o.max_buffer_mib,
                  "results estimated below this many MiB are built in memory (fast, parallel); "
                  "larger ones stream to the output in chunks; 0 always streams (default 1024)")
      ->check(CLI::NonNegativeNumber);
}

/// Applies the raw strings of `raw` to `o`.
void finish_input(SearchOptions& o, const Parsed& raw) {
  o.input.format = parse_input_format(raw.format);
  o.input.header = raw.header == "yes"  ? HeaderMode::present
                   : raw.header == "no" ? HeaderMode::absent
                                        : HeaderMode::automatic;
  o.input.precision = raw.precision == "float"    ? Precision::single
                      : raw.precision == "double" ? Precision::dual
                                                  : Precision::automatic;
}

int fail(spatialhash::cli::ExitCode code, const std::string& message, const std::string& hint) {
  std::fprintf(stderr, "spatialhash: error: %s\n", message.c_str());
  if (!hint.empty()) std::fprintf(stderr, "%s\n", hint.c_str());
  return static_cast<int>(code);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "spatialhash: exact fixed-radius neighbor search for 2-D and 3-D points.\n"
      "Every result equals a double-precision brute force.",
      "spatialhash"};
  app.require_subcommand(1);
  app.footer(std::string("\nStart with:\n"
                         "  spatialhash generate --lattice 100 -o points.npy\n"
                         "  spatialhash stats points.npy -r 1.5\n"
                         "  spatialhash pairs points.npy -r 1.5 -o pairs.npy\n"
                         "Run 'spatialhash COMMAND --help' for the options of a command.\n") +
             kExitStatus);
  Parsed p;

  auto* pairs = app.add_subcommand("pairs", "every unordered pair (i < j) within the radius");
  add_search_options(pairs, p.pairs.search, p, true, true);
  add_buffer_option(pairs, p.pairs.search);
  pairs->add_flag("--sort", p.pairs.sort,
                  "sort pairs by (first, second); holds all pairs in memory");
  pairs->footer(std::string("\nExamples:\n"
                            "  spatialhash pairs points.csv -r 0.5\n"
                            "  spatialhash pairs cloud.ply -r 0.01 -o pairs.npy\n"
                            "  spatialhash pairs atoms.xyz -r 3.2 --distances -o pairs.npz\n"
                            "  cat points.txt | spatialhash pairs - -r 1 --sort > pairs.csv\n"
                            "Python: numpy.load('pairs.npy') is an (m, 2) int array; pairs.npz "
                            "holds 'pairs' and\n'distances'.\n") +
                kInputHelp + kOutputHelp + kExitStatus);

  auto* lists = app.add_subcommand("lists", "full neighbor lists of every point (CSR)");
  add_search_options(lists, p.lists, p, true, true);
  add_buffer_option(lists, p.lists);
  lists->footer(std::string("\nExamples:\n"
                            "  spatialhash lists points.npy -r 2 -o lists.npz\n"
                            "  spatialhash lists points.csv -r 0.5 --columns x,y,z\n"
                            "Python: d = numpy.load('lists.npz'); neighbors of i = "
                            "d['indices'][d['offsets'][i]:d['offsets'][i+1]]\n"
                            "CSV rows: point,count,neighbors (space-separated, ascending).\n") +
                kInputHelp + kOutputHelp + kExitStatus);

  auto* counts = app.add_subcommand("counts", "number of neighbors of every point");
  add_search_options(counts, p.counts, p, true, false);
  counts->footer(std::string("\nExamples:\n"
                             "  spatialhash counts points.npy -r 1.5 -o counts.npy\n"
                             "  spatialhash counts table.tsv -r 10 --columns lon,lat --dim 2\n") +
                 kInputHelp + kOutputHelp + kExitStatus);

  auto* stats = app.add_subcommand("stats", "size, extent and neighbor statistics of a data set");
  add_search_options(stats, p.stats.search, p, false, false);
  stats
      ->add_option("--target-neighbors", p.stats.target_neighbors,
                   "suggest the radius giving this mean number of neighbors (and use it when "
                   "-r is not given)")
      ->check(CLI::Validator(number_text_error, ""));
  stats->footer(
      std::string("\nReports points, bounding box, pairs, neighbors per point (min, mean, "
                  "median, max,\nhistogram), lattice cells used and the time of each "
                  "phase.\nExamples:\n"
                  "  spatialhash stats points.npy -r 1.5\n"
                  "  spatialhash stats cloud.ply --target-neighbors 30\n") +
      kInputHelp + kExitStatus);

  auto* query = app.add_subcommand("query", "points within the radius of given positions");
  add_search_options(query, p.query.search, p, true, true);
  auto* at = query->add_option("--at", p.query.at, "a query position x,y[,z] (repeatable)")
                 ->allow_extra_args(false);
  auto* queries = query->add_option("--queries", p.query.queries,
                                    "a file of query positions (any input format), of the "
                                    "points' dimension");
  at->excludes(queries);
  query->footer(std::string("\nExamples:\n"
                            "  spatialhash query points.npy -r 2 --at 50,50,50\n"
                            "  spatialhash query points.npy -r 2 --at=-1.5,0,2 --distances\n"
                            "  spatialhash query points.npy -r 2 --queries probes.csv -o hits.npz\n"
                            "Rows are queries: query,count,neighbors (CSV) or offsets + indices "
                            "(.npz).\n") +
                kInputHelp + kOutputHelp + kExitStatus);

  auto* generate = app.add_subcommand("generate", "write a jittered lattice data set");
  GenerateOptions& g = p.generate;
  generate->add_option("--lattice", g.lattice, "points per axis (K^3 points, or K^2 with --dim 2)")
      ->required();
  generate->add_option("--dim", g.dim, "2 or 3 (default 3)")->check(CLI::IsMember({2, 3}));
  generate->add_option("--spacing", g.spacing, "lattice spacing (default 1)")
      ->check(CLI::Validator(number_text_error, ""));
  generate
      ->add_option("--jitter", g.jitter,
                   "each coordinate moves by a uniform amount in [-J, J] (default 0.25)")
      ->check(CLI::Validator(number_text_error, ""));
  generate->add_option("--seed", g.seed, "random seed (default 1)");
  std::string generate_precision = "double";
  generate->add_option("--precision", generate_precision, "float or double (default double)")
      ->check(CLI::IsMember({"float", "double"}));
  generate->add_option("-o,--output", g.output,
                       "output: .npy, .csv, .tsv or .ply (default CSV "
                       "on standard output)");
  generate->add_flag("-q,--quiet", g.quiet, "no summary");
  generate->footer(std::string("\nExample (one million points, spacing 1):\n"
                               "  spatialhash generate --lattice 100 -o points.npy\n") +
                   kExitStatus);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string command;
    for (const CLI::App* sub : app.get_subcommands()) command = " " + sub->get_name();
    std::string message = e.what();
    if (command.empty() && argc > 1 && argv[1][0] != '-') {
      message = "unknown command '" + std::string(argv[1]) +
                "' (commands: pairs, lists, counts, stats, query, generate)";
    }
    return fail(ExitCode::usage, message, "Run 'spatialhash" + command + " --help' for usage.");
  }

  std::string command;
  for (const CLI::App* sub : app.get_subcommands()) command = sub->get_name();
  try {
    if (pairs->parsed()) {
      finish_input(p.pairs.search, p);
      run_pairs(p.pairs);
    } else if (lists->parsed()) {
      finish_input(p.lists, p);
      run_lists(p.lists);
    } else if (counts->parsed()) {
      finish_input(p.counts, p);
      run_counts(p.counts);
    } else if (stats->parsed()) {
      finish_input(p.stats.search, p);
      run_stats(p.stats);
    } else if (query->parsed()) {
      finish_input(p.query.search, p);
      run_query(p.query);
    } else if (generate->parsed()) {
      g.precision = generate_precision == "float" ? Precision::single : Precision::dual;
      run_generate(g);
    }
  } catch (const UsageError& e) {
    return fail(e.code(), e.what(), "Run 'spatialhash " + command + " --help' for usage.");
  } catch (const CliError& e) {
    return fail(e.code(), e.what(), "");
  } catch (const spatialhash::InvalidArgument& e) {
    return fail(ExitCode::usage, e.what(), "");
  } catch (const std::bad_alloc&) {
    return fail(ExitCode::failure, "out of memory", "");
  } catch (const std::exception& e) {
    return fail(ExitCode::failure, std::string("unexpected failure: ") + e.what(), "");
  }
  return static_cast<int>(ExitCode::ok);
}
