// One side of bench/ab_inprocess.sh: times one operation of the spatialhash library this file is
// compiled against. The script compiles it twice, against two builds of the library whose
// namespaces differ (the BEFORE build is compiled with -Dspatialhash=spatialhash_before), each
// time naming the function after its side (AB_SIDE_FUNCTION), so that one process holds both.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "spatialhash/spatialhash.hpp"

namespace {

template <int Dim>
double time_op(const float* points, std::size_t n, double radius, int threads, int op,
               std::uint64_t& entries) {
  const auto start = std::chrono::steady_clock::now();
  spatialhash::Index<Dim, float> index(spatialhash::PointsView<Dim, float>(points, n, Dim), radius,
                                       {.threads = threads});
  auto from = start;
  entries = 0;
  if (op == 0) {
    from = std::chrono::steady_clock::now();  // counts: the search alone
    for (const auto count : index.neighbor_counts()) entries += count;
  } else if (op == 1) {
    const auto rows = index.neighbor_rows();
    for (std::size_t i = 0; i < rows.size(); ++i) entries += rows.row(i).size();
  } else if (op == 2) {
    entries = index.neighbor_lists().indices.size();
  } else if (op == 8) {
    // One ball() per query, as a caller that asks query by query: n / 10 queries, each a quarter
    // radius off a point picked by a multiplicative hash (so in no order the points have).
    from = std::chrono::steady_clock::now();
    std::vector<spatialhash::index_t> found;
    for (std::size_t q = 0; q < n / 10; ++q) {
      const std::size_t i = static_cast<std::size_t>((q * 2654435761u) % n);
      typename spatialhash::Index<Dim, float>::Position center;
      for (int k = 0; k < Dim; ++k) center[k] = points[i * Dim + k] + 0.25 * radius;
      index.ball(center, radius, found);
      entries += found.size();
    }
  } else if (op == 5) {
    entries = index.size();  // build: the index alone
  } else if (op == 6 || op == 7) {
    // update() as a simulation meets it, its work arrays kept from an update before (untimed):
    // to the same points again (a refresh), or back from the points each moved by up to 1% of
    // the radius per coordinate (the same moves on both sides). The neighbor counts after it,
    // untimed, are its entries.
    std::vector<float> moved(points, points + n * Dim);
    for (std::size_t e = 0; op == 7 && e < moved.size(); ++e) {
      const auto step = static_cast<double>((e * 2654435761u) % 201) - 100.0;  // -100..100
      moved[e] += static_cast<float>(1e-4 * radius * step);
    }
    index.update(spatialhash::PointsView<Dim, float>(moved.data(), n, Dim));
    from = std::chrono::steady_clock::now();
    index.update(spatialhash::PointsView<Dim, float>(points, n, Dim));
    const auto stop = std::chrono::steady_clock::now();
    for (const auto count : index.neighbor_counts()) entries += count;
    return std::chrono::duration<double, std::milli>(stop - from).count();
  } else {
    from = std::chrono::steady_clock::now();  // pairs: the search alone
    entries = index.pairs({.with_distances = op == 4}).pairs.size();
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from).count();
}

}  // namespace

/// Milliseconds of operation `op` (0: neighbor_counts() on a built index; 1: build +
/// neighbor_rows(); 2: build + neighbor_lists(); 3: pairs() on a built index; 4: the same with
/// distances) on `n` points of dimension `dim` (2 or 3), and the neighbor entries (pairs for 3
/// and 4) it found; 5: the build alone (the index's points counted as its entries); 6: update()
/// of an updated index to the same points; 7: update() back from points moved by up to 1% of the
/// radius (the neighbor counts after either, untimed, as its entries); 8: n / 10 ball() calls,
/// one query each, on a built index (their hits as its entries).
double AB_SIDE_FUNCTION(const float* points, std::size_t n, int dim, double radius, int threads,
                        int op, std::uint64_t& entries) {
  return dim == 2 ? time_op<2>(points, n, radius, threads, op, entries)
                  : time_op<3>(points, n, radius, threads, op, entries);
}
