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
#include "bucket_sorted_points.hpp"
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
    const auto sorted = grid_.points.view();
    const std::size_t n = sorted.size();
    Cell<Dim> cell{};
    Rows rows{};
    for (std::size_t a = 0; a < n; ++a) {
      const Cell<Dim> c = this->context_.grid.cell_of(sorted, a);
      if (a == 0 || c != cell) {  // consecutive points mostly share a cell
        cell = c;
        rows = rows_around(c);
      }
      const index_t i = grid_.points.sorted_ids[a];
      const auto test = [&](std::size_t b) {
        const double d2 = distance_squared(sorted, a, b);
        if (d2 <= r2) {
          const index_t j = grid_.points.sorted_ids[b];
          sink.emplace(std::min(i, j), std::max(i, j), d2);
        }
      };
      for (std::size_t b = a + 1; b < rows.ranges[kOwnRow].end; ++b) test(b);
      for (int r = kOwnRow + 1; r < kRows; ++r) {
        for (std::size_t b = rows.ranges[r].begin; b < rows.ranges[r].end; ++b) test(b);
      }
    }
  }

  void ball(const Position& center, double radius, HitSink& sink) const override {
    Cell<Dim> c;
    if (!this->context_.grid.cell_of_position(center, c)) return;  // too far out for neighbors
    ball_in_ranges(grid_.points, rows_around(c), center, radius, sink);
  }

  void neighbor_counts(double radius, std::span<index_t> counts) const override {
    grid_neighbor_counts(std::span<const index_t>(grid_.points.sorted_ids), counts,
                         this->context_.threads, neighbor_visitor(radius));
  }

  /// Counts first, then fills each row in place: never more memory than the output.
  void neighbor_lists(const ListRequest& request, NeighborLists& out) const override {
    grid_neighbor_lists(std::span<const index_t>(grid_.points.sorted_ids), request.with_distances,
                        this->context_.threads, neighbor_visitor(request.radius), out);
  }

 private:
  /// Row r of the 3^Dim block has dy = r % 3 - 1 and, in 3D, dz = r / 3 - 1; the middle row is
  /// the cell's own. Every row is in use (count = kRows); rows off the lattice are empty.
  static constexpr int kRows = Dim == 2 ? 3 : 9;
  static constexpr int kOwnRow = kRows / 2;
  using Rows = RangeSet<kRows>;

  /// The counting-sorted structure; built whole before it replaces the previous one.
  struct Grid {
    Cell<Dim> dims{};
    Cell<Dim> stride{};                 ///< linear cell = sum of c[k] * stride[k], x fastest
    BucketSortedPoints<Dim, T> points;  ///< one bucket per linear cell
  };

  static Grid build(const Context<Dim, T>& context) {
    const auto& lattice = context.grid;
    check_lattice_size(lattice.total_cells(), context.points.size());

    Grid g;
    g.dims = lattice.dims;
    std::int64_t cells = 1;
    for (int k = 0; k < Dim; ++k) {
      g.stride[k] = cells;
      cells *= g.dims[k];
    }
    // Every point's cell lies in [0, dims) on each axis: cell_along is monotone and dims was
    // computed from the same expression at the box's upper corner (grid_geometry.hpp).
    g.points = counting_sort_points(context, static_cast<std::size_t>(cells),
                                    [stride = g.stride](const Cell<Dim>& c) {
                                      std::int64_t linear = 0;
                                      for (int k = 0; k < Dim; ++k) linear += c[k] * stride[k];
                                      return static_cast<std::uint64_t>(linear);
                                    });
    return g;
  }

  /// The ranges of the 3^Dim cells around c, clipped to the lattice. c may lie one cell outside
  /// the lattice (a ball centre just outside the bounding box).
  Rows rows_around(const Cell<Dim>& c) const {
    Rows rows{};
    rows.count = kRows;
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
      rows.ranges[r] = {grid_.points.start[base + x_lo], grid_.points.start[base + x_hi + 1]};
    }
    return rows;
  }

  /// Full-stencil search for the parallel lists (see range_visitor).
  auto neighbor_visitor(double radius) const {
    return range_visitor(this->context_.grid, grid_.points, radius,
                         [this](const Cell<Dim>& c) { return rows_around(c); });
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
