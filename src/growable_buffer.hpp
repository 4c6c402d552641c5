// GrowableBuffer: an append-only array of trivially copyable items for search results.
//
// Unlike std::vector it never value-initializes (the filters overwrite every slot they report),
// and it grows with realloc, which for large blocks moves pages instead of copying them (mremap
// on Linux). Invariant: data() holds size() valid items and capacity() >= size() slots.
//
// Huge pages: the final result arrays are advised to use transparent huge pages
// (sized_for_overwrite), so filling hundreds of megabytes costs a few hundred page faults instead
// of tens of thousands (page faults and page zeroing were a fifth of a neighbor-list search, perf,
// 1M points). The growable buffers are not: advising buffers that then grow by realloc made the
// kernel zero pages over and over (clustered 1M points: 2.5x slower lists, clear_page 57% of the
// profile), measured with spatialhash_bench on W1 and W3. A buffer may still start in huge pages
// when its first reservation is sized well (cell_list's neighbor lists reserve an estimated share
// up front: W1 1M points, 2 threads, 135 -> 110 ms), as long as it is never grown after advising.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

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

 private:
  struct Free {
    void operator()(Item* p) const { std::free(p); }
  };

  void reallocate(std::size_t capacity) {
    void* moved = std::realloc(storage_.get(), capacity * sizeof(Item));
    if (moved == nullptr) throw std::bad_alloc();
    (void)storage_.release();  // realloc took ownership of the old block
    storage_.reset(static_cast<Item*>(moved));
    capacity_ = capacity;
  }

  std::unique_ptr<Item, Free> storage_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace spatialhash::detail
