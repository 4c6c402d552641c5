// Fixed-size copies of short runs of 32-bit items (rows of neighbor ids, stencil ranges): a few
// vector moves each instead of a call to memmove, which cost more than the copy for runs of a
// few dozen items. Used by cell_list's gather and its neighbor-list rows; copy_streaming places
// rows in the caller's CSR arrays with non-temporal stores for their whole lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/// Copies exactly `count` items like copy_exact, but the whole 64-byte lines of `target` with
/// non-temporal stores where the processor has them (SSE2): lines that no cache holds are then
/// written without first being read. Only runs of four lines or more: shorter ones gained nothing
/// (bench/row_placement.cpp, rows placed into a fresh 1M-row output on 2 threads: 1.20x as fast
/// for 131 ids per row, 1.08x for 60, 1.01x for 28). Call streaming_done() before other threads
/// read what this wrote.
template <class Item>
inline void copy_streaming(Item* target, const Item* source, std::size_t count) {
#if defined(__SSE2__)
  static_assert(64 % sizeof(Item) == 0);
  constexpr std::size_t kLine = 64 / sizeof(Item);
  const auto address = reinterpret_cast<std::uintptr_t>(target);
  if (count >= 4 * kLine) {
    const std::size_t head = (64 - address % 64) % 64 / sizeof(Item);
    copy_exact(target, source, head);
    std::size_t j = head;
    for (; j + kLine <= count; j += kLine) {
      auto* line = reinterpret_cast<__m128i*>(target + j);
      const auto* from = reinterpret_cast<const __m128i*>(source + j);
      _mm_stream_si128(line, _mm_loadu_si128(from));
      _mm_stream_si128(line + 1, _mm_loadu_si128(from + 1));
      _mm_stream_si128(line + 2, _mm_loadu_si128(from + 2));
      _mm_stream_si128(line + 3, _mm_loadu_si128(from + 3));
    }
    copy_exact(target + j, source + j, count - j);
    return;
  }
#endif
  copy_exact(target, source, count);
}

/// Orders this thread's non-temporal stores (copy_streaming) before what it does next.
inline void streaming_done() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace spatialhash::detail
