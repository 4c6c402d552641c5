// Block filters: the inner loop of the cell_list engine.
//
// Up to kBlockQueries query points (float, relative to the lattice origin) are tested against a
// few contiguous runs of candidates (structure of arrays). Each candidate vector is loaded once and
// tested against every query of the block, so the queries' independent compare-and-compress
// chains overlap in the pipeline. A candidate lands in its query's "sure" row when its float
// squared distance is <= band.lo (certainly within r), in its "border" row when it lies in
// (band.lo, band.hi] or is NaN (re-decided in double by the caller, see float_band.hpp), and
// nowhere otherwise. Rows hold the candidates' ids.
//
// A scalar version for every machine, and AVX2 and AVX-512 ones chosen at run time.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "../float_band.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// Candidate points, structure of arrays: coordinate k of candidate j at axis[k][j], its id
/// (original index or sorted position) at ids[j].
template <int Dim>
struct SoaView {
  std::array<const float*, Dim> axis;
  const std::uint32_t* ids;
};

/// A contiguous run of candidate indices [begin, end).
struct CandidateRun {
  std::uint32_t begin, end;
};

/// The runs of candidates one filter call tests, in order: at most kMaxRuns (a group search's
/// stencil in 3D is three runs, one per row along y; a column search's is one per column, 9:
/// cell_list.hpp).
inline constexpr int kMaxRuns = 9;
struct CandidateRuns {
  /// The first `count` are the runs; the rest are left unset (runs are built per filter call).
  std::array<CandidateRun, kMaxRuns> run;
  int count = 0;

  /// Appends [begin, end) when it is not empty.
  void add(std::uint32_t begin, std::uint32_t end) {
    if (begin < end) run[static_cast<std::size_t>(count++)] = CandidateRun{begin, end};
  }
  /// Appends [begin, end) (begin >= the last run's end), or extends the last run to `end` when
  /// fewer than `bridge` candidates lie between them: testing those costs less than the extra
  /// partly filled vector a run of its own ends with.
  void add_bridged(std::uint32_t begin, std::uint32_t end, std::uint32_t bridge) {
    if (begin >= end) return;
    if (count > 0 && begin - run[static_cast<std::size_t>(count - 1)].end < bridge) {
      run[static_cast<std::size_t>(count - 1)].end = end;
    } else {
      run[static_cast<std::size_t>(count++)] = CandidateRun{begin, end};
    }
  }
  /// Sets these runs to `runs` with every candidate index below `from` left out (`runs` may be
  /// these runs: each is read before any is written over it). In place, no temporary to copy (a
  /// half search clips once per filter block), and without a branch, the count in a register:
  /// each run is written, then kept by advancing past it when not empty (through add() the count
  /// went to memory and back on every run). Pairs 1.05-1.28x (docs/benchmarks.md, seventy-seventh
  /// session).
  void clip(const CandidateRuns& runs, std::uint32_t from) {
    int kept = 0;
    for (int i = 0; i < runs.count; ++i) {
      const CandidateRun r{std::max(runs.run[i].begin, from), runs.run[i].end};
      run[static_cast<std::size_t>(kept)] = r;
      kept += r.begin < r.end ? 1 : 0;
    }
    count = kept;
  }
  /// Candidates in all runs.
  std::uint32_t size() const {
    std::uint32_t total = 0;
    for (int i = 0; i < count; ++i) total += run[i].end - run[i].begin;
    return total;
  }
};

/// Queries tested together.
inline constexpr int kBlockQueries = 4;
/// No candidate is skipped (QueryBlock::skip).
inline constexpr std::uint32_t kSkipNone = 0xFFFFFFFFu;

/// One block of queries. Query q skips candidate index skip[q] (itself), or, when `after` is set,
/// every candidate index <= skip[q] (pairs once: a query meets only the candidates after it).
template <int Dim>
struct QueryBlock {
  std::array<std::array<float, Dim>, kBlockQueries> position;
  std::array<std::uint32_t, kBlockQueries> skip;
  int count = 0;  ///< 1 ..= kBlockQueries
  bool after = false;
};

/// Rows of one filter call: query q's sure ids at sure + q * stride, its border ids at
/// border + q * stride. A row needs room for the runs' candidates plus kFilterSlack (vector code
/// stores whole registers at a row's cursor, which advances only by what it kept). The counts are
/// set by the call. With sure == nullptr the filter only counts the sure candidates (no compress,
/// no store: a count search), border rows are still written.
struct BlockOutput {
  std::uint32_t* sure;
  std::uint32_t* border;
  std::size_t stride;
  std::array<std::uint32_t, kBlockQueries> sure_count{};
  std::array<std::uint32_t, kBlockQueries> border_count{};
};
inline constexpr std::size_t kFilterSlack = 16;

/// Fills `out` with the candidates j of the runs `runs` of `points` for every query of
/// `queries`, run after run (each row lists its candidates in that order).
template <int Dim>
using BlockFilterFn = void (*)(const SoaView<Dim>& points, const CandidateRuns& runs,
                               const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out);

template <int Dim>
void block_filter_scalar(const SoaView<Dim>& points, const CandidateRuns& runs,
                         const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out);

template <int Dim>
void block_filter_avx2(const SoaView<Dim>& points, const CandidateRuns& runs,
                       const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out);

template <int Dim>
void block_filter_avx512(const SoaView<Dim>& points, const CandidateRuns& runs,
                         const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out);

/// The candidate indices some query of a block skips lie in [first, last] (with `after`, every
/// index up to `last`); first > last when no query skips any. The SIMD filters run the skip test
/// only on vectors that meet this range.
struct SkippedRange {
  std::uint32_t first = kSkipNone, last = 0;

  template <int Dim>
  explicit SkippedRange(const QueryBlock<Dim>& queries) {
    for (int q = 0; q < queries.count; ++q) {
      if (queries.skip[q] == kSkipNone) continue;
      first = std::min(first, queries.skip[q]);
      last = std::max(last, queries.skip[q]);
    }
    if (queries.after && first <= last) first = 0;
  }
  /// Whether some query skips one of the candidates j .. j + width - 1.
  bool meets(std::uint32_t j, std::uint32_t width) const {
    return j <= last && j + (width - 1) >= first;
  }
};

/// Runs filter_vector.template operator()<kMaySkip>(j, left) over the candidates of each run in
/// vectors of kWidth (left: how many of j .. j + kWidth - 1 exist in the run), with kMaySkip set
/// for the vectors that meet `skipped`. In each run, whole vectors first, with `left` a constant
/// once inlined (plain loads, no lane mask), then the rest.
template <std::uint32_t kWidth, class FilterVector>
void for_each_vector(const CandidateRuns& runs, const SkippedRange& skipped,
                     FilterVector&& filter_vector) {
  const auto run = [&](std::uint32_t j, std::uint32_t left) {
    if (skipped.meets(j, kWidth)) {
      filter_vector.template operator()<true>(j, left);
    } else {
      filter_vector.template operator()<false>(j, left);
    }
  };
  for (int i = 0; i < runs.count; ++i) {
    const std::uint32_t end = runs.run[static_cast<std::size_t>(i)].end;
    std::uint32_t j = runs.run[static_cast<std::size_t>(i)].begin;
    for (; end - j >= kWidth; j += kWidth) run(j, kWidth);
    if (j < end) run(j, end - j);
  }
}

/// The first slots of the sure rows of one SIMD filter call for Q queries (null in a count
/// search, !kStoreSure), which the filter keeps as local cursors (in registers); zeroes the border
/// counts: the border rows, rarely written, are counted in `out` (their cursors in registers too
/// spilled the sure ones).
template <int Q, bool kStoreSure>
std::array<std::uint32_t*, Q> start_rows(BlockOutput& out) {
  std::array<std::uint32_t*, Q> sure{};
  for (int q = 0; q < Q; ++q) {
    if constexpr (kStoreSure) sure[q] = out.sure + static_cast<std::size_t>(q) * out.stride;
    out.border_count[q] = 0;
  }
  return sure;
}

/// Sets out.sure_count from the sure rows' end cursors (kStoreSure) or from the counts.
template <int Q, bool kStoreSure>
void store_sure_counts(const std::array<std::uint32_t*, Q>& sure_end,
                       const std::array<std::uint32_t, Q>& sure_count, BlockOutput& out) {
  for (int q = 0; q < Q; ++q) {
    out.sure_count[q] =
        kStoreSure ? static_cast<std::uint32_t>(
                         sure_end[q] - (out.sure + static_cast<std::size_t>(q) * out.stride))
                   : sure_count[q];
  }
}

/// Kept lanes whose float distance, read as unsigned bits, is at or above this may be border
/// candidates: those above band.lo (for floats >= 0 the bits order as the numbers do, and a NaN's
/// bits lie above every number's). 0 when band.lo < 0 (a band that takes in distance 0, or no
/// band at all): every kept lane is then looked at again.
inline std::uint32_t border_from_bits(FloatBand band) {
  return band.lo >= 0.0f ? std::bit_cast<std::uint32_t>(band.lo) + 1u : 0u;
}

/// Calls kernel.template operator()<Q, kStoreSure>() with Q = queries.count (1 ..= kBlockQueries)
/// and kStoreSure = whether `out` has sure rows: the SIMD filters are written for a fixed number
/// of queries, fully unrolled, with or without the sure rows' compress and store.
template <int Dim, class Kernel>
void for_filter_variant(const QueryBlock<Dim>& queries, const BlockOutput& out, Kernel&& kernel) {
  static_assert(kBlockQueries == 4);
  const auto with_queries = [&]<bool kStoreSure>() {
    switch (queries.count) {
      case 1:
        return kernel.template operator()<1, kStoreSure>();
      case 2:
        return kernel.template operator()<2, kStoreSure>();
      case 3:
        return kernel.template operator()<3, kStoreSure>();
      default:
        return kernel.template operator()<4, kStoreSure>();
    }
  };
  if (out.sure != nullptr) {
    with_queries.template operator()<true>();
  } else {
    with_queries.template operator()<false>();
  }
}

/// The fastest filter this build and processor run, at or below `limit`.
template <int Dim>
BlockFilterFn<Dim> best_block_filter(Simd limit = Simd::automatic);

}  // namespace spatialhash::detail
