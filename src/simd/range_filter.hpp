// Range filters: the inner loop of the cell_list engine. One query point (float, relative to the
// lattice origin) against a contiguous range of candidate points (structure of arrays, with each
// candidate's original index), sorting the candidates into "certainly within r" and "borderline"
// (see float_band.hpp) by their float squared distance, and writing the original indices of both
// kinds. A scalar version for every machine and an AVX-512 one chosen at run time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "../float_band.hpp"

namespace spatialhash::detail {

/// Candidate points, structure of arrays: coordinate k of candidate j at axis[k][j], its original
/// index at ids[j].
template <int Dim>
struct SoaView {
  std::array<const float*, Dim> axis;
  const std::uint32_t* ids;
};

/// Output of one filter call: original indices. Both arrays need room for the range's length plus
/// kFilterSlack (vector code stores whole registers).
struct FilterOutput {
  std::uint32_t* sure;
  std::uint32_t* border;
  std::size_t sure_count = 0;
  std::size_t border_count = 0;
};
inline constexpr std::size_t kFilterSlack = 16;

/// Appends to `out` the ids of the candidates j in [begin, end), ids[j] != exclude, whose float
/// squared distance to `query` is <= band.hi (borderline when > band.lo).
template <int Dim>
using RangeFilterFn = void (*)(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                               const std::array<float, Dim>& query, FloatBand band,
                               std::uint32_t exclude, FilterOutput& out);

template <int Dim>
void range_filter_scalar(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                         const std::array<float, Dim>& query, FloatBand band, std::uint32_t exclude,
                         FilterOutput& out);

template <int Dim>
void range_filter_avx512(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                         const std::array<float, Dim>& query, FloatBand band, std::uint32_t exclude,
                         FilterOutput& out);

/// The fastest filter this processor runs.
template <int Dim>
RangeFilterFn<Dim> best_range_filter();

}  // namespace spatialhash::detail
