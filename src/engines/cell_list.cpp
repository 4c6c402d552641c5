// cell_list (cell_list.hpp): indexing. The lattice chosen, the points reordered by cell, the
// blocks of parallel work; update() between steps; the rounding band and the sampled estimate
// that sizes every collector; the factory.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "../threads.hpp"
#include "cell_list.hpp"

namespace spatialhash::detail {

template <int Dim, class T>
void CellList<Dim, T>::update(const Context<Dim, T>& context) {
  GridGeometry<Dim> grid = grid_;
  if (grid.rebound(context.grid.lower, context.grid.upper)) {
    const auto kind = layout_.update(for_build(context), grid, kUpdateLimits, spare_);
    if (kind) {
      this->context_ = context;
      grid_ = grid;
      if (*kind == UpdateKind::patched) make_blocks();
      last_update_ = *kind;
      return;
    }
  }
  auto [fresh_grid, layout] = index_points(context, &spare_);
  this->context_ = context;
  grid_ = fresh_grid;
  spare_.layout = std::move(layout_);  // the next patch or rebuild writes into its arrays
  layout_ = std::move(layout);
  make_blocks();
  last_update_ = UpdateKind::rebuilt;
}

template <int Dim, class T>
GridGeometry<Dim> CellList<Dim, T>::choose_grid(const Context<Dim, T>& context) {
  const int subdivision =
      context.cell_subdivision > 0 ? context.cell_subdivision : kDefaultSubdivision;
  if (subdivision == 1) return context.grid;
  try {
    return GridGeometry<Dim>::make(context.grid.lower, context.grid.upper, context.radius,
                                   subdivision);
  } catch (const InvalidArgument&) {
    return context.grid;  // too many cells along an axis: the coarse lattice still works
  }
}

template <int Dim, class T>
GridGeometry<Dim> CellList<Dim, T>::padded(GridGeometry<Dim> grid) {
  for (int k = 0; k < Dim; ++k) {
    if (grid.dims[k] + 2 * kPaddingCells > GridGeometry<Dim>::kMaxCellsPerAxis) continue;
    grid.origin[k] -= static_cast<double>(kPaddingCells) * grid.cell_size;
    grid.dims[k] += 2 * kPaddingCells;
  }
  return grid;
}

template <int Dim, class T>
std::pair<GridGeometry<Dim>, CellListLayout<Dim>> CellList<Dim, T>::index_points(
    const Context<Dim, T>& caller_context, CellListSpare<Dim>* spare) {
  const Context<Dim, T> context = for_build(caller_context);
  const GridGeometry<Dim> grid = padded(choose_grid(context));
  const bool may_coarsen = context.cell_subdivision == 0;
  const DrawnPoints<Dim> drawn = draw_points(context);
  const LatticeDensity density = sample_density(drawn, grid, may_coarsen ? kSparse : 0.0);
  // Points that see sparse stencils: the coarse lattice at once, the one build.
  if (may_coarsen && density.per_stencil_cell < kSparse) {
    if (const auto coarse = sparse_lattice(context, drawn, density.per_stencil_cell)) {
      return {*coarse, CellListLayout<Dim>::build(context, *coarse, 0, spare)};  // no slabs
    }
  }
  const bool slabs = grid.reach == 1 && density.per_cell >= static_cast<double>(kSlabMinPoints);
  CellListLayout<Dim> layout =
      CellListLayout<Dim>::build(context, grid, slabs ? kSlabBits : 0, spare);
  if (!may_coarsen || layout.cells() == 0) return {grid, std::move(layout)};
  // The cells, weighted evenly, may still be sparse where the points are not (a sparse background
  // around dense clusters): probed on the layout, an eighth of the cells, 64 to 512, evenly
  // spaced; 64 of them first, the rest only when those do not already show stencils of twice the
  // threshold (a surface of 100k points: the whole probe took 12% of its build).
  const std::size_t cells = layout.cells();
  const auto probe = [&](std::size_t samples) {
    std::atomic<std::int64_t> found = 0;
    // A find (a table probe) weighed as 8 items of a cheap pass (threads_for_pass): 64 samples
    // of 3^Dim finds on one thread, a full probe of 512 on several.
    constexpr std::size_t kItemsPerFind = 8;
    const std::size_t finds = samples * static_cast<std::size_t>(stencil_size<Dim>(1));
    parallel_region(threads_for_pass(finds * kItemsPerFind, context.threads), [&] {
      std::int64_t mine = 0;
#pragma omp for schedule(static) nowait
      for (std::int64_t q = 0; q < static_cast<std::int64_t>(samples); ++q) {
        const auto c = layout.coord_of(
            static_cast<std::uint32_t>(static_cast<std::size_t>(q) * cells / samples));
        for (int t = 0; t < stencil_size<Dim>(1); ++t) {
          Cell<Dim> neighbor = stencil_offset<Dim>(t, 1);
          for (int k = 0; k < Dim; ++k) neighbor[k] += c[k];
          mine += layout.find(neighbor) != CellListLayout<Dim>::kNoCell;
        }
      }
      found.fetch_add(mine, std::memory_order_relaxed);
    });
    const auto probed = static_cast<std::int64_t>(samples) * stencil_size<Dim>(1);
    return static_cast<double>(layout.size()) / static_cast<double>(cells) *
           static_cast<double>(found.load()) / static_cast<double>(probed);
  };
  const std::size_t samples = std::min(cells, std::clamp<std::size_t>(cells / 8, 64, 512));
  const std::size_t first = std::min<std::size_t>(samples, 64);
  double per_stencil_cell = probe(first);
  if (first < samples && per_stencil_cell < 2 * kSparse) per_stencil_cell = probe(samples);
  if (per_stencil_cell < kSparse) {
    if (const auto coarse = coarser(context, coarsening_for(per_stencil_cell))) {
      if (spare != nullptr) spare->layout = std::move(layout);  // probed: the coarse one's storage
      return {*coarse, CellListLayout<Dim>::build(context, *coarse, 0, spare)};
    }
  }
  return {grid, std::move(layout)};
}

template <int Dim, class T>
std::optional<GridGeometry<Dim>> CellList<Dim, T>::sparse_lattice(const Context<Dim, T>& context,
                                                                  const DrawnPoints<Dim>& drawn,
                                                                  double per_stencil_cell) {
  // A very sparse sample finds few points in stencils of edge r (and each stencil holds the point
  // itself, which caps the first guess at 4.3 r in 3D). On each lattice chosen so far, every
  // drawn point's stencil finds about coarsening^Dim times as many as on edge r, and the edge is
  // scaled from there so that a stencil would hold about kTargetPerStencilCell per cell, by at
  // most kMaxRecountStep at a time, until a count finds kRecountFound others (then its scale is
  // within a few percent). 1M uniform points with 0.05 neighbors each: the guess 4.3 r left as
  // many lattice cells as points, whose lists took 110 ms, 6.3 r took 37.
  double coarsening = coarsening_for(per_stencil_cell);
  std::optional<GridGeometry<Dim>> chosen = coarser(context, coarsening);
  const double stencil = stencil_size<Dim>(1);
  for (int count = 0; chosen && count < kRecounts; ++count) {
    const LatticeDensity there = sample_density(drawn, *chosen, kNoLimit, /*every_draw=*/true);
    const double others = there.per_stencil_cell * stencil - 1.0;
    const double step =
        others > 0.0
            ? std::min(kMaxRecountStep,
                       std::pow((kTargetPerStencilCell * stencil - 1.0) / others, 1.0 / Dim))
            : kMaxRecountStep;
    if (coarsening >= kMaxCoarsening && step >= 1.0) break;  // at the limit already
    coarsening = std::clamp(coarsening * step, 1.0, kMaxCoarsening);
    const auto next = coarser(context, coarsening);
    if (!next) break;  // too wide: the last lattice that could be made
    chosen = next;
    if (there.stencil_found >= kRecountFound) break;
  }
  return chosen;
}

template <int Dim, class T>
std::optional<GridGeometry<Dim>> CellList<Dim, T>::coarser(const Context<Dim, T>& context,
                                                           double coarsening) {
  try {
    return padded(
        GridGeometry<Dim>::make(context.grid.lower, context.grid.upper,
                                context.radius * std::clamp(coarsening, 1.0, kMaxCoarsening), 1));
  } catch (const InvalidArgument&) {
    return std::nullopt;  // keep the lattice of edge r
  }
}

template <int Dim, class T>
void CellList<Dim, T>::make_blocks() {
  stencil_size_ = stencil_size<Dim>(grid_.reach);
  for (int t = 0; t < stencil_size_; ++t) {
    const Cell<Dim> offset = stencil_offset<Dim>(t, grid_.reach);
    dense_offset_[t] = 0;
    for (int k = 0; k < Dim; ++k) dense_offset_[t] += offset[k] * layout_.slot_stride(k);
  }
  for (int u = 0; u < kGroupCells; ++u) {
    group_offset_[u] = 0;
    for (int k = 0; k < Dim; ++k) {
      int digit = u;
      for (int j = 0; j < k; ++j) digit /= kGroupSide;
      group_offset_[u] += (digit % kGroupSide) * layout_.slot_stride(k);
    }
  }
  // Blocks end between groups (search_group), or anywhere in column order (search_columns).
  const std::size_t fair_share =
      layout_.size() / (static_cast<std::size_t>(this->context_.threads) * kBlocksPerThread);
  const auto block_points = static_cast<std::uint32_t>(
      std::clamp<std::size_t>(fair_share, kMinBlockPoints, kBlockPoints));
  blocks_.assign(1, 0);
  std::uint32_t points_in_block = 0;
  // Only group order needs the cells' coordinates: column order skips the walk (W2 at 1M, this
  // serial loop 0.54 -> 0.21 ms).
  CellWalk walk(layout_, 0);
  Cell<Dim> cell{};
  for (std::uint32_t c = 0; c < layout_.cells(); ++c) {
    if (!layout_.columns) {
      cell = cell_of(walk);
      walk.next();
    }
    points_in_block += layout_.cell_start[c + 1] - layout_.cell_start[c];
    if (points_in_block >= block_points &&
        (c + 1 == layout_.cells() || layout_.columns || !same_parent(cell, cell_of(walk)))) {
      blocks_.push_back(c + 1);
      points_in_block = 0;
    }
  }
  if (blocks_.back() != layout_.cells()) {
    blocks_.push_back(static_cast<std::uint32_t>(layout_.cells()));
  }
}

template <int Dim, class T>
FloatBand CellList<Dim, T>::band_for(double radius) const {
  const double margin = (grid_.reach + 1) * grid_.cell_size;
  double extent = 0.0;
  for (int k = 0; k < Dim; ++k) {
    extent = std::max(extent, std::abs(grid_.upper[k] - grid_.origin[k]) + margin);
    extent = std::max(extent, std::abs(grid_.lower[k] - grid_.origin[k]) + margin);
  }
  const double frame =
      static_cast<double>(std::int64_t{1} << CellListLayout<Dim>::kFrameBits) * grid_.cell_size +
      margin;
  return make_float_band(radius, std::min(extent, frame), Dim);
}

template <int Dim, class T>
std::size_t CellList<Dim, T>::estimated_entries(const Search& search, Stencil stencil,
                                                std::size_t rows, EstimateUse use,
                                                std::size_t max_samples) const {
  const std::size_t cells = layout_.cells();
  // The estimate's error falls as one over the root of the samples: from 4096 cells on (256 for
  // room), their share of the search falls with the root of the cells too.
  const double root_factor = use == EstimateUse::regions ? 4.0 : 1.0;
  const auto root = static_cast<std::size_t>(root_factor * std::sqrt(static_cast<double>(cells)));
  const auto samples = static_cast<std::int64_t>(std::min(
      {cells, std::clamp(std::min(cells / kSampleShare, root), kMinSampleCells, kMaxSampleCells),
       max_samples}));
  if (samples == 0) return 0;
  // Sample q is the cell holding sorted position (q + 1/2) n / samples: cells are picked in
  // proportion to their points (a systematic sample over the points, not the cells), and the
  // estimate is the mean over the samples of each picked cell's entries per point. Dense cells,
  // whose points have the longest rows, are then sampled as often as their points weigh in the
  // total (picking cells evenly had missed W3's entries by -7% to +23% with 256 samples). A cell
  // picked by consecutive samples is searched once. Each cell's mean is summed in fixed point
  // (2^-16 of an entry), so the estimate does not depend on how the threads split the samples.
  constexpr double kScale = 65536.0;
  const std::size_t n = layout_.size();
  std::atomic<std::uint64_t> sum = 0;
  parallel_region(own_search_threads(), [&] {
    CellWork<Dim> work;
    std::uint32_t last_cell = CellListLayout<Dim>::kNoCell;
    std::uint64_t last_mean = 0, mine = 0;
#pragma omp for schedule(static) nowait
    for (std::int64_t q = 0; q < samples; ++q) {
      const std::size_t position =
          (2 * static_cast<std::size_t>(q) + 1) * n / (2 * static_cast<std::size_t>(samples));
      const auto c = static_cast<std::uint32_t>(
          std::upper_bound(layout_.cell_start.begin(), layout_.cell_start.end(), position) -
          layout_.cell_start.begin() - 1);
      if (c != last_cell) {
        std::uint64_t found = 0;
        search_cell(
            c, cell_of(c), stencil, Ids::none, search, work,
            [&](std::uint32_t, const std::uint32_t*, std::uint32_t count) { found += count; });
        const std::uint32_t points = layout_.cell_start[c + 1] - layout_.cell_start[c];
        last_cell = c;
        last_mean = static_cast<std::uint64_t>(static_cast<double>(found) /
                                               static_cast<double>(points) * kScale);
      }
      mine += last_mean;
    }
    sum.fetch_add(mine, std::memory_order_relaxed);
  });
  return static_cast<std::size_t>(static_cast<double>(sum.load()) / kScale /
                                  static_cast<double>(samples) * static_cast<double>(rows));
}

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_cell_list(const Context<Dim, T>& context) {
  return std::make_unique<CellList<Dim, T>>(context);
}

#define SPATIALHASH_INSTANTIATE(D, T)                                                         \
  template void CellList<D, T>::update(const Context<D, T>&);                                 \
  template FloatBand CellList<D, T>::band_for(double) const;                                  \
  template std::size_t CellList<D, T>::estimated_entries(const Search&, Stencil, std::size_t, \
                                                         EstimateUse, std::size_t) const;     \
  template std::unique_ptr<EngineBase<D, T>> make_cell_list(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
