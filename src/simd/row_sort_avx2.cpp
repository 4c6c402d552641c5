// The AVX2 row sort (see row_sort.hpp). Rows of at most 64 entries without distances (those the
// collectors sort as they store them) go through a sorting network in one, two, four or eight
// registers, with the row's entries by columns (entry i in lane i / R of register i % R:
// sort_by_network, the same network as row_sort_avx512.cpp's with 8 lanes), then transposed into
// row order. Rows with distances are sorted by rank, 8 entries' ranks at a time, each compared
// with every entry of the row. This file alone is compiled with -mavx2 -mfma; best_row_sort()
// calls it only on processors that report both.
//
// What made the networks 1.8-2.5x faster on a Zen 3 (thirty-sixth session, docs/benchmarks.md):
// plain stores instead of masked ones (AMD microcodes vpmaskmovd stores; the row's tail is
// written by one store of its last 8 entries, overlapping the register before), registers named
// by constants (an array indexed by a variable lives on the stack), in-lane shuffles for the
// exchanges 1 and 2 lanes apart, and for 33 to 64 entries each lane's column of 8 registers
// sorted first by 19 compare-exchanges of whole registers. In the fortieth session, every network
// by columns to the end, with merges that compare each entry with its mirror image (all their
// stages between registers a plain min and max), and a transpose only at the end: on a Zen 5
// with AVX2, rows of 17-32 entries 25 -> 18 ns, of 33-64 55 -> 34 ns, of 131 209 -> 173 ns.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "row_sort.hpp"

namespace spatialhash::detail {
namespace {

/// The most entries a network sorts: 64, in one, two, four or eight registers.
constexpr std::size_t kNetworkMax = 64;

/// The lanes whose number has `bit` set: the upper lane of every pair `bit` lanes apart, and the
/// upper half of every aligned group of 2 `bit` lanes (a blend mask).
constexpr int upper_lanes(int bit) {
  int mask = 0;
  for (int lane = 0; lane < 8; ++lane) {
    if ((lane & bit) != 0) mask |= 1 << lane;
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

/// The lanes of every aligned group of `Group` (2, 4 or 8) lanes in reverse order: an in-lane
/// shuffle for 2 and 4, vpermd for 8.
template <int Group>
__m256i reversed_in_groups(__m256i x) {
  static_assert(Group == 2 || Group == 4 || Group == 8);
  if constexpr (Group == 2) return _mm256_shuffle_epi32(x, 0xB1);  // lanes 1 0 3 2
  if constexpr (Group == 4) return _mm256_shuffle_epi32(x, 0x1B);  // lanes 3 2 1 0
  if constexpr (Group == 8) {
    return _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0));
  }
}

/// One compare-exchange stage within a register: each lane against the lane `Distance` away, the
/// upper lane of each pair keeping the larger value (ascending) or the smaller (Descending).
template <int Distance, bool Descending = false>
__m256i exchange(__m256i x) {
  constexpr int max_lanes = Descending ? 0xFF & ~upper_lanes(Distance) : upper_lanes(Distance);
  const __m256i other = partner<Distance>(x);
  return _mm256_blend_epi32(_mm256_min_epu32(x, other), _mm256_max_epu32(x, other), max_lanes);
}

/// A bitonic register's lanes sorted ascending (Descending false) or descending.
template <bool Descending>
__m256i sorted_bitonic(__m256i x) {
  return exchange<1, Descending>(exchange<2, Descending>(exchange<4, Descending>(x)));
}

/// Compare-exchange of whole registers: `low` keeps the smaller value of each lane.
void order(__m256i& low, __m256i& high) {
  const __m256i smaller = _mm256_min_epu32(low, high);
  high = _mm256_max_epu32(low, high);
  low = smaller;
}

/// A row of up to 8 R entries in R registers (a struct: std::array of a vector type drops its
/// attributes). In a network, entry i is lane i / R of register i % R ("by columns"): entries
/// fewer than R apart are then in other registers, and their compare-exchanges are a min and a
/// max of whole registers, with no shuffle and no blend.
template <int R>
struct Registers {
  __m256i lanes[R];
};

/// Merges, in every aligned group of `Group` lanes, the sorted runs of its lower and upper halves
/// (R Group / 2 entries each, by columns) into one sorted run: entry i of the group against entry
/// R Group - 1 - i (lane Group - 1 - l of register R - 1 - k against lane l of register k), the
/// lower one keeping the smaller, which leaves each half bitonic and every entry of the lower
/// half at most every entry of the upper half; then each half sorts itself with compare-exchanges
/// at half the distance each time, all ascending: lanes Group / 4 .. 1 apart, then registers R / 2
/// .. 1 apart (row_sort_avx512.cpp's merge_halves, with 8 lanes).
template <int R, int Group>
void merge_halves(Registers<R>& r) {
  // Register k against register R - 1 - k, both at once (two temporaries; with R = 1 the
  // register against itself).
  constexpr int upper_half = upper_lanes(Group / 2);  // an immediate, even at -O0
  for (int k = 0; k < (R + 1) / 2; ++k) {
    __m256i& low = r.lanes[k];
    __m256i& high = r.lanes[R - 1 - k];
    const __m256i low_flipped = reversed_in_groups<Group>(high);
    const __m256i high_flipped = reversed_in_groups<Group>(low);
    const __m256i new_low = _mm256_blend_epi32(_mm256_min_epu32(low, low_flipped),
                                               _mm256_max_epu32(low, low_flipped), upper_half);
    const __m256i new_high = _mm256_blend_epi32(_mm256_min_epu32(high, high_flipped),
                                                _mm256_max_epu32(high, high_flipped), upper_half);
    low = new_low;
    high = new_high;
  }
  for (auto& lanes : r.lanes) {
    if constexpr (Group >= 8) lanes = exchange<2>(lanes);
    if constexpr (Group >= 4) lanes = exchange<1>(lanes);
  }
  for (int distance = R / 2; distance >= 1; distance /= 2) {
    for (int k = 0; k < R; ++k) {
      if ((k & distance) == 0) order(r.lanes[k], r.lanes[k + distance]);
    }
  }
}

/// Sorts the 8 R entries of the registers (by columns): each lane's column of R entries sorted
/// by Batcher's network of compare-exchanges of whole registers (kBatcherNetwork, registers named
/// by constants), then runs merged in groups of 2, 4 and 8 lanes. A network sorts repeated entries
/// as well as distinct ones. Always inlined, as in row_sort_avx512.cpp (a call passes the registers
/// through memory).
template <int R>
[[gnu::always_inline]] inline void sort_by_network(Registers<R>& registers) {
  static_assert(R == 1 || R == 2 || R == 4 || R == 8);
  [&]<std::size_t... P>(std::index_sequence<P...>) {
    (order(registers.lanes[kBatcherNetwork<R>[P][0]], registers.lanes[kBatcherNetwork<R>[P][1]]),
     ...);
  }
  (std::make_index_sequence<kBatcherNetwork<R>.size()>{});
  merge_halves<R, 2>(registers);
  merge_halves<R, 4>(registers);
  merge_halves<R, 8>(registers);
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

/// Puts the sorted registers (by columns) in row order: entry i to lane i % 8 of register i / 8.
template <int R>
void put_in_row_order(Registers<R>& registers) {
  __m256i* r = registers.lanes;
  if constexpr (R == 2) {
    // Lanes l of registers 0 and 1 side by side, for l = 0, 1 | 4, 5 and 2, 3 | 6, 7.
    const __m256i low = _mm256_unpacklo_epi32(r[0], r[1]), high = _mm256_unpackhi_epi32(r[0], r[1]);
    r[0] = _mm256_permute2x128_si256(low, high, 0x20);
    r[1] = _mm256_permute2x128_si256(low, high, 0x31);
  } else if constexpr (R == 4) {
    // Lanes l of registers 0 .. 3 side by side, for l = 0 | 4, 1 | 5, 2 | 6 and 3 | 7.
    const __m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
    const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    r[0] = _mm256_permute2x128_si256(u0, u1, 0x20);
    r[1] = _mm256_permute2x128_si256(u2, u3, 0x20);
    r[2] = _mm256_permute2x128_si256(u0, u1, 0x31);
    r[3] = _mm256_permute2x128_si256(u2, u3, 0x31);
  } else if constexpr (R == 8) {
    transpose(r);
  }
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
/// the lanes past the row holding the largest index (sort_by_network, then put_in_row_order). A
/// network sorts repeated indices as well as distinct ones (entries equal to the filler are
/// indistinguishable from it), so it never refuses a row.
template <int R>
void network_sort(const index_t* from, index_t* ids, std::size_t length) {
  Registers<R> r;
  load_row<R>(from, length, r);
  sort_by_network(r);
  put_in_row_order(r);
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
  for (int k = 0; k < kRegisters; ++k) {
    high[k] = reversed_in_groups<8>(load(a + 8 * (kRegisters - 1 - k)));
  }
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
      store(out + 8 * k, sorted_bitonic<false>(low[k]));
      high[k] = sorted_bitonic<true>(high[k]);
    }
    out += kBlock;
  }
  for (int k = 0; k < kRegisters; ++k)
    store(out + 8 * k, reversed_in_groups<8>(high[kRegisters - 1 - k]));
}

}  // namespace spatialhash::detail
