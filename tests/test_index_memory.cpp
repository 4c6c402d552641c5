// The default engine's index memory, measured with the index alive (bench/memory_in_use.hpp: the
// C library's heap bytes allocated and not freed, mallinfo2, plus the library's mapped blocks of
// 2 MiB or more, which the kernel lists as mappings advised to huge pages), against what
// README.md promises: about 16 bytes per point in 3D (12 in 2D), plus 8 per non-empty cell (12
// with slabs; the start and dense-array entry of a cell: no per-cell coordinates), at most 40 per
// 64-cell tile with points (its record, 24 bytes, and on sparse lattices the block table, 4 bytes
// a slot at load 1/4 to 1/2) and at most 1 per point of occupancy bitmap (near_occupied); a 3D
// lattice in column order has no tiles but 2 bytes per cell (its z) and 8 per column with points.
// The caller's points are borrowed, not copied, and the build's work arrays are freed before the
// constructor returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../bench/memory_in_use.hpp"
#include "datasets.hpp"
#include "sanitized_build.hpp"
#include "spatialhash/mapped_blocks.hpp"
#include "spatialhash/spatialhash.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPATIALHASH_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SPATIALHASH_TEST_ASAN 1
#endif

namespace {

/// Heap bytes in use and mapped blocks (memory_in_use()); -1 where glibc cannot say or another
/// allocator (AddressSanitizer's) serves malloc.
double measured_memory() {
#if defined(SPATIALHASH_TEST_ASAN)
  return -1.0;
#else
  return bench::memory_in_use();
#endif
}

/// More non-empty cells than a lattice of cells of edge `radius` can have over the points'
/// bounding box, whatever its origin (the engine's cells are never smaller, and there are never
/// more than points). With `radius` times the tiles' side (4 in 3D, 8 in 2D): more tiles.
template <int Dim>
double cells_at_most(const std::vector<double>& xyz, double radius) {
  const std::size_t n = xyz.size() / Dim;
  double cells = 1.0;
  for (int k = 0; k < Dim; ++k) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t i = 0; i < n; ++i) {
      lo = std::min(lo, xyz[i * Dim + k]);
      hi = std::max(hi, xyz[i * Dim + k]);
    }
    cells *= std::floor((hi - lo) / radius) + 2.0;
  }
  return std::min(cells, static_cast<double>(n));
}

/// Builds an Index<Dim, T> over `data` and checks its heap bytes: at least the float coordinates
/// and an index per point (so the measure sees the layout), at most README's bound plus 64 KiB of
/// fixed-size parts.
template <int Dim, class T>
void check_index_memory(const datasets::Dataset& data) {
  const std::string where = data.name + " " + std::to_string(Dim) + "D " +
                            (std::is_same_v<T, float> ? "float" : "double");
  const std::vector<T> coords(data.xyz.begin(), data.xyz.end());
  const auto n = static_cast<double>(coords.size() / Dim);
  const double before = measured_memory();
  if (before < 0.0) GTEST_SKIP() << "no allocator statistics (not glibc >= 2.33, or ASan)";
  const spatialhash::Index<Dim, T> index(std::span<const T>(coords), data.radius);
  const double held = measured_memory() - before;

  const double per_point = 4.0 * Dim + 4.0;  // float coordinates relative to the lattice, an id
  const double tile_side = Dim == 3 ? 4.0 : 8.0;
  // Point arrays of 2 MiB or more are mapped blocks, in whole huge pages where those add at most
  // an eighth (spatialhash/mapped_blocks.hpp).
  const double rounding = 4.0 * n >= spatialhash::detail::kIndexMappedBlockBytes ? 9.0 / 8.0 : 1.0;
  const double bound = (per_point * rounding + 1.0) * n +
                       12.0 * cells_at_most<Dim>(data.xyz, data.radius) +
                       40.0 * cells_at_most<Dim>(data.xyz, tile_side * data.radius) + 64.0 * 1024.0;
  std::printf("%s: %.2f bytes per point (bound %.2f)\n", where.c_str(), held / n, bound / n);
  EXPECT_GE(held, per_point * n) << where << ": " << held / n << " bytes per point";
  EXPECT_LE(held, bound) << where << ": " << held / n << " bytes per point, bound " << bound / n;
}

// Jittered lattice of spacing 1 with r = 2, as the benchmark's W1 (about 8 points per cell).
TEST(IndexMemory, LatticeStaysNearSixteenBytesPerPoint) {
  const datasets::Dataset data = datasets::lattice<3>(56, 1.0, 0.05, 2.0, 11);
  check_index_memory<3, float>(data);
  check_index_memory<3, double>(data);
}

/// A jittered lattice of side^3 points (W1's spacing and radius) indexed by the default engine,
/// with the memory in use just before the build (before < 0: not measurable) and what the build
/// added.
struct LatticeIndex {
  LatticeIndex(int side, std::uint64_t seed)
      : data(datasets::lattice<3>(side, 1.0, 0.05, 2.0, seed)),
        coords(data.xyz.begin(), data.xyz.end()),
        n(static_cast<double>(coords.size() / 3)),
        before(measured_memory()),
        index(std::span<const float>(coords), data.radius),
        built(measured_memory() - before) {}
  /// update() to `coords` as they are now; returns the memory held then on top of `before`.
  double update() {
    index.update(std::span<const float>(coords));
    return measured_memory() - before;
  }
  datasets::Dataset data;
  std::vector<float> coords;
  double n;
  double before;
  spatialhash::Index<3, float> index;
  double built;
};

// After an update() that moves points between cells the default engine also keeps its work
// arrays and the layout it replaced, so that later steps allocate nothing: README gives about 40
// bytes per point in 3D on top of the layout; the bound leaves room for the movers' sort arrays.
TEST(IndexMemory, UpdateKeepsItsWorkArrays) {
  // 19^3 = 6859 points: below the 16384 from which update() samples the movers first (and
  // rebuilds when the sample shows any), so that it patches.
  LatticeIndex lattice(19, 17);
  if (lattice.before < 0.0) GTEST_SKIP() << "no allocator statistics (not glibc >= 2.33, or ASan)";
  const double n = lattice.n, built = lattice.built;
  std::vector<float>& coords = lattice.coords;
  // One point in 199 moves by 1.5 spacings along x: most of them change cell (of edge 2), few
  // enough for update() to patch the layout instead of rebuilding it.
  for (std::size_t i = 0; i < coords.size() / 3; i += 199) coords[3 * i] += 1.5f;
  const double updated = lattice.update();
  std::printf("after update(): %.2f bytes per point (%.2f after the build)\n", updated / n,
              built / n);
  EXPECT_GT(updated, built + 30.0 * n) << "the work arrays are kept";
  EXPECT_LE(updated, built + 46.0 * n + 64.0 * 1024.0);

  // Every point moves by 1.5 spacings along x: too many change cell, update() rebuilds, into the
  // arrays of the layout the patch replaced, and keeps the build's sort keys and their scratch
  // too (README: about 49 bytes per point on top of the layout once both have run).
  for (std::size_t i = 0; i < coords.size(); i += 3) coords[i] += 1.5f;
  const double rebuilt = lattice.update();
  std::printf("after a rebuilding update(): %.2f bytes per point\n", rebuilt / n);
  EXPECT_GE(rebuilt, updated) << "nothing kept is released";
  EXPECT_LE(rebuilt, built + 60.0 * n + 64.0 * 1024.0);
}

// From 16384 points an update() whose sample sees a point that changed cell rebuilds at once: it
// keeps the layout it replaced (emptied: the next layout is written into its arrays) and the
// build's sort keys and scratch, 8 bytes a point each.
TEST(IndexMemory, UpdateThatRebuildsKeepsTheReplacedLayout) {
  LatticeIndex lattice(50, 21);
  if (lattice.before < 0.0) GTEST_SKIP() << "no allocator statistics (not glibc >= 2.33, or ASan)";
  const double n = lattice.n, built = lattice.built;
  for (std::size_t i = 0; i < lattice.coords.size(); i += 3) lattice.coords[i] += 0.3f;
  const double updated = lattice.update();
  std::printf("after a rebuilding update(): %.2f bytes per point (%.2f after the build)\n",
              updated / n, built / n);
  EXPECT_GE(updated, 2.0 * built + 16.0 * n) << "the replaced layout and the sort keys are kept";
  EXPECT_LE(updated, 2.0 * built + 30.0 * n + 64.0 * 1024.0);
}

// W1 and W2 at 1M points, whose layout arrays (4 MB a point array) are mapped blocks: the measure
// must see them (at least the coordinates and an id per point), and they stay within the bound.
TEST(IndexMemory, MillionPointsInMappedBlocks) {
  if (kSanitizedBuild) GTEST_SKIP() << "release builds only (the measure skips ASan anyway)";
  check_index_memory<3, float>(datasets::lattice<3>(100, 1.0, 0.05, 2.0, 18));
  check_index_memory<3, float>(datasets::uniform<3>(1000000, 50.0, 1.0, 19));
  // 3.8 MB point arrays: in whole huge pages, the most they add (a tenth).
  check_index_memory<3, float>(datasets::uniform<3>(950000, 49.2, 1.0, 20));
}

// Uniform points with about 30 neighbors each (W2), and in 2D with about 20.
TEST(IndexMemory, UniformPoints) {
  check_index_memory<3, float>(datasets::uniform<3>(150000, 27.6, 1.0, 12));
  check_index_memory<2, float>(datasets::uniform<2>(150000, 387.0, 2.5, 13));
}

// Very uneven density: blobs of widths 0.2 to 2 (dense ones may take slabs, 12 bytes per cell).
TEST(IndexMemory, ClusteredPoints) {
  check_index_memory<3, float>(datasets::clustered<3>(150000, 0.5, 14));
}

// Sparse points (about one per cell of edge r): the per-cell part dominates.
TEST(IndexMemory, SparsePoints) {
  check_index_memory<3, float>(datasets::uniform<3>(100000, 1000.0, 1.0, 15));
  check_index_memory<2, double>(datasets::uniform<2>(100000, 1000.0, 0.5, 16));
}

}  // namespace
