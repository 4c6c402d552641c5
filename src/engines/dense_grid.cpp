// Dense grid (Müller, "Blazing Fast Neighbor Search with Spatial Hashing", Ten Minute Physics):
// one counter per cell of the bounding-box lattice, filled by counting sort (count per cell,
// prefix sums, fill), so the points of cell c are sorted_ids[cell_start[c] .. cell_start[c+1]).
// A neighbor search scans the 3^Dim cells around a point's cell. Cells are numbered x fastest,
// so the three cells x-1, x, x+1 of one row are consecutive and their points form one range: a
// search reads 3^(Dim-1) ranges, not 3^Dim.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../engine_base.hpp"
#include "../exact.hpp"
#include "grid_lists.hpp"

namespace spatialhash::detail {
namespace {

/// The dense grid stores 4 bytes per cell of the bounding box, points or not, and its build and
/// pair scan cost O(cells). It therefore refuses lattices of more than
///   max(kCellsPerPoint * n, kMinCellLimit) cells:
/// at most 64 bytes of cell table per point (about what the engine already keeps per point: id,
/// sorted coordinate copy and build scratch), or a fixed 16 MiB for small sets (a few
/// milliseconds to build). Sparse or spread-out sets (far outliers, long lines in 3D, tiny radii)
/// exceed it; the hashed engines handle those in O(n) memory.
constexpr double kCellsPerPoint = 16.0;
constexpr double kMinCellLimit = 4194304.0;  // 2^22

std::string cell_count_text(double cells) {
  char text[64];
  std::snprintf(text, sizeof text, cells < 1e15 ? "%.0f" : "%.3e", cells);
  return text;
}

void check_lattice_size(double cells, std::size_t n) {
  const double limit = std::max(kCellsPerPoint * static_cast<double>(n), kMinCellLimit);
  if (cells > limit) {
    throw InvalidArgument("spatialhash: dense_grid refuses a lattice of " + cell_count_text(cells) +
                          " cells for " + std::to_string(n) + " points (limit " +
                          cell_count_text(limit) +
                          " cells): the points are too spread out for the radius; use "
                          "Engine::hashed_grid or the default engine (Engine::automatic)");
  }
}

template <int Dim, class T>
class DenseGrid final : public EngineBase<Dim, T> {
 public:
  using Base = EngineBase<Dim, T>;
  using typename Base::Position;

  explicit DenseGrid(const Context<Dim, T>& context) : Base(context), grid_(build(context)) {}

  Engine kind() const override { return Engine::dense_grid; }

  void update(const Context<Dim, T>& context) override {
    Grid fresh = build(context);  // may throw: nothing changed yet
    grid_ = std::move(fresh);
    this->context_ = context;
  }

  /// Each pair once: the point at sorted position a pairs with positions b > a only. Rows before
  /// a's own row hold only positions < a; in a's own row the positions after a; later rows all.
  void pairs(double radius, PairSink& sink) const override {
    const double r2 = radius * radius;
    const auto sorted = sorted_view();
    const std::size_t n = sorted.size();
    Cell<Dim> cell{};
    Rows rows{};
    for (std::size_t a = 0; a < n; ++a) {
      const Cell<Dim> c = this->context_.grid.cell_of(sorted, a);
      if (a == 0 || c != cell) {  // consecutive points mostly share a cell
        cell = c;
        rows = rows_around(c);
      }
      const index_t i = grid_.sorted_ids[a];
      const auto test = [&](std::size_t b) {
        const double d2 = distance_squared(sorted, a, b);
        if (d2 <= r2) {
          const index_t j = grid_.sorted_ids[b];
          sink.push(i < j ? PairHit{i, j, d2} : PairHit{j, i, d2});
        }
      };
      for (std::size_t b = a + 1; b < rows[kOwnRow].end; ++b) test(b);
      for (int r = kOwnRow + 1; r < kRows; ++r) {
        for (std::size_t b = rows[r].begin; b < rows[r].end; ++b) test(b);
      }
    }
  }

  void ball(const Position& center, double radius, HitSink& sink) const override {
    Cell<Dim> c;
    if (!this->context_.grid.cell_of_position(center, c)) return;  // too far out for neighbors
    const double r2 = radius * radius;
    const auto sorted = sorted_view();
    for (const Range& row : rows_around(c)) {
      for (std::size_t b = row.begin; b < row.end; ++b) {
        const double d2 = distance_squared(sorted, b, center);
        if (d2 <= r2) sink.push({grid_.sorted_ids[b], d2});
      }
    }
  }

  void neighbor_counts(double radius, std::span<index_t> counts) const override {
    grid_neighbor_counts(std::span<const index_t>(grid_.sorted_ids), counts, this->context_.threads,
                         neighbor_visitor(radius));
  }

  /// Counts first, then fills each row in place: never more memory than the output.
  void neighbor_lists(const ListRequest& request, NeighborLists& out) const override {
    grid_neighbor_lists(std::span<const index_t>(grid_.sorted_ids), request.with_distances,
                        this->context_.threads, neighbor_visitor(request.radius), out);
  }

 private:
  /// Positions [begin, end) of the sorted order.
  struct Range {
    index_t begin = 0;
    index_t end = 0;
  };
  /// Row r of the 3^Dim block has dy = r % 3 - 1 and, in 3D, dz = r / 3 - 1; the middle row is
  /// the cell's own.
  static constexpr int kRows = Dim == 2 ? 3 : 9;
  static constexpr int kOwnRow = kRows / 2;
  using Rows = std::array<Range, kRows>;

  /// The counting-sorted structure; built whole before it replaces the previous one.
  struct Grid {
    Cell<Dim> dims{};
    Cell<Dim> stride{};               ///< linear cell = sum of c[k] * stride[k], x fastest
    std::vector<index_t> cell_start;  ///< cells + 1 entries, cell_start[cells] = n
    std::vector<index_t> sorted_ids;  ///< point ids ordered by cell (ascending within a cell)
    std::vector<T> sorted_coords;     ///< their coordinates in the same order, Dim per point
  };

  static Grid build(const Context<Dim, T>& context) {
    const auto& lattice = context.grid;
    const auto& points = context.points;
    const std::size_t n = points.size();
    check_lattice_size(lattice.total_cells(), n);

    Grid g;
    g.dims = lattice.dims;
    std::int64_t cells = 1;
    for (int k = 0; k < Dim; ++k) {
      g.stride[k] = cells;
      cells *= g.dims[k];
    }
    // Every point's cell lies in [0, dims) on each axis: cell_along is monotone and dims was
    // computed from the same expression at the box's upper corner (grid_geometry.hpp).
    std::vector<std::uint64_t> cell_of_point(n);
    const auto sn = static_cast<std::int64_t>(n);
#pragma omp parallel for num_threads(context.threads) if (sn > 16384)
    for (std::int64_t i = 0; i < sn; ++i) {
      const Cell<Dim> c = lattice.cell_of(points, static_cast<std::size_t>(i));
      std::int64_t linear = 0;
      for (int k = 0; k < Dim; ++k) linear += c[k] * g.stride[k];
      cell_of_point[i] = static_cast<std::uint64_t>(linear);
    }
    // Count, then inclusive prefix sums (cell_start[c] = end of cell c), then fill backwards by
    // decrementing, which leaves cell_start[c] = start of cell c and ids ascending in each cell.
    g.cell_start.assign(static_cast<std::size_t>(cells) + 1, 0);
    for (std::size_t i = 0; i < n; ++i) ++g.cell_start[cell_of_point[i]];
    index_t running = 0;
    for (index_t& entry : g.cell_start) entry = running += entry;
    g.sorted_ids.resize(n);
    for (std::size_t i = n; i-- > 0;) g.sorted_ids[--g.cell_start[cell_of_point[i]]] = index_t(i);
    g.sorted_coords.resize(n * Dim);
#pragma omp parallel for num_threads(context.threads) if (sn > 16384)
    for (std::int64_t a = 0; a < sn; ++a) {
      const T* from = points.data + g.sorted_ids[a] * points.stride;
      std::copy(from, from + Dim, g.sorted_coords.begin() + a * Dim);
    }
    return g;
  }

  /// The points in sorted order: the same coordinate values (copied, not converted), so
  /// distance_squared on them is bit for bit the rule on the caller's points.
  PointsView<Dim, T> sorted_view() const {
    return PointsView<Dim, T>(grid_.sorted_coords.data(), grid_.sorted_ids.size());
  }

  /// The ranges of the 3^Dim cells around c, clipped to the lattice. c may lie one cell outside
  /// the lattice (a ball centre just outside the bounding box).
  Rows rows_around(const Cell<Dim>& c) const {
    Rows rows{};
    const std::int64_t x_lo = std::max<std::int64_t>(c[0] - 1, 0);
    const std::int64_t x_hi = std::min<std::int64_t>(c[0] + 1, grid_.dims[0] - 1);
    if (x_lo > x_hi) return rows;
    for (int r = 0; r < kRows; ++r) {
      const std::int64_t y = c[1] + r % 3 - 1;
      if (y < 0 || y >= grid_.dims[1]) continue;
      std::int64_t base = y * grid_.stride[1];
      if constexpr (Dim == 3) {
        const std::int64_t z = c[2] + r / 3 - 1;
        if (z < 0 || z >= grid_.dims[2]) continue;
        base += z * grid_.stride[2];
      }
      rows[r] = {grid_.cell_start[base + x_lo], grid_.cell_start[base + x_hi + 1]};
    }
    return rows;
  }

  /// Full-stencil search for the parallel lists: every neighbor of sorted position a but itself.
  /// Keeps the rows of the last cell (each thread has its own copy, see grid_lists.hpp).
  auto neighbor_visitor(double radius) const {
    return [this, r2 = radius * radius, sorted = sorted_view(), cell = Cell<Dim>{}, rows = Rows{},
            cached = false](std::int64_t a, auto&& emit) mutable {
      const auto self = static_cast<std::size_t>(a);
      const Cell<Dim> c = this->context_.grid.cell_of(sorted, self);
      if (!cached || c != cell) {
        cell = c;
        rows = rows_around(c);
        cached = true;
      }
      for (const Range& row : rows) {
        for (std::size_t b = row.begin; b < row.end; ++b) {
          if (b == self) continue;
          const double d2 = distance_squared(sorted, self, b);
          if (d2 <= r2) emit(grid_.sorted_ids[b], d2);
        }
      }
    };
  }

  Grid grid_;
};

}  // namespace

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_dense_grid(const Context<Dim, T>& context) {
  return std::make_unique<DenseGrid<Dim, T>>(context);
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template std::unique_ptr<EngineBase<D, T>> make_dense_grid(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
