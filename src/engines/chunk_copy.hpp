// Fixed-size copies of short runs of 32-bit items (rows of neighbor ids, stencil ranges): a few
// vector moves each instead of a call to memmove, which cost more than the copy for runs of a
// few dozen items. Used by cell_list's gather and its neighbor-list rows.
#pragma once

#include <cstddef>
#include <cstring>

#include "../simd/block_filter.hpp"

namespace spatialhash::detail {

/// Items per chunk of copy_in_chunks: one 64-byte line of 32-bit items.
inline constexpr std::size_t kCopyChunk = 16;
static_assert(kCopyChunk <= kFilterSlack, "rows and gathered stencils have kFilterSlack spare");

/// Copies `count` items in whole chunks of kCopyChunk, fixed-size copies the compiler turns into
/// a few vector moves (a call to memmove per short run cost more than the copy). Up to
/// kCopyChunk - 1 items past `count` are read from `source` and written to `target`: both must
/// have that room.
template <class Item>
inline void copy_in_chunks(Item* target, const Item* source, std::size_t count) {
  for (std::size_t j = 0; j < count; j += kCopyChunk) {
    std::memcpy(target + j, source + j, kCopyChunk * sizeof(Item));
  }
}

/// Copies exactly `count` items with fixed-size copies: whole chunks, then one chunk ending at
/// `count` that overlaps the last (the same items written twice); shorter runs by halves.
template <class Item>
inline void copy_exact(Item* target, const Item* source, std::size_t count) {
  constexpr std::size_t kHalf = kCopyChunk / 2;
  if (count >= kCopyChunk) {
    for (std::size_t j = 0; j + kCopyChunk <= count; j += kCopyChunk) {
      std::memcpy(target + j, source + j, kCopyChunk * sizeof(Item));
    }
    std::memcpy(target + count - kCopyChunk, source + count - kCopyChunk,
                kCopyChunk * sizeof(Item));
  } else if (count >= kHalf) {
    std::memcpy(target, source, kHalf * sizeof(Item));
    std::memcpy(target + count - kHalf, source + count - kHalf, kHalf * sizeof(Item));
  } else {
    for (std::size_t j = 0; j < count; ++j) target[j] = source[j];
  }
}

}  // namespace spatialhash::detail
