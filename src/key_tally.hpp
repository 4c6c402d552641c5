// KeyTally: how many times each 64-bit key was added, for samples of a few thousand keys.
//
// Open addressing with linear probing in a table of at least twice the expected keys (load <= 1/2
// while the caller stays within `expected`; more keys still work, the table just gets fuller until
// add() refuses). O(1) per key: it replaces sorting a sample to find its runs of equal keys (the
// slab decision of cell_list sorted 2048 cells and 2048 picks per build: 0.25 ms, more than the
// whole build of 10k points; docs/benchmarks.md).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace spatialhash::detail {

class KeyTally {
 public:
  /// Room for `expected` distinct keys at load <= 1/2.
  explicit KeyTally(std::size_t expected)
      : slots_(std::bit_ceil(std::max<std::size_t>(2 * expected, 16))) {}

  /// Adds `key` (any value except kEmpty) and returns how many times it was added before.
  std::uint32_t add(std::uint64_t key) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t s = static_cast<std::size_t>(mix(key)) & mask;
    for (std::size_t probes = 0; probes <= mask; ++probes, s = (s + 1) & mask) {
      Slot& slot = slots_[s];
      if (slot.key == key) return slot.count++;
      if (slot.key == kEmpty) {
        slot = Slot{key, 1};
        return 0;
      }
    }
    throw std::length_error("KeyTally: more distinct keys than slots");
  }

  /// How many times `key` was added (0 if never).
  std::uint32_t count(std::uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t s = static_cast<std::size_t>(mix(key)) & mask;
    for (std::size_t probes = 0; probes <= mask; ++probes, s = (s + 1) & mask) {
      const Slot& slot = slots_[s];
      if (slot.key == key) return slot.count;
      if (slot.key == kEmpty) return 0;
    }
    return 0;
  }

  /// The one value that is not a key.
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  /// A 64-bit mix (splitmix64's finalizer): nearby keys land in unrelated slots.
  static std::uint64_t mix(std::uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }

 private:
  struct Slot {
    std::uint64_t key = kEmpty;
    std::uint32_t count = 0;
  };
  std::vector<Slot> slots_;
};

}  // namespace spatialhash::detail
