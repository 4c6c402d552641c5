// The AVX2 row sort (see row_sort.hpp). Rows of at most 64 entries without distances (those the
// collectors sort as they store them) go through sorting networks: up to 32 entries a bitonic
// network in one, two or four registers; 33 to 64 entries in eight registers, each lane's column
// sorted first (19 compare-exchanges of whole registers), then transposed into eight sorted runs
// of 8 and merged pairwise. Rows with distances are sorted by rank, 8 entries' ranks at a time,
// each compared with every entry of the row. This file alone is compiled with -mavx2 -mfma;
// best_row_sort() calls it only on processors that report both.
//
// What made the networks 1.8-2.5x faster on a Zen 3 (thirty-sixth session, docs/benchmarks.md):
// plain stores instead of masked ones (AMD microcodes vpmaskmovd stores; the row's tail is
// written by one store of its last 8 entries, overlapping the register before), registers named
// by constants (an array indexed by a variable lives on the stack), in-lane shuffles for the
// exchanges 1 and 2 lanes apart, and for 33 to 64 entries the column sort, which replaces the
// bitonic network's first 6 stages (48 in-register exchanges) by 19 compare-exchanges of whole
// registers and a transpose.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "row_sort.hpp"

namespace spatialhash::detail {
namespace {

/// The most entries a network sorts: 64, lanes 8 r .. 8 r + 7 in register r (of 1, 2, 4 or 8).
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

/// Each lane's partner `Distance` (1, 2 or 4) lanes away: in-lane shuffles for 1 and 2, a swap of
/// the 128-bit halves for 4 (vpermd for all three was about a quarter slower).
template <int Distance>
__m256i partner(__m256i x) {
  static_assert(Distance == 1 || Distance == 2 || Distance == 4);
  if constexpr (Distance == 1) return _mm256_shuffle_epi32(x, 0xB1);  // lanes 1 0 3 2
  if constexpr (Distance == 2) return _mm256_shuffle_epi32(x, 0x4E);  // lanes 2 3 0 1
  if constexpr (Distance == 4) return _mm256_permute2x128_si256(x, x, 0x01);
}

/// One compare-exchange stage within a register: each lane against the lane `Distance` away,
/// keeping the larger value in the lanes of `MaxLanes`.
template <int Distance, int MaxLanes>
__m256i exchange(__m256i x) {
  const __m256i other = partner<Distance>(x);
  return _mm256_blend_epi32(_mm256_min_epu32(x, other), _mm256_max_epu32(x, other), MaxLanes);
}

/// Sorts a bitonic register's lanes ascending (the network's last stages for a run of 8).
__m256i sort_bitonic(__m256i x) {
  return exchange<1, 0xAA>(exchange<2, 0xCC>(exchange<4, 0xF0>(x)));
}

/// Sorts a bitonic register's lanes descending.
__m256i sort_bitonic_descending(__m256i x) {
  return exchange<1, 0x55>(exchange<2, 0x33>(exchange<4, 0x0F>(x)));
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

/// Compare-exchange of whole registers: `low` keeps the smaller value of each lane.
void order(__m256i& low, __m256i& high) {
  const __m256i smaller = _mm256_min_epu32(low, high);
  high = _mm256_max_epu32(low, high);
  low = smaller;
}

/// The register's lanes in reverse order.
__m256i reversed(__m256i x) {
  return _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0));
}

/// Transposes the 8 x 8 matrix of lanes: lane j of register i goes to lane i of register j.
void transpose(__m256i* r) {
  const __m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
  const __m256i t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
  const __m256i t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
  const __m256i t6 = _mm256_unpacklo_epi32(r[6], r[7]), t7 = _mm256_unpackhi_epi32(r[6], r[7]);
  const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
  const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
  const __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
  const __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
  r[0] = _mm256_permute2x128_si256(u0, u4, 0x20);
  r[1] = _mm256_permute2x128_si256(u1, u5, 0x20);
  r[2] = _mm256_permute2x128_si256(u2, u6, 0x20);
  r[3] = _mm256_permute2x128_si256(u3, u7, 0x20);
  r[4] = _mm256_permute2x128_si256(u0, u4, 0x31);
  r[5] = _mm256_permute2x128_si256(u1, u5, 0x31);
  r[6] = _mm256_permute2x128_si256(u2, u6, 0x31);
  r[7] = _mm256_permute2x128_si256(u3, u7, 0x31);
}

/// Sorts each register's bitonic 8 lanes ascending.
template <std::size_t... A>
void sort_bitonic_each(Registers<8>& registers, std::index_sequence<A...>) {
  ((registers.lanes[A] = sort_bitonic(registers.lanes[A])), ...);
}

/// Sorts 64 lanes ascending: Batcher's 19-comparator network sorts each lane's column of 8
/// registers, the transpose makes every register a sorted run of 8, and runs are merged pairwise
/// into runs of 16, 32 and 64. A merge reverses its second run, so that the two form one bitonic
/// sequence: then compare-exchanges between registers halve the distance down to 8 lanes, and
/// every register sorts its bitonic 8 lanes with the same three in-register stages.
void column_sort(Registers<8>& registers) {
  __m256i* r = registers.lanes;
  order(r[0], r[2]), order(r[1], r[3]), order(r[4], r[6]), order(r[5], r[7]);
  order(r[0], r[4]), order(r[1], r[5]), order(r[2], r[6]), order(r[3], r[7]);
  order(r[0], r[1]), order(r[2], r[3]), order(r[4], r[5]), order(r[6], r[7]);
  order(r[2], r[4]), order(r[3], r[5]);
  order(r[1], r[4]), order(r[3], r[6]);
  order(r[1], r[2]), order(r[3], r[4]), order(r[5], r[6]);
  transpose(r);
  constexpr auto all = std::make_index_sequence<8>{};
  for (int a = 0; a < 8; a += 2) {  // runs of 16
    r[a + 1] = reversed(r[a + 1]);
    order(r[a], r[a + 1]);
  }
  sort_bitonic_each(registers, all);
  for (int a = 0; a < 8; a += 4) {  // runs of 32
    const __m256i third = reversed(r[a + 3]), fourth = reversed(r[a + 2]);
    r[a + 2] = third;
    r[a + 3] = fourth;
    order(r[a], r[a + 2]), order(r[a + 1], r[a + 3]);
    order(r[a], r[a + 1]), order(r[a + 2], r[a + 3]);
  }
  sort_bitonic_each(registers, all);
  for (int a = 0; a < 4; ++a) r[4 + a] = reversed(r[4 + a]);  // the run of 64
  std::swap(r[4], r[7]), std::swap(r[5], r[6]);
  order(r[0], r[4]), order(r[1], r[5]), order(r[2], r[6]), order(r[3], r[7]);
  order(r[0], r[2]), order(r[1], r[3]), order(r[4], r[6]), order(r[5], r[7]);
  order(r[0], r[1]), order(r[2], r[3]), order(r[4], r[5]), order(r[6], r[7]);
  sort_bitonic_each(registers, all);
}

/// Lane i of `x` moved to lane (i + shift) mod 8.
__m256i rotated_up(__m256i x, std::size_t shift) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i from = _mm256_sub_epi32(lane, _mm256_set1_epi32(static_cast<int>(shift)));
  return _mm256_permutevar8x32_epi32(x, _mm256_and_si256(from, _mm256_set1_epi32(7)));
}

/// Lanes below `count` all ones (a lane mask).
__m256i lanes_below(std::size_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// Calls f(std::integral_constant<int, a>{}) for a = 0 .. R - 1: registers are named by
/// constants, so that they stay in registers (indexed by a variable, the array lives on the
/// stack).
template <int R, class F>
void for_each_register(F&& f) {
  [&]<int... A>(std::integer_sequence<int, A...>) {
    (f(std::integral_constant<int, A>{}), ...);
  }
  (std::make_integer_sequence<int, R>{});
}

/// Loads the entries ids[0 .. length) into the registers, and the largest index into the other
/// lanes (a network sorts whatever lanes its entries are in). Rows of 8 or more read whole
/// registers only inside the row: the last partial register is the row's last 8 entries, the
/// lanes that repeat entries of the register before (the lowest 8 - rest) set to the filler, as
/// they are (no rotation on the network's chain).
template <int R>
void load_row(const index_t* ids, std::size_t length, Registers<R>& r) {
  const __m256i filler = _mm256_set1_epi32(-1);
  if (length < 8) {
    const __m256i in_row = lanes_below(length);
    const __m256i loaded = _mm256_maskload_epi32(reinterpret_cast<const int*>(ids), in_row);
    for_each_register<R>([&](auto a) { r.lanes[a] = filler; });
    r.lanes[0] = _mm256_blendv_epi8(filler, loaded, in_row);
    return;
  }
  const std::size_t whole = length / 8, rest = length % 8;
  const __m256i last8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ids + length - 8));
  const __m256i partial = _mm256_blendv_epi8(last8, filler, lanes_below(8 - rest));
  for_each_register<R>([&](auto a) {
    if (a < whole) {
      r.lanes[a] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ids + 8 * a));
    } else {
      r.lanes[a] = a == whole ? partial : filler;
    }
  });
}

/// Stores the registers' first `length` lanes to ids[0 .. length), writing nothing past it. Rows
/// of 8 or more are written by plain stores (AMD processors microcode masked ones): the whole
/// registers, then the row's last 8 entries, gathered from the two registers they span, over the
/// end of the row.
template <int R>
void store_row(const Registers<R>& r, std::size_t length, index_t* ids) {
  if (length < 8) {
    _mm256_maskstore_epi32(reinterpret_cast<int*>(ids), lanes_below(length), r.lanes[0]);
    return;
  }
  const std::size_t whole = length / 8, rest = length % 8;
  __m256i earlier = r.lanes[0], later = r.lanes[0];
  for_each_register<R>([&](auto a) {
    if (a < whole) _mm256_storeu_si256(reinterpret_cast<__m256i*>(ids + 8 * a), r.lanes[a]);
    if (a + 1 == whole) earlier = r.lanes[a];
    if (a == whole) later = r.lanes[a];
  });
  if (rest == 0) return;
  // Lane i of the last 8 is entry length - 8 + i: from register whole - 1 below lane 8 - rest,
  // from register whole from there on.
  const __m256i last8 = _mm256_blendv_epi8(rotated_up(later, 8 - rest),
                                           rotated_up(earlier, 8 - rest), lanes_below(8 - rest));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(ids + length - 8), last8);
}

/// Sorts from[0 .. length) into ids[0 .. length) (length <= 8 R, no distances) in R registers,
/// the lanes past the row holding the largest index: a bitonic network for R <= 4, the column
/// sort for R = 8. A network sorts repeated indices as well as distinct ones (entries equal to
/// the filler are indistinguishable from it), so it never refuses a row.
template <int R>
void network_sort(const index_t* from, index_t* ids, std::size_t length) {
  Registers<R> r;
  load_row<R>(from, length, r);
  if constexpr (R == 8) {
    column_sort(r);
  } else {
    merge<R, 2>(r);
    merge<R, 4>(r);
    merge<R, 8>(r);
    if constexpr (R >= 2) merge<R, 16>(r);
    if constexpr (R >= 4) merge<R, 32>(r);
  }
  store_row<R>(r, length, ids);
}

}  // namespace

bool row_sort_avx2(const index_t* from, index_t* ids, double* distances, std::size_t length) {
  if (distances == nullptr && length <= kNetworkMax) {
    if (length <= 8) {
      network_sort<1>(from, ids, length);
    } else if (length <= 16) {
      network_sort<2>(from, ids, length);
    } else if (length <= 32) {
      network_sort<4>(from, ids, length);
    } else {
      network_sort<8>(from, ids, length);
    }
    return true;
  }
  // Keys with the sign bit flipped, so that AVX2's signed compare orders them as unsigned; room
  // for the last vector's lanes past the row (read, never placed).
  alignas(32) int flipped[kRankSortMax + 8] = {};
  alignas(32) unsigned ranks[kRankSortMax + 8];
  index_t keys[kRankSortMax];
  double distance_copy[kRankSortMax];
  std::copy(from, from + length, keys);
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
  // AA-sort's rule, 32 entries (four registers) at a time: `high` holds the largest 32 entries
  // taken so far, each at most every entry not yet taken from its own range, and the next 32 come
  // from the range whose next entry is smaller; every entry of `high` is at most that entry, so
  // the smallest 32 of `high` and those 32 are the next 32 of the merge. Those 32 ascending, then
  // `high` descending, are bitonic: compare-exchanges of low[k] with high[k] leave the smallest
  // 32 in `low` and the largest in `high`, each bitonic; compare-exchanges of their registers 16
  // and 8 lanes apart and each register's three in-register stages sort them. `high` is kept
  // descending (high[0] the largest 8), so that no reversal lies on the chain of dependent
  // instructions the merge is. (16 at a time: rows of 131 entries 237-240 ns, of 822 2.4 us on a
  // Zen 5; 32 at a time: 221-223 ns and 2.0-2.2 us, docs/benchmarks.md.)
  constexpr int kRegisters = 4;
  constexpr std::size_t kBlock = 8 * kRegisters;
  static_assert(kBlock == kMergeUnitAvx2);
  const auto load = [](const index_t* at) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  };
  const auto store = [](index_t* at, __m256i x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), x);
  };
  __m256i high[kRegisters], low[kRegisters];
  for (int k = 0; k < kRegisters; ++k) high[k] = reversed(load(a + 8 * (kRegisters - 1 - k)));
  std::size_t ia = kBlock, ib = 0;
  while (ia < na || ib < nb) {
    const bool take_a = ib == nb || (ia < na && a[ia] <= b[ib]);
    const index_t* next = take_a ? a + ia : b + ib;
    ia += take_a ? kBlock : 0;
    ib += take_a ? 0 : kBlock;
    for (int k = 0; k < kRegisters; ++k) {
      const __m256i taken = load(next + 8 * k);
      low[k] = _mm256_min_epu32(taken, high[k]);
      high[k] = _mm256_max_epu32(taken, high[k]);
    }
    for (int distance = kRegisters / 2; distance >= 1; distance /= 2) {
      for (int k = 0; k < kRegisters; ++k) {
        if ((k & distance) != 0) continue;
        order(low[k], low[k + distance]);
        order(high[k + distance], high[k]);
      }
    }
    for (int k = 0; k < kRegisters; ++k) {
      store(out + 8 * k, sort_bitonic(low[k]));
      high[k] = sort_bitonic_descending(high[k]);
    }
    out += kBlock;
  }
  for (int k = 0; k < kRegisters; ++k) store(out + 8 * k, reversed(high[kRegisters - 1 - k]));
}

}  // namespace spatialhash::detail
