// How fast a neighbor row's distances are measured (the with_distances option of the list
// queries): the library's distance kernels (src/simd/distance_kernels.hpp), every level this
// processor runs, side by side on the same rows: a 3D workload's real neighbor rows (float
// points, shuffled as the benchmark's shuffled order has them), once as positions in a copy of the
// points in Morton order, rows in that order (what unsorted lists with distances measure), and once
// as the caller's indices in its shuffled order (what sorted lists and cross queries measure), each
// row's distances written after the last row's. Prints nanoseconds per entry and each level's
// speed-up over the scalar kernel; exits 1 when two levels disagree in any bit.
//
//   row_distances [workload] [points] [repeats]   (defaults W1 1000000 5; one thread)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "../src/simd/distance_kernels.hpp"
#include "spatialhash/spatialhash.hpp"
#include "workloads.hpp"

namespace {

using spatialhash::index_t;
using spatialhash::Simd;

/// Rows in the order they are measured: row r is the point at row_point[r] (its coordinates at
/// that index of `coords`), its neighbors ids[offsets[r] .. offsets[r + 1]).
struct Rows {
  std::vector<float> coords;
  std::vector<index_t> row_point, ids;
  std::vector<std::size_t> offsets{0};
};

Rows rows_of(const std::vector<float>& coords, const spatialhash::NeighborLists& lists,
             const std::vector<index_t>& order) {
  // `order` empty: the caller's indices and order; else position p is the caller's order[p].
  Rows rows;
  const std::size_t n = lists.offsets.size() - 1;
  std::vector<index_t> position_of;
  if (order.empty()) {
    rows.coords = coords;
  } else {
    position_of = spatialhash::inverse_permutation(order);
    rows.coords.resize(coords.size());
    for (std::size_t p = 0; p < n; ++p) {
      std::copy_n(coords.begin() + 3 * std::ptrdiff_t(order[p]), 3,
                  rows.coords.begin() + 3 * std::ptrdiff_t(p));
    }
  }
  rows.ids.reserve(lists.indices.size());
  for (std::size_t r = 0; r < n; ++r) {
    const index_t point = order.empty() ? index_t(r) : order[r];
    rows.row_point.push_back(order.empty() ? point : index_t(r));
    for (std::size_t e = lists.offsets[point]; e < lists.offsets[point + 1]; ++e) {
      rows.ids.push_back(order.empty() ? lists.indices[e] : position_of[lists.indices[e]]);
    }
    rows.offsets.push_back(rows.ids.size());
  }
  return rows;
}

/// The fastest of `repeats` passes over every row, in ms; the distances land in `out`.
double time_level(spatialhash::detail::RowDistancesFn<3, float> kernel, const Rows& rows,
                  int repeats, std::vector<double>& out) {
  const std::size_t n = rows.row_point.size();
  const spatialhash::PointsView<3, float> points(rows.coords.data(), n);
  out.assign(rows.ids.size(), 0.0);
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t row = 0; row < n; ++row) {
      std::array<double, 3> from;
      for (int k = 0; k < 3; ++k) from[std::size_t(k)] = points.coord(rows.row_point[row], k);
      kernel(points, from, rows.ids.data() + rows.offsets[row],
             static_cast<std::uint32_t>(rows.offsets[row + 1] - rows.offsets[row]),
             out.data() + rows.offsets[row]);
    }
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string key = argc > 1 ? argv[1] : "W1";
  const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1'000'000;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  bench::Workload workload = bench::make_workload(key, n, 42);
  bench::apply_order(workload, bench::Order::shuffled, 42);
  if (workload.dim != 3 || repeats < 1) {
    std::fprintf(stderr, "row_distances: a 3D workload (W1, W2, W3, W5) and repeats >= 1\n");
    return 2;
  }
  const std::vector<float> coords(workload.coords.begin(), workload.coords.end());
  const spatialhash::Index<3, float> index(std::span<const float>(coords), workload.radius,
                                           {.threads = 1});
  const spatialhash::NeighborLists lists = index.neighbor_lists();
  const auto points = spatialhash::interleaved<3>(std::span<const float>(coords));
  std::printf("%s, %zu points, %zu entries, ns per entry (fastest of %d), one thread\n",
              key.c_str(), n, lists.indices.size(), repeats);
  std::printf("%-34s %10s %10s %10s\n", "rows", "scalar", "avx2", "avx512");
  bool agree = true;
  for (const bool by_position : {true, false}) {
    const Rows rows = rows_of(coords, lists,
                              by_position ? spatialhash::morton_order(points, workload.radius, 1)
                                          : std::vector<index_t>{});
    std::vector<double> reference, out;
    const double scalar = time_level(
        spatialhash::detail::best_row_distances<3, float>(Simd::scalar), rows, repeats, reference);
    const double per_entry = 1e6 / static_cast<double>(rows.ids.size());
    std::printf("%-34s %10.2f",
                by_position ? "positions, Morton order" : "caller's indices, shuffled",
                scalar * per_entry);
    for (const Simd level : {Simd::avx2, Simd::avx512}) {
      if (!spatialhash::simd_available(level)) {
        std::printf(" %10s", "-");
        continue;
      }
      const double ms =
          time_level(spatialhash::detail::best_row_distances<3, float>(level), rows, repeats, out);
      agree = agree && std::memcmp(out.data(), reference.data(), out.size() * sizeof(double)) == 0;
      std::printf(" %5.2f %4.2fx", ms * per_entry, scalar / ms);
    }
    std::printf("\n");
  }
  if (!agree) std::fprintf(stderr, "row_distances: the kernels disagree\n");
  return agree ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "row_distances: %s\n", e.what());
  return 2;
}
