// check_periodic: builds a periodic index with one engine on one point set and compares every
// query (pairs with their shifts, lists, counts, smaller radius, balls, cross) with the
// explicit-image brute force of periodic_oracle.hpp.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "check_against_oracle.hpp"
#include "expect_row_layout.hpp"
#include "periodic_oracle.hpp"
#include "spatialhash/spatialhash.hpp"

/// A test point set in a periodic box.
template <int Dim>
struct PeriodicCase {
  std::string name;
  spatialhash::PeriodicBox<Dim> box;
  std::vector<double> xyz;  ///< interleaved; may lie outside the box
  double radius;
};

template <int Dim>
periodic_oracle::Box<Dim> oracle_box(const spatialhash::PeriodicBox<Dim>& box) {
  periodic_oracle::Box<Dim> b;
  for (int k = 0; k < Dim; ++k) {
    b.edge[k] = box.upper[k] - box.lower[k];
    b.periodic[k] = box.periodic[k];
  }
  return b;
}

/// The coordinates wrapped as the index wraps them (wrap_into, tested on its own).
template <int Dim, class T>
std::vector<double> wrapped_coords(const std::vector<T>& coords,
                                   const spatialhash::PeriodicBox<Dim>& box) {
  std::vector<double> wrapped(coords.size());
  for (std::size_t i = 0; i < coords.size() / Dim; ++i) {
    std::array<double, Dim> p;
    for (int k = 0; k < Dim; ++k) p[k] = static_cast<double>(coords[i * Dim + k]);
    const auto w = spatialhash::wrap_into(box, p);
    for (int k = 0; k < Dim; ++k) wrapped[i * Dim + k] = w[k];
  }
  return wrapped;
}

/// Pairs by callback, as oracle records (shift widened to int, unused axes must be 0).
template <int Dim, class T>
std::vector<periodic_oracle::PairImage> pairs_by_callback(const spatialhash::Index<Dim, T>& index,
                                                          double radius) {
  std::vector<periodic_oracle::PairImage> got;
  index.for_each_pair_batch(
      [&](std::span<const spatialhash::PairHit> batch) {
        for (const auto& h : batch) {
          got.push_back(
              {h.first, h.second, {h.shift[0], h.shift[1], h.shift[2]}, h.distance_squared});
        }
      },
      radius);
  std::sort(got.begin(), got.end());
  return got;
}

/// The oracle's pairs as sorted full lists of n points (each pair in both rows).
inline std::vector<std::vector<std::size_t>> lists_of_pairs(
    const std::vector<periodic_oracle::PairImage>& pairs, std::size_t n) {
  std::vector<std::vector<std::size_t>> lists(n);
  for (const auto& p : pairs) {
    lists[p.first].push_back(p.second);
    lists[p.second].push_back(p.first);
  }
  for (auto& row : lists) std::sort(row.begin(), row.end());
  return lists;
}

/// Ball centers: some points (as given, possibly outside the box), the box corners and points
/// just inside and outside them, and random positions from one edge below to one edge above.
template <int Dim>
std::vector<std::array<double, Dim>> periodic_probes(const PeriodicCase<Dim>& c,
                                                     std::uint64_t seed) {
  std::vector<std::array<double, Dim>> probes;
  const std::size_t n = c.xyz.size() / Dim;
  for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, n / 12)) {
    std::array<double, Dim> p;
    for (int k = 0; k < Dim; ++k) p[k] = c.xyz[i * Dim + k];
    probes.push_back(p);
  }
  for (int corner = 0; corner < (1 << Dim); ++corner) {
    for (double nudge : {0.0, 1e-9, -1e-9, 0.25 * c.radius}) {
      std::array<double, Dim> p;
      for (int k = 0; k < Dim; ++k) {
        p[k] = ((corner >> k) & 1) ? c.box.upper[k] - nudge : c.box.lower[k] + nudge;
      }
      probes.push_back(p);
    }
  }
  std::mt19937_64 g(seed);
  for (int s = 0; s < 12; ++s) {
    std::array<double, Dim> p;
    for (int k = 0; k < Dim; ++k) {
      const double edge = c.box.upper[k] - c.box.lower[k];
      p[k] =
          std::uniform_real_distribution<double>(c.box.lower[k] - edge, c.box.upper[k] + edge)(g);
    }
    probes.push_back(p);
  }
  return probes;
}

template <int Dim, class T>
void check_periodic(const spatialhash::Options& options, const PeriodicCase<Dim>& c) {
  using spatialhash::index_t;
  const std::vector<T> coords(c.xyz.begin(), c.xyz.end());
  const std::size_t n = coords.size() / Dim;
  const double r = c.radius;
  const spatialhash::Index<Dim, T> index(std::span<const T>(coords), r, c.box, options);
  ASSERT_EQ(index.size(), n);
  ASSERT_TRUE(index.box().has_value());
  const std::vector<double> wrapped = wrapped_coords<Dim>(coords, c.box);
  const auto box = oracle_box(c.box);

  std::size_t ambiguous = 0;
  const auto want = periodic_oracle::pairs<Dim>(wrapped, box, r, &ambiguous);
  ASSERT_EQ(ambiguous, 0u) << "test set has a pair with two images within r";

  // Pairs once by callback, each with the oracle's shift and squared distance (so the
  // difference vector rebuilt from the shift has exactly the reported length).
  {
    const auto got = pairs_by_callback(index, spatialhash::kIndexRadius);
    for (std::size_t k = 0; k < got.size(); ++k) {
      ASSERT_LT(got[k].first, got[k].second) << "pair not ordered or a self pair";
      if (k > 0) {
        ASSERT_FALSE(got[k].first == got[k - 1].first && got[k].second == got[k - 1].second)
            << "pair " << got[k].first << "," << got[k].second << " reported twice";
      }
      if (Dim == 2) {
        ASSERT_EQ(got[k].shift[2], 0);
      }
    }
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(got[k].first, want[k].first) << "pair " << k;
      ASSERT_EQ(got[k].second, want[k].second) << "pair " << k;
      ASSERT_EQ(got[k].shift, want[k].shift)
          << "shift of pair " << got[k].first << "," << got[k].second;
      ASSERT_EQ(got[k].distance_squared, want[k].distance_squared) << "pair " << k;
    }
  }
  // Pair arrays, sorted, with distances.
  {
    const auto list = index.pairs({.sorted = true, .with_distances = true});
    ASSERT_EQ(list.pairs.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(list.pairs[k].first, want[k].first);
      ASSERT_EQ(list.pairs[k].second, want[k].second);
      ASSERT_EQ(list.distances[k], std::sqrt(want[k].distance_squared));
    }
  }
  // Pair arrays without distances, and into a resizable PairOutput (the default engine's one
  // search, folding the images) and a fixed-size one.
  {
    const auto list = index.pairs({.sorted = true});
    ASSERT_EQ(list.pairs.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(list.pairs[k].first, want[k].first);
      ASSERT_EQ(list.pairs[k].second, want[k].second);
    }
    ResizableRecorder recorder;
    index.pairs(recorder);
    const auto recorded = recorder.checked_pairs();
    ASSERT_EQ(recorded.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(recorded[k].first, want[k].first);
      ASSERT_EQ(recorded[k].second, want[k].second);
    }
    struct FixedOutput final : spatialhash::PairOutput {
      std::vector<spatialhash::Pair> pairs;
      void allocate(std::size_t count) override { pairs.assign(count, {index_t(-1), 0}); }
      void write(std::size_t at, std::span<const spatialhash::Pair> batch) override {
        ASSERT_LE(at + batch.size(), pairs.size());
        std::copy(batch.begin(), batch.end(), pairs.begin() + static_cast<std::ptrdiff_t>(at));
      }
    } fixed;
    index.pairs(fixed);
    std::sort(fixed.pairs.begin(), fixed.pairs.end(), [](const auto& a, const auto& b) {
      return std::pair(a.first, a.second) < std::pair(b.first, b.second);
    });
    ASSERT_EQ(fixed.pairs.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(fixed.pairs[k].first, want[k].first);
      ASSERT_EQ(fixed.pairs[k].second, want[k].second);
    }
  }
  // The distance of pair (i, j) as the oracle decided it (from the smaller index's side).
  std::map<std::pair<std::size_t, std::size_t>, double> distance;
  for (const auto& p : want) distance[{p.first, p.second}] = std::sqrt(p.distance_squared);
  // Full lists (symmetric, as the oracle's) and counts.
  {
    const auto want_lists = lists_of_pairs(want, n);
    const auto lists = index.neighbor_lists({.sorted = true, .with_distances = true});
    const auto unsorted = index.neighbor_lists();
    const auto low = index.neighbor_lists({.sorted = true, .low_memory = true});
    const auto rows = index.neighbor_rows({.sorted = true});
    const auto counts = index.neighbor_counts();
    ASSERT_EQ(rows.size(), n);
    ASSERT_EQ(lists.size(), n);
    ASSERT_EQ(unsorted.size(), n);
    ASSERT_EQ(low.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::vector<std::size_t> row(lists.indices.begin() + lists.offsets[i],
                                         lists.indices.begin() + lists.offsets[i + 1]);
      ASSERT_EQ(row, want_lists[i]) << "list of point " << i;
      for (std::size_t k = lists.offsets[i]; k < lists.offsets[i + 1]; ++k) {
        const std::size_t j = lists.indices[k];
        ASSERT_EQ(lists.distances[k], distance.at({std::min(i, j), std::max(i, j)}))
            << "distance of " << i << "," << j;
      }
      std::vector<std::size_t> urow(unsorted.indices.begin() + unsorted.offsets[i],
                                    unsorted.indices.begin() + unsorted.offsets[i + 1]);
      std::sort(urow.begin(), urow.end());
      ASSERT_EQ(urow, want_lists[i]) << "unsorted list of point " << i;
      const std::vector<std::size_t> low_row(low.indices.begin() + low.offsets[i],
                                             low.indices.begin() + low.offsets[i + 1]);
      ASSERT_EQ(low_row, want_lists[i]) << "low-memory list of point " << i;
      const auto got_row = rows.row(i);
      ASSERT_EQ(std::vector<std::size_t>(got_row.begin(), got_row.end()), want_lists[i])
          << "neighbor_rows of point " << i;
      ASSERT_EQ(counts[i], want_lists[i].size()) << "count of point " << i;
    }
  }
  // Half lists: each pair once, in the row of one of its points, with the oracle's distance.
  {
    const auto half = index.neighbor_lists({.sorted = true, .with_distances = true, .half = true});
    const auto half_rows = index.neighbor_rows({.half = true});
    ASSERT_EQ(half.size(), n);
    expect_row_layout(half_rows, n);
    std::vector<std::pair<std::size_t, std::size_t>> got, got_rows;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(std::is_sorted(half.indices.begin() + half.offsets[i],
                                 half.indices.begin() + half.offsets[i + 1]));
      for (std::size_t k = half.offsets[i]; k < half.offsets[i + 1]; ++k) {
        const std::size_t j = half.indices[k];
        got.emplace_back(std::min(i, j), std::max(i, j));
        ASSERT_EQ(half.distances[k], distance.at({std::min(i, j), std::max(i, j)}))
            << "half-list distance of " << i << "," << j;
      }
      for (const index_t j : half_rows.row(i))
        got_rows.emplace_back(std::min<std::size_t>(i, j), std::max<std::size_t>(i, j));
    }
    std::sort(got.begin(), got.end());
    std::sort(got_rows.begin(), got_rows.end());
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(got[k], std::pair(want[k].first, want[k].second)) << "half-list pair " << k;
    }
    ASSERT_EQ(got_rows, got) << "half rows";
  }
  // A smaller query radius on the same index: pairs, and the counts and sorted lists they make.
  {
    const double small = 0.55 * r;
    const auto want_small = periodic_oracle::pairs<Dim>(wrapped, box, small);
    ASSERT_EQ(pairs_by_callback(index, small), want_small);
    const auto want_lists = lists_of_pairs(want_small, n);
    const auto lists = index.neighbor_lists({.radius = small, .sorted = true});
    const auto counts = index.neighbor_counts(small);
    ASSERT_EQ(lists.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::vector<std::size_t> row(lists.indices.begin() + lists.offsets[i],
                                         lists.indices.begin() + lists.offsets[i + 1]);
      ASSERT_EQ(row, want_lists[i]) << "list of point " << i << " at r=" << small;
      ASSERT_EQ(counts[i], want_lists[i].size()) << "count of point " << i << " at r=" << small;
    }
  }
  // Ball queries and the cross query over the same positions.
  const auto probes = periodic_probes(c, n + 5);
  for (double qr : {r, 0.37 * r}) {
    for (const auto& p : probes) {
      const auto got = index.ball(p, qr, true);
      const auto want_ball =
          periodic_oracle::ball<Dim>(wrapped, box, spatialhash::wrap_into(c.box, p), qr);
      ASSERT_EQ(std::vector<std::size_t>(got.begin(), got.end()), want_ball)
          << "ball at (" << p[0] << ", " << p[1] << ") r=" << qr;
    }
  }
  {
    std::vector<double> queries;
    for (const auto& p : probes) queries.insert(queries.end(), p.begin(), p.end());
    const spatialhash::PointsView<Dim, double> view(queries.data(), probes.size());
    const auto cross = index.cross(view, {.sorted = true});
    // The same rows as NeighborRows, with the distances measured across the box.
    const auto cross_rows = index.cross_rows(view, {.sorted = true, .with_distances = true});
    expect_row_layout(cross_rows, probes.size());
    for (std::size_t q = 0; q < probes.size(); ++q) {
      const std::vector<std::size_t> row(cross.indices.begin() + cross.offsets[q],
                                         cross.indices.begin() + cross.offsets[q + 1]);
      const auto center = spatialhash::wrap_into(c.box, probes[q]);
      ASSERT_EQ(row, periodic_oracle::ball<Dim>(wrapped, box, center, r)) << "cross row " << q;
      const auto got_row = cross_rows.row(q);
      ASSERT_EQ(std::vector<std::size_t>(got_row.begin(), got_row.end()), row)
          << "cross_rows row " << q;
      for (std::size_t k = 0; k < got_row.size(); ++k) {
        double want_d2 = INFINITY;  // the nearest image's
        for (const auto& shift : periodic_oracle::shifts(box)) {
          want_d2 = std::min(want_d2, periodic_oracle::image_distance_squared<Dim>(
                                          center.data(), &wrapped[got_row[k] * Dim], shift, box));
        }
        ASSERT_EQ(cross_rows.distances[cross_rows.start[q] + k], std::sqrt(want_d2))
            << "cross_rows distance of query " << q << " to " << got_row[k];
      }
    }
  }
}
