// Mapped blocks: how spatialhash allocates its large arrays (the index's layout, the build's work
// arrays, result arrays, row buffers).
//
// Blocks of kMappedBlockBytes (2 MiB) or more are mapped by the library itself: 2 MiB-aligned,
// advised to transparent huge pages before anything touches them, and unmapped when freed. Why
// not glibc's heap: whether glibc hands a large request memory that is already backed or memory
// it must fault page by page depends on the process's history (its mmap and trim thresholds move
// with what was freed before), so the same build of 1M points took 16 ms in one process and 80 ms
// in another (docs/benchmarks.md, sixty-ninth session): a plain program that builds indexes in a
// loop has its heap's top trimmed after each index and faults the next one's arrays in 4 KiB
// pages again (9.7 us a fault on the Zen 5 VM of docs/benchmarks.md, sixtieth session). A mapped
// block costs the same in every process: one fault and one zeroing per 2 MiB page. Smaller
// blocks keep going through operator new.
//
// Length: whole 2 MiB pages where that adds at most an eighth to the request (a block's last huge
// page is then touched whole); otherwise the request rounded up to 4 KiB pages, so that a block
// of just over 2 MiB does not hold twice its size (its tail then faults in 4 KiB pages).
//
// Invariant: a block is released with the byte count it was mapped with (mapped_block_length of
// the same request), which std::vector's allocator protocol guarantees (deallocate(p, n) gets the
// n of allocate(n)). Linux only; elsewhere mapped_block_length() is 0 and nothing is mapped.
#pragma once

#include <cstddef>

namespace spatialhash::detail {

/// Requests of at least this many bytes (one huge page) are mapped blocks.
inline constexpr std::size_t kMappedBlockBytes = std::size_t{2} << 20;

/// The length of the mapped block that serves a request of `bytes` (whole 2 MiB pages, or 4 KiB
/// pages where whole huge pages would add more than an eighth), or 0 where the request is served
/// by operator new instead.
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
