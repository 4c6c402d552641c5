// The scalar key pass (see cell_keys.hpp) and the run-time choice of key pass.
#include "cell_keys.hpp"

#include <array>
#include <cmath>

#include "../for_each_dim_type.hpp"
#include "../morton.hpp"
#include "kernel_choice.hpp"

namespace spatialhash::detail {

namespace {

/// Point i's key (cell_keys.hpp, query mode included), its coordinates in `x` as doubles. Always
/// inlined: called from two loops, GCC kept it out of line, and the scalar key pass of the build
/// and of update() took 1.1x as long (docs/benchmarks.md, eighty-second session).
template <int Dim, class T>
[[gnu::always_inline]] inline std::uint64_t key_of_point(const CellKeyInput<Dim, T>& input,
                                                         std::size_t i,
                                                         std::array<double, Dim>& x) {
  std::array<std::uint32_t, Dim> cell;
  std::uint64_t slab = 0;
  bool on_lattice = true;
  for (int k = 0; k < Dim; ++k) {
    x[k] = static_cast<double>(input.data[i * input.stride + k]);
    const double u = (x[k] - input.origin[k]) * input.inv_cell;
    double floor = std::floor(u);
    if (input.queries) {
      on_lattice = on_lattice && x[k] >= input.lower[k] && x[k] <= input.upper[k];
      // Clamped as the vector kernels clamp: NaN becomes 0.
      floor = floor > 0.0 ? floor : 0.0;
      floor = floor < input.last_cell[k] ? floor : input.last_cell[k];
    }
    cell[k] = static_cast<std::uint32_t>(floor) >> input.shift;
    if (k == Dim - 1 && input.slab_bits > 0) {
      const double slabs = static_cast<double>(1 << input.slab_bits);
      slab = static_cast<std::uint64_t>(std::floor(u * slabs) - floor * slabs);
    }
  }
  std::uint64_t code = morton_code<Dim>(cell);
  if constexpr (Dim == 3) {
    if (input.column_z_bits >= 0) {
      code = morton_code<2>({cell[0], cell[1]}) << input.column_z_bits | cell[2];
    }
  }
  code = code << input.slab_bits | slab;
  if (input.queries) code = on_lattice ? code + 1 : 0;
  return code;
}

}  // namespace

template <int Dim, class T>
void cell_keys_scalar(const CellKeyInput<Dim, T>& input, std::size_t begin, std::size_t end,
                      std::uint64_t* keys, std::uint32_t* order) {
  std::array<double, Dim> x;
  for (std::size_t i = begin; i < end; ++i) {
    const std::uint64_t code = key_of_point<Dim>(input, i, x);
    if (order != nullptr) {
      keys[i] = code;
      order[i] = static_cast<std::uint32_t>(i);
    } else {
      keys[i] = code << 32 | static_cast<std::uint32_t>(i);
    }
  }
}

template <int Dim, class T>
KeyChangeCount key_changes_scalar(const CellKeyInput<Dim, T>& input, std::size_t begin,
                                  std::size_t end, const KeyChanges<Dim>& out) {
  KeyChangeCount count;
  std::array<double, Dim> x;
  for (std::size_t i = begin; i < end; ++i) {
    const std::uint64_t key = key_of_point<Dim>(input, i, x);
    out.keys[i] = key;
    const std::uint64_t differs = key ^ out.was[i];
    out.changed[i] = differs != 0 ? 1 : 0;
    count.changed += differs != 0 ? 1 : 0;
    count.differing_bits |= differs;
    for (int k = 0; k < Dim; ++k) out.relative[k][i] = static_cast<float>(x[k] - out.origin[k]);
  }
  return count;
}

template <int Dim, class T>
CellKeysFn<Dim, T> best_cell_keys(Simd limit) {
  return choose_kernel<CellKeysFn<Dim, T>>(
      limit, SPATIALHASH_AVX512_KERNEL(&cell_keys_avx512<Dim, T>),
      SPATIALHASH_AVX2_KERNEL(&cell_keys_avx2<Dim, T>), &cell_keys_scalar<Dim, T>);
}

template <int Dim, class T>
KeyChangesFn<Dim, T> best_key_changes(Simd limit) {
  return choose_kernel<KeyChangesFn<Dim, T>>(
      limit, SPATIALHASH_AVX512_KERNEL(&key_changes_avx512<Dim, T>),
      SPATIALHASH_AVX2_KERNEL(&key_changes_avx2<Dim, T>), &key_changes_scalar<Dim, T>);
}

SPATIALHASH_INSTANTIATE_CELL_KEYS(cell_keys_scalar)
SPATIALHASH_INSTANTIATE_KEY_CHANGES(key_changes_scalar)
#define SPATIALHASH_INSTANTIATE(D, T)                   \
  template CellKeysFn<D, T> best_cell_keys<D, T>(Simd); \
  template KeyChangesFn<D, T> best_key_changes<D, T>(Simd);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
