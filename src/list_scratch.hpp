// What a list search keeps in the NeighborLists it refills (ListScratch, types.hpp): the
// per-thread row buffers and the per-row work arrays of collect_rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "spatialhash/types.hpp"

#include "growable_buffer.hpp"
#include "index_vector.hpp"

namespace spatialhash::detail {

/// The memory behind a ListScratch, reused by the next collect_rows into the same lists.
struct ListScratchData {
  std::vector<GrowableBuffer<index_t>> buffers;  ///< one per thread of the last search
  WorkVector<std::uint32_t> row_length;          ///< per slot
  WorkVector<std::size_t> row_start;             ///< per slot

  std::size_t bytes() const {
    std::size_t total =
        row_length.capacity() * sizeof(std::uint32_t) + row_start.capacity() * sizeof(std::size_t);
    for (const auto& buffer : buffers) total += buffer.capacity() * sizeof(index_t);
    return total;
  }
};

/// The engine's side of ListScratch: takes its data out (empty data when there was none) and
/// puts data back.
struct ListScratchAccess {
  using Held = std::unique_ptr<ListScratchData, ListScratchDelete>;
  static Held take(ListScratch& scratch) {
    Held held = std::move(scratch.data_);
    if (!held) held.reset(new ListScratchData);
    return held;
  }
  static void put(ListScratch& scratch, Held held) { scratch.data_ = std::move(held); }
};

}  // namespace spatialhash::detail
