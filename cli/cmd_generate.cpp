// `spatialhash generate`: the default data set - a jittered cubic (or square) lattice, written
// point by point, so any size streams.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

#include "command_run.hpp"
#include "npy_writer.hpp"
#include "text_format.hpp"

namespace spatialhash::cli {

namespace {

enum class PointFormat { csv, tsv, npy, ply };

PointFormat point_format(const std::string& path) {
  if (path.empty() || path == "-") return PointFormat::csv;
  const std::size_t dot = path.find_last_of('.');
  const std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  if (ext == "csv") return PointFormat::csv;
  if (ext == "tsv") return PointFormat::tsv;
  if (ext == "npy") return PointFormat::npy;
  if (ext == "ply") return PointFormat::ply;
  throw UsageError("-o: generate writes .npy, .csv, .tsv or .ply, not '" + path + "'");
}

/// Streams points to one of the point formats; the count is known up front.
template <class T>
class PointWriter {
 public:
  PointWriter(OutputFile& out, PointFormat format, int dim, std::uint64_t count)
      : out_(out), format_(format), dim_(dim) {
    if (format == PointFormat::npy) {
      // The shape is known, so the header is final at once (the sink still patches it in place).
      sink_ = std::make_unique<FileArraySink>(out);
      npy_ = std::make_unique<NpyWriter<T>>(*sink_, static_cast<std::size_t>(dim));
    } else if (format == PointFormat::ply) {
      std::string header = "ply\nformat binary_little_endian 1.0\ncomment spatialhash generate\n";
      header += "element vertex " + std::to_string(count) + "\n";
      const char* type = std::is_same_v<T, float> ? "float" : "double";
      const char* axes[] = {"x", "y", "z"};
      for (int k = 0; k < dim; ++k)
        header += std::string("property ") + type + " " + axes[k] + "\n";
      header += "end_header\n";
      out_.write(header);
    } else {
      const char sep = format == PointFormat::tsv ? '\t' : ',';
      text_ =
          dim == 2 ? std::string("x") + sep + "y\n" : std::string("x") + sep + "y" + sep + "z\n";
    }
  }

  void add(const T* point) {
    if (npy_) {
      for (int k = 0; k < dim_; ++k) npy_->push(point[k]);
    } else if (format_ == PointFormat::ply) {
      static_assert(std::endian::native == std::endian::little || sizeof(T) == 0,
                    "the PLY writer emits little-endian values");
      out_.write(point, sizeof(T) * static_cast<std::size_t>(dim_));
    } else {
      const char sep = format_ == PointFormat::tsv ? '\t' : ',';
      for (int k = 0; k < dim_; ++k) {
        if (k > 0) text_ += sep;
        append_number(text_, point[k]);
      }
      text_ += '\n';
      if (text_.size() > (std::size_t{1} << 20)) flush_text();
    }
  }

  void finish() {
    if (npy_) npy_->finish();
    flush_text();
  }

 private:
  void flush_text() {
    out_.write(text_);
    text_.clear();
  }

  OutputFile& out_;
  PointFormat format_;
  int dim_;
  std::unique_ptr<ArraySink> sink_;
  std::unique_ptr<NpyWriter<T>> npy_;
  std::string text_;
};

template <class T>
void generate(const GenerateOptions& o, OutputFile& out, PointFormat format, std::uint64_t count) {
  PointWriter<T> writer(out, format, o.dim, count);
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> jitter(-o.jitter, o.jitter);
  const int side = o.lattice;
  const int z_side = o.dim == 3 ? side : 1;
  T point[3];
  for (int z = 0; z < z_side; ++z) {
    for (int y = 0; y < side; ++y) {
      for (int x = 0; x < side; ++x) {
        const int cell[3] = {x, y, z};
        for (int k = 0; k < o.dim; ++k) {
          point[k] = static_cast<T>(cell[k] * o.spacing + (o.jitter > 0.0 ? jitter(rng) : 0.0));
        }
        writer.add(point);
      }
    }
  }
  writer.finish();
}

/// Whether double `x` converts to a finite T. Doubles from 2^128 - 2^103 (halfway between the
/// largest float and 2^128) up round to float infinity.
template <class T>
bool finite_as(double x) {
  if constexpr (std::is_same_v<T, float>) return std::isfinite(x) && std::fabs(x) < 0x1.ffffffp+127;
  return std::isfinite(x);
}

/// Refuses, before anything is written, a lattice whose coordinates would not be finite in T.
/// generate() computes cell * spacing + u with u drawn by uniform_real_distribution(-J, J) as
/// 2J * c - J (c in [0, 1)); every step rounds monotonically, so each coordinate lies in
/// [-J, (K - 1) * spacing + J] evaluated in double, provided 2J is finite.
template <class T>
void check_finite(const GenerateOptions& o) {
  const std::string limit = std::string("finite in ") +
                            (std::is_same_v<T, float> ? "float" : "double") + " (largest " +
                            shortest(static_cast<double>(std::numeric_limits<T>::max())) + ")";
  const std::string hint =
      std::is_same_v<T, float> ? "; use --precision double or a smaller " : "; use a smaller ";
  if (!std::isfinite(2.0 * o.jitter) || !finite_as<T>(o.jitter)) {
    throw UsageError("--jitter " + shortest(o.jitter) + " would give coordinates that are not " +
                     limit + hint + "--jitter");
  }
  const double bound = (o.lattice - 1) * o.spacing + o.jitter;
  if (!finite_as<T>(bound)) {
    throw UsageError("--spacing " + shortest(o.spacing) + " with --lattice " +
                     std::to_string(o.lattice) + " and --jitter " + shortest(o.jitter) +
                     " would give coordinates up to " +
                     (std::isfinite(bound) ? shortest(bound) : "infinity") + ", which is not " +
                     limit + hint + "--spacing");
  }
}

}  // namespace

void run_generate(const GenerateOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.lattice < 1) throw UsageError("--lattice must be >= 1");
  if (o.dim != 2 && o.dim != 3) throw UsageError("--dim must be 2 or 3");
  if (!(o.spacing > 0.0) || !std::isfinite(o.spacing)) {
    throw UsageError("--spacing must be a finite number > 0");
  }
  if (!(o.jitter >= 0.0) || !std::isfinite(o.jitter)) {
    throw UsageError("--jitter must be a finite number >= 0");
  }
  const double count = std::pow(static_cast<double>(o.lattice), o.dim);
  if (count >= 4294967295.0) {
    throw UsageError("--lattice " + std::to_string(o.lattice) + " gives " + shortest(count) +
                     " points, more than spatialhash can index (2^32 - 2)");
  }
  if (o.precision == Precision::single) {
    check_finite<float>(o);
  } else {
    check_finite<double>(o);
  }
  const PointFormat format = point_format(o.output);
  // The .npy header goes through write_at(), so that output must be seekable.
  OutputFile out(o.output, format == PointFormat::npy);
  const auto n = static_cast<std::uint64_t>(count);
  if (o.precision == Precision::single) {
    generate<float>(o, out, format, n);
  } else {
    generate<double>(o, out, format, n);
  }
  out.commit();
  if (!o.quiet) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr,
                 "spatialhash generate: %s points (%d^%d lattice, spacing %s, jitter +-%s) in "
                 "%s%s\n",
                 with_commas(n).c_str(), o.lattice, o.dim, shortest(o.spacing).c_str(),
                 shortest(o.jitter).c_str(), format_seconds(seconds).c_str(),
                 out.is_stdout() ? "" : (" -> " + out.name()).c_str());
  }
}

}  // namespace spatialhash::cli
