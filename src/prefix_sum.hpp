// Parallel inclusive prefix sum in place: each thread sums its slice, then, after one barrier,
// adds the totals of the slices before it. Two passes over the data, no locks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "threads.hpp"

namespace spatialhash::detail {

template <class Value>
void parallel_inclusive_scan(std::span<Value> values, int threads) {
  const std::size_t n = values.size();
  if (n < (std::size_t{1} << 16) || threads <= 1) {
    for (std::size_t i = 1; i < n; ++i) values[i] += values[i - 1];
    return;
  }
  std::vector<Value> slice_total(static_cast<std::size_t>(threads) + 1, Value{0});
  parallel_region(threads, [&] {
    // A slice per thread of the team, which may be smaller than asked for (team_size()).
    const auto team = static_cast<std::size_t>(team_size());
    const auto t = static_cast<std::size_t>(thread_id());
    const std::size_t begin = n * t / team, end = n * (t + 1) / team;
    for (std::size_t i = begin + 1; i < end; ++i) values[i] += values[i - 1];
    slice_total[t + 1] = end > begin ? values[end - 1] : Value{0};
#pragma omp barrier
    // Each thread sums the totals before its own slice (a few), rather than one thread scanning
    // them all behind a second barrier.
    Value offset{0};
    for (std::size_t u = 1; u <= t; ++u) offset += slice_total[u];
    for (std::size_t i = begin; i < end; ++i) values[i] += offset;
  });
}

}  // namespace spatialhash::detail
