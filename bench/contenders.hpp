// The contenders: every engine of spatialhash, and nanoflann's KD-tree as the outside peer. Each
// runs one operation on one problem with a given thread count and returns its timings and the
// digest of its result; a contender that cannot run throws (the harness reports "n/a (why)").
#pragma once

#include <cstddef>

#include "measure.hpp"
#include "spatialhash/types.hpp"

namespace bench {

/// One spatialhash engine through the public API: spatialhash::Index with `options` (its
/// engine, its cell subdivision) and `threads` threads; list operations (rebuild_lists, step_lists,
/// rebuild_rows, step_rows, ball, ball_rows) pass `list_options`. Ball queries go to
/// Index::cross (ball) or Index::cross_rows (ball_rows) all at once, or to Index::ball one query
/// at a time (ball_each, threads over queries).
template <int Dim, class T>
Measurement run_ours(const spatialhash::Options& options,
                     const spatialhash::ListOptions& list_options, const Problem<Dim, T>& problem,
                     Op op, int threads, const RepPolicy& policy);

/// nanoflann's KDTreeSingleIndexAdaptor (single-threaded build, leaves of `leaf_size` points),
/// searched with a result set that keeps d2 <= r*r (nanoflann's own RadiusResultSet keeps only
/// d2 < r*r) and skips the point itself; the loop over query points runs on `threads` OpenMP
/// threads and fills the same NeighborLists / PairList containers our engines return. nanoflann
/// computes distances in T (float for float input), so it may disagree with the exact rule for
/// pairs at distance ~r; the harness reports that as a mismatch count, not an error.
template <int Dim, class T>
Measurement run_nanoflann(const Problem<Dim, T>& problem, Op op, int threads,
                          const RepPolicy& policy, std::size_t leaf_size);

}  // namespace bench
