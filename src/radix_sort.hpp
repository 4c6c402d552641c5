// Parallel least-significant-digit radix sort of (key, value) pairs: the counting sort of the
// seeds (count, prefix sums, fill) applied digit by digit. Stable, O(n) per pass, no comparisons.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "growable_buffer.hpp"
#include "threads.hpp"

namespace spatialhash::detail {

/// Sorts `keys` ascending, permuting `values` alongside, looking only at the low `key_bits` bits
/// (higher bits must be zero). `scratch_keys`/`scratch_values` are resized as needed. The digits
/// are as even as the pass count allows (18 bits: two passes of 9, not 11 + 7): fewer buckets
/// scatter to fewer places at once.
template <class KeyVector, class ValueVector>
void radix_sort_pairs(KeyVector& keys, ValueVector& values, int key_bits, int threads,
                      KeyVector& scratch_keys, ValueVector& scratch_values) {
  constexpr int kMaxDigitBits = 11;
  const std::size_t n = keys.size();
  sized_for_overwrite(scratch_keys, n);
  sized_for_overwrite(scratch_values, n);
  const int passes = (std::max(key_bits, 1) + kMaxDigitBits - 1) / kMaxDigitBits;
  const int digit_bits = (std::max(key_bits, 1) + passes - 1) / passes;
  const std::size_t buckets = std::size_t{1} << digit_bits;
  threads = std::max(1, std::min<int>(threads, static_cast<int>(n / 65536) + 1));
  // histogram[t * buckets + b]: keys of thread t's slice with digit b; turned into write cursors.
  std::vector<std::size_t> histogram(static_cast<std::size_t>(threads) * buckets);
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = pass * digit_bits;
    std::fill(histogram.begin(), histogram.end(), std::size_t{0});
#pragma omp parallel num_threads(threads)
    {
      const auto t = static_cast<std::size_t>(thread_id());
      const std::size_t begin = n * t / threads, end = n * (t + 1) / threads;
      std::size_t* h = histogram.data() + t * buckets;
      for (std::size_t i = begin; i < end; ++i) ++h[(keys[i] >> shift) & (buckets - 1)];
#pragma omp barrier
#pragma omp single
      {
        std::size_t sum = 0;
        for (std::size_t b = 0; b < buckets; ++b) {
          for (int u = 0; u < threads; ++u) {
            const std::size_t c = histogram[u * buckets + b];
            histogram[u * buckets + b] = sum;
            sum += c;
          }
        }
      }
      // Plain pointers: the cursor increments (size_t) could otherwise alias 64-bit keys and
      // force a reload of every operand.
      const auto* in_keys = keys.data();
      const auto* in_values = values.data();
      auto* out_keys = scratch_keys.data();
      auto* out_values = scratch_values.data();
      const std::size_t mask = buckets - 1;
      for (std::size_t i = begin; i < end; ++i) {
        const auto key = in_keys[i];
        const std::size_t dst = h[(key >> shift) & mask]++;
        out_keys[dst] = key;
        out_values[dst] = in_values[i];
      }
    }
    keys.swap(scratch_keys);
    values.swap(scratch_values);
  }
}

}  // namespace spatialhash::detail
