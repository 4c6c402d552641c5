// Batching sinks: engines push results one at a time (inlined), the user's callback receives
// them in batches, so an indirect call is paid once per batch, not once per neighbor.
#pragma once

#include <array>
#include <cstddef>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

#include "spatialhash/function_ref.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash::detail {

template <class Item>
class BatchSink {
 public:
  static constexpr std::size_t kBatch = 256;
  /// `out` is referenced, not copied: it must be a named callable that outlives the sink.
  template <class F>
  explicit BatchSink(F& out) : out_(out) {}
  template <class F>
  requires(!std::is_lvalue_reference_v<F>) explicit BatchSink(F&& out) = delete;
  BatchSink(const BatchSink&) = delete;
  BatchSink& operator=(const BatchSink&) = delete;
  /// Delivers what is left. Call once when done (destructors must not call user code).
  void flush() {
    if (size_ > 0) out_(std::span<const Item>(buffer_.data(), size_));
    size_ = 0;
  }
  void push(const Item& item) {
    buffer_[size_++] = item;
    if (size_ == kBatch) flush();
  }
  /// push(Item{args...}), the item built in its slot. (A temporary pushed was written field by
  /// field on the stack and read back as a vector to be copied: a store-forwarding stall each,
  /// about 60% of the samples of the default engine's pairs callback.)
  template <class... Args>
  void emplace(Args&&... args) {
    // The slot's old item is written over without being destroyed.
    static_assert(std::is_trivially_destructible_v<Item>);
    ::new (static_cast<void*>(buffer_.data() + size_)) Item{std::forward<Args>(args)...};
    if (++size_ == kBatch) flush();
  }

 private:
  FunctionRef<void(std::span<const Item>)> out_;
  std::array<Item, kBatch> buffer_;
  std::size_t size_ = 0;
};

/// Receives pairs (first < second) with their squared distance.
using PairSink = BatchSink<PairHit>;
/// Receives single neighbors with their squared distance.
using HitSink = BatchSink<Hit>;

}  // namespace spatialhash::detail
