// The AVX2 row sort (see row_sort.hpp). Rows of at most 64 entries without distances (those the
// collectors sort as they store them) go through a bitonic sorting network in four registers (up
// to 32 entries) or eight, as the AVX-512 kernel does in two or four; the others are sorted by
// rank, 8 entries' ranks at a time, each compared with every entry of the row. This file alone is
// compiled with -mavx2 -mfma; best_row_sort() calls it only on processors that report both.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "row_sort.hpp"

namespace spatialhash::detail {
namespace {

/// The most entries a network sorts: 64, lanes 8 r .. 8 r + 7 in register r (of 4 or 8).
constexpr std::size_t kNetworkMax = 64;
/// The row in R registers (a struct: std::array of a vector type drops its attributes).
template <int R>
struct Registers {
  __m256i lanes[R];
};

/// For the bitonic stage that compares lanes `distance` (< 8) apart within runs of `run` lanes
/// (ascending where (lane & run) == 0, descending where not), the blend mask of register `reg`:
/// its lanes that take the larger value of their pair.
constexpr int takes_max(int run, int distance, int reg) {
  int mask = 0;
  for (int i = 0; i < 8; ++i) {
    const int lane = i + 8 * reg;
    if (((lane & distance) != 0) != ((lane & run) != 0)) mask |= 1 << i;
  }
  return mask;
}

/// One compare-exchange stage within a register: each lane against the lane `Distance` away,
/// keeping the larger value in the lanes of `MaxLanes`.
template <int Distance, int MaxLanes>
__m256i exchange(__m256i x) {
  const __m256i partner_lane =
      _mm256_xor_si256(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(Distance));
  const __m256i partner = _mm256_permutevar8x32_epi32(x, partner_lane);
  return _mm256_blend_epi32(_mm256_min_epu32(x, partner), _mm256_max_epu32(x, partner), MaxLanes);
}

/// exchange() on every register (the blend mask is an immediate: one instantiation per register).
template <int Run, int Distance, int R, std::size_t... A>
void exchange_each(Registers<R>& registers, std::index_sequence<A...>) {
  ((registers.lanes[A] =
        exchange<Distance, takes_max(Run, Distance, static_cast<int>(A))>(registers.lanes[A])),
   ...);
}

/// The stages of runs of `Run` lanes, distances `Distance` down to 1: between registers for
/// distances of 8 lanes or more, within each register below.
template <int R, int Run, int Distance = Run / 2>
void merge(Registers<R>& registers) {
  __m256i* r = registers.lanes;
  if constexpr (Distance >= 8) {
    constexpr int step = Distance / 8;  // registers apart
    for (int a = 0; a < R; ++a) {
      if ((a & step) != 0) continue;  // a holds the lower lanes of its pairs
      const __m256i smaller = _mm256_min_epu32(r[a], r[a + step]);
      const __m256i larger = _mm256_max_epu32(r[a], r[a + step]);
      const bool descending = ((8 * a) & Run) != 0;
      r[a] = descending ? larger : smaller;
      r[a + step] = descending ? smaller : larger;
    }
  } else {
    exchange_each<Run, Distance>(registers, std::make_index_sequence<R>{});
  }
  if constexpr (Distance > 1) merge<R, Run, Distance / 2>(registers);
}

/// Sorts ids[0 .. length) (length <= 8 R, no distances) with the bitonic network in R registers,
/// the lanes past the row filled with the largest index. Returns false, leaving the row unchanged,
/// when it repeats an index (as the rank kernels do). The row moves between memory and the
/// registers only by masked loads and stores: a copy through a buffer made the vector loads wait
/// on the scalar stores before them.
template <int R>
bool network_sort(index_t* ids, std::size_t length) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i filler = _mm256_set1_epi32(-1);
  const __m256i row_length = _mm256_set1_epi32(static_cast<int>(length));
  __m256i in_row[R];
  Registers<R> r;
  for (int a = 0; a < R; ++a) {
    in_row[a] = _mm256_cmpgt_epi32(row_length, _mm256_add_epi32(lane, _mm256_set1_epi32(8 * a)));
    const __m256i loaded =
        _mm256_maskload_epi32(reinterpret_cast<const int*>(ids + 8 * a), in_row[a]);
    r.lanes[a] = _mm256_blendv_epi8(filler, loaded, in_row[a]);
  }
  merge<R, 2>(r);
  merge<R, 4>(r);
  merge<R, 8>(r);
  merge<R, 16>(r);
  merge<R, 32>(r);
  if constexpr (R == 8) merge<R, 64>(r);
  // Equal neighbours within the row: a repeated index. Lane i of `next` holds the entry after
  // lane i of register a (the last lane: the first of register a + 1).
  const __m256i rotate = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
  std::uint64_t repeats = 0;
  for (int a = 0; a < R; ++a) {
    const __m256i rotated = _mm256_permutevar8x32_epi32(r.lanes[a], rotate);
    const __m256i following = _mm256_permutevar8x32_epi32(r.lanes[(a + 1) % R], rotate);
    const __m256i next = _mm256_blend_epi32(rotated, following, 0x80);
    const auto equal = static_cast<std::uint64_t>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(r.lanes[a], next))));
    repeats |= equal << (8 * a);
  }
  const std::uint64_t lanes =
      length >= kNetworkMax ? ~std::uint64_t{0} : (std::uint64_t{1} << length) - 1;
  if ((repeats & (lanes >> 1)) != 0) return false;
  for (int a = 0; a < R; ++a) {
    _mm256_maskstore_epi32(reinterpret_cast<int*>(ids + 8 * a), in_row[a], r.lanes[a]);
  }
  return true;
}

/// Sorts a bitonic register ascending: the network's last stages for a run of 8 lanes.
__m256i sort_bitonic(__m256i x) {
  Registers<1> r{{x}};
  merge<1, 8>(r);
  return r.lanes[0];
}

/// Merges two ascending registers: `low` gets the smallest 8 of their 16 lanes and `high` the
/// largest 8, each ascending. `high` reversed after `low` is bitonic: one compare-exchange of the
/// halves leaves two bitonic registers, every lane of the first at most every lane of the second.
void merge_registers(__m256i& low, __m256i& high) {
  const __m256i reversed =
      _mm256_permutevar8x32_epi32(high, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0));
  const __m256i smaller = _mm256_min_epu32(low, reversed);
  const __m256i larger = _mm256_max_epu32(low, reversed);
  low = sort_bitonic(smaller);
  high = sort_bitonic(larger);
}

}  // namespace

bool row_sort_avx2(index_t* ids, double* distances, std::size_t length) {
  if (distances == nullptr && length <= 32) return network_sort<4>(ids, length);
  if (distances == nullptr && length <= kNetworkMax) return network_sort<8>(ids, length);
  // Keys with the sign bit flipped, so that AVX2's signed compare orders them as unsigned; room
  // for the last vector's lanes past the row (read, never placed).
  alignas(32) int flipped[kRankSortMax + 8] = {};
  alignas(32) unsigned ranks[kRankSortMax + 8];
  index_t keys[kRankSortMax];
  double distance_copy[kRankSortMax];
  std::copy(ids, ids + length, keys);
  if (distances != nullptr) std::copy(distances, distances + length, distance_copy);
  for (std::size_t k = 0; k < length; ++k) {
    flipped[k] = static_cast<int>(keys[k] ^ 0x80000000u);
  }
  for (std::size_t base = 0; base < length; base += 8) {
    const __m256i lanes = _mm256_load_si256(reinterpret_cast<const __m256i*>(flipped + base));
    // A true compare is -1: subtracting it counts. Two counters, as in the AVX-512 kernel.
    __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
    std::size_t j = 0;
    for (; j + 1 < length; j += 2) {
      even = _mm256_sub_epi32(even, _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32(flipped[j])));
      odd = _mm256_sub_epi32(odd, _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32(flipped[j + 1])));
    }
    if (j < length) {
      even = _mm256_sub_epi32(even, _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32(flipped[j])));
    }
    _mm256_store_si256(reinterpret_cast<__m256i*>(ranks + base), _mm256_add_epi32(even, odd));
  }
  return place_by_rank(keys, distance_copy, ranks, length, ids, distances);
}

void merge_runs_avx2(const index_t* a, std::size_t na, const index_t* b, std::size_t nb,
                     index_t* out) {
  // `high` holds the largest 8 entries taken so far, each at most every entry not yet taken from
  // its own range; the next 8 entries come from the range whose next entry is smaller (AA-sort's
  // rule): every entry of `high` is at most that entry, so the smallest 8 of `high` and those 8
  // are the next 8 of the merge.
  const auto load = [](const index_t* at) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  };
  const auto store = [](index_t* at, __m256i x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), x);
  };
  __m256i high = load(a);
  std::size_t ia = 8, ib = 0;
  while (ia < na || ib < nb) {
    const bool take_a = ib == nb || (ia < na && a[ia] <= b[ib]);
    const index_t* next = take_a ? a + ia : b + ib;
    ia += take_a ? 8 : 0;
    ib += take_a ? 0 : 8;
    __m256i low = load(next);
    merge_registers(low, high);
    store(out, low);
    out += 8;
  }
  store(out, high);
}

}  // namespace spatialhash::detail
