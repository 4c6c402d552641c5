// Mapped blocks: how spatialhash allocates its large arrays (the index's layout, its build's work
// arrays and its queries' from 2 MiB, result arrays and row buffers from 32 MiB).
//
// Such blocks are mapped by the library itself: 2 MiB-aligned, advised to transparent huge pages
// before anything touches them, and unmapped when freed. glibc maps requests of 32 MiB or more
// afresh every time, at an address that is not 2 MiB-aligned and with its chunk header written
// into the first page, so that the advice could not cover the block's first and last 2 MiB
// (about 500 faults of 4 KiB pages each; 9.7 us a fault on the Zen 5 VM of docs/benchmarks.md,
// sixtieth session). Below that, whether glibc hands a request memory it already backs or memory
// it faults page by page depends on the process's history (its mmap and trim thresholds move
// with what was freed before): a plain loop of 1M-point builds took 76-85 ms a build where the
// benchmark's process took 18 (docs/benchmarks.md, sixty-ninth session), because the index's
// arrays, freed together with it, were trimmed from the heap and faulted in again. The index's
// own arrays, and the work arrays its queries free before they return (the same trimming: 1M-point
// counts 39 against 21 ms in a plain program, eighty-sixth session), are therefore mapped from one
// huge page (kIndexMappedBlockBytes; IndexVector and WorkVector in src/index_vector.hpp): one
// fault and one zeroing per 2 MiB page in every process. Results below 32 MiB stay with glibc,
// which reuses them from call to call where a fresh mapping would zero them again (mapped from
// 2 MiB, W1's lists at 100k points took 1.3x as long).
//
// Length: whole 2 MiB pages where that adds at most an eighth to the request (a block's last huge
// page is then touched whole; a 4 MB point array at 1M points takes 4 MiB); otherwise the request
// rounded up to 4 KiB pages, so that a block of just over 2 MiB does not hold twice its size (its
// tail then faults in 4 KiB pages). A query's work arrays always take whole huge pages.
//
// Invariant: a block is released with the byte count it was mapped with (mapped_block_length of
// the same request), which std::vector's allocator protocol guarantees (deallocate(p, n) gets the
// n of allocate(n)). Linux only; elsewhere mapped_block_length() is 0 and nothing is mapped.
#pragma once

#include <cstddef>

namespace spatialhash::detail {

/// Result arrays and row buffers of at least this many bytes are mapped blocks (glibc's largest
/// mmap threshold: below it, a result freed and requested again within a call or the next one is
/// usually reused from the heap, which a fresh mapping would zero again).
inline constexpr std::size_t kMappedBlockBytes = std::size_t{32} << 20;
/// The index's own arrays (its layout, and its build's and update's work arrays) and its queries'
/// work arrays of at least this many bytes (one huge page) are mapped blocks (IndexVector,
/// WorkVector): they are what glibc's heap trims when an index is freed or a query returns.
inline constexpr std::size_t kIndexMappedBlockBytes = std::size_t{2} << 20;
static_assert(kIndexMappedBlockBytes <= kMappedBlockBytes);

/// The length of the mapped block that serves a request of `bytes` (whole 2 MiB pages, or, unless
/// `whole_huge_pages`, 4 KiB pages where whole huge pages would add more than an eighth), or 0
/// where the request, under `mapped_from` bytes (one huge page at least), is served by operator
/// new instead. A query's work arrays take whole huge pages: mapped afresh by every call, a tail
/// in 4 KiB pages would fault page by page every time (WorkVector).
std::size_t mapped_block_length(std::size_t bytes, std::size_t mapped_from = kMappedBlockBytes,
                                bool whole_huge_pages = false) noexcept;
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
