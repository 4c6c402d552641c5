// cell_list: the default engine.
//
// Points are reordered by cell along a Z-order curve into a float structure-of-arrays copy
// (cell_list_layout.hpp). A search walks the cells; each cell gathers the contiguous ranges of its
// 3^Dim stencil once (merging ranges that touch), then every point of the cell is tested against
// those ranges with a SIMD range filter. Candidates whose float distance falls in the rounding
// band around r are re-decided with the double rule (float_band.hpp), so results are exact.
// Parallel searches split the cells into blocks of consecutive cells; each block writes its own
// buffer, then rows are copied once into the caller's CSR arrays: no locks, no per-point
// allocation.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "../engine_base.hpp"
#include "../exact.hpp"
#include "../simd/range_filter.hpp"
#include "../threads.hpp"
#include "cell_list_layout.hpp"

namespace spatialhash::detail {
namespace {

/// A contiguous run of sorted positions to test.
struct Range {
  std::uint32_t begin, end;
};

/// Growable array without value-initialization (the filters overwrite it anyway).
template <class Item>
class Buffer {
 public:
  Item* reserve_more(std::size_t extra) {
    if (size_ + extra > capacity_) {
      const std::size_t capacity = std::max(2 * capacity_, size_ + extra);
      auto data = std::make_unique_for_overwrite<Item[]>(capacity);
      if (size_ > 0) std::memcpy(data.get(), data_.get(), size_ * sizeof(Item));
      data_ = std::move(data);
      capacity_ = capacity;
    }
    return data_.get() + size_;
  }
  void grow(std::size_t added) { size_ += added; }
  Item* data() { return data_.get(); }
  const Item* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  void clear() { size_ = 0; }

 private:
  std::unique_ptr<Item[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

template <int Dim, class T>
class CellList final : public EngineBase<Dim, T> {
 public:
  using Base = EngineBase<Dim, T>;
  using typename Base::Position;
  static constexpr int kStencil = Dim == 2 ? 9 : 27;
  static constexpr std::uint32_t kBlockPoints = 4096;

  explicit CellList(const Context<Dim, T>& context)
      : Base(context), layout_(CellListLayout<Dim>::build(context)) {
    filter_ = best_range_filter<Dim>();
    for (int k = 0; k < Dim; ++k) soa_.axis[k] = layout_.axis[k].data();
    make_blocks();
  }

  Engine kind() const override { return Engine::cell_list; }

  void update(const Context<Dim, T>& context) override {
    CellListLayout<Dim> layout = CellListLayout<Dim>::build(context);
    this->context_ = context;
    layout_ = std::move(layout);
    for (int k = 0; k < Dim; ++k) soa_.axis[k] = layout_.axis[k].data();
    make_blocks();
  }

  void pairs(double radius, PairSink& sink) const override {
    const FloatBand band = band_for(radius);
    const double r2 = radius * radius;
    Scratch scratch;
    for (std::uint32_t c = 0; c < layout_.cells(); ++c) {
      std::array<Range, kStencil> ranges;
      const int count = stencil_ranges(c, /*half=*/true, ranges);
      for (std::uint32_t s = layout_.cell_start[c]; s < layout_.cell_start[c + 1]; ++s) {
        const Range own{s + 1, layout_.cell_start[c + 1]};
        search_point(s, std::span(&own, 1), band, r2, scratch,
                     [&](std::uint32_t j) { push_pair(sink, s, j); });
        search_point(s, std::span(ranges.data(), count), band, r2, scratch,
                     [&](std::uint32_t j) { push_pair(sink, s, j); });
      }
    }
  }

  void ball(const Position& center, double radius, HitSink& sink) const override {
    Cell<Dim> cell;
    if (layout_.size() == 0 || !this->context_.grid.cell_of_position(center, cell)) return;
    const auto& points = this->context_.points;
    std::array<float, Dim> query;
    for (int k = 0; k < Dim; ++k) {
      query[k] = static_cast<float>(center[k] - this->context_.grid.origin[k]);
    }
    const FloatBand band = band_for(radius);
    const double r2 = radius * radius;
    std::array<Range, kStencil> ranges;
    const int count =
        stencil_ranges_around(cell, std::numeric_limits<std::uint32_t>::max(), ranges);
    Scratch scratch;
    for (int q = 0; q < count; ++q) {
      FilterOutput& out = scratch.prepare(ranges[q].end - ranges[q].begin);
      filter_(soa_, ranges[q].begin, ranges[q].end, query, band, kNoExclusion, out);
      for (std::size_t k = 0; k < out.sure_count + out.border_count; ++k) {
        const bool sure = k < out.sure_count;
        const index_t i = layout_.order[sure ? out.sure[k] : out.border[k - out.sure_count]];
        const double d2 = distance_squared(points, i, center);
        if (sure || d2 <= r2) sink.push({i, d2});
      }
    }
  }

  void neighbor_counts(double radius, std::span<index_t> counts) const override {
    const FloatBand band = band_for(radius);
    const double r2 = radius * radius;
    const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
#pragma omp parallel num_threads(this->context_.threads)
    {
      Scratch scratch;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < blocks; ++b) {
        for_each_cell_in_block(b, [&](std::uint32_t c, std::span<const Range> ranges) {
          for (std::uint32_t s = layout_.cell_start[c]; s < layout_.cell_start[c + 1]; ++s) {
            index_t found = 0;
            search_point(s, ranges, band, r2, scratch, [&](std::uint32_t) { ++found; });
            counts[layout_.order[s]] = found;
          }
        });
      }
    }
  }

  NeighborLists neighbor_lists(double radius, bool with_distances) const override {
    const FloatBand band = band_for(radius);
    const double r2 = radius * radius;
    const std::size_t n = layout_.size();
    const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
    std::vector<Buffer<index_t>> found(static_cast<std::size_t>(blocks));
    std::vector<std::uint32_t> row_length(n);
    const int threads = this->context_.threads;
#pragma omp parallel num_threads(threads)
    {
      Scratch scratch;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < blocks; ++b) {
        Buffer<index_t>& out = found[b];
        for_each_cell_in_block(b, [&](std::uint32_t c, std::span<const Range> ranges) {
          std::size_t candidates = 0;
          for (const Range& q : ranges) candidates += q.end - q.begin;
          for (std::uint32_t s = layout_.cell_start[c]; s < layout_.cell_start[c + 1]; ++s) {
            index_t* row = out.reserve_more(candidates);
            std::uint32_t length = 0;
            search_point(s, ranges, band, r2, scratch,
                         [&](std::uint32_t j) { row[length++] = layout_.order[j]; });
            out.grow(length);
            row_length[s] = length;
          }
        });
      }
    }
    NeighborLists lists;
    lists.offsets.assign(n + 1, 0);
    for (std::size_t s = 0; s < n; ++s) lists.offsets[layout_.order[s] + 1] = row_length[s];
    for (std::size_t i = 0; i < n; ++i) lists.offsets[i + 1] += lists.offsets[i];
    lists.indices.resize(lists.offsets[n]);
    if (with_distances) lists.distances.resize(lists.offsets[n]);
    const auto& points = this->context_.points;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const index_t* source = found[b].data();
      const std::uint32_t first = layout_.cell_start[blocks_[b]];
      const std::uint32_t last = layout_.cell_start[blocks_[b + 1]];
      for (std::uint32_t s = first; s < last; ++s) {
        const index_t i = layout_.order[s];
        const std::size_t dst = lists.offsets[i];
        std::copy(source, source + row_length[s], lists.indices.begin() + dst);
        if (with_distances) {
          for (std::uint32_t k = 0; k < row_length[s]; ++k) {
            lists.distances[dst + k] = std::sqrt(distance_squared(points, i, source[k]));
          }
        }
        source += row_length[s];
      }
    }
    return lists;
  }

  PairList pair_list(double radius, bool with_distances) const override {
    const FloatBand band = band_for(radius);
    const double r2 = radius * radius;
    const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
    std::vector<Buffer<Pair>> found(static_cast<std::size_t>(blocks));
#pragma omp parallel num_threads(this->context_.threads)
    {
      Scratch scratch;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < blocks; ++b) {
        Buffer<Pair>& out = found[b];
        for (std::uint32_t c = blocks_[b]; c < blocks_[b + 1]; ++c) {
          std::array<Range, kStencil> ranges;
          const int count = stencil_ranges(c, /*half=*/true, ranges);
          std::size_t candidates = layout_.cell_start[c + 1] - layout_.cell_start[c];
          for (int q = 0; q < count; ++q) candidates += ranges[q].end - ranges[q].begin;
          for (std::uint32_t s = layout_.cell_start[c]; s < layout_.cell_start[c + 1]; ++s) {
            Pair* row = out.reserve_more(candidates);
            std::uint32_t length = 0;
            const auto emit = [&](std::uint32_t j) {
              const index_t a = layout_.order[s], b2 = layout_.order[j];
              row[length++] = a < b2 ? Pair{a, b2} : Pair{b2, a};
            };
            const Range own{s + 1, layout_.cell_start[c + 1]};
            search_point(s, std::span(&own, 1), band, r2, scratch, emit);
            search_point(s, std::span(ranges.data(), count), band, r2, scratch, emit);
            out.grow(length);
          }
        }
      }
    }
    PairList list;
    std::vector<std::size_t> start(found.size() + 1, 0);
    for (std::size_t b = 0; b < found.size(); ++b) start[b + 1] = start[b] + found[b].size();
    list.pairs.resize(start.back());
    if (with_distances) list.distances.resize(start.back());
    const auto& points = this->context_.points;
#pragma omp parallel for schedule(dynamic, 1) num_threads(this->context_.threads)
    for (std::int64_t b = 0; b < blocks; ++b) {
      std::copy(found[b].data(), found[b].data() + found[b].size(), list.pairs.begin() + start[b]);
      if (with_distances) {
        for (std::size_t k = start[b]; k < start[b + 1]; ++k) {
          list.distances[k] =
              std::sqrt(distance_squared(points, list.pairs[k].first, list.pairs[k].second));
        }
      }
    }
    return list;
  }

 private:
  static constexpr std::uint32_t kNoExclusion = std::numeric_limits<std::uint32_t>::max();

  /// Per-thread output space of the range filter.
  struct Scratch {
    Buffer<std::uint32_t> sure, border;
    FilterOutput out{nullptr, nullptr};
    FilterOutput& prepare(std::size_t length) {
      sure.clear();
      border.clear();
      out = FilterOutput{sure.reserve_more(length + kFilterSlack),
                         border.reserve_more(length + kFilterSlack)};
      return out;
    }
  };

  FloatBand band_for(double radius) const {
    const auto& grid = this->context_.grid;
    double extent = 0.0;
    for (int k = 0; k < Dim; ++k) {
      extent = std::max(extent, std::abs(grid.upper[k] - grid.origin[k]) + 2.0 * grid.cell_size);
      extent = std::max(extent, std::abs(grid.lower[k] - grid.origin[k]) + 2.0 * grid.cell_size);
    }
    return make_float_band(radius, extent, Dim);
  }

  /// Calls emit(j) for every position j in `ranges` (j != s) within `radius` of point s.
  template <class Emit>
  void search_point(std::uint32_t s, std::span<const Range> ranges, FloatBand band, double r2,
                    Scratch& scratch, Emit&& emit) const {
    std::array<float, Dim> query;
    for (int k = 0; k < Dim; ++k) query[k] = layout_.axis[k][s];
    for (const Range& q : ranges) {
      FilterOutput& out = scratch.prepare(q.end - q.begin);
      filter_(soa_, q.begin, q.end, query, band, s, out);
      for (std::size_t k = 0; k < out.sure_count; ++k) emit(out.sure[k]);
      for (std::size_t k = 0; k < out.border_count; ++k) {
        const std::uint32_t j = out.border[k];
        if (distance_squared(this->context_.points, layout_.order[s], layout_.order[j]) <= r2) {
          emit(j);
        }
      }
    }
  }

  void push_pair(PairSink& sink, std::uint32_t s, std::uint32_t j) const {
    const index_t a = layout_.order[s], b = layout_.order[j];
    const double d2 = distance_squared(this->context_.points, a, b);
    sink.push(a < b ? PairHit{a, b, d2} : PairHit{b, a, d2});
  }

  /// Ranges of the stencil cells around lattice cell `cell`, sorted and merged where they touch;
  /// cells with index <= `min_cell_exclusive` are left out unless it is kNoExclusion.
  int stencil_ranges_around(const Cell<Dim>& cell, std::uint32_t min_cell_exclusive,
                            std::array<Range, kStencil>& ranges) const {
    int count = 0;
    Cell<Dim> neighbor;
    for (int offset = 0; offset < kStencil; ++offset) {
      int rest = offset;
      for (int k = 0; k < Dim; ++k) {
        neighbor[k] = cell[k] + (rest % 3) - 1;
        rest /= 3;
      }
      const std::uint32_t found = layout_.find(neighbor);
      if (found == CellListLayout<Dim>::kNoCell) continue;
      if (min_cell_exclusive != kNoExclusion && found <= min_cell_exclusive) continue;
      ranges[count++] = Range{layout_.cell_start[found], layout_.cell_start[found + 1]};
    }
    // Insertion sort: at most 27 entries, mostly in order already.
    for (int q = 1; q < count; ++q) {
      const Range moving = ranges[q];
      int p = q;
      for (; p > 0 && ranges[p - 1].begin > moving.begin; --p) ranges[p] = ranges[p - 1];
      ranges[p] = moving;
    }
    int merged = 0;
    for (int q = 0; q < count; ++q) {
      if (merged > 0 && ranges[merged - 1].end == ranges[q].begin) {
        ranges[merged - 1].end = ranges[q].end;
      } else {
        ranges[merged++] = ranges[q];
      }
    }
    return merged;
  }

  /// Stencil ranges of cell c: all 3^Dim cells (own included), or with `half` only the cells
  /// after c in memory order, so that each pair of cells is visited once.
  int stencil_ranges(std::uint32_t c, bool half, std::array<Range, kStencil>& ranges) const {
    Cell<Dim> cell;
    for (int k = 0; k < Dim; ++k) cell[k] = layout_.cell_coord[c][k];
    return stencil_ranges_around(cell, half ? c : kNoExclusion, ranges);
  }

  template <class Visit>
  void for_each_cell_in_block(std::int64_t b, Visit&& visit) const {
    for (std::uint32_t c = blocks_[b]; c < blocks_[b + 1]; ++c) {
      std::array<Range, kStencil> ranges;
      const int count = stencil_ranges(c, /*half=*/false, ranges);
      visit(c, std::span<const Range>(ranges.data(), count));
    }
  }

  /// Splits the cells into blocks of about kBlockPoints points (the unit of parallel work).
  void make_blocks() {
    blocks_.assign(1, 0);
    std::uint32_t points_in_block = 0;
    for (std::uint32_t c = 0; c < layout_.cells(); ++c) {
      points_in_block += layout_.cell_start[c + 1] - layout_.cell_start[c];
      if (points_in_block >= kBlockPoints) {
        blocks_.push_back(c + 1);
        points_in_block = 0;
      }
    }
    if (blocks_.back() != layout_.cells())
      blocks_.push_back(static_cast<std::uint32_t>(layout_.cells()));
  }

  CellListLayout<Dim> layout_;
  SoaView<Dim> soa_{};
  RangeFilterFn<Dim> filter_ = nullptr;
  std::vector<std::uint32_t> blocks_;  ///< blocks_[b] .. blocks_[b+1]: the cells of block b
};

}  // namespace

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_cell_list(const Context<Dim, T>& context) {
  return std::make_unique<CellList<Dim, T>>(context);
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template std::unique_ptr<EngineBase<D, T>> make_cell_list(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
