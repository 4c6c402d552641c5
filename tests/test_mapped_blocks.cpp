// Mapped blocks (spatialhash/mapped_blocks.hpp): result arrays (ResultVector) and row buffers
// (GrowableBuffer) of 32 MiB or more and an index's own arrays (IndexVector) of 2 MiB or more,
// which the library maps itself. Their lengths follow the header's rule, and their contents must
// behave as any vector's: every element written stays, across growth (by moving pages, or by
// copying out of a malloc block when a buffer first crosses the threshold), resize, move and
// release.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "../src/growable_buffer.hpp"
#include "../src/index_vector.hpp"
#include "spatialhash/types.hpp"

namespace {

using spatialhash::detail::GrowableBuffer;
using spatialhash::detail::kIndexMappedBlockBytes;
using spatialhash::detail::kMappedBlockBytes;
using spatialhash::detail::mapped_block_length;

constexpr std::size_t kHugePage = std::size_t{1} << 21;
constexpr std::size_t kSmallPage = std::size_t{1} << 12;

/// A value no two positions of one test share (not the position itself: a block that lost its
/// contents to fresh zero pages would still fail at position 0 only).
std::uint32_t pattern(std::size_t i) {
  return static_cast<std::uint32_t>(i * 2654435761u + 7u);
}

TEST(MappedBlocks, LengthsFromTheThresholds) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  EXPECT_EQ(kMappedBlockBytes, 32 * kMiB);
  EXPECT_EQ(kIndexMappedBlockBytes, kHugePage);
  EXPECT_EQ(mapped_block_length(kMappedBlockBytes - 1), 0u);
  EXPECT_EQ(mapped_block_length(4 * kMiB), 0u);  // a result under 32 MiB: operator new
  EXPECT_EQ(mapped_block_length(kIndexMappedBlockBytes - 1, kIndexMappedBlockBytes), 0u);
  EXPECT_EQ(mapped_block_length(1000, kIndexMappedBlockBytes), 0u);
#if defined(__linux__)
  const auto index_length = [](std::size_t bytes) {
    return mapped_block_length(bytes, kIndexMappedBlockBytes);
  };
  EXPECT_EQ(mapped_block_length(kMappedBlockBytes), kMappedBlockBytes);
  EXPECT_EQ(mapped_block_length(kMappedBlockBytes + 1), kMappedBlockBytes + kHugePage);
  EXPECT_EQ(index_length(2 * kMiB), 2 * kMiB);
  // Just over a huge page: whole pages would nearly double it, so 4 KiB pages.
  EXPECT_EQ(index_length(2 * kMiB + 1), 2 * kMiB + kSmallPage);
  EXPECT_EQ(index_length(3 * kMiB), 3 * kMiB);
  // Whole huge pages where they add at most an eighth.
  EXPECT_EQ(index_length(4 * kMiB - 100), 4 * kMiB);
  EXPECT_EQ(index_length(15 * kMiB + 1), 16 * kMiB);
  EXPECT_EQ(index_length(16 * kMiB + 1), 18 * kMiB);
  // The rule over a sweep of sizes: never shorter than the request, in whole 4 KiB pages, whole
  // huge pages exactly when they add at most an eighth, otherwise less than a 4 KiB page added;
  // from 32 MiB the same for results.
  for (std::size_t bytes = kIndexMappedBlockBytes; bytes < 40 * kMiB; bytes += 77777) {
    const std::size_t length = index_length(bytes);
    const std::size_t whole = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    ASSERT_GE(length, bytes) << bytes;
    ASSERT_EQ(length % kSmallPage, 0u) << bytes;
    if (whole - bytes <= bytes / 8) {
      ASSERT_EQ(length, whole) << bytes;
    } else {
      ASSERT_LT(length - bytes, kSmallPage) << bytes;
    }
    ASSERT_EQ(mapped_block_length(bytes), bytes < kMappedBlockBytes ? 0u : length) << bytes;
    // A query's work arrays (WorkVector): whole huge pages whatever they add.
    ASSERT_EQ(mapped_block_length(bytes, kIndexMappedBlockBytes, true), whole) << bytes;
  }
  EXPECT_EQ(mapped_block_length(2 * kMiB + 1, kIndexMappedBlockBytes, true), 4 * kMiB);
  EXPECT_EQ(mapped_block_length(kIndexMappedBlockBytes - 1, kIndexMappedBlockBytes, true), 0u);
#endif
}

TEST(MappedBlocks, ResultVectorKeepsItsElements) {
  const std::size_t n = kMappedBlockBytes / sizeof(std::uint32_t) + 12345;
  spatialhash::ResultVector<std::uint32_t> values;
  values.resize(n);
#if defined(__linux__)
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(values.data()) % kHugePage, 0u);
#endif
  for (std::size_t i = 0; i < n; ++i) values[i] = pattern(i);
  // Growth copies into a new block (std::vector), a move hands the block over.
  values.resize(2 * n);
  for (std::size_t i = n; i < 2 * n; ++i) values[i] = pattern(i);
  const spatialhash::ResultVector<std::uint32_t> moved = std::move(values);
  for (std::size_t i = 0; i < 2 * n; ++i) ASSERT_EQ(moved[i], pattern(i)) << "element " << i;
  // A copy of a mapped vector is another mapped block with the same elements.
  const spatialhash::ResultVector<std::uint32_t> copy = moved;
  for (std::size_t i = 0; i < 2 * n; i += 4099) ASSERT_EQ(copy[i], pattern(i)) << "copy " << i;
}

TEST(MappedBlocks, IndexVectorKeepsItsElements) {
  // Just over 2 MiB: a mapped block of 4 KiB pages past its first huge page.
  const std::size_t n = kIndexMappedBlockBytes / sizeof(std::uint32_t) + 12345;
  spatialhash::detail::IndexVector<std::uint32_t> values;
  values.resize(n);
#if defined(__linux__)
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(values.data()) % kHugePage, 0u);
#endif
  for (std::size_t i = 0; i < n; ++i) values[i] = pattern(i);
  values.resize(3 * n);  // into a block of whole huge pages
  for (std::size_t i = n; i < 3 * n; ++i) values[i] = pattern(i);
  spatialhash::detail::IndexVector<std::uint32_t> other;
  other.swap(values);
  for (std::size_t i = 0; i < 3 * n; ++i) ASSERT_EQ(other[i], pattern(i)) << "element " << i;
  other.resize(1000);     // a shrink keeps the block; the release unmaps it with its length
  other.shrink_to_fit();  // into operator new's memory
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(other[i], pattern(i)) << "element " << i;
}

TEST(MappedBlocks, GrowableBufferKeepsItsItemsAcrossTheThresholdAndWhenRemapped) {
  GrowableBuffer<std::uint32_t> buffer;
  const std::size_t step = 250'007;  // items per append: 1 MB, so the buffer starts in malloc
  std::size_t items = 0;
  for (int append = 0; append < 40; ++append) {  // 40 MB: malloc, then a mapped block, remapped
    std::uint32_t* to = buffer.reserve_more(step);
    for (std::size_t k = 0; k < step; ++k) to[k] = pattern(items + k);
    buffer.grow(step);
    items += step;
  }
  ASSERT_EQ(buffer.size(), items);
  ASSERT_GE(buffer.capacity(), items);
#if defined(__linux__)
  EXPECT_GE(buffer.capacity() * sizeof(std::uint32_t), kMappedBlockBytes);
#endif
  GrowableBuffer<std::uint32_t> moved = std::move(buffer);
  for (std::size_t i = 0; i < items; ++i) ASSERT_EQ(moved.data()[i], pattern(i)) << "item " << i;
}

}  // namespace
