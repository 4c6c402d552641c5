// Reordering particles along a space-filling curve.
//
// Simulations that keep their particles sorted so that particles close in space are close in
// memory run faster everywhere (every loop over neighbors touches fewer cache lines), not only in
// the neighbor search. These helpers compute such an order and apply it to any per-particle array:
//
//   std::vector<index_t> perm = spatialhash::hilbert_order<3, double>(points, 2.0 * r);
//   positions  = spatialhash::apply_permutation<double>(positions, perm, 3);   // xyz interleaved
//   velocities = spatialhash::apply_permutation<double>(velocities, perm, 3);
//   masses     = spatialhash::apply_permutation<float>(masses, perm);
//   std::vector<index_t> where = spatialhash::inverse_permutation(perm);  // old index -> new
//
// A permutation `perm` lists, for each new position k, the original index perm[k] of the
// particle that goes there.
#pragma once

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "spatialhash/points.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash {

/// The order of the points along a Z-order (Morton) curve over cubic cells of edge `cell_size`
/// anchored at the lower corner of their bounding box; points of one cell keep their original
/// order. Throws InvalidArgument for a non-finite point (named), a cell_size that is not finite
/// and positive, or more cells along an axis than the curve holds (2^21 in 3D, 2^31 in 2D).
/// `threads` = 0: all cores.
template <int Dim, class T>
std::vector<index_t> morton_order(PointsView<Dim, T> points, double cell_size, int threads = 0);

/// Same along a Hilbert curve: consecutive cells of the curve are always face neighbors, so a
/// sorted array has fewer long jumps than with Z-order.
template <int Dim, class T>
std::vector<index_t> hilbert_order(PointsView<Dim, T> points, double cell_size, int threads = 0);

/// The inverse of `perm`: result[perm[k]] = k, i.e. maps an original index to its new position.
/// Throws InvalidArgument naming the first position at which `perm` is not a permutation.
std::vector<index_t> inverse_permutation(std::span<const index_t> perm);

namespace detail {
/// Throws InvalidArgument unless `perm` is a permutation of 0..perm.size()-1 and `length` is
/// perm.size() * components (the message names the offending position or value).
void check_permutation(std::span<const index_t> perm, std::size_t length, std::size_t components);
}  // namespace detail

/// Gathers a per-particle array into the new order: particle perm[k]'s `components` consecutive
/// values (e.g. 3 for interleaved xyz) become the k-th group of the result.
template <class X>
std::vector<X> apply_permutation(std::span<const X> in, std::span<const index_t> perm,
                                 std::size_t components = 1) {
  static_assert(std::is_trivially_copyable_v<X>, "apply_permutation copies values bytewise");
  detail::check_permutation(perm, in.size(), components);
  std::vector<X> out(in.size());
  for (std::size_t k = 0; k < perm.size(); ++k) {
    std::memcpy(out.data() + k * components, in.data() + perm[k] * components,
                components * sizeof(X));
  }
  return out;
}

/// The same, replacing the contents of `data` (through one temporary copy).
template <class X>
void apply_permutation_in_place(std::span<X> data, std::span<const index_t> perm,
                                std::size_t components = 1) {
  const std::vector<X> gathered =
      apply_permutation(std::span<const X>(data.data(), data.size()), perm, components);
  std::copy(gathered.begin(), gathered.end(), data.begin());
}

}  // namespace spatialhash
