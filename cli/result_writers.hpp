// Result writers: the search commands hand their results over in batches or rows, in the order
// found, and a writer turns them into CSV, TSV, .npy or .npz without holding the whole result.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "output_file.hpp"
#include "spatialhash/spatialhash.hpp"

namespace spatialhash::cli {

/// Output formats, chosen by the extension of -o (standard output is CSV).
enum class OutputFormat { csv, tsv, npy, npz };

/// The format for an output path; throws UsageError for an extension it cannot write.
OutputFormat output_format(const std::string& path);

/// Receives the pairs of a `pairs` run, batch by batch.
class PairWriter {
 public:
  virtual ~PairWriter() = default;
  /// `distances` (Euclidean) has one entry per pair, or is empty when not requested.
  virtual void add(std::span<const Pair> pairs, std::span<const double> distances) = 0;
  /// Completes the output (array headers, archive directory). Call once, at the end.
  virtual void finish() = 0;
};

/// Receives neighbor lists row by row: row 0 first, then 1, 2, ...; each row's neighbors in
/// ascending index order.
class RowWriter {
 public:
  virtual ~RowWriter() = default;
  /// `distances` has one entry per neighbor, or is empty when not requested.
  virtual void add_row(std::span<const index_t> neighbors, std::span<const double> distances) = 0;
  virtual void finish() = 0;
};

/// What a writer needs to know besides the format.
struct WriterSetup {
  OutputFormat format = OutputFormat::csv;
  bool with_distances = false;
  std::size_t point_count = 0;      ///< decides int32 or int64 index arrays
  std::string row_label = "point";  ///< CSV column naming the row: "point" or "query"
};

/// Pairs: CSV/TSV rows "first,second[,distance]"; .npy an (m, 2) int array; .npz "pairs"
/// (m, 2) and, with distances, "distances" (m,). Throws UsageError for distances into .npy.
std::unique_ptr<PairWriter> make_pair_writer(OutputFile& out, const WriterSetup& setup);

/// Lists: CSV/TSV rows "point,count,neighbors[,distances]" with space-separated lists; .npz
/// "offsets" (n+1,) int64 and "indices" (CSR) plus "distances". Throws UsageError for .npy.
std::unique_ptr<RowWriter> make_row_writer(OutputFile& out, const WriterSetup& setup);

/// Neighbor counts: CSV/TSV rows "point,count"; .npy an (n,) int array; .npz "counts".
void write_counts(OutputFile& out, const WriterSetup& setup, std::span<const index_t> counts);

/// Checks before any work that `setup` can be written (same rules as the factories).
void check_writable(const WriterSetup& setup, bool rows);

}  // namespace spatialhash::cli
