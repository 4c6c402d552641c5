// A prototype of a gather-free layout for the default engine's search (bench/column_layout_vs_
// library.cpp times it against the library, side by side).
//
// The layout: cells of edge r; points sorted by column (a column is the cells of one (x, y), the
// columns in Morton order of (x, y)) and, within a column, by z cell. Every run of z cells of one
// column is then contiguous in memory. The search takes the points of two z cells of a column at a
// time (their stencils together span z cells z0 - 1 .. z0 + 2 of the 9 neighbouring columns: 9
// contiguous runs of 4 cells) and tests them 4 at a time against those runs where they lie, with
// 16-lane AVX-512 vectors: no stencil is gathered into a copy, at the price of a third more
// candidates than a 27-cell stencil (9 x 4 cells against 27). The forty-ninth session built it
// when the engine's group gather copied 18 cells per cell (CellList::search_group) and the copy
// was the larger part of its count search; since the fifty-first the engine itself sorts such
// lattices by column and searches them this way (CellList::search_columns), so the comparison
// below now sets this prototype's kernel and serial build against the engine's own column search
// (docs/benchmarks.md).
//
// Scope: 3D points on a dense lattice (the cell table has a slot per lattice cell); a serial
// counting-sort build. Distances are tested in float with a band around r^2 that holds every
// rounding error (the float difference of two floats is within a relative 2^-24 of its exact
// value, so is d^2 within about 2.4e-7 of its own): a candidate below the band is a neighbor, one
// above is not, one inside is counted apart (counts) or decided in double (rows), as the engine
// does. Every function here is compiled for AVX-512 (bench/CMakeLists.txt): call them only where
// the processor has AVX-512 F, BW, VL and DQ.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "spatialhash/types.hpp"

namespace bench::column {

/// Points sorted by column (Morton order of (x, y)) and by z cell within a column. Invariant: the
/// points of z cells a .. b - 1 of the column of rank k are positions cell_start[k * nz + a] ..
/// cell_start[k * nz + b] - 1.
struct Layout {
  std::array<int, 3> dims{};
  std::vector<float> x, y, z;
  std::vector<std::uint32_t> id;          ///< caller index of each sorted position
  std::vector<std::uint32_t> rank_of;     ///< column (x + nx * y) -> rank in Morton order
  std::vector<std::uint32_t> column_at;   ///< rank -> column
  std::vector<std::uint32_t> cell_start;  ///< rank * nz + z -> first position; one past the end
};

/// The layout of `points` (x, y, z interleaved) for radius r; throws std::invalid_argument for a
/// lattice over 65535 cells per axis or 2^28 cells.
Layout build_layout(std::span<const float> points, double r);

/// Squared-distance bounds in float: a candidate at d2 <= below is a neighbor, one at d2 > above
/// is not (module comment).
struct Band {
  float below = 0, above = 0;
};

/// The band for radius r.
Band band_for(double r);

/// Sums of a count search: neighbors below the band, and candidates inside it.
struct Totals {
  std::uint64_t below = 0, in_band = 0;
};

/// The count search over the layout: counts[i] (caller order) gets point i's neighbors below the
/// band (self excluded); banded[i] (zero on entry) gets, when point i's block of 4 queries met
/// any candidates inside the band, their number (a bound on point i's own).
Totals count_columns(const Layout& layout, Band band, int threads,
                     std::vector<std::uint32_t>& counts, std::vector<std::uint32_t>& banded);

/// Every point's neighbors (self excluded; d^2 <= r^2 in double for band candidates), written as
/// the library's neighbor_rows() writes them: each row where the search put it, threads claiming
/// chunks of one shared array sized for `capacity` entries (a chunk's unused tail holds
/// kNoNeighbor). Throws std::length_error when the rows need more than `capacity` entries. Its
/// emission is plainer than the library's (one more compare per query and vector; each row
/// compressed into a scratch row and copied out a block later); where each row went is written
/// by sorted position and put in the caller's order by a pass of its own, as the library does.
void rows_columns(const Layout& layout, double r, Band band, int threads, std::size_t capacity,
                  spatialhash::NeighborRows& rows);

/// Every point's neighbors as CSR lists in the caller's order (as the library's
/// neighbor_lists()): the row search of rows_columns() into a fresh array (the library's thread
/// buffers), then the offsets and a placement of each row with the library's own primitives (a
/// parallel prefix sum, copy_streaming), rows in sorted order, as collect_rows.hpp places them.
/// Throws as rows_columns().
void lists_columns(const Layout& layout, double r, Band band, int threads, std::size_t capacity,
                   spatialhash::NeighborLists& lists);

}  // namespace bench::column
