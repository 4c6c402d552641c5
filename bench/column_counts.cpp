// A prototype of a gather-free layout for the default engine's search, timed against the library's
// neighbor_counts() on the same points, same threads, same process, round after round.
//
// The layout: cells of edge r; points sorted by column (a column is the cells of one (x, y), the
// columns in Morton order of (x, y)) and, within a column, by z cell. Every run of z cells of one
// column is then contiguous in memory. The search takes the points of two z cells of a column at a
// time (their stencils together span z cells z0 - 1 .. z0 + 2 of the 9 neighbouring columns: 9
// contiguous runs of 4 cells) and tests them 4 at a time against those runs where they lie, with
// 16-lane AVX-512 vectors: no stencil is gathered into a copy, at the price of a third more
// candidates than a 27-cell stencil (9 x 4 cells against 27). The engine's group gather copies 18
// cells per cell instead (CellList::search_group), and the copy is the larger part of its count
// search (docs/benchmarks.md, forty-ninth session).
//
// Scope: 3D workloads on a dense lattice (the cell table has a slot per lattice cell), counts only
// (the part of a list's time the layout changes; rows, placement and build are the engine's), a
// serial counting-sort build timed apart. Distances are tested in float with a band around r^2
// that holds every rounding error (the float difference of two floats is within a relative 2^-24
// of its exact value, so is d^2 within about 2.4e-7 of its own): a candidate below the band is a
// neighbor, one above is not, one inside is counted apart. Each point's exact count (the
// library's) must lie between the prototype's count and that count plus the band candidates of
// its block of four queries, or the program exits 1.
//
//   column_counts [workload] [points] [threads] [repeats]   (defaults W1 1M 0 9; threads 0: all
//                                                            cores; W1, W2, W3 or W5, shuffled)
//
// Exits 77 (CTest: skipped) on a processor without AVX-512 F, BW, VL and DQ.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "report.hpp"
#include "spatialhash/spatialhash.hpp"
#include "workloads.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The low 16 bits of v spread to the even bits (Morton interleaving).
std::uint32_t spread_bits(std::uint32_t v) {
  v &= 0xFFFFu;
  v = (v | (v << 8)) & 0x00FF00FFu;
  v = (v | (v << 4)) & 0x0F0F0F0Fu;
  v = (v | (v << 2)) & 0x33333333u;
  v = (v | (v << 1)) & 0x55555555u;
  return v;
}

/// Points sorted by column (Morton order of (x, y)) and by z cell within a column. Invariant: the
/// points of z cells a .. b - 1 of the column of rank k are positions cell_start[k * nz + a] ..
/// cell_start[k * nz + b] - 1.
struct ColumnLayout {
  std::array<int, 3> dims{};
  std::vector<float> x, y, z;
  std::vector<std::uint32_t> id;          ///< caller index of each sorted position
  std::vector<std::uint32_t> rank_of;     ///< column (x + nx * y) -> rank in Morton order
  std::vector<std::uint32_t> column_at;   ///< rank -> column
  std::vector<std::uint32_t> cell_start;  ///< rank * nz + z -> first position; one past the end
};

ColumnLayout build_layout(std::span<const float> points, double r) {
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
  ColumnLayout layout;
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
  std::vector<std::pair<std::uint32_t, std::uint32_t>> morton(columns);
  for (std::size_t c = 0; c < columns; ++c) {
    const auto cx = static_cast<std::uint32_t>(c % static_cast<std::size_t>(nx));
    const auto cy = static_cast<std::uint32_t>(c / static_cast<std::size_t>(nx));
    morton[c] = {spread_bits(cx) | (spread_bits(cy) << 1), static_cast<std::uint32_t>(c)};
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

/// Squared-distance bounds in float: a candidate at d2 <= below is a neighbor, one at d2 > above
/// is not (module comment).
struct Band {
  float below = 0, above = 0;
};

Band band_for(double r) {
  const auto r2 = static_cast<float>(r * r);
  return {std::nextafter(r2, 0.0f) * (1 - 4e-7f), r2 * (1 + 4e-7f)};
}

/// Sums of a count search: neighbors below the band, and candidates inside it.
struct Totals {
  std::uint64_t below = 0, in_band = 0;
};

/// The count search over the layout: counts[i] (caller order) gets point i's neighbors below the
/// band (self excluded); banded[i] (zero on entry) gets, when point i's block of 4 queries met
/// any candidates inside the band, their number (a bound on point i's own).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) Totals count_columns(
    const ColumnLayout& layout, Band band, int threads, std::vector<std::uint32_t>& counts,
    std::vector<std::uint32_t>& banded) {
  const auto [nx, ny, nz] = layout.dims;
  const auto columns = static_cast<std::int64_t>(nx) * ny;
  const std::size_t column_cells = static_cast<std::size_t>(nz);
  // Plain pointers: the compiler reloads a vector's data pointer on every candidate vector.
  const float* const xs = layout.x.data();
  const float* const ys = layout.y.data();
  const float* const zs = layout.z.data();
  std::uint64_t total = 0, in_band = 0;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads) reduction(+ : total, in_band)
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
    const __m512 below = _mm512_set1_ps(band.below), above = _mm512_set1_ps(band.above);
    for (int z0 = 0; z0 < nz; z0 += 2) {
      const std::uint32_t first = layout.cell_start[base + static_cast<std::size_t>(z0)];
      const std::uint32_t end =
          layout.cell_start[base + static_cast<std::size_t>(std::min(z0 + 2, nz))];
      if (first == end) continue;
      const auto z_low = static_cast<std::size_t>(std::max(z0 - 1, 0));
      const auto z_high = static_cast<std::size_t>(std::min(z0 + 3, nz));
      std::array<std::uint32_t, 9> run_begin, run_end;
      for (int t = 0; t < neighbors; ++t) {
        run_begin[static_cast<std::size_t>(t)] = layout.cell_start[neighbor_base[t] + z_low];
        run_end[static_cast<std::size_t>(t)] = layout.cell_start[neighbor_base[t] + z_high];
      }
      for (std::uint32_t q0 = first; q0 < end; q0 += 4) {
        const int queries = static_cast<int>(std::min<std::uint32_t>(4, end - q0));
        __m512 qx[4], qy[4], qz[4];  // not std::array: its vector attributes would be dropped
        for (int q = 0; q < 4; ++q) {
          const std::uint32_t s = q0 + static_cast<std::uint32_t>(std::min(q, queries - 1));
          qx[q] = _mm512_set1_ps(xs[s]);
          qy[q] = _mm512_set1_ps(ys[s]);
          qz[q] = _mm512_set1_ps(zs[s]);
        }
        // Band candidates are rare: one count for the whole block, a bound for each of its
        // queries, keeps the registers free (a count per query made GCC spill the counters).
        std::uint32_t in[4] = {}, unsure = 0;
        for (int t = 0; t < neighbors; ++t) {
          const std::uint32_t stop = run_end[static_cast<std::size_t>(t)];
          for (std::uint32_t j = run_begin[static_cast<std::size_t>(t)]; j < stop; j += 16) {
            const auto live =
                static_cast<__mmask16>(stop - j >= 16 ? 0xFFFFu : (1u << (stop - j)) - 1u);
            const __m512 vx = _mm512_maskz_loadu_ps(live, xs + j);
            const __m512 vy = _mm512_maskz_loadu_ps(live, ys + j);
            const __m512 vz = _mm512_maskz_loadu_ps(live, zs + j);
            for (int q = 0; q < 4; ++q) {
              const __m512 dx = _mm512_sub_ps(vx, qx[q]);
              const __m512 dy = _mm512_sub_ps(vy, qy[q]);
              const __m512 dz = _mm512_sub_ps(vz, qz[q]);
              const __m512 d2 =
                  _mm512_fmadd_ps(dz, dz, _mm512_fmadd_ps(dy, dy, _mm512_mul_ps(dx, dx)));
              const __mmask16 near = _mm512_mask_cmp_ps_mask(live, d2, above, _CMP_LE_OQ);
              const __mmask16 sure = _mm512_mask_cmp_ps_mask(near, d2, below, _CMP_LE_OQ);
              in[q] += static_cast<std::uint32_t>(__builtin_popcount(sure));
              if (near != sure) [[unlikely]] {
                unsure += static_cast<std::uint32_t>(__builtin_popcount(near & ~sure));
              }
            }
          }
        }
        for (int q = 0; q < queries; ++q) {
          const std::uint32_t caller = layout.id[q0 + static_cast<std::uint32_t>(q)];
          counts[caller] = in[q] - 1;  // itself, at distance 0
          if (unsure > 0) [[unlikely]] {
            banded[caller] = unsure;  // zero otherwise (the caller clears it)
          }
          total += in[q] - 1;
        }
        in_band += unsure;
      }
    }
  }
  return {total, in_band};
}

bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

/// Median and fastest of a set of times.
std::pair<double, double> summarize(const std::vector<double>& ms) {
  return {bench::median(ms), *std::min_element(ms.begin(), ms.end())};
}

int run(const bench::Workload& workload, int threads, int repeats) {
  const std::vector<float> points(workload.coords.begin(), workload.coords.end());
  const std::size_t n = workload.size();
  const auto build_start = Clock::now();
  const ColumnLayout layout = build_layout(points, workload.radius);
  const double build_ms = ms_since(build_start);
  const spatialhash::Index<3, float> index(std::span<const float>(points), workload.radius,
                                           spatialhash::Options{.threads = threads});
  const Band band = band_for(workload.radius);
  std::vector<double> column_ms, library_ms;
  std::vector<std::uint32_t> counts, banded(n);
  std::vector<spatialhash::index_t> exact;
  Totals totals;
  for (int r = 0; r < repeats; ++r) {
    counts = {};
    std::fill(banded.begin(), banded.end(), 0u);  // the check's, not the search's: untimed
    const auto start = Clock::now();
    counts.resize(n);
    totals = count_columns(layout, band, threads, counts, banded);
    column_ms.push_back(ms_since(start));
    exact = {};
    const auto library_start = Clock::now();
    exact = index.neighbor_counts();
    library_ms.push_back(ms_since(library_start));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (exact[i] < counts[i] || exact[i] > counts[i] + banded[i]) {
      std::fprintf(stderr,
                   "column_counts: point %zu has %u neighbors, the prototype counts %u (+%u in "
                   "the band)\n",
                   i, exact[i], counts[i], banded[i]);
      return 1;
    }
  }
  const auto [column_median, column_fastest] = summarize(column_ms);
  const auto [library_median, library_fastest] = summarize(library_ms);
  const std::uint64_t exact_total = std::accumulate(exact.begin(), exact.end(), std::uint64_t{0});
  std::printf(
      "column_counts: %s, %zu points, %d threads, %d repetitions; lattice %d x %d x %d, "
      "prototype build %.1f ms (serial)\n",
      workload.key.c_str(), n, threads, repeats, layout.dims[0], layout.dims[1], layout.dims[2],
      build_ms);
  std::printf("  %-34s %10s %10s\n", "", "median", "fastest");
  std::printf("  %-34s %7.2f ms %7.2f ms\n", "column layout, no gather", column_median,
              column_fastest);
  std::printf("  %-34s %7.2f ms %7.2f ms\n", "library neighbor_counts()", library_median,
              library_fastest);
  std::printf("  %-34s %7.2fx    %7.2fx\n", "library / column", library_median / column_median,
              library_fastest / column_fastest);
  std::printf(
      "  entries: library %llu, prototype %llu below the band + %llu inside it; every point "
      "agrees\n",
      static_cast<unsigned long long>(exact_total), static_cast<unsigned long long>(totals.below),
      static_cast<unsigned long long>(totals.in_band));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const bench::SideBySideArgs args = bench::parse_side_by_side_args(argc, argv);
    if (!has_avx512()) {
      std::printf("column_counts: no AVX-512 (F, BW, VL, DQ) on this processor; skipped\n");
      return 77;
    }
    const int threads = args.threads == 0 ? omp_get_num_procs() : args.threads;
    bench::Workload workload = bench::make_workload(args.workload, args.points, 1);
    if (workload.dim != 3) {
      throw std::invalid_argument("workload " + args.workload + " is not 3D");
    }
    bench::apply_order(workload, bench::Order::shuffled, 1);
    return run(workload, threads, args.repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "column_counts: %s\nusage: column_counts [W1|W2|W3|W5] [points: 2 ..= 2^30] "
                 "[threads: 0 ..= 4096] [repeats: 1 ..= 10000]\n",
                 e.what());
    return 2;
  }
}
