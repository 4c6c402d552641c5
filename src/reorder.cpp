// Space-filling-curve orders (Morton and Hilbert keys of cells, radix sorted) and permutation
// checks.
#include "spatialhash/reorder.hpp"

#include <cmath>
#include <limits>

#include "engine_base.hpp"
#include "morton.hpp"
#include "radix_sort.hpp"
#include "shortest.hpp"
#include "threads.hpp"

namespace spatialhash {

namespace {

/// The Hilbert index of cell `c` on a 2^bits lattice: Skilling's transform of the coordinates
/// into the "transposed" Hilbert index, whose bits, interleaved with axis 0 most significant
/// at each level, are the index (J. Skilling, "Programming the Hilbert curve", AIP 2004).
template <int Dim>
std::uint64_t hilbert_key(std::array<std::uint32_t, Dim> x, int bits) {
  const std::uint32_t top = std::uint32_t{1} << (bits - 1);
  // Undo the excess work of the recursive construction: inversions (bit q of x[i] set: invert
  // the low bits of x[0]) and exchanges (clear: swap the low bits of x[0] and x[i]). Written
  // without branches: the bits are data, and the branches mispredicted half the time (morton_order
  // took half as long).
  for (std::uint32_t q = top; q > 1; q >>= 1) {
    const std::uint32_t low = q - 1;
    for (int i = 0; i < Dim; ++i) {
      const std::uint32_t set = 0u - ((x[i] & q) != 0 ? 1u : 0u);  // all ones when bit q is set
      const std::uint32_t swap = (x[0] ^ x[i]) & low & ~set;
      x[0] ^= (low & set) | swap;
      x[i] ^= swap;
    }
  }
  // Gray encoding.
  for (int i = 1; i < Dim; ++i) x[i] ^= x[i - 1];
  std::uint32_t flip = 0;
  for (std::uint32_t q = top; q > 1; q >>= 1) {
    flip ^= (q - 1) & (0u - ((x[Dim - 1] & q) != 0 ? 1u : 0u));
  }
  for (int i = 0; i < Dim; ++i) x[i] ^= flip;
  // morton_code puts axis Dim-1 highest in each group; the index wants axis 0 there.
  std::array<std::uint32_t, Dim> reversed;
  for (int i = 0; i < Dim; ++i) reversed[i] = x[Dim - 1 - i];
  return detail::morton_code<Dim>(reversed);
}

enum class Curve { morton, hilbert };

template <int Dim, class T>
std::vector<index_t> curve_order(PointsView<Dim, T> points, double cell_size, int threads,
                                 Curve curve) {
  if (!std::isfinite(cell_size) || !(cell_size > 0.0)) {
    throw InvalidArgument("spatialhash: cell_size must be finite and > 0, got " +
                          detail::shortest(cell_size));
  }
  // Checks the points (naming the first non-finite one) and finds their bounding box.
  const auto bounds = detail::point_bounds(points, threads);
  const auto& lower = bounds.lower;
  constexpr int kMaxBits = Dim == 2 ? 31 : 21;
  int bits = 1;
  for (int k = 0; k < Dim; ++k) {
    const double cells = std::floor((bounds.upper[k] - lower[k]) / cell_size) + 1.0;
    if (!(cells <= std::ldexp(1.0, kMaxBits))) {
      throw InvalidArgument("spatialhash: cell_size " + detail::shortest(cell_size) +
                            " is too small for the extent of the points along " +
                            std::string(1, "xyz"[k]) + ": the curve holds at most 2^" +
                            std::to_string(kMaxBits) + " cells per axis");
    }
    while (std::ldexp(1.0, bits) < cells) ++bits;
  }
  const std::size_t n = points.size();
  std::vector<std::uint64_t> keys(n);
  std::vector<index_t> order(n);
  const auto signed_n = static_cast<std::int64_t>(n);
  const auto max_cell = static_cast<double>((std::uint64_t{1} << bits) - 1);
  detail::parallel_region(bounds.workers, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < signed_n; ++i) {
      std::array<std::uint32_t, Dim> cell;
      for (int k = 0; k < Dim; ++k) {
        const double u =
            std::floor((points.coord(static_cast<std::size_t>(i), k) - lower[k]) / cell_size);
        cell[k] = static_cast<std::uint32_t>(std::clamp(u, 0.0, max_cell));
      }
      keys[i] =
          curve == Curve::morton ? detail::morton_code<Dim>(cell) : hilbert_key<Dim>(cell, bits);
      order[i] = static_cast<index_t>(i);
    }
  });
  std::vector<std::uint64_t> scratch_keys;
  std::vector<std::uint32_t> scratch_values;
  detail::radix_sort_pairs(keys, order, Dim * bits, bounds.workers, scratch_keys, scratch_values);
  return order;
}

}  // namespace

template <int Dim, class T>
std::vector<index_t> morton_order(PointsView<Dim, T> points, double cell_size, int threads) {
  return curve_order(points, cell_size, threads, Curve::morton);
}

template <int Dim, class T>
std::vector<index_t> hilbert_order(PointsView<Dim, T> points, double cell_size, int threads) {
  return curve_order(points, cell_size, threads, Curve::hilbert);
}

std::vector<index_t> inverse_permutation(std::span<const index_t> perm) {
  detail::check_permutation(perm, perm.size(), 1);
  std::vector<index_t> inverse(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k) inverse[perm[k]] = static_cast<index_t>(k);
  return inverse;
}

namespace detail {

void check_permutation(std::span<const index_t> perm, std::size_t length, std::size_t components) {
  if (components == 0) throw InvalidArgument("spatialhash: components must be at least 1");
  if (length % components != 0 || length / components != perm.size()) {
    throw InvalidArgument("spatialhash: an array of " + std::to_string(length) + " values with " +
                          std::to_string(components) + " per particle does not match a " +
                          "permutation of " + std::to_string(perm.size()) + " particles");
  }
  std::vector<bool> seen(perm.size(), false);
  for (std::size_t k = 0; k < perm.size(); ++k) {
    if (perm[k] >= perm.size()) {
      throw InvalidArgument("spatialhash: not a permutation: position " + std::to_string(k) +
                            " holds " + std::to_string(perm[k]) + ", beyond the " +
                            std::to_string(perm.size()) + " particles");
    }
    if (seen[perm[k]]) {
      throw InvalidArgument("spatialhash: not a permutation: position " + std::to_string(k) +
                            " repeats index " + std::to_string(perm[k]));
    }
    seen[perm[k]] = true;
  }
}

}  // namespace detail

#define SPATIALHASH_INSTANTIATE(D, T)                                        \
  template std::vector<index_t> morton_order(PointsView<D, T>, double, int); \
  template std::vector<index_t> hilbert_order(PointsView<D, T>, double, int);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash
