// Internal: the per-format factories behind result_writers.hpp.
#pragma once

#include "result_writers.hpp"

namespace spatialhash::cli {

std::unique_ptr<PairWriter> make_text_pair_writer(OutputFile& out, const WriterSetup& setup);
std::unique_ptr<RowWriter> make_text_row_writer(OutputFile& out, const WriterSetup& setup);
void write_text_counts(OutputFile& out, const WriterSetup& setup, std::span<const index_t> counts);

std::unique_ptr<PairWriter> make_numpy_pair_writer(OutputFile& out, const WriterSetup& setup);
std::unique_ptr<RowWriter> make_numpy_row_writer(OutputFile& out, const WriterSetup& setup);
void write_numpy_counts(OutputFile& out, const WriterSetup& setup, std::span<const index_t> counts);

}  // namespace spatialhash::cli
