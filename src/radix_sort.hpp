// Parallel radix sort: the counting sort of the seeds (count, prefix sums, fill) applied digit by
// digit. Stable, O(n) per pass, no comparisons. Two forms: (key, value) pairs in two arrays,
// sorted least-significant digit first over the whole arrays; and packed 64-bit records whose high
// 32 bits are the key and low 32 bits the value (one array: two thirds of the bytes a pair moves,
// and half the write streams per pass, which is what keeps the scatter fast once the arrays
// outgrow the caches), sorted by the top digit over the whole array and then bucket by bucket
// (sort_top_digit_first) when they are many, optionally moving a caller's data of each record
// with it in that one pass over the whole array (sort_top_digit_first_carrying). The passes walk
// their records in lanes (LanedPass), four where they come in spatial order (the carrying sort's
// one-pass buckets excepted: it takes records in random order only).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "growable_buffer.hpp"
#include "threads.hpp"

namespace spatialhash::detail {
namespace radix_detail {

/// Digits are at most this wide: 2048 buckets, whose write cursors stay in the cache (small
/// arrays of narrow keys excepted: kOnePassMaxBits).
inline constexpr int kMaxDigitBits = 11;

/// The passes that sort keys of `key_bits` bits.
inline int passes_for(int key_bits) {
  return (std::max(key_bits, 1) + kMaxDigitBits - 1) / kMaxDigitBits;
}

/// Keys no wider than this, among at least twice as many records as their values, are sorted by
/// one counting pass (up to 8192 buckets, whose cursors still fit a core's L1 or L2): a small
/// build's keys are only a few bits wider than its cell count (10k points of W1, W2, W4: 12-bit
/// keys), and one pass of 12 bits saved 9-10 of the 28 us that two passes of 6 took in a 10k
/// build on one thread. Wider (15 bits at 100k) it lost on two threads, whose prefix sums over
/// every thread's cursors are serial (docs/benchmarks.md).
inline constexpr int kOnePassMaxBits = 13;

/// The passes sort_passes makes over `n` records of `key_bits` bits.
inline int passes_for(std::size_t n, int key_bits) {
  const int passes = passes_for(key_bits);
  if (passes == 2 && key_bits <= kOnePassMaxBits && (std::size_t{1} << key_bits) <= n / 2) {
    return 1;
  }
  return passes;
}

/// sort_passes' default carry: nothing moves with the records but their keys and values.
struct CarryNothing {
  void operator()(std::size_t /*from*/, std::size_t /*to*/) const {}
};
/// Gives every thread its CarryNothing.
struct NoCarry {
  CarryNothing operator()(int /*thread*/) const { return {}; }
};

/// One counting pass in lanes: each thread's slice of records [begin, end) is cut into kLanes
/// consecutive lanes, each with its own counts (then write cursors), and the lanes are walked
/// side by side. Records that share a digit in a row (input in spatial order: the points of a
/// cell come together) make one cursor's load, increment and store wait on the last; kLanes
/// independent cursors overlap those waits (100k records of 18 bits in runs of 8 equal keys: 463
/// us in one lane, 235 in four; docs/benchmarks.md). Prefix sums over the lanes in order (thread
/// by thread, lane by lane within it: to_cursors) keep the pass stable.
template <std::size_t kLanes>
struct LanedPass {
  /// Adds the digit at `shift` (`mask` its values) of thread `t`'s records to its lanes' counts:
  /// counts[(t * kLanes + l) * (mask + 1) + b].
  template <class Key, class Count>
  static void count(const Key* keys, std::size_t n, int shift, std::size_t mask, std::size_t t,
                    std::size_t team, Count* counts) {
    const Slice<Count> slice(n, t, team, mask + 1, counts);
    slice.walk([keys, shift, mask](Count* h, std::size_t i) { ++h[(keys[i] >> shift) & mask]; });
  }

  /// Thread `t`'s write cursors, from the counts of every lane of a `team` of threads: each of
  /// its lanes' cursors for a bucket is the number of records of the smaller buckets plus those
  /// of the bucket in the lanes before it (thread by thread, lane by lane). Each thread sums its
  /// own from the shared counts, so that a pass needs one barrier (after the counts), not a
  /// second one after a single thread's sums. `cursors` may be `counts` itself in a team of one
  /// (each count is read before its cursor is written). With `bucket_start`, also the position
  /// where each bucket begins, and the total after the last.
  template <class Count>
  static void to_cursors(const Count* counts, Count* cursors, std::size_t buckets, std::size_t team,
                         std::size_t t, std::size_t* bucket_start) {
    const std::size_t lanes = team * kLanes, own = t * kLanes;
    Count sum = 0;
    for (std::size_t b = 0; b < buckets; ++b) {
      if (bucket_start != nullptr) bucket_start[b] = sum;
      for (std::size_t j = 0; j < lanes; ++j) {
        const Count count = counts[j * buckets + b];
        if (j >= own && j < own + kLanes) cursors[j * buckets + b] = sum;  // thread t's lane
        sum += count;
      }
    }
    if (bucket_start != nullptr) bucket_start[buckets] = sum;
  }

  /// Moves thread `t`'s records (and their values, when not null) to the cursors that
  /// to_cursors made of its counts, calling carry(i, dst) for each. Flattened: the build's carry
  /// (its float writer) was otherwise called, not inlined, and 1M-point builds were slower.
  template <class Key, class Value, class Count, class Carry>
  [[gnu::flatten]] static void scatter(const Key* keys, Key* to_keys, const Value* values,
                                       Value* to_values, std::size_t n, int shift, std::size_t mask,
                                       std::size_t t, std::size_t team, Count* cursors,
                                       Carry carry) {
    const Slice<Count> slice(n, t, team, mask + 1, cursors);
    // One loop per form, its operands captured by value.
    if (values != nullptr) {
      slice.walk([keys, to_keys, values, to_values, shift, mask, &carry](Count* h, std::size_t i) {
        const Key key = keys[i];
        const std::size_t dst = h[(key >> shift) & mask]++;
        to_keys[dst] = key;
        to_values[dst] = values[i];
        carry(i, dst);
      });
    } else {
      slice.walk([keys, to_keys, shift, mask, &carry](Count* h, std::size_t i) {
        const Key key = keys[i];
        const std::size_t dst = h[(key >> shift) & mask]++;
        to_keys[dst] = key;
        carry(i, dst);
      });
    }
  }

 private:
  /// Thread t's lanes: their first records and counts (plain pointers: the increments could
  /// otherwise alias 64-bit keys and force a reload of every operand).
  template <class Count>
  struct Slice {
    Slice(std::size_t n, std::size_t t, std::size_t team, std::size_t buckets, Count* counts)
        : end(n * (t + 1) / team) {
      const std::size_t first = n * t / team;
      lane_size = (end - first) / kLanes;
      for (std::size_t l = 0; l < kLanes; ++l) {
        begin[l] = first + l * lane_size;
        h[l] = counts + (t * kLanes + l) * buckets;
      }
    }
    /// Calls visit(h, i) for each record i of each lane, h that lane's counts, the lanes side by
    /// side. Every operand in a local: the visits store through pointers that could alias them.
    template <class Visit>
    void walk(Visit visit) const {
      const std::array<std::size_t, kLanes> first = begin;
      const std::array<Count*, kLanes> lane = h;
      const std::size_t size = lane_size, last = end;
      if constexpr (kLanes == 1) {
        for (std::size_t i = first[0]; i < last; ++i) visit(lane[0], i);
      } else {
        for (std::size_t i = 0; i < size; ++i) {
          for (std::size_t l = 0; l < kLanes; ++l) visit(lane[l], first[l] + i);
        }
        for (std::size_t i = first[kLanes - 1] + size; i < last; ++i) visit(lane[kLanes - 1], i);
      }
    }
    std::array<std::size_t, kLanes> begin{};
    std::array<Count*, kLanes> h{};
    std::size_t lane_size = 0;
    std::size_t end;
  };
};

/// Calls pass(LanedPass<lanes>{}) for `lanes` of 1, 2 or 4.
template <class Pass>
void with_lanes(std::size_t lanes, Pass pass) {
  if (lanes == 4) {
    pass(LanedPass<4>{});
  } else if (lanes == 2) {
    pass(LanedPass<2>{});
  } else {
    pass(LanedPass<1>{});
  }
}

/// A thread's keys up to which records in random order may take two lanes (lanes_for_pass).
inline constexpr std::size_t kRandomLanesBytes = std::size_t{4} << 20;

/// The lanes of a pass (LanedPass) over `n` records, `per_thread` of them to a thread, each lane
/// with `mask + 1` counts to clear and sum. Where neighbouring records often share the pass's
/// digit (at least a quarter of the pairs in `groups` evenly spaced runs of 8 pairs: records in
/// spatial order; the whole array's passes take 8 runs, a bucket's its first, which its count
/// reads next: a second run, in its middle, made 4M-point sorts 6% slower), 4 lanes,
/// or 2 where a thread has fewer than 4 records per count of a lane (1 below 2). Records in random
/// order take `random_lanes` (1 or 2) where a thread has at least 8 records per count and its
/// keys fit kRandomLanesBytes, else 1: two streams of random digits overlap better than one (100k
/// records of 18 bits sorted 1.07x as fast), but each lane is another write stream per bucket for
/// every array the pass moves: a pass that also carried three float arrays made 1M-point builds
/// 1.2-1.4x slower with 2, and 4M keys alone of 20 bits (2M a thread) sorted 1.5x slower.
template <class Key>
std::size_t lanes_for_pass(const Key* keys, std::size_t n, int shift, std::size_t mask,
                           std::size_t per_thread, std::size_t groups, std::size_t random_lanes) {
  const std::size_t buckets = mask + 1;
  if (per_thread < 2 * buckets || n < 2) return 1;
  // `groups` evenly spaced runs of kPairsPerGroup neighbouring pairs: one cache line or two each.
  constexpr std::size_t kPairsPerGroup = 8;
  const std::size_t pairs_per_group = std::min(kPairsPerGroup, n - 1);
  groups = std::clamp<std::size_t>(groups, 1, (n - 1) / pairs_per_group);
  const std::size_t step = (n - 1) / groups;
  std::size_t shared = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    const Key* first = keys + g * step;
    for (std::size_t i = 0; i < pairs_per_group; ++i) {
      shared += (((first[i] ^ first[i + 1]) >> shift) & mask) == 0 ? 1 : 0;
    }
  }
  if (4 * shared >= groups * pairs_per_group) return per_thread >= 4 * buckets ? 4 : 2;
  const bool in_cache = per_thread * sizeof(Key) <= kRandomLanesBytes;
  return per_thread >= 8 * buckets && in_cache ? random_lanes : 1;
}

/// The passes over `n` records: digit d of record i is bits [first_bit + d * digit_bits, ...) of
/// keys[i]; values (when not null) move with their keys. The digits are as even as the pass count
/// allows (18 bits: two passes of 9, not 11 + 7): fewer buckets scatter to fewer places at once.
/// Each pass moves the records from one array to the other; returns the number of passes (odd:
/// the result is in the scratch arrays). With `bucket_start` (2^digit_bits + 1 entries), the
/// last pass's buckets: bucket b holds positions [bucket_start[b], bucket_start[b + 1]).
/// `carry_for(t)` makes thread t's carry, called as carry(i, dst) when the first pass moves
/// record i (input order) to position dst: a caller's data of each record moved in the same
/// sweep, read in input order (a lane at a time, LanedPass).
template <class Key, class Value, class CarryFor = NoCarry>
int sort_passes(Key* keys, Key* scratch_keys, Value* values, Value* scratch_values, std::size_t n,
                int first_bit, int key_bits, int threads, std::size_t* bucket_start = nullptr,
                CarryFor carry_for = {}) {
  const int passes = passes_for(n, key_bits);
  const int digit_bits = (std::max(key_bits, 1) + passes - 1) / passes;
  const std::size_t buckets = std::size_t{1} << digit_bits;
  const std::size_t mask = buckets - 1;
  // A thread per 8192 keys at most (two threads from 8192 keys instead of 65536 made the build
  // of 30k-60k points 10-12% faster; docs/benchmarks.md).
  threads = std::max(1, std::min<int>(threads, static_cast<int>(n / 8192) + 1));
  const auto per_thread = n / static_cast<std::size_t>(threads);
  // counts[(t * lanes + l) * buckets + b]: records of lane l of thread t's slice with digit b;
  // cursors (the same shape): where thread t writes the next such record; on one thread the
  // counts themselves (to_cursors), so that a small sort clears and touches one array, not two.
  std::vector<std::size_t> counts, cursors;
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = first_bit + pass * digit_bits;
    // Keys alone: no values, and no carry (the first pass's only).
    const bool keys_alone = values == nullptr && (pass > 0 || std::is_same_v<CarryFor, NoCarry>);
    const std::size_t lanes =
        lanes_for_pass(keys, n, shift, mask, per_thread, 8, keys_alone ? 2 : 1);
    counts.assign(static_cast<std::size_t>(threads) * lanes * buckets, 0);
    if (threads > 1) cursors.resize(counts.size());
    std::size_t* const cursor = threads > 1 ? cursors.data() : counts.data();
    parallel_region(threads, [&] {
      // A slice per thread of the team, which may be smaller than asked for (team_size()).
      const auto team = static_cast<std::size_t>(team_size());
      const auto t = static_cast<std::size_t>(thread_id());
      with_lanes(lanes, [&](auto laned) {
        using Pass = decltype(laned);
        Pass::count(keys, n, shift, mask, t, team, counts.data());
#pragma omp barrier
        Pass::to_cursors(counts.data(), cursor, buckets, team, t,
                         t == 0 && pass == passes - 1 ? bucket_start : nullptr);
        // A carry only in the first pass.
        if (pass == 0) {
          Pass::scatter(keys, scratch_keys, values, scratch_values, n, shift, mask, t, team, cursor,
                        carry_for(static_cast<int>(t)));
        } else {
          Pass::scatter(keys, scratch_keys, values, scratch_values, n, shift, mask, t, team, cursor,
                        CarryNothing{});
        }
      });
    });
    std::swap(keys, scratch_keys);
    std::swap(values, scratch_values);
  }
  return passes;
}

/// The counts sort_bucket needs: four lanes (LanedPass) of the widest digit.
inline constexpr std::size_t kBucketCounts = std::size_t{4} << kMaxDigitBits;

/// Sorts the `n` records at `from` by key bits [first_bit, first_bit + key_bits) into `to`, on
/// this thread, stably; `counts` has kBucketCounts entries. `from` is left in any order.
/// Short runs by insertion; others by LSD passes between the two arrays (digits no wider than
/// the run needs), copied into `to` after an even number of them.
template <class Record>
void sort_bucket(Record* from, Record* to, std::size_t n, int first_bit, int key_bits,
                 std::uint32_t* counts) {
  constexpr std::size_t kInsertionBelow = 32;
  if (key_bits == 0) {  // one key: already in order
    std::copy(from, from + n, to);
    return;
  }
  if (n < kInsertionBelow) {
    // The bits above the key are equal within a bucket (or zero): comparing from first_bit up
    // orders by the key.
    for (std::size_t i = 0; i < n; ++i) {
      const Record record = from[i];
      std::size_t j = i;
      for (; j > 0 && (to[j - 1] >> first_bit) > (record >> first_bit); --j) to[j] = to[j - 1];
      to[j] = record;
    }
    return;
  }
  // Digits of at most about log2(2n) bits: clearing and summing the counts of a wider digit would
  // cost more than the records' own passes (a skewed bucket may be far below the mean).
  const int widest = std::clamp(static_cast<int>(std::bit_width(n)), 4, kMaxDigitBits);
  const int passes = (key_bits + widest - 1) / widest;
  const int digit_bits = (key_bits + passes - 1) / passes;
  const std::size_t buckets = std::size_t{1} << digit_bits;
  Record* source = from;
  Record* target = to;
  const Record* no_values = nullptr;
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = first_bit + pass * digit_bits;
    const std::size_t lanes = lanes_for_pass(source, n, shift, buckets - 1, n, 1, 2);
    std::fill(counts, counts + lanes * buckets, std::uint32_t{0});
    // This pass's source and target, by value (they swap after it).
    with_lanes(lanes, [source, target, n, shift, buckets, counts, no_values](auto laned) {
      using Pass = decltype(laned);
      Pass::count(source, n, shift, buckets - 1, 0, 1, counts);
      Pass::to_cursors(counts, counts, buckets, 1, 0, nullptr);
      Pass::scatter(source, target, no_values, static_cast<Record*>(nullptr), n, shift, buckets - 1,
                    0, 1, counts, CarryNothing{});
    });
    std::swap(source, target);
  }
  if (source != to) std::copy(source, source + n, to);
}

/// The top digit of sort_top_digit_first: as wide as the digits of the LSD passes.
inline int top_digit_bits(int key_bits) {
  const int passes = passes_for(key_bits);
  return (key_bits + passes - 1) / passes;
}

/// Whether `n` records of `key_bits` bits sort faster top digit first: two digits or more, enough
/// records to share out, and buckets that fill their digits (a bucket's own passes clear and sum
/// 2^digit counts each; 1M keys of 22 bits, buckets of about 500 records for digits of 11 bits,
/// took 5.8 ms against 5.3 ms least significant digit first, while 1M keys of 19 bits took 4.0
/// against 4.7 ms).
inline bool top_digit_first_pays(std::size_t n, int key_bits) {
  constexpr std::size_t kFrom = std::size_t{1} << 16;
  if (passes_for(key_bits) < 2 || n < kFrom) return false;
  const int top_bits = top_digit_bits(key_bits);
  const int low_bits = key_bits - top_bits;
  const int low_digit = (low_bits + passes_for(low_bits) - 1) / passes_for(low_bits);
  return (std::size_t{1} << low_digit) <= 2 * (n >> top_bits);
}

/// The two steps of a top-digit-first sort of packed records (a key in bits [first_bit,
/// first_bit + key_bits), zeros above, anything below): one parallel pass scatters `records` by
/// the key's top digit, its highest `top_bits` bits, into `scratch` (carry_for as in sort_passes),
/// then each bucket of that digit is handed to the thread whose share of the positions it begins
/// in as bucket(first, count, low_bits), `bucket_for(t)` making thread t's: it sorts
/// scratch[first, first + count) on the `low_bits` bits below the top digit into records[first,
/// ...). (Buckets taken dynamically, by whichever core came first, made builds of 1M points on 2
/// threads 1.05-1.19x slower, and at 100k points the sort's two steps took twice the processor
/// time they take on one thread, on a VM whose cores pass a cache line in about 235 ns;
/// docs/benchmarks.md.)
template <class Record, class CarryFor, class BucketFor>
void by_top_digit(Record* records, Record* scratch, std::size_t n, int first_bit, int key_bits,
                  int top_bits, int threads, CarryFor carry_for, BucketFor bucket_for) {
  const int low_bits = key_bits - top_bits;
  const std::size_t buckets = std::size_t{1} << top_bits;
  std::vector<std::size_t> bucket_start(buckets + 1);
  std::uint32_t* no_values = nullptr;
  sort_passes(records, scratch, no_values, no_values, n, first_bit + low_bits, top_bits, threads,
              bucket_start.data(), carry_for);
  parallel_region(threads, [&] {
    // Thread t sorts the buckets that begin in its share of the positions, [n * t / team, n * (t
    // + 1) / team): in a build, the share of `records` that the key pass wrote before, and that
    // the steps after it read, on that same thread (static shares), whose core may still hold it.
    const auto team = static_cast<std::size_t>(team_size());
    const auto t = static_cast<std::size_t>(thread_id());
    const std::size_t* const starts = bucket_start.data();
    const std::size_t* const first_bucket =
        std::lower_bound(starts, starts + buckets, n * t / team);
    const std::size_t* const last_bucket =
        t + 1 == team ? starts + buckets
                      : std::lower_bound(starts, starts + buckets, n * (t + 1) / team);
    auto bucket = bucket_for(static_cast<int>(t));
    for (const std::size_t* b = first_bucket; b < last_bucket; ++b)
      bucket(b[0], b[1] - b[0], low_bits);
  });
}

/// Sorts packed records (a key in bits [first_bit, first_bit + key_bits), zeros above, anything
/// below) from `records` into `records`, stably, top digit first: one parallel pass scatters the
/// records by the key's top digit into `scratch`, then each of those buckets (about n / 2^11
/// records, a few thousand at 4M points) is sorted on the remaining bits by one thread
/// (sort_bucket), in the core's own cache (by_top_digit). Against LSD passes over the whole
/// array, which scatter every record to one of 2^11 places in memory on every pass, 4M keys of
/// 22 bits took 23 instead of 29 ms on 2 threads, and 1M of 19 bits 3.8 instead of 4.2 ms
/// (docs/benchmarks.md); where buckets are too small for their digits, LSD passes stay faster
/// (top_digit_first_pays).
template <class Record>
void sort_top_digit_first(Record* records, Record* scratch, std::size_t n, int first_bit,
                          int key_bits, int threads) {
  const auto bucket_for = [&](int /*thread*/) {
    return [&, counts = std::vector<std::uint32_t>(kBucketCounts)](
               std::size_t first, std::size_t count, int low_bits) mutable {
      sort_bucket(scratch + first, records + first, count, first_bit, low_bits, counts.data());
    };
  };
  by_top_digit(records, scratch, n, first_bit, key_bits, top_digit_bits(key_bits), threads,
               NoCarry{}, bucket_for);
}

/// Records from which sort_top_digit_first_carrying pays, whatever the key's width: its top digit
/// has at most 8 bits and each bucket sorts the bits below in its core's cache, so sparse keys
/// gain as dense ones do (W3 at 1M: 22-bit keys, which sort_top_digit_first leaves to LSD passes;
/// carried, its build was 1.09-1.22x as fast as with those passes and a gather, 1 or 2 threads).
/// Below about half a million points the caller's points stay in the caches, and the sort
/// followed by a gather in sorted order is faster: builds of 100k-300k points 1.18-1.31x (W1, W2,
/// W3, W5, 2 threads), equal at 450k-600k, slower at 1M (docs/benchmarks.md).
inline constexpr std::size_t kCarryingFrom = std::size_t{1} << 19;

/// sort_top_digit_first for a caller whose data of each record lie at random in memory, to be
/// moved into sorted order: records are key << 32 | value (first_bit >= 32). The top-digit pass,
/// the only pass over the whole array, reads the records in input order, and `carry_for(t)`
/// makes thread t's carry(i, dst), which copies record i's data to position dst, in the caller's
/// own arrays. Each bucket is then sorted in cache and handed to finish(first, count, source)
/// (`finish_for(t)` makes thread t's): records[first, first + count) hold the bucket's sorted
/// records (values as given), and source[s - first] is the position j in the bucket where carry
/// put the data of the record now at s (first + j). Against sort_top_digit_first followed by a
/// gather in sorted order, the caller's data are read in sequence instead of at random.
///
/// A bucket whose keys below the top digit take few values against its records (2^low_bits at
/// most twice the records, or one digit's counts) is sorted by one counting pass that writes
/// each record and its source position in their place at once; a sparse one (wide keys, few
/// records) by sort_bucket on records whose values are replaced by their bucket position, the
/// values put back afterwards.
template <class Record, class CarryFor, class FinishFor>
void sort_top_digit_first_carrying(Record* records, Record* scratch, std::size_t n, int first_bit,
                                   int key_bits, int threads, CarryFor carry_for,
                                   FinishFor finish_for) {
  static_assert(sizeof(Record) == 8, "packed records are 64-bit");
  constexpr Record kKeyBits = ~Record{0} << 32;
  // Every bucket is one more write stream per carried array in the top-digit pass: at most 8 bits
  // (256 buckets), where the build of 1M W2 points (3D float, 18-bit keys, 3 carried floats) took
  // 12.3-14.0 ms against 19.5-20.9 with the 9 bits of sort_top_digit_first (docs/benchmarks.md).
  constexpr int kCarryingTopBits = 8;
  const int top_bits = std::min(top_digit_bits(key_bits), kCarryingTopBits);
  const auto bucket_for = [&](int thread) {
    return [&, finish = finish_for(thread), source = std::vector<std::uint32_t>(),
            values = std::vector<std::uint32_t>(), counts = std::vector<std::uint32_t>()](
               std::size_t first, std::size_t count, int low_bits) mutable {
      source.resize(count);
      Record* bucket = scratch + first;
      Record* sorted = records + first;
      const std::size_t digits = std::size_t{1} << low_bits;
      if (digits <= std::max(std::size_t{1} << kMaxDigitBits, 2 * count)) {
        counts.assign(digits, 0);
        const Record mask = digits - 1;
        for (std::size_t j = 0; j < count; ++j) ++counts[(bucket[j] >> first_bit) & mask];
        std::uint32_t sum = 0;
        for (std::uint32_t& c : counts) sum += std::exchange(c, sum);
        for (std::size_t j = 0; j < count; ++j) {
          const Record record = bucket[j];
          const std::uint32_t s = counts[(record >> first_bit) & mask]++;
          sorted[s] = record;
          source[s] = static_cast<std::uint32_t>(j);
        }
      } else {
        values.resize(count);
        for (std::size_t j = 0; j < count; ++j) {
          values[j] = static_cast<std::uint32_t>(bucket[j]);
          bucket[j] = (bucket[j] & kKeyBits) | j;
        }
        counts.resize(kBucketCounts);
        sort_bucket(bucket, sorted, count, first_bit, low_bits, counts.data());
        for (std::size_t s = 0; s < count; ++s) {
          const auto j = static_cast<std::uint32_t>(sorted[s]);
          source[s] = j;
          sorted[s] = (sorted[s] & kKeyBits) | values[j];
        }
      }
      finish(first, count, source.data());
    };
  };
  by_top_digit(records, scratch, n, first_bit, key_bits, top_bits, threads, carry_for, bucket_for);
}

}  // namespace radix_detail

/// Sorts `keys` ascending, permuting `values` alongside, looking only at the low `key_bits` bits
/// (higher bits must be zero). `scratch_keys`/`scratch_values` are resized as needed.
template <class KeyVector, class ValueVector>
void radix_sort_pairs(KeyVector& keys, ValueVector& values, int key_bits, int threads,
                      KeyVector& scratch_keys, ValueVector& scratch_values) {
  const std::size_t n = keys.size();
  sized_for_overwrite(scratch_keys, n);
  sized_for_overwrite(scratch_values, n);
  const int passes = radix_detail::sort_passes(keys.data(), scratch_keys.data(), values.data(),
                                               scratch_values.data(), n, 0, key_bits, threads);
  if (passes % 2 == 1) {
    keys.swap(scratch_keys);
    values.swap(scratch_values);
  }
}

/// Sorts packed records (key << 32 | value) by their keys, which must fit in `key_bits` <= 32
/// bits; records with equal keys keep their order. `scratch` is resized as needed.
template <class RecordVector>
void radix_sort_packed(RecordVector& records, int key_bits, int threads, RecordVector& scratch) {
  static_assert(sizeof(typename RecordVector::value_type) == 8, "packed records are 64-bit");
  sized_for_overwrite(scratch, records.size());
  if (radix_detail::top_digit_first_pays(records.size(), key_bits)) {
    radix_detail::sort_top_digit_first(records.data(), scratch.data(), records.size(), 32, key_bits,
                                       threads);
    return;
  }
  std::uint32_t* no_values = nullptr;
  const int passes = radix_detail::sort_passes(records.data(), scratch.data(), no_values, no_values,
                                               records.size(), 32, key_bits, threads);
  if (passes % 2 == 1) records.swap(scratch);
}

}  // namespace spatialhash::detail
