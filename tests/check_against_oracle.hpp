// check_against_oracle: builds an index with one engine on one data set and compares every query
// with the double-precision brute-force oracle. Its four forms (2D and 3D, float and double) are
// compiled once, in check_against_oracle.cpp (the test_oracle_checks library), not in every test
// that includes this header: each took 8 s of a test file's compile.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "datasets.hpp"
#include "expect_row_layout.hpp"
#include "oracle.hpp"
#include "spatialhash/spatialhash.hpp"

template <int Dim, class T>
std::vector<std::array<double, Dim>> probe_positions(const std::vector<double>& xyz,
                                                     std::uint64_t seed) {
  std::vector<std::array<double, Dim>> probes;
  const std::size_t n = xyz.size() / Dim;
  std::mt19937_64 g(seed);
  // Existing points (self included in a ball), points nudged off them, and random positions in
  // and around the bounding box, including far outside.
  for (std::size_t s = 0; s < std::min<std::size_t>(n, 15); ++s) {
    const std::size_t i = (s * 7919) % n;
    std::array<double, Dim> p;
    for (int k = 0; k < Dim; ++k) p[k] = xyz[i * Dim + k];
    probes.push_back(p);
    for (int k = 0; k < Dim; ++k) p[k] += 0.01 * (k + 1);
    probes.push_back(p);
  }
  double lo = 0, hi = 1;
  if (n > 0) {
    lo = *std::min_element(xyz.begin(), xyz.end());
    hi = *std::max_element(xyz.begin(), xyz.end());
  }
  std::uniform_real_distribution<double> u(lo - 0.2 * (hi - lo) - 1, hi + 0.2 * (hi - lo) + 1);
  for (int s = 0; s < 15; ++s) {
    std::array<double, Dim> p;
    for (int k = 0; k < Dim; ++k) p[k] = u(g);
    probes.push_back(p);
  }
  std::array<double, Dim> far;
  far.fill(1e30);
  probes.push_back(far);
  return probes;
}

/// A resizable PairOutput that records every write (from any thread): the slots written, how
/// often each, whether a write fell outside the size of the moment, and the sizes it was given.
struct ResizableRecorder final : spatialhash::PairOutput {
  int allocations = 0, resizes = 0;
  std::size_t allocated = 0;
  std::vector<spatialhash::Pair> pairs;
  std::unique_ptr<std::atomic<int>[]> writes;
  std::atomic<bool> out_of_range = false;

  void allocate(std::size_t count) override {
    ++allocations;
    allocated = count;
    pairs.resize(count);
    writes = std::make_unique<std::atomic<int>[]>(count);
  }
  void write(std::size_t at, std::span<const spatialhash::Pair> batch) override {
    if (at + batch.size() > pairs.size()) {
      out_of_range = true;
      return;
    }
    for (std::size_t k = 0; k < batch.size(); ++k) {
      pairs[at + k] = batch[k];
      writes[at + k].fetch_add(1);
    }
  }
  bool resizable() const override { return true; }
  void resize(std::size_t count) override {
    ++resizes;
    auto kept = std::make_unique<std::atomic<int>[]>(count);
    for (std::size_t k = 0; k < std::min(count, pairs.size()); ++k) kept[k] = writes[k].load();
    writes = std::move(kept);
    pairs.resize(count);
  }
  /// Checks the contract (PairOutput, resizable case) and returns the pairs, sorted.
  std::vector<std::pair<std::size_t, std::size_t>> checked_pairs() const {
    std::vector<std::pair<std::size_t, std::size_t>> got;
    got.reserve(pairs.size());
    EXPECT_EQ(allocations, 1);
    EXPECT_LE(resizes, 1);
    EXPECT_FALSE(out_of_range) << "a write past the output's size";
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      EXPECT_EQ(writes[k].load(), 1) << "slot " << k << " not written exactly once";
      EXPECT_LT(pairs[k].first, pairs[k].second);
      got.emplace_back(pairs[k].first, pairs[k].second);
    }
    std::sort(got.begin(), got.end());
    return got;
  }
};

/// Entries [begin, end) of a row of point i, in any order, with their distances: the same
/// neighbors as `want` (ascending), each with the exact distance (double brute force).
template <int Dim>
void expect_unsorted_row_with_distances(const std::vector<double>& exact, std::size_t i,
                                        const std::vector<std::size_t>& want,
                                        const spatialhash::index_t* indices,
                                        const double* distances, std::size_t begin, std::size_t end,
                                        const std::string& what) {
  std::vector<std::pair<std::size_t, double>> row;
  for (std::size_t k = begin; k < end; ++k) row.emplace_back(indices[k], distances[k]);
  std::sort(row.begin(), row.end());
  ASSERT_EQ(row.size(), want.size()) << what << " of point " << i;
  for (std::size_t k = 0; k < row.size(); ++k) {
    const std::size_t j = want[k];
    ASSERT_EQ(row[k].first, j) << what << " of point " << i;
    ASSERT_EQ(row[k].second,
              std::sqrt(oracle::distance_squared<Dim>(&exact[i * Dim], &exact[j * Dim])))
        << what << " of point " << i << ", neighbor " << j;
  }
}

/// True for dense_grid's refusal of a lattice with too many cells (src/engines/dense_grid.cpp).
/// Half lists (ListOptions::half) against the oracle's pairs (sorted): every entry of row i is a
/// neighbor of i, each pair sits in exactly one of its two rows, rows ascend when `sorted`, and
/// each distance is the exact one. row_of(i) gives row i's ids and distances (empty without).
template <int Dim, class RowOf>
void expect_half_lists(const std::vector<double>& exact, std::size_t n,
                       const std::vector<std::pair<std::size_t, std::size_t>>& want_pairs,
                       RowOf&& row_of, bool sorted, const char* what) {
  std::vector<std::pair<std::size_t, std::size_t>> got;
  got.reserve(want_pairs.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto [ids, distances] = row_of(i);
    if (sorted) {
      ASSERT_TRUE(std::is_sorted(ids.begin(), ids.end())) << what << ": row " << i;
    }
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const std::size_t j = ids[k];
      ASSERT_NE(j, i) << what << ": point " << i << " in its own row";
      got.emplace_back(std::min(i, j), std::max(i, j));
      if (!distances.empty()) {
        ASSERT_EQ(distances[k],
                  std::sqrt(oracle::distance_squared<Dim>(&exact[i * Dim], &exact[j * Dim])))
            << what << ": distance of " << i << " and " << j;
      }
    }
  }
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), want_pairs.size()) << what << ": pair count";
  ASSERT_TRUE(got == want_pairs) << what << ": not every pair exactly once";
}

inline bool is_dense_grid_refusal(const spatialhash::InvalidArgument& e) {
  return std::string(e.what()).find("dense_grid refuses a lattice of") != std::string::npos;
}

template <int Dim, class T>
void check_against_oracle(const spatialhash::Options& options, const datasets::Dataset& d) {
  const spatialhash::Engine engine = options.engine;
  using spatialhash::index_t;
  const std::vector<T> coords(d.xyz.begin(), d.xyz.end());
  const std::vector<double> exact = oracle::widen(coords);  // what the oracle sees
  const std::size_t n = coords.size() / Dim;
  const double r = d.radius;

  std::optional<spatialhash::Index<Dim, T>> built;
  try {
    built.emplace(std::span<const T>(coords), r, options);
  } catch (const spatialhash::InvalidArgument& e) {
    // The one refusal allowed: dense_grid declining a lattice too large for its cell table
    // (tests/test_dense_grid_limits.cpp checks that refusal on its own).
    if (engine != spatialhash::Engine::dense_grid || !is_dense_grid_refusal(e)) throw;
    std::cout << "[   NOTE   ] dense_grid refused " << d.name << ": " << e.what() << "\n";
    return;
  }
  const spatialhash::Index<Dim, T>& index = *built;
  ASSERT_EQ(index.size(), n);
  ASSERT_EQ(index.engine(), engine);

  const auto want_pairs = oracle::pairs<Dim>(exact, r);
  const auto want_lists = oracle::lists_of_pairs(n, want_pairs);

  // Pairs once, as arrays: no duplicates, no self pairs, first < second, distances right.
  {
    auto list = index.pairs({.with_distances = true});
    ASSERT_EQ(list.pairs.size(), list.distances.size());
    std::vector<std::pair<std::size_t, std::size_t>> got;
    got.reserve(list.pairs.size());
    for (std::size_t k = 0; k < list.pairs.size(); ++k) {
      const auto [i, j] = list.pairs[k];
      ASSERT_LT(i, j) << "pair " << k << " not ordered or a self pair";
      const double d2 = oracle::distance_squared<Dim>(&exact[i * Dim], &exact[j * Dim]);
      ASSERT_EQ(list.distances[k], std::sqrt(d2)) << "distance of pair " << i << "," << j;
      got.emplace_back(i, j);
    }
    std::sort(got.begin(), got.end());
    ASSERT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "duplicate pair";
    ASSERT_EQ(got, want_pairs);
    auto sorted = index.pairs({.sorted = true});
    ASSERT_TRUE(std::is_sorted(sorted.pairs.begin(), sorted.pairs.end()));
    ASSERT_EQ(sorted.pairs.size(), want_pairs.size());
  }
  // Pairs once, into a caller's PairOutput: allocate() once with the exact count, then writes
  // that cover every slot exactly once (written from several threads: slot flags are atomic).
  {
    struct Recorder final : spatialhash::PairOutput {
      int allocations = 0;
      std::vector<spatialhash::Pair> pairs;
      std::unique_ptr<std::atomic<int>[]> writes;
      void allocate(std::size_t count) override {
        ++allocations;
        pairs.resize(count);
        writes = std::make_unique<std::atomic<int>[]>(count);
      }
      void write(std::size_t at, std::span<const spatialhash::Pair> batch) override {
        for (std::size_t k = 0; k < batch.size(); ++k) {
          pairs[at + k] = batch[k];
          writes[at + k].fetch_add(1);
        }
      }
    } out;
    index.pairs(out);
    ASSERT_EQ(out.allocations, 1);
    std::vector<std::pair<std::size_t, std::size_t>> got;
    got.reserve(out.pairs.size());
    for (std::size_t k = 0; k < out.pairs.size(); ++k) {
      ASSERT_EQ(out.writes[k].load(), 1) << "slot " << k << " not written exactly once";
      ASSERT_LT(out.pairs[k].first, out.pairs[k].second);
      got.emplace_back(out.pairs[k].first, out.pairs[k].second);
    }
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, want_pairs);
  }
  // Pairs once, into a resizable PairOutput (which the engine may fill in one search from an
  // estimated size): every slot of the final size written exactly once.
  {
    ResizableRecorder out;
    index.pairs(out);
    ASSERT_EQ(out.checked_pairs(), want_pairs);
  }
  // Pairs once, by callback, with exact squared distances.
  {
    std::vector<std::pair<std::size_t, std::size_t>> got;
    got.reserve(want_pairs.size());
    index.for_each_pair([&](index_t i, index_t j, double d2) {
      EXPECT_EQ(d2, oracle::distance_squared<Dim>(&exact[i * Dim], &exact[j * Dim]));
      got.emplace_back(i, j);
    });
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, want_pairs);
  }
  // Full lists: sorted on request equal the oracle; unsorted are the same sets; symmetric by
  // construction of the oracle; counts equal list lengths.
  {
    auto lists = index.neighbor_lists({.sorted = true, .with_distances = true});
    ASSERT_EQ(lists.size(), n);
    ASSERT_EQ(lists.indices.size(), 2 * want_pairs.size());
    // The storage-reusing form, into lists left over from a different query: nothing stale may
    // survive.
    spatialhash::NeighborLists unsorted;
    unsorted.offsets.assign(n + 7, 99);
    unsorted.indices.assign(3 * n + 5, 12345);
    unsorted.distances.assign(11, -1.0);
    index.neighbor_lists(unsorted);
    ASSERT_EQ(unsorted.size(), n);
    ASSERT_EQ(unsorted.offsets[n], unsorted.indices.size());
    ASSERT_TRUE(unsorted.distances.empty());
    // The low-memory form (count first, then each row in place) runs the same search: the same
    // rows in the same order, checked against the oracle below.
    const auto low = index.neighbor_lists({.with_distances = true, .low_memory = true});
    ASSERT_EQ(low.size(), n);
    ASSERT_EQ(low.offsets[n], low.indices.size());
    ASSERT_EQ(low.distances.size(), low.indices.size());
    // Unsorted with distances (cell_list: searched as sorted positions, measured from a sorted
    // copy of the points).
    const auto unsorted_d = index.neighbor_lists({.with_distances = true});
    ASSERT_EQ(unsorted_d.offsets, lists.offsets);
    ASSERT_EQ(unsorted_d.distances.size(), unsorted_d.indices.size());
    auto counts = index.neighbor_counts();
    ASSERT_EQ(counts.size(), n);
    // The same counts refilled into a shorter vector holding other values (checked against the
    // oracle through `counts` below).
    std::vector<index_t> refilled_counts(n / 2, 7);
    index.neighbor_counts(refilled_counts);
    ASSERT_EQ(refilled_counts, counts);
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::size_t> row(lists.indices.begin() + lists.offsets[i],
                                   lists.indices.begin() + lists.offsets[i + 1]);
      ASSERT_EQ(row, want_lists[i]) << "list of point " << i;
      for (std::size_t k = lists.offsets[i]; k < lists.offsets[i + 1]; ++k) {
        const std::size_t j = lists.indices[k];
        ASSERT_EQ(lists.distances[k],
                  std::sqrt(oracle::distance_squared<Dim>(&exact[i * Dim], &exact[j * Dim])));
      }
      std::vector<std::size_t> urow(unsorted.indices.begin() + unsorted.offsets[i],
                                    unsorted.indices.begin() + unsorted.offsets[i + 1]);
      std::sort(urow.begin(), urow.end());
      ASSERT_EQ(urow, want_lists[i]) << "unsorted list of point " << i;
      expect_unsorted_row_with_distances<Dim>(exact, i, want_lists[i], low.indices.data(),
                                              low.distances.data(), low.offsets[i],
                                              low.offsets[i + 1], "low-memory list");
      expect_unsorted_row_with_distances<Dim>(
          exact, i, want_lists[i], unsorted_d.indices.data(), unsorted_d.distances.data(),
          unsorted_d.offsets[i], unsorted_d.offsets[i + 1], "unsorted list with distances");
      ASSERT_EQ(counts[i], want_lists[i].size()) << "count of point " << i;
    }
  }
  // NeighborRows: the same rows as the oracle's, each where the search wrote it. Sorted with
  // distances, and unsorted refilled into rows left over from a different query.
  {
    const auto rows = index.neighbor_rows({.sorted = true, .with_distances = true});
    expect_row_layout(rows, n);
    spatialhash::NeighborRows refilled;
    refilled.start.assign(n + 3, 7);
    refilled.count.assign(2 * n + 1, 5);
    refilled.indices.assign(4 * n + 9, 12345);
    refilled.distances.assign(13, -1.0);
    index.neighbor_rows(refilled, {.with_distances = false});
    expect_row_layout(refilled, n);
    ASSERT_TRUE(refilled.distances.empty());
    const auto unsorted_d = index.neighbor_rows({.with_distances = true});
    expect_row_layout(unsorted_d, n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto row = rows.row(i);
      ASSERT_EQ(std::vector<std::size_t>(row.begin(), row.end()), want_lists[i])
          << "rows: point " << i;
      for (std::size_t k = 0; k < row.size(); ++k) {
        ASSERT_EQ(rows.distances[rows.start[i] + k],
                  std::sqrt(oracle::distance_squared<Dim>(&exact[i * Dim], &exact[row[k] * Dim])));
      }
      const auto unsorted_row = refilled.row(i);
      std::vector<std::size_t> sorted_row(unsorted_row.begin(), unsorted_row.end());
      std::sort(sorted_row.begin(), sorted_row.end());
      ASSERT_EQ(sorted_row, want_lists[i]) << "refilled rows: point " << i;
      expect_unsorted_row_with_distances<Dim>(
          exact, i, want_lists[i], unsorted_d.indices.data(), unsorted_d.distances.data(),
          unsorted_d.start[i], unsorted_d.start[i] + unsorted_d.count[i], "rows with distances");
    }
  }
  // Half lists: each pair once, as CSR lists (sorted with distances, unsorted with distances,
  // refilled into full lists' storage, low memory) and as NeighborRows.
  {
    using Row = std::pair<std::span<const index_t>, std::span<const double>>;
    const auto of_lists = [](const spatialhash::NeighborLists& lists) {
      return [&lists](std::size_t i) {
        const std::size_t first = lists.offsets[i], count = lists.offsets[i + 1] - first;
        return Row{{lists.indices.data() + first, count},
                   lists.distances.empty()
                       ? std::span<const double>()
                       : std::span<const double>(lists.distances.data() + first, count)};
      };
    };
    const auto sorted_d =
        index.neighbor_lists({.sorted = true, .with_distances = true, .half = true});
    ASSERT_EQ(sorted_d.size(), n);
    expect_half_lists<Dim>(exact, n, want_pairs, of_lists(sorted_d), true, "sorted half lists");
    const auto unsorted_d = index.neighbor_lists({.with_distances = true, .half = true});
    expect_half_lists<Dim>(exact, n, want_pairs, of_lists(unsorted_d), false, "half lists");
    spatialhash::NeighborLists refilled = index.neighbor_lists();
    index.neighbor_lists(refilled, {.half = true});
    ASSERT_TRUE(refilled.distances.empty());
    expect_half_lists<Dim>(exact, n, want_pairs, of_lists(refilled), false, "refilled half lists");
    const auto low = index.neighbor_lists({.low_memory = true, .half = true});
    expect_half_lists<Dim>(exact, n, want_pairs, of_lists(low), false, "low-memory half lists");
    const auto rows = index.neighbor_rows({.sorted = true, .with_distances = true, .half = true});
    expect_row_layout(rows, n);
    expect_half_lists<Dim>(
        exact, n, want_pairs,
        [&rows](std::size_t i) {
          return Row{rows.row(i), {rows.distances.data() + rows.start[i], rows.count[i]}};
        },
        true, "half rows");
    EXPECT_THROW(index.cross(spatialhash::PointsView<Dim, T>(coords.data(), n), {.half = true}),
                 spatialhash::InvalidArgument);
  }
  // A smaller query radius on the same index.
  {
    const double half = r * 0.5;
    auto got = index.pairs({.radius = half, .sorted = true});
    const auto want = oracle::pairs<Dim>(exact, half);
    ASSERT_EQ(got.pairs.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(got.pairs[k].first, want[k].first);
      ASSERT_EQ(got.pairs[k].second, want[k].second);
    }
    auto counts = index.neighbor_counts(half);
    std::vector<index_t> want_counts(n, 0);
    for (auto [i, j] : want) ++want_counts[i], ++want_counts[j];
    ASSERT_EQ(counts, want_counts);
    // Refilled into a longer vector holding other values.
    std::vector<index_t> refilled(n + 5, 99);
    index.neighbor_counts(refilled, half);
    ASSERT_EQ(refilled, want_counts);
  }
  // Ball queries at arbitrary positions, full and smaller radius.
  // The same, unsorted, into one vector reused from query to query (its old contents must go).
  const auto probes = probe_positions<Dim, T>(exact, n + 17);
  std::vector<index_t> found{7, 7, 7};
  for (double qr : {r, r * 0.37}) {
    for (const auto& p : probes) {
      auto got = index.ball(p, qr, true);
      const auto want = oracle::ball<Dim>(exact, p, qr);
      ASSERT_EQ(std::vector<std::size_t>(got.begin(), got.end()), want)
          << "ball at (" << p[0] << "," << p[1] << ") r=" << qr;
      index.ball(p, qr, found);
      std::vector<std::size_t> unsorted(found.begin(), found.end());
      std::sort(unsorted.begin(), unsorted.end());
      ASSERT_EQ(unsorted, want) << "ball into a reused vector at (" << p[0] << "," << p[1] << ")";
    }
  }
  // Cross query: every probe as a second point set, in both float and double.
  {
    std::vector<double> qd;
    for (const auto& p : probes) qd.insert(qd.end(), p.begin(), p.end());
    const std::vector<float> qf(qd.begin(), qd.end());
    const auto cross_d = index.cross(spatialhash::PointsView<Dim, double>(qd.data(), probes.size()),
                                     {.sorted = true});
    const auto cross_f = index.cross(spatialhash::PointsView<Dim, float>(qf.data(), probes.size()),
                                     {.sorted = true});
    const auto cross_low = index.cross(
        spatialhash::PointsView<Dim, double>(qd.data(), probes.size()), {.low_memory = true});
    const std::vector<double> qf_exact(qf.begin(), qf.end());
    ASSERT_EQ(cross_d.size(), probes.size());
    ASSERT_EQ(cross_low.size(), probes.size());
    // The callback forms give the same rows, with exact squared distances.
    std::vector<std::vector<std::size_t>> by_callback(probes.size());
    index.for_each_cross(spatialhash::PointsView<Dim, double>(qd.data(), probes.size()),
                         spatialhash::kIndexRadius, [&](std::size_t q, index_t j, double d2) {
                           EXPECT_EQ(d2,
                                     oracle::distance_squared<Dim>(&exact[j * Dim], &qd[q * Dim]));
                           by_callback[q].push_back(j);
                         });
    for (auto& row : by_callback) std::sort(row.begin(), row.end());
    for (std::size_t q = 0; q < probes.size(); ++q) {
      std::vector<std::size_t> row(cross_d.indices.begin() + cross_d.offsets[q],
                                   cross_d.indices.begin() + cross_d.offsets[q + 1]);
      ASSERT_EQ(row, oracle::ball<Dim>(exact, probes[q], r)) << "cross row " << q;
      ASSERT_EQ(by_callback[q], row) << "callback cross row " << q;
      std::vector<std::size_t> low_row(cross_low.indices.begin() + cross_low.offsets[q],
                                       cross_low.indices.begin() + cross_low.offsets[q + 1]);
      std::sort(low_row.begin(), low_row.end());
      ASSERT_EQ(low_row, row) << "low-memory cross row " << q;
      std::array<double, Dim> pf;
      for (int k = 0; k < Dim; ++k) pf[k] = qf_exact[q * Dim + k];
      std::vector<std::size_t> rowf(cross_f.indices.begin() + cross_f.offsets[q],
                                    cross_f.indices.begin() + cross_f.offsets[q + 1]);
      ASSERT_EQ(rowf, oracle::ball<Dim>(exact, pf, r)) << "float cross row " << q;
    }
    // With distances: the same rows, each entry with its exact distance.
    const auto with_d = index.cross(spatialhash::PointsView<Dim, double>(qd.data(), probes.size()),
                                    {.sorted = true, .with_distances = true});
    ASSERT_EQ(with_d.offsets, cross_d.offsets);
    ASSERT_EQ(with_d.indices, cross_d.indices);
    ASSERT_EQ(with_d.distances.size(), with_d.indices.size());
    for (std::size_t q = 0; q < probes.size(); ++q) {
      for (std::size_t e = with_d.offsets[q]; e < with_d.offsets[q + 1]; ++e) {
        const std::size_t j = with_d.indices[e];
        ASSERT_EQ(with_d.distances[e],
                  std::sqrt(oracle::distance_squared<Dim>(&exact[j * Dim], &qd[q * Dim])))
            << "cross distance of query " << q << " to " << j;
      }
    }
    // NeighborRows: sorted with distances from the double queries; unsorted from the float
    // queries, refilled into rows left over from a different query.
    const auto rows_d =
        index.cross_rows(spatialhash::PointsView<Dim, double>(qd.data(), probes.size()),
                         {.sorted = true, .with_distances = true});
    expect_row_layout(rows_d, probes.size());
    spatialhash::NeighborRows rows_f;
    rows_f.start.assign(3, 9);
    rows_f.count.assign(probes.size() + 4, 2);
    rows_f.indices.assign(7, 1);
    rows_f.distances.assign(5, 1.0);
    index.cross_rows(spatialhash::PointsView<Dim, float>(qf.data(), probes.size()), rows_f);
    expect_row_layout(rows_f, probes.size());
    ASSERT_TRUE(rows_f.distances.empty());
    for (std::size_t q = 0; q < probes.size(); ++q) {
      const auto row = rows_d.row(q);
      ASSERT_EQ(std::vector<std::size_t>(row.begin(), row.end()),
                oracle::ball<Dim>(exact, probes[q], r))
          << "cross_rows row " << q;
      for (std::size_t k = 0; k < row.size(); ++k) {
        ASSERT_EQ(rows_d.distances[rows_d.start[q] + k],
                  std::sqrt(oracle::distance_squared<Dim>(&exact[row[k] * Dim], &qd[q * Dim])))
            << "cross_rows distance of query " << q << " to " << row[k];
      }
      std::array<double, Dim> pf;
      for (int k = 0; k < Dim; ++k) pf[k] = qf_exact[q * Dim + k];
      const auto row_f = rows_f.row(q);
      std::vector<std::size_t> sorted_f(row_f.begin(), row_f.end());
      std::sort(sorted_f.begin(), sorted_f.end());
      ASSERT_EQ(sorted_f, oracle::ball<Dim>(exact, pf, r)) << "float cross_rows row " << q;
    }
  }
}

template <int Dim, class T>
void check_against_oracle(spatialhash::Engine engine, const datasets::Dataset& d) {
  check_against_oracle<Dim, T>(spatialhash::Options{.engine = engine}, d);
}

extern template void check_against_oracle<2, float>(const spatialhash::Options&,
                                                    const datasets::Dataset&);
extern template void check_against_oracle<2, double>(const spatialhash::Options&,
                                                     const datasets::Dataset&);
extern template void check_against_oracle<3, float>(const spatialhash::Options&,
                                                    const datasets::Dataset&);
extern template void check_against_oracle<3, double>(const spatialhash::Options&,
                                                     const datasets::Dataset&);
