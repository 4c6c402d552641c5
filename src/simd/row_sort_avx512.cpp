// The AVX-512 row sort (see row_sort.hpp). Rows of at most 256 entries (kNetworkMaxAvx512)
// without distances (those the collectors sort as they store them) go through a sorting network
// in one register (up to 16 entries), two (up to 32), four (up to 64), eight (up to 128) or
// sixteen, with the row's entries by columns (entry i in lane i / R of register i % R:
// sort_by_network); rows of at most 64 entries with distances are sorted by rank, 16 entries'
// ranks at a time, each compared with every entry of the row. sort_row sorts longer rows by runs
// of 256, merged 64 entries at a time by merge_runs_avx512. This file alone is compiled with
// -mavx512f; best_row_sort() calls it only on processors that report AVX-512F.
//
// What made the networks 1.6-2.4x faster on a Zen 5 (thirty-seventh session, docs/benchmarks.md):
// in-lane shuffles and 128-bit block swaps instead of vpermd (whose latency sat on every stage of
// the network's chain of dependent instructions), and plain loads and stores for rows of 16
// entries or more (the row's tail as its last 16 entries, overlapping the register before). In the
// thirty-eighth, rows of fewer than 16 entries without AVX-512 masked loads and stores, and a row
// of 16 in one register instead of two: 3-15 entries 21 -> 4.5-8.4 ns, 16 entries 16 -> 6.3 ns;
// and the last partial register loaded without a rotation (17-64 entries 3-7% faster). In the
// thirty-ninth, the AVX-512 merge of runs (rows of 131 entries 198 -> 135 ns, of 800 2.0 -> 1.1
// us: W3's sorted lists 1.16x faster). In the fortieth, the entries by columns instead of by rows
// (entry i in lane i % 16 of register i / 16) and merges that compare each entry with its mirror
// image, so that every merge's stages between registers are a plain min and max and none of its
// stages has a direction that depends on the lane: rows of 17-32 entries 15 -> 11-12 ns, of 33-64
// 35-37 -> 25-27 ns, of 131 143 -> 122 ns; then the networks in eight and sixteen registers for
// rows of 65-256 (a row of 100 80-85 -> 44-46 ns, of 200 160-168 -> 89-93 ns).
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "row_sort.hpp"

namespace spatialhash::detail {
namespace {

static_assert(kNetworkMaxAvx512 == 16 * 16, "the networks take 1, 2, 4, 8 or 16 registers");

/// Every lane: the masked forms of the intrinsics below with all lanes set, which compile to the
/// same instructions. GCC 12's unmasked forms pass _mm512_undefined_epi32() through, which its
/// -Wmaybe-uninitialized reports (an error with -Werror).
constexpr __mmask16 kAll = 0xFFFF;

__m512i min_u32(__m512i a, __m512i b) {
  return _mm512_mask_min_epu32(a, kAll, a, b);
}
__m512i max_u32(__m512i a, __m512i b) {
  return _mm512_mask_max_epu32(a, kAll, a, b);
}

/// The lanes whose number has `bit` set: the upper lane of every pair `bit` lanes apart, and the
/// upper half of every aligned group of 2 `bit` lanes.
constexpr __mmask16 upper_lanes(int bit) {
  unsigned mask = 0;
  for (int lane = 0; lane < 16; ++lane) {
    if ((lane & bit) != 0) mask |= 1u << lane;
  }
  return static_cast<__mmask16>(mask);
}

/// Each lane's partner `Distance` (1, 2, 4 or 8) lanes away: in-lane shuffles for 1 and 2, swaps
/// of 128-bit blocks for 4 and 8. (vpermd for all four put its latency on every stage of the
/// network's chain: a row of 16 took 37 ns on a Zen 5.)
template <int Distance>
__m512i partner(__m512i x) {
  static_assert(Distance == 1 || Distance == 2 || Distance == 4 || Distance == 8);
  if constexpr (Distance == 1) return _mm512_mask_shuffle_epi32(x, kAll, x, _MM_PERM_CDAB);
  if constexpr (Distance == 2) return _mm512_mask_shuffle_epi32(x, kAll, x, _MM_PERM_BADC);
  if constexpr (Distance == 4) return _mm512_mask_shuffle_i32x4(x, kAll, x, x, 0xB1);  // 1 0 3 2
  if constexpr (Distance == 8) return _mm512_mask_shuffle_i32x4(x, kAll, x, x, 0x4E);  // 2 3 0 1
}

/// The lanes of every aligned group of `Group` (2, 4, 8 or 16) lanes in reverse order: an in-lane
/// shuffle for 2 and 4, one vpermd for 8 and 16 (once per merge, off the stages' chain; two
/// shuffles were slower).
template <int Group>
__m512i reversed_in_groups(__m512i x) {
  static_assert(Group == 2 || Group == 4 || Group == 8 || Group == 16);
  if constexpr (Group == 2) return _mm512_mask_shuffle_epi32(x, kAll, x, _MM_PERM_CDAB);
  if constexpr (Group == 4) return _mm512_mask_shuffle_epi32(x, kAll, x, _MM_PERM_ABCD);
  if constexpr (Group == 8) {
    const __m512i down = _mm512_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
    return _mm512_mask_permutexvar_epi32(x, kAll, down, x);
  }
  if constexpr (Group == 16) {
    const __m512i down = _mm512_setr_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    return _mm512_mask_permutexvar_epi32(x, kAll, down, x);
  }
}

/// One compare-exchange stage within a register: each lane against the lane `Distance` away, the
/// upper lane of each pair keeping the larger value (ascending) or the smaller (Descending).
template <int Distance, bool Descending = false>
__m512i exchange(__m512i x) {
  constexpr __mmask16 max_lanes =
      Descending ? static_cast<__mmask16>(~upper_lanes(Distance)) : upper_lanes(Distance);
  const __m512i other = partner<Distance>(x);
  return _mm512_mask_blend_epi32(max_lanes, min_u32(x, other), max_u32(x, other));
}

/// Compare-exchange of whole registers: `low` keeps the smaller value of each lane.
void order(__m512i& low, __m512i& high) {
  const __m512i smaller = min_u32(low, high);
  high = max_u32(low, high);
  low = smaller;
}

/// A row of up to 16 R entries in R registers (a struct: std::array of a vector type drops its
/// attributes). In a network, entry i is lane i / R of register i % R ("by columns"): entries
/// fewer than R apart are then in other registers, and their compare-exchanges are a min and a
/// max of whole registers, with no shuffle and no blend.
template <int R>
struct Registers {
  __m512i lanes[R];
};

/// Merges, in every aligned group of `Group` lanes, the sorted runs of its lower and upper halves
/// (R Group / 2 entries each, by columns) into one sorted run. Entry i of the group against entry
/// R Group - 1 - i (lane Group - 1 - l of register R - 1 - k against lane l of register k), the
/// lower one keeping the smaller: each half is then bitonic and every entry of the lower half at
/// most every entry of the upper half. Then each half sorts itself with compare-exchanges at half
/// the distance each time, all ascending: lanes Group / 4 .. 1 apart, then registers R / 2 .. 1
/// apart. (Against the usual bitonic network, whose runs alternate ascending and descending, no
/// stage has a direction that depends on the lane: the stages between registers stay one min and
/// one max.) The loops here and in interleave_round are unrolled by pragma: with 16 registers GCC
/// left some rolled, indexing the registers by a variable, which put them on the stack (531 moves
/// of spilled registers in the kernel).
template <int R, int Group>
void merge_halves(Registers<R>& r) {
  // Register k against register R - 1 - k, both at once (two temporaries: sixteen registers and
  // their reversals would not fit in the 32 there are; with R = 1 the register against itself).
#pragma GCC unroll 16
  for (int k = 0; k < (R + 1) / 2; ++k) {
    __m512i& low = r.lanes[k];
    __m512i& high = r.lanes[R - 1 - k];
    const __m512i low_flipped = reversed_in_groups<Group>(high);
    const __m512i high_flipped = reversed_in_groups<Group>(low);
    const __m512i new_low = _mm512_mask_blend_epi32(
        upper_lanes(Group / 2), min_u32(low, low_flipped), max_u32(low, low_flipped));
    const __m512i new_high = _mm512_mask_blend_epi32(
        upper_lanes(Group / 2), min_u32(high, high_flipped), max_u32(high, high_flipped));
    low = new_low;
    high = new_high;
  }
#pragma GCC unroll 16
  for (auto& lanes : r.lanes) {
    if constexpr (Group >= 16) lanes = exchange<4>(lanes);
    if constexpr (Group >= 8) lanes = exchange<2>(lanes);
    if constexpr (Group >= 4) lanes = exchange<1>(lanes);
  }
#pragma GCC unroll 16
  for (int distance = R / 2; distance >= 1; distance /= 2) {
#pragma GCC unroll 16
    for (int k = 0; k < R; ++k) {
      if ((k & distance) == 0) order(r.lanes[k], r.lanes[k + distance]);
    }
  }
}

/// Sorts each lane's column of the R registers: Batcher's network (kBatcherNetwork), every
/// compare-exchange naming its registers by constants.
template <int R>
void sort_columns(Registers<R>& r) {
  [&]<std::size_t... P>(std::index_sequence<P...>) {
    (order(r.lanes[kBatcherNetwork<R>[P][0]], r.lanes[kBatcherNetwork<R>[P][1]]), ...);
  }
  (std::make_index_sequence<kBatcherNetwork<R>.size()>{});
}

/// Sorts the 16 R entries of the registers (by columns) in their first `Lanes` lanes (8 or 16;
/// with 8 the lanes above are left as they are, unsorted): each lane's column of R entries sorted
/// by compare-exchanges of whole registers, then runs merged in groups of 2, 4 .. `Lanes` lanes.
/// A network sorts repeated entries as well as distinct ones. (On a Zen 5, against a bitonic
/// network with entry i in lane i % 16 of register i / 16, `bench/row_sort`: rows of 16
/// entries 7.1-7.5 -> 6.5-6.8 ns, 17-32 15 -> 11-12, 33-64 35-37 -> 25-27; docs/benchmarks.md,
/// fortieth session.) Always inlined: GCC made the two calls for R = 1 (rows of 9-16 entries) one
/// function, whose registers went through memory on the way in and out (a row of 12 entries took 23
/// ns instead of 8).
template <int R, int Lanes = 16>
[[gnu::always_inline]] inline void sort_by_network(Registers<R>& r) {
  static_assert(R == 1 || R == 2 || R == 4 || R == 8 || R == 16);
  static_assert(Lanes == 16 || (Lanes == 8 && R == 1));
  sort_columns(r);
  merge_halves<R, 2>(r);
  merge_halves<R, 4>(r);
  merge_halves<R, 8>(r);
  if constexpr (Lanes == 16) merge_halves<R, 16>(r);
}

/// Lanes of `a` and `b` interleaved in blocks of `Width` bits (32, 64, 128 or 256): block m of
/// the result is block m / 2 of `a` or of `b` (m odd), from block `First` of each on (0 or the
/// middle).
template <int Width, int First>
__m512i interleaved(__m512i a, __m512i b) {
  static_assert(Width == 32 || Width == 64 || Width == 128 || Width == 256);
  static_assert(First == 0 || First == 256 / Width);
  if constexpr (Width == 32) {
    const __m512i pick = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    return _mm512_mask2_permutex2var_epi32(a, _mm512_add_epi32(pick, _mm512_set1_epi32(First)),
                                           kAll, b);
  } else {
    const __m512i pick = Width == 64    ? _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11)
                         : Width == 128 ? _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11)
                                        : _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
    return _mm512_mask2_permutex2var_epi64(
        a, _mm512_add_epi64(pick, _mm512_set1_epi64(First * Width / 64)), 0xFF, b);
  }
}

/// One round of put_in_row_order: the registers come in groups of M = Width / 32, group j holding
/// runs of M consecutive entries for its lanes; groups 2 j and 2 j + 1 interleaved in blocks of
/// `Width` bits become one group of 2 M registers holding runs of 2 M, until one group is left.
template <int R, int Width>
void interleave_round(__m512i* r) {
  constexpr int M = Width / 32;
  __m512i next[R];
#pragma GCC unroll 16
  for (int j = 0; j < R / (2 * M); ++j) {
#pragma GCC unroll 16
    for (int m = 0; m < M; ++m) {
      const __m512i a = r[2 * j * M + m], b = r[(2 * j + 1) * M + m];
      next[2 * j * M + 2 * m] = interleaved<Width, 0>(a, b);
      next[2 * j * M + 2 * m + 1] = interleaved<Width, 256 / Width>(a, b);
    }
  }
#pragma GCC unroll 16
  for (int k = 0; k < R; ++k) r[k] = next[k];
  if constexpr (2 * M < R) interleave_round<R, 2 * Width>(r);
}

/// Puts the sorted registers (by columns) in row order: entry i to lane i % 16 of register i / 16.
/// Entry i sits in lane i / R of register i % R: interleaving registers k and k + 1 (32-bit
/// blocks) gives runs of 2 consecutive entries, two such results interleaved by 64-bit blocks
/// runs of 4, and so on up to runs of 16 (R = 16, 256-bit blocks): log2(R) rounds of R vpermt2d or
/// vpermt2q.
template <int R>
void put_in_row_order(Registers<R>& registers) {
  if constexpr (R >= 2) interleave_round<R, 32>(registers.lanes);
}

/// 16 lanes of the filler, then 16 of zero: 16 lanes loaded from entry k have the filler in
/// lanes 0 .. 15 - k.
constexpr std::array<std::uint32_t, 32> kFillerLanes = [] {
  std::array<std::uint32_t, 32> lanes{};
  for (std::size_t i = 0; i < 16; ++i) lanes[i] = 0xFFFFFFFFu;
  return lanes;
}();

/// Lanes below `count` (<= 16).
__mmask16 lanes_below(std::size_t count) {
  return static_cast<__mmask16>((1u << count) - 1);
}

/// Sorts from[0 .. length) into ids[0 .. length) (16 <= length <= 16 R, no distances) with the
/// network in R registers, the lanes past the row filled with the largest index. A network sorts
/// repeated indices as well as distinct ones (entries equal to the filler are indistinguishable
/// from it): it never refuses a row. Only plain loads and stores, all inside the row: the last
/// partial register is loaded as the row's last 16 entries, the lanes that repeat entries of the
/// register before set to the filler (a network sorts whatever lanes its entries are in: no
/// rotation on its chain), and stored as the row's last 16 entries, picked from the two registers
/// they span, over the register before, as the AVX2 networks do (masked loads and stores are slow
/// on AMD processors: short_network_sort).
template <int R>
void network_sort(const index_t* from, index_t* ids, std::size_t length) {
  const __m512i filler = _mm512_set1_epi32(-1);
  const std::size_t whole = length / 16, rest = length % 16;
  const __m512i last16 = _mm512_loadu_si512(from + length - 16);
  // The filler ORed in from a constant row: lanes 0 .. 15 - rest all ones. Masked forms (a blend
  // GCC folds into a merge-masked load, a zero-masked move it turns into vpternlogd on whatever
  // register is free) depend on that register's last value: a row then waited for the row before
  // (rows of 17-31 entries took 31 ns instead of 16 on a Zen 5).
  const __m512i partial = _mm512_or_si512(last16, _mm512_loadu_si512(kFillerLanes.data() + rest));
  Registers<R> r;
  for (int a = 0; a < R; ++a) {
    const auto at = static_cast<std::size_t>(a);
    r.lanes[a] = at < whole ? _mm512_loadu_si512(from + 16 * a) : at == whole ? partial : filler;
  }
  sort_by_network(r);
  put_in_row_order(r);
  __m512i earlier = filler, later = filler;
  for (int a = 0; a < R; ++a) {
    const auto at = static_cast<std::size_t>(a);
    if (at < whole) _mm512_storeu_si512(ids + 16 * a, r.lanes[a]);
    if (at + 1 == whole) earlier = r.lanes[a];
    if (at == whole) later = r.lanes[a];
  }
  if (rest == 0) return;
  // Lane i of the last 16 is entry length - 16 + i: lane rest + i of register whole - 1 while
  // that is below 16, lane rest + i - 16 of register whole from there on.
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i pick = _mm512_add_epi32(lane, _mm512_set1_epi32(static_cast<int>(rest)));
  const __m512i last = _mm512_mask2_permutex2var_epi32(earlier, pick, kAll, later);
  _mm512_storeu_si512(ids + length - 16, last);
}

/// Lanes 0-7 of x, and x with lanes 8-15 replaced by `high`. (The masked forms: GCC 12's plain
/// ones start from an undefined register, which -Wmaybe-uninitialized reports.)
__m256i low_half(__m512i x) {
  return _mm512_mask_extracti64x4_epi64(_mm256_setzero_si256(), 0xFF, x, 0);
}
__m512i with_high_half(__m512i x, __m256i high) {
  return _mm512_mask_inserti64x4(x, 0xFF, x, high, 1);
}

/// network_sort for rows shorter than a register (length < 16), without AVX-512 masked loads
/// and stores (on a Zen 5 every row below 16 entries took 21 ns with them, 4.5-8 ns without).
/// Rows of more than 8 entries: their first 8 and their last 8 entries loaded and stored with
/// plain 256-bit moves, overlapping. Rows of up to 8: one AVX2 masked load and store, and only the
/// network's merges in groups of up to 8 lanes, which never mix lanes 0-7 with the lanes above
/// (left undefined): after them lanes 0-7 hold the row in ascending order.
void short_network_sort(const index_t* from, index_t* ids, std::size_t length) {
  const __m512i filler = _mm512_set1_epi32(-1);
  const __m256i lane8 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  Registers<1> r;
  if (length > 8) {
    // Lanes 0-7: entries 0-7; lanes 8-15: the last 8 entries, of which the lowest 16 - length
    // repeat entries of lanes 0-7 and take the filler instead (the network does not care which
    // lanes its entries are in).
    const __m512i both = with_high_half(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(from))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + length - 8)));
    const auto repeated = static_cast<__mmask16>(lanes_below(16 - length) << 8);
    r.lanes[0] = _mm512_mask_blend_epi32(repeated, both, filler);
    sort_by_network(r);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(ids), low_half(r.lanes[0]));
    // The last 8 entries: lanes length - 8 .. length - 1.
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i last = _mm512_mask_permutexvar_epi32(
        r.lanes[0], kAll, _mm512_add_epi32(lane, _mm512_set1_epi32(static_cast<int>(length - 8))),
        r.lanes[0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(ids + length - 8), low_half(last));
    return;
  }
  const __m256i in_row = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(length)), lane8);
  const __m256i loaded = _mm256_maskload_epi32(reinterpret_cast<const int*>(from), in_row);
  r.lanes[0] = _mm512_castsi256_si512(_mm256_blendv_epi8(_mm256_set1_epi32(-1), loaded, in_row));
  sort_by_network<1, 8>(r);
  _mm256_maskstore_epi32(reinterpret_cast<int*>(ids), in_row, low_half(r.lanes[0]));
}

/// A bitonic register sorted ascending (Descending false) or descending: the in-register stages
/// of one run of 16 lanes.
template <bool Descending>
__m512i sort_bitonic(__m512i x) {
  return exchange<1, Descending>(
      exchange<2, Descending>(exchange<4, Descending>(exchange<8, Descending>(x))));
}

}  // namespace

void merge_runs_avx512(const index_t* a, std::size_t na, const index_t* b, std::size_t nb,
                       index_t* out) {
  // merge_runs_avx2's rule, 64 entries (four registers) at a time: `high` holds the largest 64
  // entries taken so far, descending (high[0] the largest 16), each at most every entry not yet
  // taken from its own range; the next 64 come from the range whose next entry is smaller. Those
  // 64 ascending, then `high`, are bitonic: compare-exchanges of low[k] with high[k], then of the
  // registers 32 and 16 lanes apart within each half, and each register's four in-register
  // stages leave the next 64 of the merge in `low`, ascending, and the largest 64 in `high`,
  // descending. The chain of dependent instructions is about as long as an AVX2 merge's for 16
  // entries, and the branch on which range comes next, which mispredicts about half the time,
  // is taken a quarter as often. (32 entries at a time: rows of 131 entries 154-159 ns, of 822
  // 1.5-1.8 us; 64 at a time: 137-140 ns and 1.13-1.15 us, docs/benchmarks.md.)
  constexpr int kRegisters = 4;
  constexpr std::size_t kBlock = 16 * kRegisters;
  static_assert(kBlock == kMergeUnitAvx512);
  const auto load = [](const index_t* at) { return _mm512_loadu_si512(at); };
  __m512i high[kRegisters], low[kRegisters];
  for (int k = 0; k < kRegisters; ++k) {
    high[k] = reversed_in_groups<16>(load(a + 16 * (kRegisters - 1 - k)));
  }
  std::size_t ia = kBlock, ib = 0;
  while (ia < na || ib < nb) {
    const bool take_a = ib == nb || (ia < na && a[ia] <= b[ib]);
    const index_t* next = take_a ? a + ia : b + ib;
    ia += take_a ? kBlock : 0;
    ib += take_a ? 0 : kBlock;
    for (int k = 0; k < kRegisters; ++k) {
      const __m512i taken = load(next + 16 * k);
      low[k] = min_u32(taken, high[k]);
      high[k] = max_u32(taken, high[k]);
    }
    for (int distance = kRegisters / 2; distance >= 1; distance /= 2) {
      for (int k = 0; k < kRegisters; ++k) {
        if ((k & distance) != 0) continue;
        order(low[k], low[k + distance]);
        order(high[k + distance], high[k]);
      }
    }
    for (int k = 0; k < kRegisters; ++k) {
      _mm512_storeu_si512(out + 16 * k, sort_bitonic<false>(low[k]));
      high[k] = sort_bitonic<true>(high[k]);
    }
    out += kBlock;
  }
  for (int k = 0; k < kRegisters; ++k) {
    _mm512_storeu_si512(out + 16 * k, reversed_in_groups<16>(high[kRegisters - 1 - k]));
  }
}

bool row_sort_avx512(const index_t* from, index_t* ids, double* distances, std::size_t length) {
  if (distances == nullptr && length <= kNetworkMaxAvx512) {
    if (length < 16) {
      short_network_sort(from, ids, length);
    } else if (length == 16) {
      network_sort<1>(from, ids, length);
    } else if (length <= 32) {
      network_sort<2>(from, ids, length);
    } else if (length <= 64) {
      network_sort<4>(from, ids, length);
    } else if (length <= 128) {
      network_sort<8>(from, ids, length);
    } else {
      network_sort<16>(from, ids, length);
    }
    return true;
  }
  // Room for the last vector's lanes past the row (read, never placed).
  alignas(64) index_t keys[kRankSortMax + 16] = {};
  alignas(64) unsigned ranks[kRankSortMax + 16];
  double distance_copy[kRankSortMax];
  std::copy(from, from + length, keys);
  if (distances != nullptr) std::copy(distances, distances + length, distance_copy);
  const __m512i one = _mm512_set1_epi32(1);
  for (std::size_t base = 0; base < length; base += 16) {
    const __m512i lanes = _mm512_load_si512(keys + base);
    // Two counters, so that consecutive compares do not wait on one add.
    __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
    std::size_t j = 0;
    for (; j + 1 < length; j += 2) {
      const __m512i a = _mm512_set1_epi32(static_cast<int>(keys[j]));
      const __m512i b = _mm512_set1_epi32(static_cast<int>(keys[j + 1]));
      even = _mm512_mask_add_epi32(even, _mm512_cmplt_epu32_mask(a, lanes), even, one);
      odd = _mm512_mask_add_epi32(odd, _mm512_cmplt_epu32_mask(b, lanes), odd, one);
    }
    if (j < length) {
      const __m512i a = _mm512_set1_epi32(static_cast<int>(keys[j]));
      even = _mm512_mask_add_epi32(even, _mm512_cmplt_epu32_mask(a, lanes), even, one);
    }
    _mm512_store_si512(ranks + base, _mm512_add_epi32(even, odd));
  }
  return place_by_rank(keys, distance_copy, ranks, length, ids, distances);
}

}  // namespace spatialhash::detail
