// Block filters: the inner loop of the cell_list engine.
//
// Up to kBlockQueries query points (float, relative to the lattice origin) are tested against one
// contiguous range of candidates (structure of arrays). Each candidate vector is loaded once and
// tested against every query of the block, so the queries' independent compare-and-compress
// chains overlap in the pipeline. A candidate lands in its query's "sure" row when its float
// squared distance is <= band.lo (certainly within r), in its "border" row when it lies in
// (band.lo, band.hi] or is NaN (re-decided in double by the caller, see float_band.hpp), and
// nowhere otherwise. Rows hold the candidates' ids.
//
// A scalar version for every machine, and AVX2 and AVX-512 ones chosen at run time.
#pragma once

#include <array>
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
/// border + q * stride. A row needs room for the range's length plus kFilterSlack (vector code
/// stores whole registers). The counts are set by the call. With sure == nullptr the filter only
/// counts the sure candidates (no compress, no store: a count search), border rows are still
/// written.
struct BlockOutput {
  std::uint32_t* sure;
  std::uint32_t* border;
  std::size_t stride;
  std::array<std::uint32_t, kBlockQueries> sure_count{};
  std::array<std::uint32_t, kBlockQueries> border_count{};
};
inline constexpr std::size_t kFilterSlack = 16;

/// Fills `out` with the candidates j in [begin, end) of `points` for every query of `queries`.
template <int Dim>
using BlockFilterFn = void (*)(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                               const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out);

template <int Dim>
void block_filter_scalar(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                         const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out);

template <int Dim>
void block_filter_avx2(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                       const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out);

template <int Dim>
void block_filter_avx512(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                         const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out);

/// The rows of one filter call for Q queries as local cursors (the SIMD filters keep them in
/// registers): the next free slot of each row, or in a count search (no sure rows) the sure
/// counts; and the last candidate index any query skips: candidates after it need no skip test.
/// `after` is a copy of the block's flag, so that the row stores (which may alias the block as
/// far as the compiler knows) do not force it to be read again for every query.
template <int Q>
struct RowCursors {
  std::array<std::uint32_t*, Q> sure{}, border{};
  std::array<std::uint32_t*, Q> sure_first{}, border_first{};
  std::array<std::uint32_t, Q> sure_count{};
  std::uint32_t last_skipped = 0;
  bool any_skip = false;
  bool after = false;

  template <int Dim>
  RowCursors(const QueryBlock<Dim>& queries, const BlockOutput& out) : after(queries.after) {
    for (int q = 0; q < Q; ++q) {
      if (out.sure != nullptr) sure[q] = out.sure + static_cast<std::size_t>(q) * out.stride;
      border[q] = out.border + static_cast<std::size_t>(q) * out.stride;
      if (queries.skip[q] != kSkipNone) {
        last_skipped = any_skip && last_skipped > queries.skip[q] ? last_skipped : queries.skip[q];
        any_skip = true;
      }
    }
    sure_first = sure;
    border_first = border;
  }
  /// Whether a query may skip a candidate at index j or after.
  bool may_skip_from(std::uint32_t j) const { return any_skip && j <= last_skipped; }
  void store_counts(BlockOutput& out) const {
    for (int q = 0; q < Q; ++q) {
      out.sure_count[q] =
          out.sure != nullptr ? static_cast<std::uint32_t>(sure[q] - sure_first[q]) : sure_count[q];
      out.border_count[q] = static_cast<std::uint32_t>(border[q] - border_first[q]);
    }
  }
};

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
