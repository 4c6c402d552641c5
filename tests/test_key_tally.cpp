// KeyTally (src/key_tally.hpp) against std::map: random keys with many repeats, consecutive keys
// (which a weak hash would crowd into neighbouring slots), zero and the largest key allowed, and a
// table filled to its last slot, then one key too many.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "../src/key_tally.hpp"

namespace {

using spatialhash::detail::KeyTally;

/// Adds `keys` in turn, checking each add() against the count a std::map kept.
void check_against_map(const std::vector<std::uint64_t>& keys, std::size_t expected) {
  KeyTally tally(expected);
  std::map<std::uint64_t, std::uint32_t> oracle;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(tally.add(keys[i]), oracle[keys[i]]++) << "key " << keys[i] << " at " << i;
  }
}

TEST(KeyTally, CountsRepeatedRandomKeys) {
  std::mt19937_64 rng(11);
  for (const std::uint64_t distinct : {1u, 7u, 300u, 2048u}) {
    SCOPED_TRACE(::testing::Message() << distinct << " distinct keys");
    std::vector<std::uint64_t> pool(distinct);
    for (auto& key : pool) key = rng() >> (rng() % 64);  // small keys and large ones
    std::vector<std::uint64_t> keys(4096);
    for (auto& key : keys) key = pool[rng() % distinct];
    check_against_map(keys, distinct);
  }
}

TEST(KeyTally, CountsConsecutiveAndExtremeKeys) {
  std::vector<std::uint64_t> keys;
  for (std::uint64_t round = 0; round < 3; ++round) {
    for (std::uint64_t key = 0; key < 1000; ++key) keys.push_back(key);
    keys.push_back(KeyTally::kEmpty - 1);
  }
  check_against_map(keys, 1001);
}

TEST(KeyTally, FillsEverySlotThenRefusesOneKeyMore) {
  KeyTally tally(8);  // 16 slots
  for (std::uint64_t key = 0; key < 16; ++key) ASSERT_EQ(tally.add(key * 1000003), 0u);
  for (std::uint64_t key = 0; key < 16; ++key) ASSERT_EQ(tally.add(key * 1000003), 1u);
  EXPECT_THROW(tally.add(17 * 1000003), std::length_error);
}

}  // namespace
