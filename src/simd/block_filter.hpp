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
/// stores whole registers). The counts are set by the call.
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

/// The fastest filter this build and processor run, at or below `limit`.
template <int Dim>
BlockFilterFn<Dim> best_block_filter(Simd limit = Simd::automatic);

}  // namespace spatialhash::detail
