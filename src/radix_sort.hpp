// Parallel least-significant-digit radix sort of (key, value) pairs: the counting sort of the
// seeds (count, prefix sums, fill) applied digit by digit. Stable, O(n) per pass, no comparisons.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "threads.hpp"

namespace spatialhash::detail {

/// Sorts `keys` ascending, permuting `values` alongside, looking only at the low `key_bits` bits
/// (higher bits must be zero). `scratch_keys`/`scratch_values` are resized as needed.
inline void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values,
                             int key_bits, int threads, std::vector<std::uint64_t>& scratch_keys,
                             std::vector<std::uint32_t>& scratch_values) {
  constexpr int kDigitBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
  const std::size_t n = keys.size();
  scratch_keys.resize(n);
  scratch_values.resize(n);
  const int passes = (std::max(key_bits, 1) + kDigitBits - 1) / kDigitBits;
  threads = std::max(1, std::min<int>(threads, static_cast<int>(n / 65536) + 1));
  // histogram[t * kBuckets + b]: keys of thread t's slice with digit b; turned into write cursors.
  std::vector<std::size_t> histogram(static_cast<std::size_t>(threads) * kBuckets);
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = pass * kDigitBits;
    std::fill(histogram.begin(), histogram.end(), std::size_t{0});
#pragma omp parallel num_threads(threads)
    {
      const auto t = static_cast<std::size_t>(thread_id());
      const std::size_t begin = n * t / threads, end = n * (t + 1) / threads;
      std::size_t* h = histogram.data() + t * kBuckets;
      for (std::size_t i = begin; i < end; ++i) ++h[(keys[i] >> shift) & (kBuckets - 1)];
#pragma omp barrier
#pragma omp single
      {
        std::size_t sum = 0;
        for (std::size_t b = 0; b < kBuckets; ++b) {
          for (int u = 0; u < threads; ++u) {
            const std::size_t c = histogram[u * kBuckets + b];
            histogram[u * kBuckets + b] = sum;
            sum += c;
          }
        }
      }
      for (std::size_t i = begin; i < end; ++i) {
        const std::size_t dst = h[(keys[i] >> shift) & (kBuckets - 1)]++;
        scratch_keys[dst] = keys[i];
        scratch_values[dst] = values[i];
      }
    }
    keys.swap(scratch_keys);
    values.swap(scratch_values);
  }
}

}  // namespace spatialhash::detail
