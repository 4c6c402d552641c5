// Incremental update of the cell_list layout for moved points on an unchanged lattice.
//
// The sorted positions are split into chunks of whole cells, one unit of parallel work each,
// shared out statically: a thread takes about the same positions in every pass and every update,
// which stay in its core's cache (with dynamic shares, 10k points on 2 threads took 1.6-3x as
// long, docs/benchmarks.md, eighty-first session).
//   0. In all but small sets, a sample of the positions first: when it shows too many points
//      changed cell (for the default engine, any), the caller rebuilds at once (a patch costs
//      more than a rebuild, docs/benchmarks.md).
//   1. For every sorted position: the point gathered from the caller's array (in the layout's
//      order), then, in one SIMD pass (update()'s key pass, simd/cell_keys.hpp), the key of its
//      sub-cell now, whether it differs from its old one (a "mover"), and its float coordinates.
//      If there is no mover, the new coordinates simply replace the old ones.
//   2. The movers are collected and radix sorted by key.
//   3. Each chunk covers a key interval [key of its first cell, key of the next chunk's first
//      cell); it merges its staying points (already in key order) with the movers whose keys fall
//      in that interval. Its output offset is known beforehand: points staying before the chunk
//      plus movers with smaller keys. Cells are marked where the key changes, as in a build. The
//      merged order holds old positions until step 4 has read their keys.
//   4. Cell starts from the marks, cell coordinates and slabs decoded from the keys, old
//      positions turned into original indices; the cell lookup is rebuilt only when the set of
//      non-empty cells changed.
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
#include "../simd/cell_keys.hpp"
#include "../threads.hpp"
#include "cell_list_layout.hpp"
#include "frame_origins.hpp"

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
  // Every point lies on the lattice when its bounding box does, as (x - origin) * inv_cell, the
  // cell computation, is monotonic in x; the key pass (step 1) relies on it.
  for (int k = 0; k < Dim; ++k) {
    const double low = (context.grid.lower[k] - grid.origin[k]) * grid.inv_cell;
    const double high = (context.grid.upper[k] - grid.origin[k]) * grid.inv_cell;
    if (!(low >= 0.0 && high < static_cast<double>(dims[k]))) return std::nullopt;
  }
  const int threads = context.threads;
  const std::size_t count = cells();
  const int slab_count = slabs();

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
  // errors), rebuild right away instead of after step 1's full gather, which costs half a
  // rebuild or more. Once step 1 has counted the movers, the rest of a patch costs less than a
  // rebuild after it (1M points, 1.5% of them moved, 2 threads: 4.7 against 9.5 ms), up to
  // limits.counted, so a sample that missed the movers still patches. Only the path depends on
  // the sample, never the result.
  constexpr std::uint32_t kSampleStride = 128, kMinSamples = 128;
  if (n / kSampleStride >= kMinSamples) {
    // The samples: positions first + kSampleStride * i of each chunk's range. The bound is known
    // before they are read, so the threads stop as soon as the count of points that changed cell
    // passes it: with the default engine's limit (any), at the first one, which a simulation's
    // step meets after a few dozen samples (the whole sample walks every cell of the layout:
    // 1M points, about 6% of a rebuilding update()).
    std::size_t samples = 0;
    for (std::size_t j = 0; j < chunks; ++j) {
      samples +=
          (cell_start[first[j + 1]] - cell_start[first[j]] + kSampleStride - 1) / kSampleStride;
    }
    const double p = limits.sampled, sampled = static_cast<double>(samples);
    const double bound = sampled * p + 3.0 * std::sqrt(sampled * p * (1.0 - p));
    std::atomic<std::size_t> changed_total = 0;
    std::atomic<bool> over = false;
    parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t j = 0; j < signed_chunks; ++j) {
        if (over.load(std::memory_order_relaxed)) continue;
        std::size_t c = first[j];
        CellWalk walk(*this, static_cast<std::uint32_t>(c));
        for (std::uint32_t s = cell_start[first[j]]; s < cell_start[first[j + 1]];
             s += kSampleStride) {
          if (over.load(std::memory_order_relaxed)) break;
          while (cell_start[c + 1] <= s) {
            ++c;
            walk.next();
          }
          const Cell<Dim> cell = grid.cell_of(points, order[s]);
          bool moved = false;
          for (int k = 0; k < Dim; ++k) {
            moved |= cell[k] != static_cast<std::int64_t>(walk.coord()[k]);
          }
          if (!moved) continue;
          const std::size_t changed = changed_total.fetch_add(1, std::memory_order_relaxed) + 1;
          if (static_cast<double>(changed) > bound) over.store(true, std::memory_order_relaxed);
        }
      }
    });
    if (over.load()) return std::nullopt;
  }

  // 1. New keys and float coordinates at the old positions, a block of positions at a time: the
  // caller's points gathered into a packed block, then, cell by cell along the walk, each
  // position's old sub-cell key; update()'s key pass (simd/cell_keys.hpp, the build's key
  // arithmetic: slabs and column keys included) then gives, per run of positions in one float
  // frame (nearly always the whole block), the block's new keys, which of them differ from the
  // old ones (the "movers") and the float coordinates relative to the old frame. Every position's
  // new key is kept for steps 2-4.
  for (int k = 0; k < Dim; ++k) spare.moved_axis[k].resize(n);
  spare.changed_cell.resize(n);
  spare.position_keys.resize(n);
  std::vector<std::size_t> changed_before(chunks + 1, 0);  // movers per chunk, then their prefix
  const KeyChangesFn<Dim, T> key_changes = best_key_changes<Dim, T>(context.simd);
  CellKeyInput<Dim, T> key_input{nullptr, Dim, grid.origin, grid.inv_cell, 0};
  key_input.slab_bits = slab_bits;
  if (columns) key_input.column_z_bits = z_bits;
  parallel_region(threads, [&] {
    FrameOrigins<Dim> frames(grid, Dim * kFrameBits);
    const int frame_bit = Dim * kFrameBits + slab_bits;  // a sub-cell key's frame: from this bit
#pragma omp for schedule(static) nowait
    for (std::int64_t j = 0; j < signed_chunks; ++j) {
      // Local copies: the stores below may alias anything, which would otherwise force reloads of
      // every member in the inner loops. `was` holds each position's old sub-cell key.
      std::array<float*, Dim> moved_axis;
      for (int k = 0; k < Dim; ++k) moved_axis[k] = spare.moved_axis[k].data();
      const T* data = points.data;
      const std::size_t stride = points.stride;
      const index_t* order_of = order.data();
      std::uint8_t* changed_cell = spare.changed_cell.data();
      std::uint64_t* new_keys = spare.position_keys.data();
      std::size_t changed = 0;
      constexpr std::uint32_t kBlock = 256;
      std::array<T, kBlock * Dim> packed;
      std::array<std::uint64_t, kBlock> was;
      CellKeyInput<Dim, T> input = key_input;
      input.data = packed.data();
      const std::uint32_t begin = cell_start[first[j]], end = cell_start[first[j + 1]];
      std::size_t c = first[j];
      CellWalk walk(*this, static_cast<std::uint32_t>(c));
      for (std::uint32_t block = begin; block < end; block += kBlock) {
        const std::uint32_t stop = std::min(end, block + kBlock);
        const std::uint32_t length = stop - block;
        // A plain gather first: many independent cache misses in flight when the caller's order
        // is not the layout's (fused into the loop below, a refresh of 1M shuffled points took
        // 1.4x as long).
        for (std::uint32_t p = 0; p < length; ++p) {
          const T* point = data + static_cast<std::size_t>(order_of[block + p]) * stride;
          for (int k = 0; k < Dim; ++k) packed[p * Dim + k] = point[k];
        }
        // Cell by cell (and slab by slab): the old key.
        for (std::uint32_t s = block; s < stop;) {
          while (cell_start[c + 1] <= s) {
            ++c;
            walk.next();
          }
          const std::uint64_t key = walk.key();
          const auto cell = static_cast<std::uint32_t>(c);
          const std::uint32_t cell_stop = std::min(cell_start[c + 1], stop);
          for (int slab = 0; slab < slab_count; ++slab) {
            const std::uint32_t to = std::min(cell_stop, slab_begin(cell, slab + 1));
            const std::uint64_t sub_cell = key << slab_bits | static_cast<std::uint64_t>(slab);
            for (; s < to; ++s) was[s - block] = sub_cell;
          }
        }
        // The key pass, a run of positions of one old frame at a time (keys ascend along the
        // positions, and a frame is a prefix of the key).
        KeyChanges<Dim> out{was.data(), {}, {}, changed_cell + block, new_keys + block};
        for (int k = 0; k < Dim; ++k) out.relative[k] = moved_axis[k] + block;
        std::uint64_t frames_changed = 0;
        for (std::uint32_t from = 0; from < length;) {
          const std::uint64_t frame = was[from] >> frame_bit;
          std::uint32_t to = length;
          if (was[length - 1] >> frame_bit != frame) {
            to = from + 1;
            while (to < length && was[to] >> frame_bit == frame) ++to;
          }
          out.origin = frames.of_key(was[from] >> slab_bits);
          const KeyChangeCount count = key_changes(input, from, to, out);
          changed += count.changed;
          frames_changed |= count.differing_bits >> frame_bit;
          from = to;
        }
        // A point whose frame changed (rare): its coordinates relative to its new cell's frame.
        for (std::uint32_t p = 0; frames_changed != 0 && p < length; ++p) {
          const std::uint64_t now = new_keys[block + p];
          if ((now ^ was[p]) >> frame_bit == 0) continue;
          const std::array<double, Dim>& origin = frames.of_key(now >> slab_bits);
          for (int k = 0; k < Dim; ++k) {
            moved_axis[k][block + p] =
                static_cast<float>(static_cast<double>(packed[p * Dim + k]) - origin[k]);
          }
        }
      }
      changed_before[j + 1] = changed;
    }
  });
  std::partial_sum(changed_before.begin(), changed_before.end(), changed_before.begin());
  const std::size_t movers = changed_before[chunks];
  if (movers == 0) {
    for (int k = 0; k < Dim; ++k) axis[k].swap(spare.moved_axis[k]);
    return UpdateKind::refreshed;
  }
  if (static_cast<double>(movers) > limits.counted * static_cast<double>(n)) {
    return std::nullopt;
  }

  // 2. The movers, sorted by the key of their new sub-cell (stable: ties by old position).
  spare.mover_keys.resize(movers);
  spare.mover_positions.resize(movers);
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
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

  // 3. Merge, chunk by chunk. Chunk j takes the movers with keys in [lowest[j], lowest[j + 1]),
  // lowest[j] the sub-cell key of its first cell's slab 0.
  std::vector<std::size_t> mover_begin(chunks + 1);
  for (std::size_t j = 0; j <= chunks; ++j) {
    const std::uint64_t lowest =
        j == 0             ? 0
        : first[j] < count ? cell_key(coord_of(static_cast<std::uint32_t>(first[j]))) << slab_bits
                           : std::numeric_limits<std::uint64_t>::max();
    mover_begin[j] = static_cast<std::size_t>(
        std::lower_bound(spare.mover_keys.begin(), spare.mover_keys.end(), lowest) -
        spare.mover_keys.begin());
  }
  mover_begin[chunks] = movers;
  // The merged layout is written into the arrays of the one the last update replaced (emptied),
  // and its cells and lookup (step 4) too.
  CellListLayout next = std::move(spare.layout);
  next.clear();
  next.order.resize(n);
  for (int k = 0; k < Dim; ++k) next.axis[k].resize(n);
  spare.cell_begins.assign((n + 63) / 64, 0);
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t j = 0; j < signed_chunks; ++j) {
      // Local copies of the arrays' addresses, as in step 1. The merged order holds old
      // positions for now (their keys are read in step 4), original indices after step 4.
      index_t* out_source = next.order.data();
      std::array<float*, Dim> out_axis;
      std::array<const float*, Dim> in_axis;
      for (int k = 0; k < Dim; ++k) {
        out_axis[k] = next.axis[k].data();
        in_axis[k] = spare.moved_axis[k].data();
      }
      const std::uint8_t* changed_cell = spare.changed_cell.data();
      const std::uint64_t* mover_keys = spare.mover_keys.data();
      const std::uint32_t* mover_positions = spare.mover_positions.data();
      const std::uint64_t* stayer_keys = spare.position_keys.data();
      const int key_slab_bits = slab_bits;
      std::size_t m = mover_begin[j];
      const std::size_t m_end = mover_begin[j + 1];
      // Stayers before this chunk, plus movers with smaller keys.
      std::size_t t = cell_start[first[j]] - changed_before[j] + m;
      // The cell of the last position written; none yet (keys below this chunk's interval belong
      // to earlier chunks, so its first position begins a cell).
      std::uint64_t open_cell = std::numeric_limits<std::uint64_t>::max();
      CellBegins marks(spare.cell_begins);  // the chunk's output positions come in order
      const auto emit = [&](std::uint32_t s, std::uint64_t key) {
        out_source[t] = s;
        for (int k = 0; k < Dim; ++k) out_axis[k][t] = in_axis[k][s];
        if (const std::uint64_t cell = key >> key_slab_bits; cell != open_cell) {
          marks.set(t, true);
          open_cell = cell;
        }
        ++t;
      };
      const auto emit_movers_below = [&](std::uint64_t bound) {
        for (; m < m_end && mover_keys[m] < bound; ++m) emit(mover_positions[m], mover_keys[m]);
      };
      // The chunk's stayers, in order of their keys (those of their cells, unchanged), merged
      // with its movers; a mover goes after the stayers of its sub-cell.
      const std::uint32_t stop = cell_start[first[j + 1]];
      for (std::uint32_t s = cell_start[first[j]]; s < stop; ++s) {
        if (changed_cell[s] != 0) continue;
        const std::uint64_t key = stayer_keys[s];
        emit_movers_below(key);
        emit(s, key);
      }
      for (; m < m_end; ++m) emit(mover_positions[m], mover_keys[m]);  // after the last stayer
    }
  });

  // 4. Cells and lookup of the merged layout, built aside and swapped in (nothing below throws
  // after the first swap).
  next.dims = dims;
  next.slab_bits = slab_bits;
  next.columns = columns;
  next.z_bits = z_bits;
  // The key of new position s: that of its old position, next.order[s] (step 1 kept every
  // position's new key).
  const auto key_at = [&](std::uint32_t s) { return spare.position_keys[next.order[s]]; };
  std::vector<CellCoord>& coords = spare.cell_coords;
  next.index_cells(
      spare.cell_begins, n, threads,
      [&, decode = SortedKeyDecoder(*this)](std::uint32_t s) mutable {
        return decode(key_at(s) >> slab_bits);
      },
      coords);
  next.index_slabs(threads, [&](std::uint32_t s) {
    return static_cast<int>(key_at(s) & static_cast<std::uint64_t>(slab_count - 1));
  });
  // Old positions to original indices.
  parallel_region(threads, [&] {
    index_t* merged = next.order.data();
    const index_t* old_order = order.data();
#pragma omp for schedule(static) nowait
    for (std::int64_t s = 0; s < static_cast<std::int64_t>(n); ++s)
      merged[s] = old_order[merged[s]];
  });
  next.index_order(coords, threads);
  const bool same_cells =
      columns ? next.cell_z == cell_z && next.column_runs == column_runs : next.tiles == tiles;
  if (!same_cells) next.index_lookup(grid, coords, threads);
  order.swap(next.order);
  for (int k = 0; k < Dim; ++k) axis[k].swap(next.axis[k]);
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
  spare.layout = std::move(next);  // the replaced arrays: the next patch's or rebuild's storage
  return UpdateKind::patched;
}

#define SPATIALHASH_INSTANTIATE(D, T)                           \
  template std::optional<UpdateKind> CellListLayout<D>::update( \
      const Context<D, T>&, const GridGeometry<D>&, const UpdateLimits&, CellListSpare<D>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
