// Output format choice and dispatch to the per-format writers (see result_writers.hpp).
#include "result_writers.hpp"

#include <cctype>

#include "errors.hpp"
#include "writer_factories.hpp"

namespace spatialhash::cli {

OutputFormat output_format(const std::string& path) {
  if (path.empty() || path == "-") return OutputFormat::csv;
  const std::size_t dot = path.find_last_of('.');
  const std::size_t slash = path.find_last_of('/');
  std::string ext;
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) {
    ext = path.substr(dot + 1);
  }
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == "csv") return OutputFormat::csv;
  if (ext == "tsv") return OutputFormat::tsv;
  if (ext == "npy") return OutputFormat::npy;
  if (ext == "npz") return OutputFormat::npz;
  throw UsageError("-o: cannot tell the output format from '" + path +
                   "'; use a name ending in .csv, .tsv, .npy or .npz (or - for CSV on standard "
                   "output)");
}

void check_writable(const WriterSetup& setup, bool rows) {
  if (setup.format != OutputFormat::npy) return;
  if (rows) {
    throw UsageError(
        "-o: neighbor lists are two arrays (offsets and indices) and do not fit in "
        "one .npy file; write .npz (numpy.load gives both) or .csv");
  }
  if (setup.with_distances) {
    throw UsageError(
        "-o: --distances adds a second array, which a .npy file cannot hold; "
        "write .npz (pairs and distances) or .csv");
  }
}

std::unique_ptr<PairWriter> make_pair_writer(OutputFile& out, const WriterSetup& setup) {
  check_writable(setup, false);
  if (setup.format == OutputFormat::csv || setup.format == OutputFormat::tsv) {
    return make_text_pair_writer(out, setup);
  }
  return make_numpy_pair_writer(out, setup);
}

std::unique_ptr<RowWriter> make_row_writer(OutputFile& out, const WriterSetup& setup) {
  check_writable(setup, true);
  if (setup.format == OutputFormat::csv || setup.format == OutputFormat::tsv) {
    return make_text_row_writer(out, setup);
  }
  return make_numpy_row_writer(out, setup);
}

void write_counts(OutputFile& out, const WriterSetup& setup, std::span<const index_t> counts) {
  if (setup.format == OutputFormat::csv || setup.format == OutputFormat::tsv) {
    write_text_counts(out, setup, counts);
  } else {
    write_numpy_counts(out, setup, counts);
  }
}

}  // namespace spatialhash::cli
