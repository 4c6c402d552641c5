// Operation names and result digests.
#include "measure.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>

#include "rng.hpp"

namespace bench {

namespace {

std::uint64_t entry_hash(std::uint64_t a, std::uint64_t b) {
  return mix64((a << 32) | b);
}

/// The digest of n rows of neighbor lists, row(i) giving point i's neighbors as a span.
template <class RowOf>
Digest digest_of_rows(std::size_t n, RowOf row) {
  Digest d;
  d.per_item.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::span<const spatialhash::index_t> neighbors = row(i);
    d.per_item[i] = static_cast<std::uint32_t>(neighbors.size());
    d.total += neighbors.size();
    for (const spatialhash::index_t j : neighbors) d.fingerprint += entry_hash(i, j);
  }
  return d;
}

}  // namespace

void warm_up_threads(int threads) {
  int started = 0;
#pragma omp parallel num_threads(threads) reduction(+ : started)
  started += 1;
  (void)started;
}

void warm_up_memory(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  if (bytes < kPage) return;
  // In huge pages, as the engines' large arrays are: warmed in 4 KiB pages, the memory left the
  // first repetition's huge pages cold (W3, 1M points, 1 thread, first of the repetitions: 2566
  // and 1678 ms against 524 and 718 ms warmed in huge pages; the others about 420 ms).
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return;  // best effort: a machine short of memory skips it
#if defined(MADV_HUGEPAGE)
  madvise(mapped, bytes, MADV_HUGEPAGE);
#endif
  auto* block = static_cast<volatile unsigned char*>(mapped);
  for (std::size_t at = 0; at < bytes; at += kPage) block[at] = 1;
  munmap(mapped, bytes);
}

CpuTime process_cpu_time() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) * 1e-3;
  };
  return {ms(usage.ru_utime), ms(usage.ru_stime)};
}

std::size_t warm_memory_bytes(std::size_t points) {
  return std::clamp<std::size_t>(points * 1200, std::size_t{64} << 20, std::size_t{3} << 30);
}

std::string_view op_name(Op op) {
  switch (op) {
    case Op::build:
      return "build";
    case Op::rebuild_lists:
      return "rebuild+lists";
    case Op::step_lists:
      return "step+lists";
    case Op::rebuild_rows:
      return "rebuild+rows";
    case Op::step_rows:
      return "step+rows";
    case Op::pairs:
      return "pairs";
    case Op::counts:
      return "counts";
    case Op::ball:
      return "ball";
    case Op::ball_rows:
      return "ball+rows";
    case Op::ball_each:
      return "ball each";
  }
  return "?";
}

std::string_view op_key(Op op) {
  if (op == Op::rebuild_lists) return "rebuild_lists";
  if (op == Op::step_lists) return "step_lists";
  if (op == Op::rebuild_rows) return "rebuild_rows";
  if (op == Op::step_rows) return "step_rows";
  if (op == Op::ball_rows) return "ball_rows";
  if (op == Op::ball_each) return "ball_each";
  return op_name(op);
}

Op parse_op(std::string_view key) {
  for (const Op op : kAllOps) {
    if (key == op_key(op) || key == op_name(op)) return op;
  }
  if (key == "lists") return Op::rebuild_lists;
  throw std::invalid_argument("unknown operation '" + std::string(key) +
                              "' (valid: build, rebuild_lists, step_lists, rebuild_rows, "
                              "step_rows, pairs, counts, ball, ball_rows, ball_each)");
}

Digest digest_lists(const spatialhash::NeighborLists& lists) {
  return digest_of_rows(lists.size(), [&](std::size_t i) {
    return std::span<const spatialhash::index_t>(lists.indices.data() + lists.offsets[i],
                                                 lists.count(i));
  });
}

Digest digest_rows(const spatialhash::NeighborRows& rows) {
  return digest_of_rows(rows.size(), [&](std::size_t i) { return rows.row(i); });
}

Digest digest_pairs(const spatialhash::PairList& list, std::size_t n) {
  Digest d;
  d.per_item.assign(n, 0);
  d.total = list.pairs.size();
  for (const spatialhash::Pair& p : list.pairs) {
    const auto [a, b] = std::minmax(p.first, p.second);
    // An out-of-range index is a wrong result, not a crash of the harness.
    if (b < n) {
      ++d.per_item[a];
      ++d.per_item[b];
    }
    d.fingerprint += entry_hash(a, b);
  }
  return d;
}

Digest digest_counts(std::span<const std::uint32_t> counts) {
  Digest d;
  d.per_item.assign(counts.begin(), counts.end());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    d.total += counts[i];
    d.fingerprint += entry_hash(i, counts[i]);
  }
  return d;
}

}  // namespace bench
