// nanoflann's KD-tree as the outside peer, producing the same containers as our engines.
#include <nanoflann.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "contenders.hpp"

namespace bench {

namespace {

/// nanoflann's dataset interface over an interleaved coordinate span.
template <int Dim, class T>
struct Cloud {
  std::span<const T> coords;
  std::size_t kdtree_get_point_count() const { return coords.size() / Dim; }
  T kdtree_get_pt(std::size_t i, std::size_t k) const { return coords[i * Dim + k]; }
  template <class BBox>
  bool kdtree_get_bbox(BBox&) const {
    return false;  // let nanoflann compute it
  }
};

template <int Dim, class T>
using Tree = nanoflann::KDTreeSingleIndexAdaptor<
    nanoflann::L2_Simple_Adaptor<T, Cloud<Dim, T>, T, std::uint32_t>, Cloud<Dim, T>, Dim,
    std::uint32_t>;

/// A nanoflann result set that hands every index with d2 <= r2 (other than `skip`, and not
/// below `lowest`) to `keep`. nanoflann only offers candidates with d2 < worstDist(), so
/// worstDist() is the next value above r2.
template <class T, class Keep>
class Within {
 public:
  using DistanceType = T;
  using IndexType = std::uint32_t;

  Within(T r2, std::uint32_t skip, std::uint32_t lowest, Keep& keep)
      : r2_(r2),
        bound_(std::nextafter(r2, std::numeric_limits<T>::infinity())),
        skip_(skip),
        lowest_(lowest),
        keep_(keep) {}

  std::size_t size() const { return 0; }
  bool full() const { return true; }
  T worstDist() const { return bound_; }
  bool addPoint(T d2, std::uint32_t index) {
    if (d2 <= r2_ && index != skip_ && index >= lowest_) keep_(index);
    return true;
  }

 private:
  T r2_;
  T bound_;
  std::uint32_t skip_;
  std::uint32_t lowest_;
  Keep& keep_;
};

constexpr std::uint32_t kNoSkip = std::numeric_limits<std::uint32_t>::max();

template <int Dim, class T, class Keep>
void search(const Tree<Dim, T>& tree, const T* position, T r2, std::uint32_t skip,
            std::uint32_t lowest, Keep& keep) {
  Within<T, Keep> result(r2, skip, lowest, keep);
  tree.findNeighbors(result, position, nanoflann::SearchParams(32, 0.0f, false));
}

/// Runs `per_point(i, out)` for every point on `threads` threads in dynamic chunks, each chunk
/// appending to its own buffer, then concatenates the buffers in point order. `counts[i]` gets
/// the number of items point i appended. Writes the concatenation to `all` (its storage reused).
template <class Item, class Out, class PerPoint>
void gather(std::size_t n, int threads, std::vector<std::size_t>& counts, Out& all,
            PerPoint&& per_point) {
  constexpr std::size_t kChunk = 1024;
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::vector<Item>> parts(chunks);
  counts.assign(n, 0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(chunks); ++c) {
    auto& part = parts[c];
    const std::size_t end = std::min(n, (c + 1) * kChunk);
    for (std::size_t i = c * kChunk; i < end; ++i) {
      const std::size_t before = part.size();
      per_point(i, part);
      counts[i] = part.size() - before;
    }
  }
  std::vector<std::size_t> start(chunks + 1, 0);
  for (std::size_t c = 0; c < chunks; ++c) start[c + 1] = start[c] + parts[c].size();
  all.resize(start[chunks]);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(chunks); ++c) {
    std::copy(parts[c].begin(), parts[c].end(), all.begin() + start[c]);
    parts[c] = {};
  }
}

template <int Dim, class T>
void full_lists(const Tree<Dim, T>& tree, std::span<const T> coords, T r2, int threads,
                spatialhash::NeighborLists& lists) {
  const std::size_t n = coords.size() / Dim;
  std::vector<std::size_t> counts;
  gather<spatialhash::index_t>(n, threads, counts, lists.indices, [&](std::size_t i, auto& out) {
    auto keep = [&out](std::uint32_t j) { out.push_back(j); };
    search<Dim, T>(tree, &coords[i * Dim], r2, static_cast<std::uint32_t>(i), 0, keep);
  });
  lists.offsets.assign(n + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), lists.offsets.begin() + 1);
}

template <int Dim, class T>
spatialhash::PairList pair_list(const Tree<Dim, T>& tree, std::span<const T> coords, T r2,
                                int threads) {
  const std::size_t n = coords.size() / Dim;
  std::vector<std::size_t> counts;
  spatialhash::PairList list;
  gather<spatialhash::Pair>(n, threads, counts, list.pairs, [&](std::size_t i, auto& out) {
    const auto first = static_cast<std::uint32_t>(i);
    auto keep = [&out, first](std::uint32_t j) { out.push_back({first, j}); };
    search<Dim, T>(tree, &coords[i * Dim], r2, kNoSkip, first + 1, keep);
  });
  return list;
}

}  // namespace

template <int Dim, class T>
Measurement run_nanoflann(const Problem<Dim, T>& problem, Op op, int threads,
                          const RepPolicy& policy, std::size_t leaf_size) {
  const Cloud<Dim, T> cloud{problem.coords};
  const nanoflann::KDTreeSingleIndexAdaptorParams params(leaf_size);
  // The squared radius as a user of nanoflann would pass it: r*r rounded to T.
  const T r2 = static_cast<T>(problem.radius * problem.radius);
  const std::size_t n = problem.size();
  Measurement m;
  switch (op) {
    case Op::build: {
      m.index_bytes = bytes_held_by([&] { return Tree<Dim, T>(Dim, cloud, params); });
      m.ms = repeat(policy, [&] {
        const Timer timer(m.cpu);
        const Tree<Dim, T> tree(Dim, cloud, params);
        return timer.stop();
      });
      break;
    }
    case Op::rebuild_lists:
    case Op::rebuild_rows: {  // nanoflann has one list form: CSR lists
      spatialhash::NeighborLists kept;
      m.ms = repeat(policy, [&] {
        kept = {};
        const Timer timer(m.cpu);
        const Tree<Dim, T> tree(Dim, cloud, params);
        spatialhash::NeighborLists lists;
        full_lists<Dim, T>(tree, problem.coords, r2, threads, lists);
        const double ms = timer.stop();
        kept = std::move(lists);
        return ms;
      });
      m.digest = digest_lists(kept);
      break;
    }
    case Op::step_lists:
    case Op::step_rows: {
      spatialhash::NeighborLists lists;  // kept across repetitions, as a simulation keeps it
      m.ms = repeat(policy, [&] {
        const Timer timer(m.cpu);
        const Tree<Dim, T> tree(Dim, cloud, params);
        full_lists<Dim, T>(tree, problem.coords, r2, threads, lists);
        return timer.stop();
      });
      m.digest = digest_lists(lists);
      break;
    }
    case Op::pairs: {
      const Tree<Dim, T> tree(Dim, cloud, params);
      spatialhash::PairList kept;
      m.ms = repeat(policy, [&] {
        kept = {};
        const Timer timer(m.cpu);
        spatialhash::PairList list = pair_list<Dim, T>(tree, problem.coords, r2, threads);
        const double ms = timer.stop();
        kept = std::move(list);
        return ms;
      });
      m.digest = digest_pairs(kept, n);
      break;
    }
    case Op::counts: {
      const Tree<Dim, T> tree(Dim, cloud, params);
      std::vector<std::uint32_t> counts(n);
      m.ms = repeat(policy, [&] {
        const Timer timer(m.cpu);
#pragma omp parallel for schedule(dynamic, 1024) num_threads(threads)
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
          std::uint32_t count = 0;
          auto keep = [&count](std::uint32_t) { ++count; };
          search<Dim, T>(tree, &problem.coords[i * Dim], r2, static_cast<std::uint32_t>(i), 0,
                         keep);
          counts[i] = count;
        }
        return timer.stop();
      });
      m.digest = digest_counts(counts);
      break;
    }
    case Op::ball:
    case Op::ball_rows:
    case Op::ball_each: {  // one form of result: the hits of each query
      const Tree<Dim, T> tree(Dim, cloud, params);
      const auto queries = static_cast<std::int64_t>(problem.queries.size() / Dim);
      std::vector<std::uint32_t> hits(static_cast<std::size_t>(queries));
      m.ms = repeat(policy, [&] {
        const Timer timer(m.cpu);
#pragma omp parallel for schedule(dynamic, 1024) num_threads(threads)
        for (std::int64_t q = 0; q < queries; ++q) {
          std::array<T, Dim> position;
          for (int k = 0; k < Dim; ++k) position[k] = static_cast<T>(problem.queries[q * Dim + k]);
          std::uint32_t count = 0;
          auto keep = [&count](std::uint32_t) { ++count; };
          search<Dim, T>(tree, position.data(), r2, kNoSkip, 0, keep);
          hits[q] = count;
        }
        return timer.stop();
      });
      m.digest = digest_counts(hits);
      break;
    }
  }
  return m;
}

#define BENCH_INSTANTIATE(D, T)                                                             \
  template Measurement run_nanoflann<D, T>(const Problem<D, T>&, Op, int, const RepPolicy&, \
                                           std::size_t);
BENCH_INSTANTIATE(2, float)
BENCH_INSTANTIATE(2, double)
BENCH_INSTANTIATE(3, float)
BENCH_INSTANTIATE(3, double)
#undef BENCH_INSTANTIATE

}  // namespace bench
