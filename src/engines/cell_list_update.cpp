// Incremental update of the cell_list layout for moved points on an unchanged lattice.
//
// The sorted positions are split into chunks of whole cells, one unit of parallel work each.
//   0. In all but small sets, a sample of the positions first: when it shows too many points
//      changed cell (for the default engine, any), the caller rebuilds at once (a patch costs
//      more than a rebuild, docs/benchmarks.md).
//   1. For every sorted position: the point's new cell and float coordinates (a gather from the
//      caller's array, in the layout's order), whether its cell changed and, if so, the new key.
//      If no point changed cell, the new coordinates simply replace the old ones.
//   2. The points that changed cell ("movers") are collected and radix sorted by key.
//   3. Each chunk covers a key interval [key of its first cell, key of the next chunk's first
//      cell); it merges its staying points (already in key order) with the movers whose keys fall
//      in that interval. Its output offset is known beforehand: points staying before the chunk
//      plus movers with smaller keys. Cells are marked where the key changes, as in a build.
//   4. Cell starts from the marks, cell coordinates decoded from the keys; the cell lookup is
//      rebuilt only when the set of non-empty cells changed.
// With slabs (CellListLayout::slab_bits), every step works on sub-cells (a cell's slab) instead:
// keys are the build's (the cell's key, CellListLayout::cell_key(), then slab), and a point that
// changes slab within its cell is a mover too. The result holds the same points in the same cells
// and slabs in the same order as a fresh build on this lattice; only the order of points within a
// slab may differ (stayers first), which no search depends on.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>

#include "../morton.hpp"
#include "../radix_sort.hpp"
#include "../threads.hpp"
#include "cell_list_layout.hpp"

namespace spatialhash::detail {

template <int Dim>
template <class T>
std::optional<UpdateKind> CellListLayout<Dim>::update(const Context<Dim, T>& context,
                                                      const GridGeometry<Dim>& grid,
                                                      const UpdateLimits& limits,
                                                      CellListSpare<Dim>& spare) {
  const auto& points = context.points;
  const std::size_t n = size();
  const int bits = axis_bits(grid);
  // Coarse keys (lattices wider than a Morton code) would need the exact-cell tie break.
  if (points.size() != n || grid.dims != dims || bits > kMortonBitsPerAxis<Dim>) {
    return std::nullopt;
  }
  if (n == 0) return UpdateKind::refreshed;
  const int threads = context.threads;
  const std::size_t count = cells();
  // Keys of sub-cells (cell c, slab j), as the build sorts them (cell_keys.hpp).
  const int slab_count = slabs();
  const auto key_of_slab = [&](const CellCoord& cell, int j) {
    return cell_key(cell) << slab_bits | static_cast<std::uint64_t>(j);
  };

  // Chunks of whole cells, about n / chunks points each: chunk j is cells [first[j], first[j+1]).
  const std::size_t chunks = std::min<std::size_t>(count, 8 * static_cast<std::size_t>(threads));
  std::vector<std::size_t> first(chunks + 1);
  for (std::size_t j = 0; j <= chunks; ++j) {
    const auto target = static_cast<std::uint32_t>(n * j / chunks);
    first[j] = static_cast<std::size_t>(
        std::lower_bound(cell_start.begin(), cell_start.begin() + count, target) -
        cell_start.begin());
  }
  first[chunks] = count;
  const auto signed_chunks = static_cast<std::int64_t>(chunks);

  // 0. A sample first (one position in kSampleStride, when that gives at least kMinSamples):
  // when it shows more than limits.sampled of the points changed cell (beyond three standard
  // errors), rebuild right away instead of after step 1's full gather, which costs most of a
  // rebuild. Once step 1 has counted the movers, the rest of a patch costs less than a rebuild
  // after it (1M points, 1% of them moved: about 6 against 11 ms), up to limits.counted, so a
  // sample that missed the movers still patches. Only the path depends on the sample, never the
  // result.
  constexpr std::uint32_t kSampleStride = 128, kMinSamples = 128;
  if (n / kSampleStride >= kMinSamples) {
    std::atomic<std::size_t> sampled_total = 0, changed_total = 0;
    parallel_region(threads, [&] {
      std::size_t sampled = 0, changed = 0;
#pragma omp for schedule(dynamic, 1) nowait
      for (std::int64_t j = 0; j < signed_chunks; ++j) {
        std::size_t c = first[j];
        CellWalk walk(*this, static_cast<std::uint32_t>(c));
        for (std::uint32_t s = cell_start[first[j]]; s < cell_start[first[j + 1]];
             s += kSampleStride, ++sampled) {
          while (cell_start[c + 1] <= s) {
            ++c;
            walk.next();
          }
          const Cell<Dim> cell = grid.cell_of(points, order[s]);
          bool moved = false;
          for (int k = 0; k < Dim; ++k) {
            moved |= cell[k] != static_cast<std::int64_t>(walk.coord()[k]);
          }
          changed += moved ? 1 : 0;
        }
      }
      sampled_total.fetch_add(sampled, std::memory_order_relaxed);
      changed_total.fetch_add(changed, std::memory_order_relaxed);
    });
    const double p = limits.sampled, samples = static_cast<double>(sampled_total.load());
    if (static_cast<double>(changed_total.load()) >
        samples * p + 3.0 * std::sqrt(samples * p * (1.0 - p))) {
      return std::nullopt;
    }
  }

  // 1. New cells and coordinates at the old positions. A coordinate off the lattice (u < 0 or
  // u >= dims) is caught before the truncation, which equals floor (cell_along) for u >= 0.
  // With slabs, a point "changes cell" when its cell or its slab changes (its sub-cell).
  for (int k = 0; k < Dim; ++k) spare.moved_axis[k].resize(n);
  spare.changed_cell.resize(n);
  spare.position_keys.resize(n);
  std::vector<std::size_t> changed_before(chunks + 1, 0);  // movers per chunk, then their prefix
  std::atomic<int> outside = 0;
  parallel_region(threads, [&] {
#pragma omp for schedule(dynamic, 1) nowait
    for (std::int64_t j = 0; j < signed_chunks; ++j) {
      // Local copies: the byte stores below may alias anything, which would otherwise force
      // reloads of every member in the inner loop.
      std::array<float*, Dim> moved_axis;
      std::array<double, Dim> origin, extent;
      for (int k = 0; k < Dim; ++k) {
        moved_axis[k] = spare.moved_axis[k].data();
        origin[k] = grid.origin[k];
        extent[k] = static_cast<double>(dims[k]);
      }
      const double inv_cell = grid.inv_cell;
      const double cell_size = grid.cell_size;
      const double slab_scale = static_cast<double>(slab_count);
      const index_t* order_of = order.data();
      std::uint8_t* changed_cell = spare.changed_cell.data();
      std::uint64_t* keys = spare.position_keys.data();
      std::size_t changed = 0;
      int off_lattice = 0;
      // Blocks of positions: first a plain gather of the caller's coordinates (many independent
      // cache misses in flight), then the arithmetic on the gathered block.
      constexpr std::uint32_t kBlock = 256;
      std::array<std::array<double, kBlock>, Dim> gathered;
      const std::uint32_t begin = cell_start[first[j]], end = cell_start[first[j + 1]];
      std::size_t c = first[j];
      CellWalk walk(*this, static_cast<std::uint32_t>(c));
      CellCoord old_cell = walk.coord();  // the lattice coordinates of cell c
      int slab = 0;                       // the slab of cell c that position s lies in
      for (std::uint32_t block = begin; block < end; block += kBlock) {
        const std::uint32_t stop = std::min(end, block + kBlock);
        for (std::uint32_t s = block; s < stop; ++s) {
          const index_t i = order_of[s];
          for (int k = 0; k < Dim; ++k) gathered[k][s - block] = points.coord(i, k);
        }
        for (std::uint32_t s = block; s < stop; ++s) {
          while (cell_start[c + 1] <= s) {
            ++c;
            walk.next();
            old_cell = walk.coord();
            slab = 0;
          }
          while (slab + 1 < slab_count &&
                 slab_begin(static_cast<std::uint32_t>(c), slab + 1) <= s) {
            ++slab;
          }
          CellCoord cell;
          std::uint32_t moved = 0;
          std::uint32_t new_slab = 0;
          for (int k = 0; k < Dim; ++k) {
            const double x = gathered[k][s - block];
            const double u = (x - origin[k]) * inv_cell;
            const bool off = !(u >= 0.0 && u < extent[k]);
            off_lattice |= static_cast<int>(off);
            cell[k] = off ? 0u : static_cast<std::uint32_t>(u);
            moved |= cell[k] ^ old_cell[k];
            // Relative to the frame of the point's new cell (cell_list_layout.hpp).
            moved_axis[k][s] = static_cast<float>(
                x - frame_origin(origin[k], cell_size, static_cast<std::int64_t>(cell[k])));
            if (k == Dim - 1 && !off) {
              // floor(u * slabs) - slabs * floor(u), as the key pass computes it (exact).
              new_slab = static_cast<std::uint32_t>(u * slab_scale) -
                         cell[k] * static_cast<std::uint32_t>(slab_count);
            }
          }
          moved |= new_slab ^ static_cast<std::uint32_t>(slab);
          const std::uint32_t changed_here = moved != 0 ? 1u : 0u;
          changed_cell[s] = static_cast<std::uint8_t>(changed_here);
          if (changed_here != 0) {  // gathered data: cheap branch
            keys[s] = cell_key(cell) << slab_bits | new_slab;
          }
          changed += changed_here;
        }
      }
      outside.fetch_or(off_lattice, std::memory_order_relaxed);
      changed_before[j + 1] = changed;
    }
  });
  if (outside.load() != 0) return std::nullopt;
  std::partial_sum(changed_before.begin(), changed_before.end(), changed_before.begin());
  const std::size_t movers = changed_before[chunks];
  if (movers == 0) {
    for (int k = 0; k < Dim; ++k) axis[k].swap(spare.moved_axis[k]);
    return UpdateKind::refreshed;
  }
  if (static_cast<double>(movers) > limits.counted * static_cast<double>(n)) {
    return std::nullopt;
  }

  // 2. The movers, sorted by the key of their new cell (stable: ties by old position).
  spare.mover_keys.resize(movers);
  spare.mover_positions.resize(movers);
  parallel_region(threads, [&] {
#pragma omp for schedule(dynamic, 1) nowait
    for (std::int64_t j = 0; j < signed_chunks; ++j) {
      std::size_t at = changed_before[j];
      for (std::uint32_t s = cell_start[first[j]]; s < cell_start[first[j + 1]]; ++s) {
        if (spare.changed_cell[s] == 0) continue;
        spare.mover_keys[at] = spare.position_keys[s];
        spare.mover_positions[at] = s;
        ++at;
      }
    }
  });
  radix_sort_pairs(spare.mover_keys, spare.mover_positions, Dim * bits + slab_bits, threads,
                   spare.sort_keys, spare.sort_values);

  // 3. Merge, chunk by chunk. Chunk j takes the movers with keys in [lowest[j], lowest[j + 1]).
  std::vector<std::size_t> mover_begin(chunks + 1);
  for (std::size_t j = 0; j <= chunks; ++j) {
    const std::uint64_t lowest =
        j == 0             ? 0
        : first[j] < count ? key_of_slab(coord_of(static_cast<std::uint32_t>(first[j])), 0)
                           : std::numeric_limits<std::uint64_t>::max();
    mover_begin[j] = static_cast<std::size_t>(
        std::lower_bound(spare.mover_keys.begin(), spare.mover_keys.end(), lowest) -
        spare.mover_keys.begin());
  }
  mover_begin[chunks] = movers;
  spare.order.resize(n);
  for (int k = 0; k < Dim; ++k) spare.axis[k].resize(n);
  spare.cell_begins.assign((n + 63) / 64, 0);
  spare.slab_of.resize(slab_bits > 0 ? n : 0);
  parallel_region(threads, [&] {
#pragma omp for schedule(dynamic, 1) nowait
    for (std::int64_t j = 0; j < signed_chunks; ++j) {
      std::size_t m = mover_begin[j];
      const std::size_t m_end = mover_begin[j + 1];
      // Stayers before this chunk, plus movers with smaller keys.
      std::size_t t = cell_start[first[j]] - changed_before[j] + m;
      std::uint64_t previous = 0;
      bool first_out = true;  // keys below this chunk's interval belong to earlier chunks
      CellBegins marks(spare.cell_begins);  // the chunk's output positions come in order
      const auto emit = [&](std::uint32_t s, std::uint64_t key) {
        spare.order[t] = order[s];
        for (int k = 0; k < Dim; ++k) spare.axis[k][t] = spare.moved_axis[k][s];
        const bool begins_cell = first_out || key >> slab_bits != previous >> slab_bits;
        marks.set(t, begins_cell);
        if (begins_cell) spare.position_keys[t] = key >> slab_bits;
        if (slab_bits > 0) spare.slab_of[t] = static_cast<std::uint8_t>(key & (slab_count - 1));
        previous = key;
        first_out = false;
        ++t;
      };
      const auto emit_movers_below = [&](std::uint64_t bound, bool inclusive) {
        while (m < m_end &&
               (spare.mover_keys[m] < bound || (inclusive && spare.mover_keys[m] == bound))) {
          emit(spare.mover_positions[m], spare.mover_keys[m]);
          ++m;
        }
      };
      CellWalk walk(*this, static_cast<std::uint32_t>(first[j]));
      for (std::size_t c = first[j]; c < first[j + 1]; ++c, walk.next()) {
        for (int slab = 0; slab < slab_count; ++slab) {
          const std::uint64_t key = key_of_slab(walk.coord(), slab);
          emit_movers_below(key, false);
          const auto cell = static_cast<std::uint32_t>(c);
          for (std::uint32_t s = slab_begin(cell, slab); s < slab_begin(cell, slab + 1); ++s) {
            if (spare.changed_cell[s] == 0) emit(s, key);
          }
          emit_movers_below(key, true);
        }
      }
      emit_movers_below(std::numeric_limits<std::uint64_t>::max(), true);
    }
  });

  // 4. Cells and lookup of the merged layout, built aside and swapped in (nothing below throws
  // after the first swap).
  CellListLayout next;
  next.order.swap(spare.order);
  next.dims = dims;
  next.slab_bits = slab_bits;
  next.columns = columns;
  next.z_bits = z_bits;
  const std::vector<CellCoord> coords =
      next.index_cells(spare.cell_begins, n, threads,
                       [&](std::uint32_t s) { return cell_of_key(spare.position_keys[s]); });
  next.index_slabs(threads, [&](std::uint32_t s) { return static_cast<int>(spare.slab_of[s]); });
  next.index_order(coords, threads);
  const bool same_cells =
      columns ? next.cell_z == cell_z && next.column_runs == column_runs : next.tiles == tiles;
  if (!same_cells) next.index_lookup(grid, coords, threads);
  spare.order.swap(order);
  order.swap(next.order);
  for (int k = 0; k < Dim; ++k) {
    axis[k].swap(spare.axis[k]);  // the old coordinates become the next update's scratch
  }
  cell_start.swap(next.cell_start);
  slab_start.swap(next.slab_start);
  if (!same_cells) {
    tiles.swap(next.tiles);
    cell_z.swap(next.cell_z);
    column_runs.swap(next.column_runs);
    column_slots.swap(next.column_slots);
    tile_slots.swap(next.tile_slots);
    dense.swap(next.dense);
    table_mask = next.table_mask;
    near_occupied.swap(next.near_occupied);
    occupied_shift = next.occupied_shift;
    occupied_dims = next.occupied_dims;
  }
  return UpdateKind::patched;
}

#define SPATIALHASH_INSTANTIATE(D, T)                           \
  template std::optional<UpdateKind> CellListLayout<D>::update( \
      const Context<D, T>&, const GridGeometry<D>&, const UpdateLimits&, CellListSpare<D>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
