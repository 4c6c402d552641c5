// CSV and TSV result writers: a header row, then one line per pair, row or point.
#include "text_format.hpp"
#include "writer_factories.hpp"

namespace spatialhash::cli {

namespace {

constexpr std::size_t kFlushAt = std::size_t{1} << 20;

/// Accumulates text and hands it to the output in blocks of about 1 MiB.
class TextSink {
 public:
  explicit TextSink(OutputFile& out) : out_(out) { text_.reserve(kFlushAt + 4096); }
  std::string& text() { return text_; }
  void maybe_flush() {
    if (text_.size() >= kFlushAt) flush();
  }
  void flush() {
    out_.write(text_);
    text_.clear();
  }

 private:
  OutputFile& out_;
  std::string text_;
};

char separator(const WriterSetup& setup) {
  return setup.format == OutputFormat::tsv ? '\t' : ',';
}

class TextPairWriter final : public PairWriter {
 public:
  TextPairWriter(OutputFile& out, const WriterSetup& setup)
      : sink_(out), sep_(separator(setup)), distances_(setup.with_distances) {
    std::string& t = sink_.text();
    t += "first";
    t += sep_;
    t += "second";
    if (distances_) (t += sep_) += "distance";
    t += '\n';
  }
  void add(std::span<const Pair> pairs, std::span<const double> distances) override {
    std::string& t = sink_.text();
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      append_number(t, std::uint64_t{pairs[k].first});
      t += sep_;
      append_number(t, std::uint64_t{pairs[k].second});
      if (distances_) {
        t += sep_;
        append_number(t, distances[k]);
      }
      t += '\n';
    }
    sink_.maybe_flush();
  }
  void finish() override { sink_.flush(); }

 private:
  TextSink sink_;
  char sep_;
  bool distances_;
};

class TextRowWriter final : public RowWriter {
 public:
  TextRowWriter(OutputFile& out, const WriterSetup& setup)
      : sink_(out), sep_(separator(setup)), distances_(setup.with_distances) {
    std::string& t = sink_.text();
    t += setup.row_label;
    (t += sep_) += "count";
    (t += sep_) += "neighbors";
    if (distances_) (t += sep_) += "distances";
    t += '\n';
  }
  void add_row(std::span<const index_t> neighbors, std::span<const double> distances) override {
    std::string& t = sink_.text();
    append_number(t, row_++);
    t += sep_;
    append_number(t, std::uint64_t{neighbors.size()});
    t += sep_;
    for (std::size_t k = 0; k < neighbors.size(); ++k) {
      if (k > 0) t += ' ';
      append_number(t, std::uint64_t{neighbors[k]});
    }
    if (distances_) {
      t += sep_;
      for (std::size_t k = 0; k < distances.size(); ++k) {
        if (k > 0) t += ' ';
        append_number(t, distances[k]);
      }
    }
    t += '\n';
    sink_.maybe_flush();
  }
  void finish() override { sink_.flush(); }

 private:
  TextSink sink_;
  char sep_;
  bool distances_;
  std::uint64_t row_ = 0;
};

}  // namespace

std::unique_ptr<PairWriter> make_text_pair_writer(OutputFile& out, const WriterSetup& setup) {
  return std::make_unique<TextPairWriter>(out, setup);
}

std::unique_ptr<RowWriter> make_text_row_writer(OutputFile& out, const WriterSetup& setup) {
  return std::make_unique<TextRowWriter>(out, setup);
}

void write_text_counts(OutputFile& out, const WriterSetup& setup, std::span<const index_t> counts) {
  TextSink sink(out);
  const char sep = separator(setup);
  std::string& t = sink.text();
  ((t += setup.row_label) += sep) += "count\n";
  for (std::size_t i = 0; i < counts.size(); ++i) {
    append_number(t, std::uint64_t{i});
    t += sep;
    append_number(t, std::uint64_t{counts[i]});
    t += '\n';
    sink.maybe_flush();
  }
  sink.flush();
}

}  // namespace spatialhash::cli
