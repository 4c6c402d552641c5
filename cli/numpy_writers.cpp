// .npy and .npz result writers. Index arrays are int32 while every point index fits, int64
// otherwise; offsets are always int64 (their total can exceed 2^31 even for few points).
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "npy_writer.hpp"
#include "writer_factories.hpp"

namespace spatialhash::cli {

namespace {

bool fits_int32(std::size_t point_count) {
  return point_count <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
}

/// Collects distances on disk while the primary array streams, then writes them as the archive
/// entry "distances.npy".
class DistanceSpill {
 public:
  explicit DistanceSpill(OutputFile& out) : file_(out.directory(), out.name()) {}
  void add(std::span<const double> distances) {
    file_.write(distances.data(), distances.size() * sizeof(double));
  }
  void write_entry(ZipWriter& zip) {
    ZipArraySink sink(zip, "distances.npy");
    NpyWriter<double> array(sink, 0);
    file_.replay([&](const char* bytes, std::size_t size) {
      for (std::size_t at = 0; at < size; at += sizeof(double)) {
        double d;
        std::memcpy(&d, bytes + at, sizeof d);
        array.push(d);
      }
    });
    array.finish();
  }

 private:
  SpillFile file_;
};

/// Pairs as an (m, 2) array, alone in a .npy or as "pairs" in an .npz with optional distances.
template <class I>
class NumpyPairWriter final : public PairWriter {
 public:
  NumpyPairWriter(OutputFile& out, const WriterSetup& setup) {
    if (setup.format == OutputFormat::npz) {
      zip_.emplace(out);
      sink_ = std::make_unique<ZipArraySink>(*zip_, "pairs.npy");
      if (setup.with_distances) distances_.emplace(out);
    } else {
      sink_ = std::make_unique<FileArraySink>(out);
    }
    pairs_.emplace(*sink_, 2);
  }
  void add(std::span<const Pair> pairs, std::span<const double> distances) override {
    for (const Pair& p : pairs) {
      pairs_->push(static_cast<I>(p.first));
      pairs_->push(static_cast<I>(p.second));
    }
    if (distances_) distances_->add(distances);
  }
  void finish() override {
    pairs_->finish();
    if (zip_) {
      if (distances_) distances_->write_entry(*zip_);
      zip_->finish();
    }
  }

 private:
  std::optional<ZipWriter> zip_;
  std::unique_ptr<ArraySink> sink_;
  std::optional<NpyWriter<I>> pairs_;
  std::optional<DistanceSpill> distances_;
};

/// CSR lists in an .npz: "indices" streams; "offsets" (one int64 per row, kept in memory like
/// the points) and "distances" (spilled to disk) follow at the end.
template <class I>
class NumpyRowWriter final : public RowWriter {
 public:
  NumpyRowWriter(OutputFile& out, const WriterSetup& setup)
      : zip_(out), indices_sink_(zip_, "indices.npy"), indices_(indices_sink_, 0) {
    if (setup.with_distances) distances_.emplace(out);
  }
  void add_row(std::span<const index_t> neighbors, std::span<const double> distances) override {
    for (index_t j : neighbors) indices_.push(static_cast<I>(j));
    if (distances_) distances_->add(distances);
    offsets_.push_back(offsets_.back() + static_cast<std::int64_t>(neighbors.size()));
  }
  void finish() override {
    indices_.finish();
    if (distances_) distances_->write_entry(zip_);
    ZipArraySink sink(zip_, "offsets.npy");
    NpyWriter<std::int64_t> offsets(sink, 0);
    for (std::int64_t o : offsets_) offsets.push(o);
    offsets.finish();
    zip_.finish();
  }

 private:
  ZipWriter zip_;
  ZipArraySink indices_sink_;
  NpyWriter<I> indices_;
  std::optional<DistanceSpill> distances_;
  std::vector<std::int64_t> offsets_{0};
};

template <class I>
void write_counts_as(OutputFile& out, const WriterSetup& setup, std::span<const index_t> counts) {
  std::optional<ZipWriter> zip;
  std::unique_ptr<ArraySink> sink;
  if (setup.format == OutputFormat::npz) {
    zip.emplace(out);
    sink = std::make_unique<ZipArraySink>(*zip, "counts.npy");
  } else {
    sink = std::make_unique<FileArraySink>(out);
  }
  NpyWriter<I> array(*sink, 0);
  for (index_t c : counts) array.push(static_cast<I>(c));
  array.finish();
  if (zip) zip->finish();
}

}  // namespace

std::unique_ptr<PairWriter> make_numpy_pair_writer(OutputFile& out, const WriterSetup& setup) {
  if (fits_int32(setup.point_count))
    return std::make_unique<NumpyPairWriter<std::int32_t>>(out, setup);
  return std::make_unique<NumpyPairWriter<std::int64_t>>(out, setup);
}

std::unique_ptr<RowWriter> make_numpy_row_writer(OutputFile& out, const WriterSetup& setup) {
  if (fits_int32(setup.point_count))
    return std::make_unique<NumpyRowWriter<std::int32_t>>(out, setup);
  return std::make_unique<NumpyRowWriter<std::int64_t>>(out, setup);
}

void write_numpy_counts(OutputFile& out, const WriterSetup& setup,
                        std::span<const index_t> counts) {
  if (fits_int32(setup.point_count)) {
    write_counts_as<std::int32_t>(out, setup, counts);
  } else {
    write_counts_as<std::int64_t>(out, setup, counts);
  }
}

}  // namespace spatialhash::cli
