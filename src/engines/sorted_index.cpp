// Sorted index (seed 003, the implicit spatial index): the points sorted by a packed integer cell
// key, row-major with the highest axis in the high bits, and nothing else: no table, no cell list.
// A row of neighbor cells is found by one binary search for its first key; the three cells of the
// row are then one contiguous run of the sorted array.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "../engine_base.hpp"
#include "../exact.hpp"

namespace spatialhash::detail {
namespace {

/// The packed key: 64 / Dim bits per axis (2D: 32, 3D: 21), x in the low bits, so sorting by key
/// orders the cells row by row and the cells of a row are adjacent in the sorted array.
template <int Dim>
struct KeyLayout {
  static constexpr int kBits = 64 / Dim;
  static constexpr std::int64_t kMaxCells = std::int64_t{1} << kBits;

  /// Cell coordinates must lie in [0, kMaxCells) along each axis (callers clamp to the lattice).
  static std::uint64_t pack(const Cell<Dim>& c) {
    std::uint64_t key = 0;
    for (int k = Dim - 1; k >= 0; --k) key = (key << kBits) | static_cast<std::uint64_t>(c[k]);
    return key;
  }
  static Cell<Dim> unpack(std::uint64_t key) {
    Cell<Dim> c;
    for (int k = 0; k < Dim; ++k) {
      c[k] = static_cast<std::int64_t>(key & (std::uint64_t(kMaxCells) - 1));
      key >>= kBits;
    }
    return c;
  }
};

const char* axis_name(int k) {
  return k == 0 ? "x" : (k == 1 ? "y" : "z");
}

/// Sorts (key, id) records by key with a least-significant-digit radix sort over `bits` bits.
/// Stable, so equal keys keep ascending ids.
struct KeyId {
  std::uint64_t key;
  index_t id;
};
void radix_sort(std::vector<KeyId>& items, int bits) {
  if (bits == 0 || items.size() < 2) return;
  const int passes = (bits + 10) / 11;
  const int width = (bits + passes - 1) / passes;
  const std::size_t buckets = std::size_t{1} << width;
  std::vector<KeyId> scratch(items.size());
  std::vector<std::size_t> count(buckets);
  for (int p = 0; p < passes; ++p) {
    const int shift = p * width;
    const std::uint64_t mask = buckets - 1;
    std::fill(count.begin(), count.end(), std::size_t{0});
    for (const KeyId& item : items) ++count[(item.key >> shift) & mask];
    std::size_t sum = 0;
    for (std::size_t& c : count) {
      const std::size_t here = c;
      c = sum;
      sum += here;
    }
    for (const KeyId& item : items) scratch[count[(item.key >> shift) & mask]++] = item;
    items.swap(scratch);
  }
}

template <int Dim, class T>
class SortedIndex final : public EngineBase<Dim, T> {
 public:
  using Base = EngineBase<Dim, T>;
  using typename Base::Position;
  using Layout = KeyLayout<Dim>;

  explicit SortedIndex(const Context<Dim, T>& context) : Base(context), state_(build(context)) {}

  Engine kind() const override { return Engine::sorted_index; }

  /// A full re-sort (the seed keeps the array in sync by sorting after every move). Builds the new
  /// state first, so a throw leaves the engine as it was.
  void update(const Context<Dim, T>& context) override {
    State next = build(context);
    state_ = std::move(next);
    this->context_ = context;
  }

  void pairs(double radius, PairSink& sink) const override {
    const std::vector<std::uint64_t>& keys = state_.keys;
    const std::size_t n = keys.size();
    const PointsView<Dim, T> sorted = sorted_points();
    const Cell<Dim>& dims = this->context_.grid.dims;
    const double r2 = radius * radius;
    // Rows of the half stencil ahead of the home row (the home row's own forward neighbor is the
    // next cell). Row lookups for one offset only move forward as the home cell advances, so each
    // keeps a cursor and gallops from it before the binary search.
    constexpr int kRows = Dim == 2 ? 1 : 4;
    static constexpr std::array<std::array<int, 2>, 4> kRowOffsets{
        {{1, 0}, {-1, 1}, {0, 1}, {1, 1}}};
    std::array<std::size_t, kRows> cursor{};

    auto test = [&](std::size_t a, std::size_t b) {
      const double d2 = distance_squared(sorted, a, b);
      if (d2 <= r2) {
        const index_t i = state_.ids[a], j = state_.ids[b];
        sink.emplace(std::min(i, j), std::max(i, j), d2);
      }
    };

    std::size_t home = 0;
    while (home < n) {
      const std::uint64_t key = keys[home];
      std::size_t home_end = home + 1;
      while (home_end < n && keys[home_end] == key) ++home_end;
      const Cell<Dim> c = Layout::unpack(key);
      for (std::size_t a = home; a < home_end; ++a) {
        for (std::size_t b = a + 1; b < home_end; ++b) test(a, b);
      }
      // The next cell of the same row starts right after the home run (x + 1 < dims: never let
      // the key carry into the next row).
      if (c[0] + 1 < dims[0]) {
        for (std::size_t b = home_end; b < n && keys[b] == key + 1; ++b) {
          for (std::size_t a = home; a < home_end; ++a) test(a, b);
        }
      }
      for (int row = 0; row < kRows; ++row) {
        Cell<Dim> lo = c;
        lo[1] += kRowOffsets[row][0];
        if constexpr (Dim == 3) lo[2] += kRowOffsets[row][1];
        if (lo[1] < 0 || lo[1] >= dims[1] || (Dim == 3 && lo[Dim - 1] >= dims[Dim - 1])) continue;
        Cell<Dim> hi = lo;
        lo[0] = std::max<std::int64_t>(c[0] - 1, 0);
        hi[0] = std::min<std::int64_t>(c[0] + 1, dims[0] - 1);
        const std::uint64_t lo_key = Layout::pack(lo), hi_key = Layout::pack(hi);
        cursor[row] = gallop_lower_bound(keys, cursor[row], lo_key);
        for (std::size_t b = cursor[row]; b < n && keys[b] <= hi_key; ++b) {
          for (std::size_t a = home; a < home_end; ++a) test(a, b);
        }
      }
      home = home_end;
    }
  }

  void ball(const Position& center, double radius, HitSink& sink) const override {
    const GridGeometry<Dim>& grid = this->context_.grid;
    Cell<Dim> c;
    if (keys_empty() || !grid.cell_of_position(center, c)) return;
    // The 3^Dim block around the center's cell, clipped to the lattice: cells outside it hold no
    // points, and clipping (not wrapping) keeps every key a real one.
    Cell<Dim> lo, hi;
    for (int k = 0; k < Dim; ++k) {
      lo[k] = std::max<std::int64_t>(c[k] - 1, 0);
      hi[k] = std::min<std::int64_t>(c[k] + 1, grid.dims[k] - 1);
      if (lo[k] > hi[k]) return;
    }
    const std::vector<std::uint64_t>& keys = state_.keys;
    const PointsView<Dim, T> sorted = sorted_points();
    const double r2 = radius * radius;
    auto scan_row = [&](Cell<Dim> row) {
      row[0] = lo[0];
      const std::uint64_t lo_key = Layout::pack(row);
      row[0] = hi[0];
      const std::uint64_t hi_key = Layout::pack(row);
      auto it = std::lower_bound(keys.begin(), keys.end(), lo_key);
      for (auto s = static_cast<std::size_t>(it - keys.begin());
           s < keys.size() && keys[s] <= hi_key; ++s) {
        const double d2 = distance_squared(sorted, s, center);
        if (d2 <= r2) sink.emplace(state_.ids[s], d2);
      }
    };
    Cell<Dim> row = lo;
    if constexpr (Dim == 2) {
      for (row[1] = lo[1]; row[1] <= hi[1]; ++row[1]) scan_row(row);
    } else {
      for (row[2] = lo[2]; row[2] <= hi[2]; ++row[2]) {
        for (row[1] = lo[1]; row[1] <= hi[1]; ++row[1]) scan_row(row);
      }
    }
  }

 private:
  /// Invariant: keys ascending; ids[s] is the caller's index of the point at sorted position s and
  /// coords holds its coordinates (same type T, so distances are bit-identical to the caller's).
  struct State {
    std::vector<std::uint64_t> keys;
    std::vector<index_t> ids;
    std::vector<T> coords;
  };

  bool keys_empty() const { return state_.keys.empty(); }
  PointsView<Dim, T> sorted_points() const {
    return PointsView<Dim, T>(state_.coords.data(), state_.ids.size(), Dim);
  }

  /// First position at or after `from` whose key is >= `target`: exponential steps from `from`,
  /// then std::lower_bound inside the last step.
  static std::size_t gallop_lower_bound(const std::vector<std::uint64_t>& keys, std::size_t from,
                                        std::uint64_t target) {
    const std::size_t n = keys.size();
    if (from >= n || keys[from] >= target) return from;
    std::size_t step = 1, low = from;  // keys[low] < target
    while (low + step < n && keys[low + step] < target) {
      low += step;
      step *= 2;
    }
    const std::size_t high = std::min(low + step, n);
    return static_cast<std::size_t>(
        std::lower_bound(keys.begin() + static_cast<std::ptrdiff_t>(low + 1),
                         keys.begin() + static_cast<std::ptrdiff_t>(high), target) -
        keys.begin());
  }

  static State build(const Context<Dim, T>& context) {
    const GridGeometry<Dim>& grid = context.grid;
    for (int k = 0; k < Dim; ++k) {
      if (grid.dims[k] > Layout::kMaxCells) {
        throw InvalidArgument(
            "spatialhash: engine sorted_index packs " + std::to_string(Layout::kBits) +
            " bits per axis, but the lattice needs " + std::to_string(grid.dims[k]) +
            " cells along " + axis_name(k) + " (radius too small for the extent of the points); " +
            "use Engine::hashed_grid or Engine::cell_hash, or a larger radius");
      }
    }
    const PointsView<Dim, T>& points = context.points;
    const std::size_t n = points.size();
    // Sort on a compact key (just enough bits per axis for the lattice), which orders the points
    // exactly like the packed key but needs fewer radix passes.
    std::array<int, Dim> shift{};
    int bits = 0;
    for (int k = 0; k < Dim; ++k) {
      shift[k] = bits;
      bits += static_cast<int>(std::bit_width(static_cast<std::uint64_t>(grid.dims[k] - 1)));
    }
    std::vector<KeyId> items(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t key = 0;
      for (int k = 0; k < Dim; ++k) {
        key |= static_cast<std::uint64_t>(grid.cell_along(points.coord(i, k), k)) << shift[k];
      }
      items[i] = {key, static_cast<index_t>(i)};
    }
    radix_sort(items, bits);
    State state;
    state.keys.resize(n);
    state.ids.resize(n);
    state.coords.resize(n * Dim);
    for (std::size_t s = 0; s < n; ++s) {
      Cell<Dim> c;
      for (int k = 0; k < Dim; ++k) {
        const int width = (k + 1 < Dim ? shift[k + 1] : bits) - shift[k];
        c[k] = static_cast<std::int64_t>((items[s].key >> shift[k]) &
                                         ((std::uint64_t{1} << width) - 1));
      }
      const index_t id = items[s].id;
      state.keys[s] = Layout::pack(c);
      state.ids[s] = id;
      for (int k = 0; k < Dim; ++k) state.coords[s * Dim + k] = points.data[id * points.stride + k];
    }
    return state;
  }

  State state_;
};

}  // namespace

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_sorted_index(const Context<Dim, T>& context) {
  return std::make_unique<SortedIndex<Dim, T>>(context);
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template std::unique_ptr<EngineBase<D, T>> make_sorted_index(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
