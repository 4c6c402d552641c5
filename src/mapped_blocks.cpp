// Mapped blocks (spatialhash/mapped_blocks.hpp): 2 MiB-aligned anonymous mappings advised to huge
// pages.
#include "spatialhash/mapped_blocks.hpp"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace spatialhash::detail {

namespace {
constexpr std::size_t kHugePage = std::size_t{1} << 21;
constexpr std::size_t kSmallPage = std::size_t{1} << 12;
}  // namespace

std::size_t mapped_block_length(std::size_t bytes, std::size_t mapped_from,
                                bool whole_huge_pages) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MREMAP_MAYMOVE)
  if (bytes < mapped_from || bytes > SIZE_MAX - kHugePage) return 0;
  const std::size_t whole = (bytes + kHugePage - 1) & ~(kHugePage - 1);
  if (whole_huge_pages || whole - bytes <= bytes / 8) return whole;
  return (bytes + kSmallPage - 1) & ~(kSmallPage - 1);
#else
  (void)bytes;
  (void)mapped_from;
  (void)whole_huge_pages;
  return 0;
#endif
}

#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MREMAP_MAYMOVE)

void* map_block(std::size_t length) {
  // Mapped 2 MiB longer, then trimmed to the 2 MiB-aligned part: the kernel aligns only some
  // anonymous mappings.
  void* raw =
      mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = (base + kHugePage - 1) & ~(kHugePage - 1);
  if (start > base) munmap(raw, start - base);
  const std::uintptr_t end = base + length + kHugePage;
  if (end > start + length) munmap(reinterpret_cast<void*>(start + length), end - start - length);
  // Advice only: a kernel without huge pages serves the block in small pages.
  madvise(reinterpret_cast<void*>(start), length, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(start);
}

void* remap_block(void* block, std::size_t old_length, std::size_t length) {
  if (length <= old_length) return block;  // blocks never shrink (GrowableBuffer)
  // The old pages moved to the start of a new aligned block: huge pages move whole (no copy,
  // no split), and the rest of the new block is already advised.
  void* grown = map_block(length);
  if (mremap(block, old_length, old_length, MREMAP_MAYMOVE | MREMAP_FIXED, grown) == MAP_FAILED) {
    unmap_block(grown, length);
    throw std::bad_alloc();
  }
  return grown;
}

void unmap_block(void* block, std::size_t length) noexcept {
  munmap(block, length);
}

#else

void* map_block(std::size_t) {
  throw std::bad_alloc();
}
void* remap_block(void*, std::size_t, std::size_t) {
  throw std::bad_alloc();
}
void unmap_block(void*, std::size_t) noexcept {}

#endif

}  // namespace spatialhash::detail
