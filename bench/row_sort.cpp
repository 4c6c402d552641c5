// How fast one neighbor row is sorted by index (the `sorted` option of the list queries): the
// library's sort_row (src/simd/row_sort.hpp) with the best kernel this processor runs, against
// the same with the portable scalar kernel and against std::sort, side by side on the same rows
// (distinct random indices below 4M, rows of the lengths the workloads have: W1 about 28, W3
// about 131 and up to 800; and rows of 3 to 12, as sparse data has). Prints nanoseconds per row and
// the ratios. A second table times a row stored sorted as the collectors store it, from the
// search's output into their buffer: sorted straight from where it is (sort_row from a source, what
// they do) against copied first and then sorted in place (what they did before). Exits 1 when two
// sorts disagree.
//
//   row_sort [rows per length] [repeats]   (defaults 2000 15: the rows of one length fit in L2)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "../src/engines/chunk_copy.hpp"
#include "../src/simd/row_sort.hpp"
#include "spatialhash/types.hpp"

namespace {

using spatialhash::index_t;
using spatialhash::detail::RowSortFn;

/// `rows` rows of `length` distinct indices each, every row padded to a multiple of 16 entries.
struct Rows {
  std::size_t length = 0, stride = 0, count = 0;
  std::vector<index_t> ids;
};

Rows make_rows(std::size_t count, std::size_t length, std::mt19937& rng) {
  Rows rows{length, (length + 15) / 16 * 16, count, {}};
  rows.ids.resize(rows.stride * count);
  std::uniform_int_distribution<index_t> id(0, 4'000'000);
  for (std::size_t i = 0; i < count; ++i) {
    index_t* row = rows.ids.data() + i * rows.stride;
    for (std::size_t k = 0; k < length; ++k) row[k] = id(rng);
    std::sort(row, row + length);  // made distinct, then shuffled again
    for (std::size_t k = 1; k < length; ++k) row[k] = std::max(row[k], row[k - 1] + 1);
    std::shuffle(row, row + length, rng);
  }
  return rows;
}

/// The fastest of `repeats` passes of `sort` over copies of every row, in ns per row; `out`
/// keeps the last pass's rows.
template <class Sort>
double time_sort(const Rows& rows, int repeats, Sort sort, std::vector<index_t>& out) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    out = rows.ids;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < rows.count; ++i) sort(out.data() + i * rows.stride, rows.length);
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(stop - start).count() /
                              static_cast<double>(rows.count));
  }
  return best;
}

/// As time_sort, but `store` writes each row of `rows` (left as they are) to its place in `out`.
template <class Store>
double time_store(const Rows& rows, int repeats, Store store, std::vector<index_t>& out) {
  double best = 1e300;
  out.assign(rows.ids.size(), 0);
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < rows.count; ++i) {
      store(rows.ids.data() + i * rows.stride, out.data() + i * rows.stride, rows.length);
    }
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(stop - start).count() /
                              static_cast<double>(rows.count));
  }
  return best;
}

/// The second table: a row sorted from where it is into its place, against copied first.
bool compare_stores(std::size_t count, int repeats, RowSortFn best, std::mt19937& rng) {
  std::printf(
      "\nrow stored sorted, from a source row: sorted from it against copied, then sorted\n");
  std::printf("%6s %12s %12s %10s\n", "length", "from ns", "copy+sort ns", "x copy");
  bool agree = true;
  // Up to 64 entries: copy_in_chunks needs the row's length rounded up to 16 in both rows.
  for (const std::size_t length : {3, 8, 12, 16, 28, 32, 48, 64}) {
    const Rows rows = make_rows(count, length, rng);
    std::vector<index_t> by_from, by_copy;
    const double t_from = time_store(
        rows, repeats,
        [&](const index_t* from, index_t* to, std::size_t n) {
          spatialhash::detail::sort_row(best, from, to, n);
        },
        by_from);
    const double t_copy = time_store(
        rows, repeats,
        [&](const index_t* from, index_t* to, std::size_t n) {
          spatialhash::detail::copy_in_chunks(to, from, n);
          spatialhash::detail::sort_row(best, to, to, n);
        },
        by_copy);
    bool same = true;
    for (std::size_t i = 0; i < rows.count; ++i) {
      const auto* a = by_from.data() + i * rows.stride;
      const auto* b = by_copy.data() + i * rows.stride;
      same = same && std::equal(a, a + length, b) && std::is_sorted(a, a + length);
    }
    agree = agree && same;
    std::printf("%6zu %12.1f %12.1f %9.2fx%s\n", length, t_from, t_copy, t_copy / t_from,
                same ? "" : "  DISAGREE");
  }
  return agree;
}

int run(int argc, char** argv) {
  const std::size_t count = argc > 1 ? std::stoul(argv[1]) : 2000;
  const int repeats = argc > 2 ? std::stoi(argv[2]) : 15;
  if (count == 0 || repeats < 1) throw std::invalid_argument("rows and repeats must be positive");
  const RowSortFn best = spatialhash::detail::best_row_sort();
  const RowSortFn scalar = spatialhash::detail::best_row_sort(spatialhash::Simd::scalar);
  std::printf(
      "sort_row: best kernel (%s) against the scalar kernel and std::sort, %zu rows per "
      "length, fastest of %d passes\n",
      best == scalar ? "scalar" : "vector", count, repeats);
  std::printf("%6s %12s %12s %12s %10s %10s\n", "length", "best ns", "scalar ns", "std ns",
              "x scalar", "x std");
  std::mt19937 rng(1);
  bool agree = true;
  for (const std::size_t length : {3, 8, 12, 16, 28, 32, 48, 64, 100, 131, 200, 400, 800}) {
    const Rows rows = make_rows(count, length, rng);
    std::vector<index_t> by_best, by_scalar, by_std;
    const double t_best = time_sort(
        rows, repeats,
        [&](index_t* row, std::size_t n) { spatialhash::detail::sort_row(best, row, row, n); },
        by_best);
    const double t_scalar = time_sort(
        rows, repeats,
        [&](index_t* row, std::size_t n) { spatialhash::detail::sort_row(scalar, row, row, n); },
        by_scalar);
    const double t_std = time_sort(
        rows, repeats, [](index_t* row, std::size_t n) { std::sort(row, row + n); }, by_std);
    const bool same = by_best == by_std && by_scalar == by_std;
    agree = agree && same;
    std::printf("%6zu %12.1f %12.1f %12.1f %9.2fx %9.2fx%s\n", length, t_best, t_scalar, t_std,
                t_scalar / t_best, t_std / t_best, same ? "" : "  DISAGREE");
  }
  agree = compare_stores(count, repeats, best, rng) && agree;
  return agree ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "row_sort: %s\n", e.what());
    return 2;
  }
}
