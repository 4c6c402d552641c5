// .npy reader: C-order arrays stream in blocks straight into the coordinate vector; Fortran-order
// arrays (one column after another) are scattered column by column.
#include "read_npy.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "errors.hpp"
#include "npy_format.hpp"

namespace spatialhash::cli {

namespace {

constexpr std::size_t kChunkValues = std::size_t{1} << 17;

/// The stored element type of the array.
struct Stored {
  bool single = false;  ///< float32, else float64
  bool big = false;     ///< big-endian bytes
};

template <class U>
U load(const char* p, bool big) {
  U value;
  std::memcpy(&value, p, sizeof(U));
  if (big != (std::endian::native == std::endian::big)) {
    if constexpr (sizeof(U) == 4) {
      value = std::bit_cast<U>(__builtin_bswap32(std::bit_cast<std::uint32_t>(value)));
    } else {
      value = std::bit_cast<U>(__builtin_bswap64(std::bit_cast<std::uint64_t>(value)));
    }
  }
  return value;
}

/// The truncation error for an array whose data ends after `held` of its values.
InputError truncated(const std::string& file, const NpyHeader& header, std::uint64_t held) {
  const std::uint64_t rows = header.shape[0], columns = header.shape[1];
  const std::string shape = " (shape " + shape_text(header.shape) + ")";
  if (!header.fortran_order) {
    return InputError("'" + file + "' is truncated: its data ends after " +
                      std::to_string(held / columns) + " of the " + std::to_string(rows) +
                      " rows its header announces" + shape);
  }
  return InputError("'" + file + "' is truncated: its data (Fortran order, one column after " +
                    "another) ends in column " + std::to_string(held / rows + 1) + " after " +
                    std::to_string(held % rows) + " of the " + std::to_string(rows) +
                    " rows its header announces" + shape);
}

/// Reads runs of stored values as doubles, in chunks.
class ArrayReader {
 public:
  ArrayReader(BlockReader& reader, Stored stored, const NpyHeader& header)
      : reader_(reader), stored_(stored), header_(header) {}

  /// Reads the next `count` stored values, handing (i, value) to `put` for i = 0 .. count-1.
  template <class Put>
  void read(std::uint64_t count, Put put) {
    const std::size_t width = stored_.single ? 4 : 8;
    chunk_.resize(kChunkValues * width);
    for (std::uint64_t done = 0; done < count;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(count - done, kChunkValues));
      const std::size_t got = reader_.read(chunk_.data(), n * width);
      if (got < n * width) throw truncated(reader_.name(), header_, position_ + got / width);
      for (std::size_t i = 0; i < n; ++i) {
        put(done + i, stored_.single ? load<float>(chunk_.data() + i * 4, stored_.big)
                                     : load<double>(chunk_.data() + i * 8, stored_.big));
      }
      done += n;
      position_ += n;
    }
  }

 private:
  BlockReader& reader_;
  Stored stored_;
  const NpyHeader& header_;
  std::uint64_t position_ = 0;
  std::vector<char> chunk_;
};

/// The coordinate array being filled. When the input size is known, read_npy() has checked that
/// the data is all there and the array is allocated whole; otherwise (a pipe) the header's row
/// count is only a claim, so the array starts small and grows as rows arrive.
template <class T>
class Coordinates {
 public:
  Coordinates(std::uint64_t rows, int dim, bool size_known)
      : rows_(rows), dim_(static_cast<std::size_t>(dim)) {
    resize(size_known ? rows : std::min(rows, kUnknownSizeRows));
  }

  /// The storage of coordinate `k` of `row`, growing the array if needed. Rows arrive in order
  /// (C order, or the first column of Fortran order), so doubling keeps the copies amortized.
  T& at(std::uint64_t row, int k) {
    if (row >= allocated_) resize(std::min(rows_, std::max(2 * allocated_, row + 1)));
    return values_[static_cast<std::size_t>(row) * dim_ + static_cast<std::size_t>(k)];
  }

  std::vector<T> take() { return std::move(values_); }

 private:
  static constexpr std::uint64_t kUnknownSizeRows = std::uint64_t{1} << 12;

  void resize(std::uint64_t rows) {
    values_.resize(static_cast<std::size_t>(rows) * dim_);
    allocated_ = rows;
  }

  std::uint64_t rows_;
  std::size_t dim_;
  std::uint64_t allocated_ = 0;
  std::vector<T> values_;
};

/// `value` as T, or an InputError naming the row and axis when it is not finite in T.
template <class T>
T checked(double value, const std::string& file, std::uint64_t row, int axis) {
  const T narrowed = static_cast<T>(value);
  if (std::isfinite(narrowed)) return narrowed;
  const char* name = axis == 0 ? "x" : axis == 1 ? "y" : "z";
  const std::string what = std::isnan(value)   ? "is NaN"
                           : std::isinf(value) ? "is infinite"
                                               : "(" + std::to_string(value) +
                                                     ") is out of range for float (try "
                                                     "--precision double)";
  throw InputError("'" + file + "': row " + std::to_string(row) + ": " + name + " " + what +
                   "; coordinates must be finite");
}

template <class T>
std::vector<T> read_data(BlockReader& reader, Stored stored, const NpyHeader& header, int dim) {
  const std::uint64_t rows = header.shape[0], columns = header.shape[1];
  Coordinates<T> coords(rows, dim, reader.size() > 0);
  ArrayReader array(reader, stored, header);
  const std::string& file = reader.name();
  if (!header.fortran_order) {
    array.read(rows * columns, [&](std::uint64_t i, double value) {
      const std::uint64_t row = i / columns;
      const int column = static_cast<int>(i % columns);
      if (column < dim) coords.at(row, column) = checked<T>(value, file, row, column);
    });
  } else {
    // Column k is stored whole before column k + 1; columns past `dim` are never read.
    for (int k = 0; k < dim; ++k) {
      array.read(rows, [&](std::uint64_t row, double value) {
        coords.at(row, k) = checked<T>(value, file, row, k);
      });
    }
  }
  return coords.take();
}

}  // namespace

PointSet read_npy(BlockReader& reader, const InputSpec& spec) {
  if (!spec.columns.empty()) {
    throw UsageError("--columns applies to CSV/TSV/text input only; '" + reader.name() +
                     "' is a .npy array (its columns are x, y[, z])");
  }
  const NpyHeader header = read_npy_header(reader);
  const std::string what = "dtype '" + header.descr + "', shape " + shape_text(header.shape);
  Stored stored;
  const std::string& d = header.descr;
  if (d.size() != 3 || (d[0] != '<' && d[0] != '>' && d[0] != '=') || d[1] != 'f' ||
      (d[2] != '4' && d[2] != '8')) {
    throw InputError("'" + reader.name() + "' holds " + what +
                     "; spatialhash reads float32 or float64 arrays of shape (n, 2) or (n, 3)");
  }
  stored.single = d[2] == '4';
  stored.big = d[0] == '>' || (d[0] == '=' && std::endian::native == std::endian::big);
  if (header.shape.size() != 2 || (header.shape[1] != 2 && header.shape[1] != 3)) {
    throw InputError("'" + reader.name() + "' has shape " + shape_text(header.shape) +
                     "; spatialhash needs shape (n, 2) or (n, 3) (" + what + ")");
  }
  const int columns = static_cast<int>(header.shape[1]);
  const int dim = spec.dim != 0 ? spec.dim : columns;
  if (dim > columns) {
    throw InputError("--dim " + std::to_string(dim) + ", but '" + reader.name() + "' has shape " +
                     shape_text(header.shape));
  }
  const std::uint64_t rows = header.shape[0];
  if (rows >= std::numeric_limits<std::uint32_t>::max()) {
    throw InputError("'" + reader.name() + "' has " + std::to_string(rows) +
                     " rows, more than spatialhash can index (2^32 - 2)");
  }
  const std::uint64_t bytes = rows * static_cast<std::uint64_t>(columns) * (stored.single ? 4 : 8);
  if (reader.size() > 0 && reader.size() - reader.offset() < bytes) {
    throw InputError("'" + reader.name() + "' is truncated: its header announces " + what + " (" +
                     std::to_string(bytes) + " bytes of data) but only " +
                     std::to_string(reader.size() - reader.offset()) + " bytes follow");
  }
  const bool single = spec.precision == Precision::single ||
                      (spec.precision == Precision::automatic && stored.single);
  PointSet points;
  points.dim = dim;
  if (single) {
    points.coords = read_data<float>(reader, stored, header, dim);
  } else {
    points.coords = read_data<double>(reader, stored, header, dim);
  }
  points.description =
      reader.name() + " (.npy, " + what + (header.fortran_order ? ", Fortran order" : "") + ")";
  return points;
}

}  // namespace spatialhash::cli
