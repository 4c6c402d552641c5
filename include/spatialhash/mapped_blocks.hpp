// Mapped blocks: how spatialhash allocates its largest arrays (result arrays, row buffers).
//
// Blocks of kMappedBlockBytes or more are mapped by the library itself: 2 MiB-aligned, in whole
// 2 MiB pages, advised to transparent huge pages before anything touches them. glibc maps such
// blocks afresh on every allocation (they are above its largest mmap threshold, so it never
// reuses them), at an address that is not 2 MiB-aligned and with its chunk header written into
// the first page: the advice then cannot cover the block's first and last 2 MiB, whose 4 KiB
// pages fault one by one (about 500 faults each; 9.7 us a fault on the Zen 5 VM of
// docs/benchmarks.md, sixtieth session). Smaller blocks, which glibc reuses from its heap, keep
// going through operator new.
//
// Invariant: a block is released with the byte count it was mapped with (mapped_block_length of
// the same request), which std::vector's allocator protocol guarantees (deallocate(p, n) gets the
// n of allocate(n)). Linux only; elsewhere mapped_block_length() is 0 and nothing is mapped.
#pragma once

#include <cstddef>

namespace spatialhash::detail {

/// Requests of at least this many bytes are mapped blocks (glibc's largest mmap threshold).
inline constexpr std::size_t kMappedBlockBytes = std::size_t{32} << 20;

/// The length of the mapped block that serves a request of `bytes` (rounded up to whole 2 MiB
/// pages), or 0 where the request is served by operator new instead.
std::size_t mapped_block_length(std::size_t bytes) noexcept;
/// Maps a block of `length` bytes (a mapped_block_length()), 2 MiB-aligned and advised to huge
/// pages; throws std::bad_alloc when the system refuses.
void* map_block(std::size_t length);
/// Grows a mapped block to `length` bytes (a longer mapped_block_length()), keeping its contents
/// (pages are moved, not copied); returns the block, which may have moved. Throws std::bad_alloc
/// when the system refuses (the block is then unchanged).
void* remap_block(void* block, std::size_t old_length, std::size_t length);
/// Releases a block from map_block() or remap_block() with the length it has.
void unmap_block(void* block, std::size_t length) noexcept;

}  // namespace spatialhash::detail
