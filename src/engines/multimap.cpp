// Multimap (seed 001, "Basic spatial hashing with an unordered multimap"): points keyed by their
// cell in a std::unordered_multimap; a search looks up the 3^Dim cells around a cell. pairs() is
// the seed's insert-then-query loop: each point first queries the points inserted before it, then
// is inserted itself, so every pair is found exactly once, from its later point. The simple
// reference scheme: clarity over speed (one heap node per point, hashed lookups).
#include <array>
#include <cstdint>
#include <unordered_map>

#include "../engine_base.hpp"
#include "../exact.hpp"

namespace spatialhash::detail {
namespace {

/// Hash of a cell key: the coordinates mixed one after the other (multiply, xor-shift), so
/// neighboring cells land in unrelated buckets.
template <int Dim>
struct CellHash {
  std::size_t operator()(const Cell<Dim>& cell) const noexcept {
    std::uint64_t h = 0x9E3779B97F4A7C15ull;
    for (const std::int64_t v : cell) {
      h ^= static_cast<std::uint64_t>(v);
      h *= 0xBF58476D1CE4E5B9ull;
      h ^= h >> 31;
    }
    return static_cast<std::size_t>(h);
  }
};

/// Points by cell (Cell<Dim> already has ==; CellHash hashes it).
template <int Dim>
using CellMultimap = std::unordered_multimap<Cell<Dim>, index_t, CellHash<Dim>>;

/// Calls f(neighbor_cell) for the 3^Dim cells around `cell`, itself included. Cells are at most
/// 2^30 + 1 from the origin (grid_geometry.hpp), so the sums cannot overflow.
template <int Dim, class F>
void for_each_neighbor_cell(const Cell<Dim>& cell, F&& f) {
  Cell<Dim> neighbor;
  for (std::int64_t dx = -1; dx <= 1; ++dx) {
    neighbor[0] = cell[0] + dx;
    for (std::int64_t dy = -1; dy <= 1; ++dy) {
      neighbor[1] = cell[1] + dy;
      if constexpr (Dim == 2) {
        f(neighbor);
      } else {
        for (std::int64_t dz = -1; dz <= 1; ++dz) {
          neighbor[2] = cell[2] + dz;
          f(neighbor);
        }
      }
    }
  }
}

template <int Dim, class T>
class Multimap final : public EngineBase<Dim, T> {
 public:
  using Base = EngineBase<Dim, T>;
  using typename Base::Position;

  explicit Multimap(const Context<Dim, T>& context) : Base(context), map_(build(context)) {}

  Engine kind() const override { return Engine::multimap; }

  void update(const Context<Dim, T>& context) override {
    CellMultimap<Dim> fresh = build(context);  // may throw: nothing changed yet
    map_ = std::move(fresh);
    this->context_ = context;
  }

  /// The seed's loop. pairs() is const and the member map (kept for ball()) already holds every
  /// point, so the loop fills a local map of its own: that is the scheme as published (start
  /// empty; query, then insert), at the price of rebuilding the map on every call.
  void pairs(double radius, PairSink& sink) const override {
    const auto& points = this->context_.points;
    const auto& grid = this->context_.grid;
    const double r2 = radius * radius;
    CellMultimap<Dim> inserted;
    inserted.reserve(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Cell<Dim> cell = grid.cell_of(points, i);
      for_each_neighbor_cell<Dim>(cell, [&](const Cell<Dim>& neighbor) {
        const auto [first, last] = inserted.equal_range(neighbor);
        for (auto it = first; it != last; ++it) {
          const index_t j = it->second;  // inserted earlier, so j < i
          const double d2 = distance_squared(points, j, i);
          if (d2 <= r2) sink.emplace(j, index_t(i), d2);
        }
      });
      inserted.emplace(cell, index_t(i));
    }
  }

  void ball(const Position& center, double radius, HitSink& sink) const override {
    Cell<Dim> cell;
    if (!this->context_.grid.cell_of_position(center, cell)) return;  // too far out
    const auto& points = this->context_.points;
    const double r2 = radius * radius;
    for_each_neighbor_cell<Dim>(cell, [&](const Cell<Dim>& neighbor) {
      const auto [first, last] = map_.equal_range(neighbor);
      for (auto it = first; it != last; ++it) {
        const double d2 = distance_squared(points, it->second, center);
        if (d2 <= r2) sink.emplace(it->second, d2);
      }
    });
  }

 private:
  /// Every point inserted under its cell, for ball() (read-only afterwards, so concurrent
  /// ball() calls are safe).
  static CellMultimap<Dim> build(const Context<Dim, T>& context) {
    const auto& points = context.points;
    CellMultimap<Dim> map;
    map.reserve(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      map.emplace(context.grid.cell_of(points, i), index_t(i));
    }
    return map;
  }

  CellMultimap<Dim> map_;
};

}  // namespace

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_multimap(const Context<Dim, T>& context) {
  return std::make_unique<Multimap<Dim, T>>(context);
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template std::unique_ptr<EngineBase<D, T>> make_multimap(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
