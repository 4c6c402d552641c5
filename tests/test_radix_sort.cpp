// The build's radix sort (src/radix_sort.hpp), both forms, against std::stable_sort: key widths
// from 1 to 63 bits (one to six passes), empty and one-element inputs, one and two threads.
// Packed records sort top digit first where that pays (from 65536 records with two digits or
// more, top_digit_first_pays: here 100003 records of 12 bits) and LSD otherwise, in one counting
// pass where the keys are narrow against the records (kOnePassMaxBits: 20011 records of 12 and 13
// bits, not 14); the top-digit-first sort is also tested on its own, and in the form that carries
// each record's data. Every input comes in random order and in runs of equal keys (points in
// spatial order), which the passes take in lanes (LanedPass).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <tuple>
#include <vector>

#include "../src/radix_sort.hpp"
#include "spatialhash/types.hpp"

namespace {

using spatialhash::ResultVector;

std::vector<std::uint64_t> random_keys(std::size_t n, int bits, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  std::vector<std::uint64_t> keys(n);
  // Few distinct values as well as many, so that stability is tested on long runs of equal keys.
  for (auto& key : keys) key = (rng() & mask) >> (rng() % 2 == 0 ? 0 : bits / 2);
  return keys;
}

/// random_keys' values in runs of 1 to 16 equal keys, as points in spatial order come cell by
/// cell: most neighbouring records share every digit, so the passes take them in lanes.
std::vector<std::uint64_t> keys_in_runs(std::size_t n, int bits, std::uint64_t seed) {
  const std::vector<std::uint64_t> values = random_keys(n, bits, seed);
  std::mt19937_64 rng(seed + 1);
  std::vector<std::uint64_t> keys;
  keys.reserve(n);
  for (std::size_t v = 0; keys.size() < n; ++v) {
    keys.insert(keys.end(), std::min<std::size_t>(1 + rng() % 16, n - keys.size()), values[v]);
  }
  return keys;
}

/// Keys of `bits` bits in random order, or in runs.
std::vector<std::uint64_t> test_keys(bool in_runs, std::size_t n, int bits, std::uint64_t seed) {
  return in_runs ? keys_in_runs(n, bits, seed) : random_keys(n, bits, seed);
}

/// The stable order of `keys`: the index of the record at each sorted position.
std::vector<std::uint32_t> stable_order(const std::vector<std::uint64_t>& keys) {
  std::vector<std::uint32_t> order(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  return order;
}

/// Calls check(input, threads, bits) on keys of each of `widths` bits, in random order and in
/// runs, on 0 to 100003 records and 1 to 3 threads (3: a thread whose write cursors follow one
/// thread's lanes and precede another's), under a trace that names the case.
template <class Check>
void for_each_input(std::initializer_list<int> widths, std::uint64_t seed, Check check) {
  for (const bool in_runs : {false, true}) {
    for (int threads : {1, 2, 3}) {
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5003}, std::size_t{20011},
                            std::size_t{100003}}) {
        for (int bits : widths) {
          SCOPED_TRACE(::testing::Message() << (in_runs ? "runs, " : "random, ") << threads
                                            << " threads, n " << n << ", " << bits);
          check(test_keys(in_runs, n, bits, seed + n + static_cast<std::uint64_t>(bits)), threads,
                bits);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

/// Packed records (key << 32 | index) sorted by sort(records, scratch, bits, threads), against a
/// stable sort, on every input of for_each_input.
template <class Sort>
void check_packed_sort(std::initializer_list<int> widths, std::uint64_t seed, Sort sort) {
  for_each_input(widths, seed, [&](const std::vector<std::uint64_t>& input, int threads, int bits) {
    const std::size_t n = input.size();
    ResultVector<std::uint64_t> records(n), scratch;
    for (std::size_t i = 0; i < n; ++i) records[i] = input[i] << 32 | i;
    sort(records, scratch, bits, threads);
    const std::vector<std::uint32_t> expected = stable_order(input);
    for (std::size_t s = 0; s < n; ++s) {
      ASSERT_EQ(records[s], input[expected[s]] << 32 | expected[s]) << "position " << s;
    }
  });
}

TEST(RadixSort, PairsMatchAStableSort) {
  for_each_input({1, 9, 12, 13, 14, 18, 21, 33, 40, 63}, 7,
                 [](const std::vector<std::uint64_t>& input, int threads, int bits) {
                   const std::size_t n = input.size();
                   ResultVector<std::uint64_t> keys(input.begin(), input.end()), scratch_keys;
                   ResultVector<std::uint32_t> values(n), scratch_values;
                   for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<std::uint32_t>(i);
                   spatialhash::detail::radix_sort_pairs(keys, values, bits, threads, scratch_keys,
                                                         scratch_values);
                   const std::vector<std::uint32_t> expected = stable_order(input);
                   for (std::size_t s = 0; s < n; ++s) {
                     ASSERT_EQ(values[s], expected[s]) << "position " << s;
                     ASSERT_EQ(keys[s], input[expected[s]]) << "position " << s;
                   }
                 });
}

// Records in runs of equal keys take four lanes where a thread's records are at least four
// times a lane's counts, two from twice, one below; in random order two (where the pass may) from
// eight times, else one (lanes_for_pass). The tests above sort both orders at every size.
TEST(RadixSort, LanesWhereNeighbouringRecordsShareTheDigit) {
  namespace radix = spatialhash::detail::radix_detail;
  const auto lanes = [](const std::vector<std::uint64_t>& keys, std::size_t per_thread,
                        std::size_t random_lanes) {
    return radix::lanes_for_pass(keys.data(), keys.size(), 0, 511, per_thread, 8, random_lanes);
  };
  const auto runs = keys_in_runs(100003, 18, 5);
  const auto random = random_keys(100003, 18, 5);
  EXPECT_EQ(lanes(runs, 100003, 1), 4u);
  EXPECT_EQ(lanes(runs, 2048, 2), 4u);
  EXPECT_EQ(lanes(runs, 2047, 2), 2u);
  EXPECT_EQ(lanes(runs, 1024, 2), 2u);
  EXPECT_EQ(lanes(runs, 1023, 2), 1u);
  EXPECT_EQ(lanes(random, 100003, 2), 2u);
  EXPECT_EQ(lanes(random, 100003, 1), 1u);
  EXPECT_EQ(lanes(random, 4096, 2), 2u);
  EXPECT_EQ(lanes(random, 4095, 2), 1u);
  EXPECT_EQ(radix::lanes_for_pass(runs.data(), 1, 0, 511, 4096, 8, 2), 1u);
  // No sample asked for: one run of pairs all the same.
  EXPECT_EQ(radix::lanes_for_pass(runs.data(), runs.size(), 0, 511, 100003, 0, 2), 4u);
}

// The sizes above reach the one counting pass (20011 records of 12 and 13 bits) and miss it on
// either side (14 bits; 5003 records of 12 bits), as sort_passes reports.
TEST(RadixSort, NarrowKeysAmongManyRecordsSortInOnePass) {
  namespace radix = spatialhash::detail::radix_detail;
  for (const auto& [n, bits, passes] : {std::tuple{20011, 12, 1}, std::tuple{20011, 13, 1},
                                        std::tuple{20011, 14, 2}, std::tuple{5003, 12, 2}}) {
    const auto input = random_keys(static_cast<std::size_t>(n), bits, 3);
    std::vector<std::uint64_t> records(input), scratch(input.size());
    std::uint32_t* no_values = nullptr;
    EXPECT_EQ(radix::sort_passes(records.data(), scratch.data(), no_values, no_values,
                                 records.size(), 0, bits, 2),
              passes)
        << n << " records, " << bits << " bits";
    const std::vector<std::uint64_t>& sorted = passes % 2 == 1 ? scratch : records;
    EXPECT_TRUE(std::is_sorted(sorted.begin(), sorted.end())) << n << " records, " << bits;
  }
}

TEST(RadixSort, PackedRecordsMatchAStableSort) {
  check_packed_sort({1, 9, 12, 13, 14, 18, 21, 27, 32}, 11,
                    [](auto& records, auto& scratch, int bits, int threads) {
                      spatialhash::detail::radix_sort_packed(records, bits, threads, scratch);
                    });
}

// The top-digit-first sort itself, whatever radix_sort_packed would choose for these sizes
// (top_digit_first_pays): random keys make buckets of a few dozen records (insertion) or of
// hundreds (passes in the bucket, one or two of them, then copied back), keys of half their width
// one bucket of half the records, and 9 bits or fewer a top digit with nothing below it.
TEST(RadixSort, TopDigitFirstMatchesAStableSort) {
  check_packed_sort({2, 9, 12, 18, 21, 27, 32}, 13,
                    [](auto& records, auto& scratch, int bits, int threads) {
                      scratch.resize(records.size());
                      spatialhash::detail::radix_detail::sort_top_digit_first(
                          records.data(), scratch.data(), records.size(), 32, bits, threads);
                    });
}

// The carrying form: each record's data (here a value derived from its index) is carried by the
// top-digit pass, then every bucket handed to the finish exactly once; the finish moves each
// sorted position's data from the bucket position its source names, which must give the stable
// sort's records and the data of each. The widths take both ways of sorting a bucket: one
// counting pass (digits below the top one few against the bucket: 9, 12, 18 bits) and passes on
// records that stand for their bucket positions (21, 27, 32 bits over 100003 keys).
TEST(RadixSort, TopDigitFirstCarryingMatchesAStableSort) {
  const auto data_of = [](std::size_t i) { return i * 2654435761u + 17; };
  check_packed_sort(
      {2, 9, 12, 18, 21, 27, 32}, 19, [&](auto& records, auto& scratch, int bits, int threads) {
        const std::size_t n = records.size();
        scratch.resize(n);
        std::vector<std::uint64_t> carried(n), finished(n);
        std::vector<int> handed(n, 0);
        const auto carry_for = [&](int) {
          return [&](std::size_t i, std::size_t dst) { carried[dst] = data_of(i); };
        };
        const auto finish_for = [&](int) {
          return [&](std::size_t first, std::size_t count, const std::uint32_t* source) {
            for (std::size_t s = first; s < first + count; ++s) {
              const std::uint32_t j = source[s - first];
              ASSERT_LT(j, count);
              finished[s] = carried[first + j];
              ++handed[s];
            }
          };
        };
        spatialhash::detail::radix_detail::sort_top_digit_first_carrying(
            records.data(), scratch.data(), n, 32, bits, threads, carry_for, finish_for);
        for (std::size_t s = 0; s < n; ++s) {
          ASSERT_EQ(handed[s], 1) << "position " << s;
          ASSERT_EQ(finished[s], data_of(static_cast<std::uint32_t>(records[s])))
              << "position " << s;
        }
      });
}

}  // namespace
