// The spatialhash subcommands: their options (filled in by main.cpp) and entry points. Each entry
// point returns normally on success and throws CliError (or a library error) on failure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "point_set.hpp"

namespace spatialhash::cli {

/// Options shared by every command that searches.
struct SearchOptions {
  InputSpec input;
  double radius = 0.0;  ///< 0: not given
  std::string engine = "automatic";
  int threads = 0;     ///< 0: all cores
  std::string output;  ///< "" or "-": CSV on standard output
  bool quiet = false;
  bool distances = false;
  /// Results estimated below this many MiB are built in memory by the library's parallel array
  /// queries and then written; larger ones stream in chunks. 0: always stream.
  double max_buffer_mib = 1024.0;
};

/// `pairs`: every unordered pair within the radius.
struct PairsOptions {
  SearchOptions search;
  bool sort = false;  ///< sort pairs (holds them all in memory)
};

/// `stats`: a report on the data set, optionally a suggested radius.
struct StatsOptions {
  SearchOptions search;
  double target_neighbors = 0.0;  ///< 0: no suggestion
};

/// `query`: ball queries at given positions.
struct QueryOptions {
  SearchOptions search;
  std::vector<std::string> at;  ///< "x,y[,z]" positions
  std::string queries;          ///< a file of positions
};

/// `generate`: a jittered lattice data set.
struct GenerateOptions {
  int lattice = 0;  ///< points per axis
  int dim = 3;
  double spacing = 1.0;
  double jitter = 0.25;
  std::uint64_t seed = 1;
  Precision precision = Precision::automatic;
  std::string output;
  bool quiet = false;
};

void run_pairs(const PairsOptions& options);
void run_lists(const SearchOptions& options);
void run_counts(const SearchOptions& options);
void run_stats(const StatsOptions& options);
void run_query(const QueryOptions& options);
void run_generate(const GenerateOptions& options);

}  // namespace spatialhash::cli
