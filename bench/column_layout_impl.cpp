// The column layout's build and searches (column_layout.hpp); the searches compiled for AVX-512.
#include "column_layout.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "../src/engines/chunk_copy.hpp"
#include "../src/growable_buffer.hpp"
#include "../src/morton.hpp"
#include "../src/prefix_sum.hpp"

namespace bench::column {

Layout build_layout(std::span<const float> points, double r) {
  const std::size_t n = points.size() / 3;
  std::array<double, 3> lo, hi;
  lo.fill(std::numeric_limits<double>::infinity());
  hi.fill(-std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::min(lo[k], static_cast<double>(points[3 * i + k]));
      hi[k] = std::max(hi[k], static_cast<double>(points[3 * i + k]));
    }
  }
  Layout layout;
  double cells = 1;
  for (int k = 0; k < 3; ++k) {
    const double side = std::floor((hi[k] - lo[k]) / r) + 1;
    if (side > 0xFFFF) throw std::invalid_argument("lattice over 65535 cells per axis");
    layout.dims[k] = static_cast<int>(side);
    cells *= side;
  }
  if (cells > double(1u << 28)) {
    throw std::invalid_argument("lattice of " + std::to_string(cells) +
                                " cells: too large for this dense prototype");
  }
  const auto [nx, ny, nz] = layout.dims;
  const std::size_t columns = static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> morton(columns);
  for (std::size_t c = 0; c < columns; ++c) {
    const auto cx = static_cast<std::uint32_t>(c % static_cast<std::size_t>(nx));
    const auto cy = static_cast<std::uint32_t>(c / static_cast<std::size_t>(nx));
    morton[c] = {spatialhash::detail::morton_code<2>({cx, cy}), static_cast<std::uint32_t>(c)};
  }
  std::sort(morton.begin(), morton.end());
  layout.rank_of.resize(columns);
  layout.column_at.resize(columns);
  for (std::size_t k = 0; k < columns; ++k) {
    layout.rank_of[morton[k].second] = static_cast<std::uint32_t>(k);
    layout.column_at[k] = morton[k].second;
  }
  // Counting sort by (rank, z).
  const std::size_t slots = columns * static_cast<std::size_t>(nz);
  std::vector<std::uint32_t> key(n), start(slots + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::array<std::size_t, 3> c;
    for (int k = 0; k < 3; ++k) {
      const double u = std::floor((static_cast<double>(points[3 * i + k]) - lo[k]) / r);
      c[k] = static_cast<std::size_t>(std::min<double>(u, layout.dims[k] - 1));
    }
    key[i] = static_cast<std::uint32_t>(layout.rank_of[c[0] + static_cast<std::size_t>(nx) * c[1]] *
                                            static_cast<std::size_t>(nz) +
                                        c[2]);
    ++start[key[i] + 1];
  }
  std::partial_sum(start.begin(), start.end(), start.begin());
  layout.cell_start = start;
  layout.x.resize(n), layout.y.resize(n), layout.z.resize(n), layout.id.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t at = start[key[i]]++;
    layout.x[at] = points[3 * i];
    layout.y[at] = points[3 * i + 1];
    layout.z[at] = points[3 * i + 2];
    layout.id[at] = static_cast<std::uint32_t>(i);
  }
  return layout;
}

Band band_for(double r) {
  const auto r2 = static_cast<float>(r * r);
  return {std::nextafter(r2, 0.0f) * (1 - 4e-7f), r2 * (1 + 4e-7f)};
}

// The searches below are compiled for AVX-512, the build above not (callers check the processor
// first). A target pragma rather than -mavx512f for the file: templates defined in the headers
// (the standard library's, the library's own) are then instantiated for the baseline processor,
// so the linker's choice among their copies cannot put AVX-512 code into the rest of the program.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq")

namespace {

/// A block of up to 4 queries (sorted positions first .. first + count - 1, all in one column
/// and two z cells) and the runs of candidates their stencils span.
struct Block {
  std::uint32_t first = 0;
  int count = 0;
  int runs = 0;
  std::array<std::uint32_t, 9> run_begin{}, run_end{};
};

/// Calls visit(block) for every block of queries of the layout, the columns taken dynamically by
/// `threads` threads (in Morton order, 8 at a time); then each thread calls finish() once.
template <class Visit, class Finish>
void for_each_block(const Layout& layout, int threads, Visit&& visit, Finish&& finish) {
  const auto [nx, ny, nz] = layout.dims;
  const auto columns = static_cast<std::int64_t>(nx) * ny;
  const auto column_cells = static_cast<std::size_t>(nz);
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(dynamic, 8) nowait
    for (std::int64_t k = 0; k < columns; ++k) {
      const std::uint32_t column = layout.column_at[static_cast<std::size_t>(k)];
      const int cx = static_cast<int>(column % static_cast<std::uint32_t>(nx));
      const int cy = static_cast<int>(column / static_cast<std::uint32_t>(nx));
      std::array<std::size_t, 9> neighbor_base;
      int neighbors = 0;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          const int ax = cx + dx, ay = cy + dy;
          if (ax < 0 || ay < 0 || ax >= nx || ay >= ny) continue;
          neighbor_base[static_cast<std::size_t>(neighbors++)] =
              layout.rank_of[static_cast<std::size_t>(ax + nx * ay)] * column_cells;
        }
      }
      const std::size_t base = static_cast<std::size_t>(k) * column_cells;
      Block block;
      block.runs = neighbors;
      for (int z0 = 0; z0 < nz; z0 += 2) {
        const std::uint32_t first = layout.cell_start[base + static_cast<std::size_t>(z0)];
        const std::uint32_t end =
            layout.cell_start[base + static_cast<std::size_t>(std::min(z0 + 2, nz))];
        if (first == end) continue;
        const auto z_low = static_cast<std::size_t>(std::max(z0 - 1, 0));
        const auto z_high = static_cast<std::size_t>(std::min(z0 + 3, nz));
        for (int t = 0; t < neighbors; ++t) {
          const auto at = static_cast<std::size_t>(t);
          block.run_begin[at] = layout.cell_start[neighbor_base[at] + z_low];
          block.run_end[at] = layout.cell_start[neighbor_base[at] + z_high];
        }
        for (std::uint32_t q0 = first; q0 < end; q0 += 4) {
          block.first = q0;
          block.count = static_cast<int>(std::min<std::uint32_t>(4, end - q0));
          visit(block);
        }
      }
    }
    finish();
  }
}

/// The lanes of a run's vector at j that lie before `stop`.
__mmask16 live_lanes(std::uint32_t j, std::uint32_t stop) {
  return static_cast<__mmask16>(stop - j >= 16 ? 0xFFFFu : (1u << (stop - j)) - 1u);
}

/// Calls visit(j, live) for each candidate vector of the block's runs: positions j .. j + 15, of
/// which the lanes in `live` lie within the run.
template <class Visit>
void for_each_vector(const Block& block, Visit&& visit) {
  for (int t = 0; t < block.runs; ++t) {
    const std::uint32_t stop = block.run_end[static_cast<std::size_t>(t)];
    for (std::uint32_t j = block.run_begin[static_cast<std::size_t>(t)]; j < stop; j += 16) {
      visit(j, live_lanes(j, stop));
    }
  }
}

/// Squared distances, in float, between 16 candidates and one query (broadcast).
__m512 distance_squared(__m512 vx, __m512 vy, __m512 vz, __m512 qx, __m512 qy, __m512 qz) {
  const __m512 dx = _mm512_sub_ps(vx, qx);
  const __m512 dy = _mm512_sub_ps(vy, qy);
  const __m512 dz = _mm512_sub_ps(vz, qz);
  return _mm512_fmadd_ps(dz, dz, _mm512_fmadd_ps(dy, dy, _mm512_mul_ps(dx, dx)));
}

/// Entries of a chunk of the shared row array, as the library claims them.
constexpr std::size_t kChunk = std::size_t{1} << 16;

}  // namespace

Totals count_columns(const Layout& layout, Band band, int threads,
                     std::vector<std::uint32_t>& counts, std::vector<std::uint32_t>& banded) {
  // Plain pointers: the compiler reloads a vector's data pointer on every candidate vector.
  const float* const xs = layout.x.data();
  const float* const ys = layout.y.data();
  const float* const zs = layout.z.data();
  const __m512 below = _mm512_set1_ps(band.below), above = _mm512_set1_ps(band.above);
  // Counts written by sorted position, then put in the caller's order by a pass of their own, as
  // the library's are (scattered stores inside the search slow it down).
  const std::size_t n = layout.x.size();
  spatialhash::ResultVector<std::uint32_t> by_position;
  spatialhash::detail::sized_for_overwrite(by_position, n);
  // Each thread's sums, a cache line apart.
  struct alignas(64) Sums {
    std::uint64_t below = 0, in_band = 0;
  };
  std::vector<Sums> sums(static_cast<std::size_t>(threads));
  for_each_block(
      layout, threads,
      [&](const Block& block) {
        __m512 qx[4], qy[4], qz[4];  // not std::array: its vector attributes would be dropped
        for (int q = 0; q < 4; ++q) {
          const std::uint32_t s =
              block.first + static_cast<std::uint32_t>(std::min(q, block.count - 1));
          qx[q] = _mm512_set1_ps(xs[s]);
          qy[q] = _mm512_set1_ps(ys[s]);
          qz[q] = _mm512_set1_ps(zs[s]);
        }
        // Band candidates are rare: one count for the whole block, a bound for each of its queries,
        // keeps the registers free (a count per query made GCC spill the counters).
        std::uint32_t in[4] = {}, unsure = 0;
        for_each_vector(block, [&](std::uint32_t j, __mmask16 live) {
          const __m512 vx = _mm512_maskz_loadu_ps(live, xs + j);
          const __m512 vy = _mm512_maskz_loadu_ps(live, ys + j);
          const __m512 vz = _mm512_maskz_loadu_ps(live, zs + j);
#pragma GCC unroll 4
          for (int q = 0; q < 4; ++q) {
            const __m512 d2 = distance_squared(vx, vy, vz, qx[q], qy[q], qz[q]);
            const __mmask16 near = _mm512_mask_cmp_ps_mask(live, d2, above, _CMP_LE_OQ);
            const __mmask16 sure = _mm512_mask_cmp_ps_mask(near, d2, below, _CMP_LE_OQ);
            in[q] += static_cast<std::uint32_t>(__builtin_popcount(sure));
            if (near != sure) [[unlikely]] {
              unsure += static_cast<std::uint32_t>(__builtin_popcount(near & ~sure));
            }
          }
        });
        std::uint64_t found = 0;
        for (int q = 0; q < block.count; ++q) {
          const std::uint32_t s = block.first + static_cast<std::uint32_t>(q);
          by_position[s] = in[q] - 1;  // itself, at distance 0
          if (unsure > 0) [[unlikely]] {
            banded[layout.id[s]] = unsure;  // zero otherwise (the caller clears it)
          }
          found += in[q] - 1;
        }
        Sums& mine = sums[static_cast<std::size_t>(omp_get_thread_num())];
        mine.below += found;
        mine.in_band += unsure;
      },
      [] {});
  const auto positions = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t p = 0; p < positions; ++p) {
    counts[layout.id[static_cast<std::size_t>(p)]] = by_position[static_cast<std::size_t>(p)];
  }
  Totals totals;
  for (const Sums& part : sums) {
    totals.below += part.below;
    totals.in_band += part.in_band;
  }
  return totals;
}

namespace {

/// Rows by sorted position (slot): slot s's neighbors are indices[start[s] .. start[s] +
/// count[s]), rows back to back in chunks, kNoNeighbor between.
struct SlotRows {
  spatialhash::ResultVector<spatialhash::index_t> indices;
  spatialhash::ResultVector<std::size_t> start;
  spatialhash::ResultVector<std::uint32_t> count;
};

/// The row search (rows_columns() and lists_columns()): each row written where the search is,
/// threads claiming chunks of one shared array, where it went recorded by slot (in sequence:
/// scattered stores inside the search slow it down, the library's collectors found).
void search_rows(const Layout& layout, double r, Band band, int threads, std::size_t capacity,
                 SlotRows& rows) {
  const std::size_t n = layout.x.size();
  using spatialhash::detail::sized_for_overwrite;
  sized_for_overwrite(rows.start, n);  // every entry written by the search
  sized_for_overwrite(rows.count, n);
  sized_for_overwrite(rows.indices, capacity);
  const float* const xs = layout.x.data();
  const float* const ys = layout.y.data();
  const float* const zs = layout.z.data();
  const std::uint32_t* const ids = layout.id.data();
  const __m512 below = _mm512_set1_ps(band.below), above = _mm512_set1_ps(band.above);
  const double r2 = r * r;
  std::atomic<std::size_t> claimed = 0;
  std::atomic<bool> overflow = false;
  // Each thread's chunk of the shared array, and its scratch rows: two sets of 4, the block's
  // rows written into one while the last block's rows, in the other, are copied out, so that a
  // row's loads do not meet the overlapping, unaligned compress stores that just wrote it (which
  // cannot forward to them). Copying each block's rows at once instead was 0.9-1.0x as fast
  // (W1, W2 1M, 2 threads, three alternated rounds on a busy machine).
  struct alignas(64) Local {  // a cache line of its own: its cursor changes with every row
    std::size_t at = 0, end = 0;
    std::vector<std::uint32_t> scratch[2];
    int half = 0;
    // The last block's rows, waiting in scratch[1 - half]: their sorted positions and lengths.
    int pending = 0;
    std::uint32_t slot[4] = {}, length[4] = {};
    std::size_t stride = 0;
  };
  std::vector<Local> locals(static_cast<std::size_t>(threads));
  // Copies the pending rows of `local` into the shared array.
  const auto flush = [&](Local& local) {
    const std::uint32_t* const rows_of = local.scratch[1 - local.half].data();
    for (int q = 0; q < local.pending; ++q) {
      const std::uint32_t* const row = rows_of + static_cast<std::size_t>(q) * local.stride;
      const std::uint32_t count = local.length[q];
      // A chunk keeps 16 entries spare: a row's last vector is stored whole, into them.
      if (local.end - local.at < count + 16) {
        std::fill(rows.indices.data() + local.at, rows.indices.data() + local.end,
                  spatialhash::kNoNeighbor);
        const std::size_t size = std::max<std::size_t>(kChunk, count + 16);
        local.at = claimed.fetch_add(size, std::memory_order_relaxed);
        local.end = local.at + size;
        if (local.end > capacity) {
          overflow.store(true, std::memory_order_relaxed);
          local.at = local.end = 0;
          local.pending = 0;
          return;
        }
      }
      // Whole vectors (the scratch row has a vector of slack, the chunk 16 spare entries): the
      // next row, or the chunk's closing fill, overwrites what lands past the row.
      std::uint32_t* const target = rows.indices.data() + local.at;
      for (std::uint32_t k = 0; k < count; k += 16) {
        _mm512_storeu_si512(target + k, _mm512_loadu_si512(row + k));
      }
      rows.start[local.slot[q]] = local.at;
      rows.count[local.slot[q]] = count;
      local.at += count;
    }
    local.pending = 0;
  };
  for_each_block(
      layout, threads,
      [&](const Block& block) {
        // Copies of what the search reads, so that they stay in registers (the lambda captures
        // references, which the compiler reloads around the stores).
        const float* const x = xs;
        const float* const y = ys;
        const float* const z = zs;
        const std::uint32_t* const id = ids;
        Local& local = locals[static_cast<std::size_t>(omp_get_thread_num())];
        std::size_t candidates = 0;
        for (int t = 0; t < block.runs; ++t) {
          candidates += block.run_end[static_cast<std::size_t>(t)] -
                        block.run_begin[static_cast<std::size_t>(t)];
        }
        const std::size_t stride = candidates + 16;  // a whole vector stored past a row's end
        std::vector<std::uint32_t>& mine = local.scratch[local.half];
        if (mine.size() < 4 * stride) mine.resize(4 * stride);
        std::uint32_t* const scratch = mine.data();
        __m512 qx[4], qy[4], qz[4];
        std::uint32_t self[4];
        for (int q = 0; q < 4; ++q) {
          const std::uint32_t s =
              block.first + static_cast<std::uint32_t>(std::min(q, block.count - 1));
          self[q] = s;
          qx[q] = _mm512_set1_ps(x[s]);
          qy[q] = _mm512_set1_ps(y[s]);
          qz[q] = _mm512_set1_ps(z[s]);
        }
        const __m512 below_r2 = below, above_r2 = above;
        // Row cursors, each advanced by its stores (the row of query q starts at q * stride).
        std::uint32_t* cursor[4];
        for (int q = 0; q < 4; ++q) cursor[q] = scratch + static_cast<std::size_t>(q) * stride;
        for_each_vector(block, [&](std::uint32_t j, __mmask16 live) {
          const __m512 vx = _mm512_maskz_loadu_ps(live, x + j);
          const __m512 vy = _mm512_maskz_loadu_ps(live, y + j);
          const __m512 vz = _mm512_maskz_loadu_ps(live, z + j);
          const __m512i vid = _mm512_maskz_loadu_epi32(live, id + j);
#pragma GCC unroll 4
          for (int q = 0; q < 4; ++q) {
            const __m512 d2 = distance_squared(vx, vy, vz, qx[q], qy[q], qz[q]);
            // Itself: lane self - j when it lies in this vector (unsigned wrap otherwise).
            const std::uint32_t lane = self[q] - j;
            const auto others = static_cast<__mmask16>(lane < 16 ? ~(1u << lane) : 0xFFFFu);
            const __mmask16 near = _mm512_mask_cmp_ps_mask(live & others, d2, above_r2, _CMP_LE_OQ);
            const __mmask16 sure = _mm512_mask_cmp_ps_mask(near, d2, below_r2, _CMP_LE_OQ);
            _mm512_storeu_si512(cursor[q], _mm512_maskz_compress_epi32(sure, vid));
            cursor[q] += __builtin_popcount(sure);
            if (near != sure) [[unlikely]] {
              // Decided in double, on the float coordinates as given.
              for (unsigned bits = near & ~sure; bits != 0; bits &= bits - 1) {
                const std::uint32_t c = j + static_cast<std::uint32_t>(__builtin_ctz(bits));
                const std::uint32_t s = self[q];
                const double ex = double(x[c]) - double(x[s]), ey = double(y[c]) - double(y[s]),
                             ez = double(z[c]) - double(z[s]);
                if (ex * ex + ey * ey + ez * ez <= r2) *cursor[q]++ = id[c];
              }
            }
          }
        });
        flush(local);  // the last block's rows, long stored
        for (int q = 0; q < block.count; ++q) {
          std::uint32_t* const row = scratch + static_cast<std::size_t>(q) * stride;
          local.slot[q] = self[q];
          local.length[q] = static_cast<std::uint32_t>(cursor[q] - row);
        }
        local.pending = block.count;
        local.stride = stride;
        local.half = 1 - local.half;
      },
      [&] { flush(locals[static_cast<std::size_t>(omp_get_thread_num())]); });
  if (overflow.load()) throw std::length_error("rows_columns: capacity too small");
  for (const Local& local : locals) {
    std::fill(rows.indices.data() + local.at, rows.indices.data() + local.end,
              spatialhash::kNoNeighbor);
  }
  rows.indices.resize(std::min(capacity, claimed.load()));
}

}  // namespace

void rows_columns(const Layout& layout, double r, Band band, int threads, std::size_t capacity,
                  spatialhash::NeighborRows& rows) {
  SlotRows slots;
  search_rows(layout, r, band, threads, capacity, slots);
  // Put in the caller's order by a pass of its own, as the library's are
  // (collect_rows_unordered.hpp).
  const std::size_t n = layout.x.size();
  spatialhash::detail::sized_for_overwrite(rows.start, n);
  spatialhash::detail::sized_for_overwrite(rows.count, n);
  rows.distances.clear();
  const std::uint32_t* const ids = layout.id.data();
  const auto signed_n = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t s = 0; s < signed_n; ++s) {
    rows.start[ids[s]] = slots.start[static_cast<std::size_t>(s)];
    rows.count[ids[s]] = slots.count[static_cast<std::size_t>(s)];
  }
  rows.indices = std::move(slots.indices);
}

void lists_columns(const Layout& layout, double r, Band band, int threads, std::size_t capacity,
                   spatialhash::NeighborLists& lists) {
  using spatialhash::detail::sized_for_overwrite;
  SlotRows slots;  // the library's per-thread buffers: fresh for fresh lists
  search_rows(layout, r, band, threads, capacity, slots);
  const std::size_t n = layout.x.size();
  const auto signed_n = static_cast<std::int64_t>(n);
  const std::uint32_t* const ids = layout.id.data();
  // As the library's lay_out_rows(): offsets by caller row, then where each slot's row goes.
  sized_for_overwrite(lists.offsets, n + 1);
  lists.offsets[0] = 0;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t s = 0; s < signed_n; ++s) {
    lists.offsets[ids[s] + std::size_t{1}] = slots.count[static_cast<std::size_t>(s)];
  }
  spatialhash::detail::parallel_inclusive_scan(std::span<std::size_t>(lists.offsets), threads);
  sized_for_overwrite(lists.indices, lists.offsets[n]);
  lists.distances.clear();
  spatialhash::ResultVector<std::size_t> row_start;
  sized_for_overwrite(row_start, n);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t s = 0; s < signed_n; ++s) {
    row_start[static_cast<std::size_t>(s)] = lists.offsets[ids[s]];
  }
  // The placement: rows in slot order (the source read in sequence), each to its place in the
  // output with copy_streaming, the destination 8 rows on prefetched for writing, as the library
  // does (collect_rows.hpp).
  constexpr std::int64_t kAhead = 8;
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (std::int64_t s = 0; s < signed_n; ++s) {
      if (s + kAhead < signed_n) {
        __builtin_prefetch(lists.indices.data() + row_start[static_cast<std::size_t>(s + kAhead)],
                           1);
      }
      const auto slot = static_cast<std::size_t>(s);
      spatialhash::detail::copy_streaming(lists.indices.data() + row_start[slot],
                                          slots.indices.data() + slots.start[slot],
                                          slots.count[slot]);
    }
    spatialhash::detail::streaming_done();
  }
}

}  // namespace bench::column

#pragma GCC pop_options
