// Hashed grid (Müller, "Blazing Fast Neighbor Search with Spatial Hashing", and the flat-array
// layout of seed 004): the unbounded cell lattice is folded into a table of
// bit_ceil(max(n, 1)) slots by hash = XOR of cell coordinates times large primes, masked; the
// points are counting-sorted by slot (count, prefix sums, fill), so the points of slot s are
// sorted_ids[slot_start[s] .. slot_start[s+1]). Memory is O(n) whatever the extent of the points.
//
// Two invariants make it exact:
//  - A slot may hold points of other, colliding cells; the exact distance test rejects them (a
//    true neighbor's cell is always one of the 3^Dim scanned, so its slot is always scanned).
//  - Two of the 3^Dim cells around a point may hash to the same slot; each slot is scanned once
//    per query (deduplicated in a small fixed array), otherwise its points would be reported
//    twice.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "../engine_base.hpp"
#include "../exact.hpp"
#include "bucket_sorted_points.hpp"
#include "grid_lists.hpp"

namespace spatialhash::detail {
namespace {

/// Müller's primes (92837111, 689287499, 283923481). Products wrap modulo 2^64 (unsigned, so
/// well defined for negative cells); odd multipliers keep the low bits, the ones the mask keeps,
/// a bijection of each coordinate's low bits.
template <int Dim>
std::uint64_t hash_cell(const Cell<Dim>& c) {
  std::uint64_t h = static_cast<std::uint64_t>(c[0]) * 92837111u;
  h ^= static_cast<std::uint64_t>(c[1]) * 689287499u;
  if constexpr (Dim == 3) h ^= static_cast<std::uint64_t>(c[2]) * 283923481u;
  return h;
}

/// The 3^Dim offsets of a cell's neighborhood, itself included.
template <int Dim>
constexpr auto stencil_offsets() {
  std::array<Cell<Dim>, stencil_size<Dim>(1)> offsets{};
  for (int t = 0; t < stencil_size<Dim>(1); ++t) offsets[t] = stencil_offset<Dim>(t, 1);
  return offsets;
}

template <int Dim, class T>
class HashedGrid final : public EngineBase<Dim, T> {
 public:
  using Base = EngineBase<Dim, T>;
  using typename Base::Position;

  explicit HashedGrid(const Context<Dim, T>& context) : Base(context), table_(build(context)) {}

  Engine kind() const override { return Engine::hashed_grid; }

  void update(const Context<Dim, T>& context) override {
    Table fresh = build(context);  // may throw: nothing changed yet
    table_ = std::move(fresh);
    this->context_ = context;
  }

  /// Each pair once: the point at sorted position a pairs with positions b > a of its deduplicated
  /// neighbor slots (the relation is symmetric, so the other point of the pair skips it).
  void pairs(double radius, PairSink& sink) const override {
    const double r2 = radius * radius;
    const auto sorted = table_.points.view();
    const std::size_t n = sorted.size();
    Cell<Dim> cell{};
    Slots slots{};
    for (std::size_t a = 0; a < n; ++a) {
      const Cell<Dim> c = this->context_.grid.cell_of(sorted, a);
      if (a == 0 || c != cell) {  // points of one cell often follow each other in a slot
        cell = c;
        slots = slots_around(c);
      }
      const index_t i = table_.points.sorted_ids[a];
      for (const SortedRange& slot : slots) {
        for (std::size_t b = std::max<std::size_t>(slot.begin, a + 1); b < slot.end; ++b) {
          const double d2 = distance_squared(sorted, a, b);
          if (d2 <= r2) {
            const index_t j = table_.points.sorted_ids[b];
            sink.emplace(std::min(i, j), std::max(i, j), d2);
          }
        }
      }
    }
  }

  void ball(const Position& center, double radius, HitSink& sink) const override {
    Cell<Dim> c;
    if (!this->context_.grid.cell_of_position(center, c)) return;  // too far out for neighbors
    ball_in_ranges(table_.points, slots_around(c), center, radius, sink);
  }

  void neighbor_counts(double radius, std::span<index_t> counts) const override {
    grid_neighbor_counts(std::span<const index_t>(table_.points.sorted_ids), counts,
                         this->context_.threads, neighbor_visitor(radius));
  }

  /// Counts first, then fills each row in place: never more memory than the output.
  void neighbor_lists(const ListRequest& request, NeighborLists& out) const override {
    grid_neighbor_lists(std::span<const index_t>(table_.points.sorted_ids), request.with_distances,
                        this->context_.threads, neighbor_visitor(request.radius), out);
  }

 private:
  static constexpr auto kStencil = stencil_offsets<Dim>();
  static constexpr int kMaxSlots = static_cast<int>(kStencil.size());

  /// The distinct non-empty slots of a neighborhood, as ranges.
  using Slots = RangeSet<kMaxSlots>;

  /// The counting-sorted table; built whole before it replaces the previous one.
  struct Table {
    std::uint64_t mask = 0;             ///< table size - 1 (the size is a power of two)
    BucketSortedPoints<Dim, T> points;  ///< one bucket per slot
  };

  static Table build(const Context<Dim, T>& context) {
    const std::size_t size = std::bit_ceil(std::max<std::size_t>(context.points.size(), 1));
    Table t;
    t.mask = size - 1;
    // n < 2^32 - 1, so size <= 2^32 and every slot fits in 32 bits.
    t.points = counting_sort_points(context, size, [mask = t.mask](const Cell<Dim>& c) {
      return static_cast<std::uint32_t>(hash_cell<Dim>(c) & mask);
    });
    return t;
  }

  /// The distinct non-empty slots of the 3^Dim cells around c. Cells are at most 2^30 from the
  /// origin (grid_geometry.hpp), so c + offset cannot overflow.
  Slots slots_around(const Cell<Dim>& c) const {
    Slots slots;
    std::array<std::uint64_t, kMaxSlots> seen;
    int seen_count = 0;
    for (const Cell<Dim>& offset : kStencil) {
      Cell<Dim> neighbor;
      for (int k = 0; k < Dim; ++k) neighbor[k] = c[k] + offset[k];
      const std::uint64_t slot = hash_cell<Dim>(neighbor) & table_.mask;
      const SortedRange range = table_.points.bucket(slot);
      if (range.begin == range.end) continue;
      if (std::find(seen.begin(), seen.begin() + seen_count, slot) != seen.begin() + seen_count) {
        continue;  // two neighbor cells share this slot: scan it once
      }
      seen[seen_count++] = slot;
      slots.ranges[slots.count++] = range;
    }
    return slots;
  }

  /// Full-stencil search for the parallel lists (see range_visitor).
  auto neighbor_visitor(double radius) const {
    return range_visitor(this->context_.grid, table_.points, radius,
                         [this](const Cell<Dim>& c) { return slots_around(c); });
  }

  Table table_;
};

}  // namespace

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_hashed_grid(const Context<Dim, T>& context) {
  return std::make_unique<HashedGrid<Dim, T>>(context);
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template std::unique_ptr<EngineBase<D, T>> make_hashed_grid(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
