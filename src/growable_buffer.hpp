// GrowableBuffer: an append-only array of trivially copyable items for search results.
//
// Unlike std::vector it never value-initializes (the filters overwrite every slot they report).
// Small buffers grow with realloc; buffers of 32 MiB or more are mapped blocks
// (spatialhash/mapped_blocks.hpp: 2 MiB-aligned, in whole huge pages, advised before their first
// touch) and grow by moving their pages into a larger block, never by copying them. Invariant:
// data() holds size() valid items and capacity() >= size() slots.
//
// Huge pages: the final result arrays are advised to use transparent huge pages
// (sized_for_overwrite), so filling hundreds of megabytes costs a few hundred page faults instead
// of tens of thousands (page faults and page zeroing were a fifth of a neighbor-list search, perf,
// 1M points). Small growable buffers are not: advising buffers that then grow by realloc made the
// kernel zero pages over and over (clustered 1M points: 2.5x slower lists, clear_page 57% of the
// profile), measured with spatialhash_bench on W1 and W3. A buffer may still start in huge pages
// when its first reservation is sized well (cell_list's neighbor lists reserve an estimated share
// up front: W1 1M points, 2 threads, 135 -> 110 ms), as long as it is never grown after advising.
// Mapped blocks avoid that: each growth maps a new advised block and moves the pages into it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "spatialhash/mapped_blocks.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace spatialhash::detail {

/// Advises the kernel to back [data, data + bytes) with huge pages where it can (Linux; a no-op
/// elsewhere and for small ranges). Only whole 2 MiB pages inside the range are advised.
inline void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
  if (bytes < 2 * kHuge) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

/// Gives the whole pages of `values`' storage past its size back to the system (Linux; a no-op
/// elsewhere): the vector keeps its capacity, and a page written again later comes back zeroed,
/// which a vector never reads before it writes.
template <class Vector>
void release_pages_past_end(Vector& values) {
#if defined(__linux__) && defined(MADV_DONTNEED)
  constexpr std::uintptr_t kPage = 4096;
  const auto begin =
      (reinterpret_cast<std::uintptr_t>(values.data() + values.size()) + kPage - 1) & ~(kPage - 1);
  const auto end =
      reinterpret_cast<std::uintptr_t>(values.data() + values.capacity()) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
#else
  (void)values;
#endif
}

/// Resizes `values` to `size` for a caller that overwrites every element: the storage is advised
/// to use huge pages before std::vector touches it with its (unavoidable) value-initialization.
template <class Vector>
void sized_for_overwrite(Vector& values, std::size_t size) {
  if (size > values.capacity()) {
    Vector fresh;
    fresh.reserve(size);
    advise_huge_pages(fresh.data(), size * sizeof(typename Vector::value_type));
    values = std::move(fresh);
  }
  values.resize(size);
}

template <class Item>
class GrowableBuffer {
  static_assert(std::is_trivially_copyable_v<Item>, "GrowableBuffer moves items with realloc");

 public:
  /// Room for `extra` more items after size(); returns where they go. Existing items stay.
  Item* reserve_more(std::size_t extra) {
    if (size_ + extra > capacity_) reallocate(std::max(2 * capacity_, size_ + extra));
    return data() + size_;
  }
  /// Marks `added` items after size() as written.
  void grow(std::size_t added) { size_ += added; }
  Item* data() { return storage_.get(); }
  const Item* data() const { return storage_.get(); }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  void clear() { size_ = 0; }
  /// Keeps the first `size` items (size <= size()).
  void truncate(std::size_t size) { size_ = size; }

 private:
  /// Frees a block from malloc/realloc, or unmaps a mapped block of `mapped` bytes.
  struct Release {
    std::size_t mapped = 0;
    void operator()(Item* p) const {
      if (mapped != 0) {
        unmap_block(p, mapped);
      } else {
        std::free(p);
      }
    }
  };

  // Blocks of kMappedBlockBytes or more are mapped blocks (spatialhash/mapped_blocks.hpp),
  // grown by moving their pages; smaller ones come from malloc and grow by realloc. A buffer
  // never shrinks, so a mapped block stays one.
  void reallocate(std::size_t capacity) {
    if (capacity > SIZE_MAX / sizeof(Item)) throw std::bad_alloc();
    const std::size_t length = mapped_block_length(capacity * sizeof(Item));
    std::size_t& mapped = storage_.get_deleter().mapped;
    if (length == 0) {
      void* moved = std::realloc(storage_.get(), capacity * sizeof(Item));
      if (moved == nullptr) throw std::bad_alloc();
      (void)storage_.release();  // realloc took ownership of the old block
      storage_.reset(static_cast<Item*>(moved));
      capacity_ = capacity;
      return;
    }
    void* block = nullptr;
    if (mapped != 0) {
      block = remap_block(storage_.get(), mapped, length);
      (void)storage_.release();  // remap_block took the old block
    } else {
      block = map_block(length);
      if (size_ > 0) std::memcpy(block, storage_.get(), size_ * sizeof(Item));
      storage_.reset();  // frees the malloc block (mapped is still 0)
    }
    storage_.reset(static_cast<Item*>(block));
    mapped = length;
    capacity_ = length / sizeof(Item);
  }

  std::unique_ptr<Item, Release> storage_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace spatialhash::detail
