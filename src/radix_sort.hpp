// Parallel least-significant-digit radix sort: the counting sort of the seeds (count, prefix sums,
// fill) applied digit by digit. Stable, O(n) per pass, no comparisons. Two forms share the
// passes: (key, value) pairs in two arrays, and packed 64-bit records whose high 32 bits are the
// key and low 32 bits the value (one array: two thirds of the bytes a pair moves, and half the
// write streams per pass, which is what keeps the scatter fast once the arrays outgrow the caches).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "growable_buffer.hpp"
#include "threads.hpp"

namespace spatialhash::detail {
namespace radix_detail {

/// The passes over `n` records: digit d of record i is bits [first_bit + d * digit_bits, ...) of
/// keys[i]; values (when not null) move with their keys. The digits are as even as the pass count
/// allows (18 bits: two passes of 9, not 11 + 7): fewer buckets scatter to fewer places at once.
/// Each pass moves the records from one array to the other; returns the number of passes (odd:
/// the result is in the scratch arrays).
template <class Key, class Value>
int sort_passes(Key* keys, Key* scratch_keys, Value* values, Value* scratch_values, std::size_t n,
                int first_bit, int key_bits, int threads) {
  constexpr int kMaxDigitBits = 11;
  const int passes = (std::max(key_bits, 1) + kMaxDigitBits - 1) / kMaxDigitBits;
  const int digit_bits = (std::max(key_bits, 1) + passes - 1) / passes;
  const std::size_t buckets = std::size_t{1} << digit_bits;
  // A thread per 8192 keys at most (two threads from 8192 keys instead of 65536 made the build
  // of 30k-60k points 10-12% faster; docs/benchmarks.md).
  threads = std::max(1, std::min<int>(threads, static_cast<int>(n / 8192) + 1));
  // histogram[t * buckets + b]: keys of thread t's slice with digit b; turned into write cursors.
  std::vector<std::size_t> histogram(static_cast<std::size_t>(threads) * buckets);
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = first_bit + pass * digit_bits;
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
      // Plain pointers (the cursor increments, size_t, could otherwise alias 64-bit keys and
      // force a reload of every operand), and one loop per form.
      const std::size_t mask = buckets - 1;
      if (values != nullptr) {
        for (std::size_t i = begin; i < end; ++i) {
          const Key key = keys[i];
          const std::size_t dst = h[(key >> shift) & mask]++;
          scratch_keys[dst] = key;
          scratch_values[dst] = values[i];
        }
      } else {
        for (std::size_t i = begin; i < end; ++i) {
          const Key key = keys[i];
          scratch_keys[h[(key >> shift) & mask]++] = key;
        }
      }
    }
    std::swap(keys, scratch_keys);
    std::swap(values, scratch_values);
  }
  return passes;
}

}  // namespace radix_detail

/// Sorts `keys` ascending, permuting `values` alongside, looking only at the low `key_bits` bits
/// (higher bits must be zero). `scratch_keys`/`scratch_values` are resized as needed.
template <class KeyVector, class ValueVector>
void radix_sort_pairs(KeyVector& keys, ValueVector& values, int key_bits, int threads,
                      KeyVector& scratch_keys, ValueVector& scratch_values) {
  const std::size_t n = keys.size();
  sized_for_overwrite(scratch_keys, n);
  sized_for_overwrite(scratch_values, n);
  const int passes = radix_detail::sort_passes(keys.data(), scratch_keys.data(), values.data(),
                                               scratch_values.data(), n, 0, key_bits, threads);
  if (passes % 2 == 1) {
    keys.swap(scratch_keys);
    values.swap(scratch_values);
  }
}

/// Sorts packed records (key << 32 | value) by their keys, which must fit in `key_bits` <= 32
/// bits; records with equal keys keep their order. `scratch` is resized as needed.
template <class RecordVector>
void radix_sort_packed(RecordVector& records, int key_bits, int threads, RecordVector& scratch) {
  static_assert(sizeof(typename RecordVector::value_type) == 8, "packed records are 64-bit");
  sized_for_overwrite(scratch, records.size());
  std::uint32_t* no_values = nullptr;
  const int passes = radix_detail::sort_passes(records.data(), scratch.data(), no_values, no_values,
                                               records.size(), 32, key_bits, threads);
  if (passes % 2 == 1) records.swap(scratch);
}

}  // namespace spatialhash::detail
