// Cell keys: the first pass of the cell_list build. Each point's lattice cell, as a Morton code,
// and the identity permutation the radix sort then reorders. The same arithmetic serves update()
// (KeyChangesFn: the keys compared with the old ones, and coordinates relative to a float frame)
// and cross queries (query mode).
//
// The cell of a point is floor((x_k - origin_k) * inv_cell) along each axis, computed in double
// exactly as GridGeometry::cell_along does (a subtraction, then a product; no fused multiply-add),
// so every path assigns every point the cell the searches assume. A scalar version for every
// machine, and AVX2 and AVX-512 ones chosen at run time (4 or 8 points per step, Morton bits
// spread with vector shifts). The vector passes read packed points (stride Dim) as whole vectors
// split into axes by permutes, and gather each axis at other strides: gathers cost 2.3-2.7x as
// much on a Zen 4 (bench/cell_keys.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// What the key pass reads: the caller's coordinates (point i, axis k at data[i * stride + k]),
/// the lattice, and how far to shift cell coordinates right before interleaving them (coarse
/// keys for lattices wider than a Morton code holds).
///
/// Query mode (`queries`, for cross queries, which may lie anywhere): point i is on the lattice
/// when lower[k] <= x_k <= upper[k] on every axis (never for NaN); its cell is clamped onto
/// [0, last_cell[k]] before the shift, and its key is 1 + the Morton code, or 0 off the lattice
/// (such queries sort first).
///
/// Slabs (`slab_bits` > 0, outside query mode): the key is the Morton code shifted left by
/// slab_bits, plus the point's slab: which of 2^slab_bits equal parts of its cell along the last
/// axis it lies in, floor(u * 2^slab_bits) - 2^slab_bits * floor(u) for the same computed
/// u = (x - origin) * inv_cell (exact: scaling by a power of two rounds nothing).
///
/// Column keys (`column_z_bits` >= 0; 3D, outside query mode, shift 0): the cell's code is the
/// Morton code of its (x, y) shifted left by column_z_bits, then its z (column_z_bits must hold
/// it), the order of a cell_list layout sorted by column (CellListLayout::cell_key), instead of
/// its 3D Morton code. Computed in the same vector pass: rewriting Morton codes afterwards took
/// longer than the pass itself.
template <int Dim, class T>
struct CellKeyInput {
  const T* data;
  std::size_t stride;
  std::array<double, Dim> origin;
  double inv_cell;
  int shift;
  bool queries = false;
  std::array<double, Dim> lower{}, upper{}, last_cell{};
  int slab_bits = 0;
  int column_z_bits = -1;
};

/// For i in [begin, end): keys[i] = the key of point i (the Morton code of its cell, coordinates
/// shifted right by `shift`, or its column key, then its slab; see query mode, slabs and column
/// keys above), order[i] = i; or, with order == nullptr, keys[i] = key << 32 | i (a packed record,
/// radix_sort_packed: the key must then fit in 32 bits). Outside query mode every point must lie
/// on the lattice: 0 <= cell < 2^30 per axis.
template <int Dim, class T>
using CellKeysFn = void (*)(const CellKeyInput<Dim, T>& input, std::size_t begin, std::size_t end,
                            std::uint64_t* keys, std::uint32_t* order);

template <int Dim, class T>
void cell_keys_scalar(const CellKeyInput<Dim, T>& input, std::size_t begin, std::size_t end,
                      std::uint64_t* keys, std::uint32_t* order);
template <int Dim, class T>
void cell_keys_avx2(const CellKeyInput<Dim, T>& input, std::size_t begin, std::size_t end,
                    std::uint64_t* keys, std::uint32_t* order);
template <int Dim, class T>
void cell_keys_avx512(const CellKeyInput<Dim, T>& input, std::size_t begin, std::size_t end,
                      std::uint64_t* keys, std::uint32_t* order);

/// What update()'s key pass (KeyChangesFn) writes for point i besides its key: whether the key
/// changed, and the point's coordinates relative to a float frame.
template <int Dim>
struct KeyChanges {
  const std::uint64_t* was;          ///< the key each point had
  std::array<double, Dim> origin;    ///< the frame's origin
  std::array<float*, Dim> relative;  ///< relative[k][i] = (float)(x_k - origin[k]), in double
  std::uint8_t* changed;             ///< 1 where the key differs from `was`, else 0
  std::uint64_t* keys;               ///< the keys now
};

/// What update()'s key pass found over its range: how many keys changed, and the bits in which
/// any key differs from the one it had (the OR of every key ^ was).
struct KeyChangeCount {
  std::size_t changed = 0;
  std::uint64_t differing_bits = 0;
};

/// update()'s key pass (CellListLayout::update): for i in [begin, end), out.keys[i] = point i's
/// key as the key pass gives it (outside query mode), compared with out.was[i], and the point's
/// coordinates relative to out.origin (KeyChanges), in one pass over the points, from the same
/// vectors: computed apart, the keys, the comparison and the coordinates cost about 1.5-2 ns a
/// point each (docs/benchmarks.md, eighty-first session).
template <int Dim, class T>
using KeyChangesFn = KeyChangeCount (*)(const CellKeyInput<Dim, T>& input, std::size_t begin,
                                        std::size_t end, const KeyChanges<Dim>& out);

template <int Dim, class T>
KeyChangeCount key_changes_scalar(const CellKeyInput<Dim, T>& input, std::size_t begin,
                                  std::size_t end, const KeyChanges<Dim>& out);
template <int Dim, class T>
KeyChangeCount key_changes_avx2(const CellKeyInput<Dim, T>& input, std::size_t begin,
                                std::size_t end, const KeyChanges<Dim>& out);
template <int Dim, class T>
KeyChangeCount key_changes_avx512(const CellKeyInput<Dim, T>& input, std::size_t begin,
                                  std::size_t end, const KeyChanges<Dim>& out);

/// How a vector key pass picks its loop: calls `steps(packed, columns)` with std::bool_constant
/// arguments, packed when the points lie at stride Dim (loaded as whole vectors, not gathered),
/// columns when column keys are asked for (3D only), and returns what it returns.
template <int Dim, class T, class Steps>
std::size_t run_key_steps(const CellKeyInput<Dim, T>& input, Steps steps) {
  const bool packed = input.stride == Dim;
  if constexpr (Dim == 3) {
    if (input.column_z_bits >= 0) {
      return packed ? steps(std::true_type{}, std::true_type{})
                    : steps(std::false_type{}, std::true_type{});
    }
  }
  return packed ? steps(std::true_type{}, std::false_type{})
                : steps(std::false_type{}, std::false_type{});
}

/// update()'s key pass by a vector kernel: `steps(packed, columns)` runs the kernel's loop over
/// [begin, rest) into its KeyChangeStore `store` and returns rest (run_key_steps picks the loop),
/// then the scalar pass takes [rest, end).
template <int Dim, class T, class Store, class Steps>
KeyChangeCount key_changes_in_steps(const CellKeyInput<Dim, T>& input, std::size_t end,
                                    const KeyChanges<Dim>& out, const Store& store, Steps steps) {
  const std::size_t rest = run_key_steps(input, steps);
  const KeyChangeCount vector = store.count();
  const KeyChangeCount tail = key_changes_scalar(input, rest, end, out);
  return {vector.changed + tail.changed, vector.differing_bits | tail.differing_bits};
}

/// The fastest key pass this build and processor run, at or below `limit`.
template <int Dim, class T>
CellKeysFn<Dim, T> best_cell_keys(Simd limit = Simd::automatic);

/// The fastest key pass for update() this build and processor run, at or below `limit`.
template <int Dim, class T>
KeyChangesFn<Dim, T> best_key_changes(Simd limit = Simd::automatic);

/// Instantiates the key pass `kernel` (cell_keys_scalar, _avx2, _avx512) for every dimension and
/// coordinate type, each in the file that defines it.
#define SPATIALHASH_INSTANTIATE_CELL_KEYS(kernel)                                           \
  template void kernel<2, float>(const CellKeyInput<2, float>&, std::size_t, std::size_t,   \
                                 std::uint64_t*, std::uint32_t*);                           \
  template void kernel<2, double>(const CellKeyInput<2, double>&, std::size_t, std::size_t, \
                                  std::uint64_t*, std::uint32_t*);                          \
  template void kernel<3, float>(const CellKeyInput<3, float>&, std::size_t, std::size_t,   \
                                 std::uint64_t*, std::uint32_t*);                           \
  template void kernel<3, double>(const CellKeyInput<3, double>&, std::size_t, std::size_t, \
                                  std::uint64_t*, std::uint32_t*);

/// Instantiates update()'s key pass `kernel` (key_changes_scalar, _avx2, _avx512) likewise.
#define SPATIALHASH_INSTANTIATE_KEY_CHANGES(kernel)                                      \
  template KeyChangeCount kernel<2, float>(const CellKeyInput<2, float>&, std::size_t,   \
                                           std::size_t, const KeyChanges<2>&);           \
  template KeyChangeCount kernel<2, double>(const CellKeyInput<2, double>&, std::size_t, \
                                            std::size_t, const KeyChanges<2>&);          \
  template KeyChangeCount kernel<3, float>(const CellKeyInput<3, float>&, std::size_t,   \
                                           std::size_t, const KeyChanges<3>&);           \
  template KeyChangeCount kernel<3, double>(const CellKeyInput<3, double>&, std::size_t, \
                                            std::size_t, const KeyChanges<3>&);

}  // namespace spatialhash::detail
