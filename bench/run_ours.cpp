// spatialhash's engines as contenders, driven through the public API only.
#include <cstdint>
#include <vector>

#include "contenders.hpp"
#include "spatialhash/spatialhash.hpp"

namespace bench {

/// Times construct + lists of one form (Lists: NeighborLists or NeighborRows, which
/// fill(index, lists) fills), then hands the last repetition's lists to digest(). With `refill`
/// (step_*) the lists are kept across repetitions, as a simulation keeps them; otherwise
/// (rebuild_*) each repetition fills fresh lists, the previous ones freed before the clock starts.
/// The CPU time of the timed parts is added to `cpu`.
template <class Lists, class Index, int Dim, class T, class Fill, class DigestOf>
std::vector<double> time_lists(bool refill, const Problem<Dim, T>& problem,
                               const spatialhash::Options& options, const RepPolicy& policy,
                               CpuTime& cpu, Fill fill, DigestOf digest) {
  Lists kept;
  std::vector<double> ms = repeat(policy, [&] {
    if (!refill) kept = {};
    const Timer timer(cpu);
    const Index index(problem.coords, problem.radius, options);
    fill(index, kept);
    return timer.stop();  // the index is destroyed after the clock stopped
  });
  digest(kept);
  return ms;
}

template <int Dim, class T>
Measurement run_ours(const spatialhash::Options& index_options,
                     const spatialhash::ListOptions& list_options, const Problem<Dim, T>& problem,
                     Op op, int threads, const RepPolicy& policy) {
  using Index = spatialhash::Index<Dim, T>;
  spatialhash::Options options = index_options;
  options.threads = threads;
  Measurement m;
  switch (op) {
    case Op::build: {
      m.index_bytes = bytes_held_by([&] { return Index(problem.coords, problem.radius, options); });
      m.ms = repeat(policy, [&] {
        const Timer timer(m.cpu);
        const Index index(problem.coords, problem.radius, options);
        return timer.stop();  // the index is destroyed after the clock stopped
      });
      break;
    }
    case Op::rebuild_lists:
    case Op::step_lists:
      m.ms = time_lists<spatialhash::NeighborLists, Index>(
          op == Op::step_lists, problem, options, policy, m.cpu,
          [&](const Index& index, auto& lists) { index.neighbor_lists(lists, list_options); },
          [&](const auto& lists) { m.digest = digest_lists(lists); });
      break;
    case Op::rebuild_rows:
    case Op::step_rows:
      m.ms = time_lists<spatialhash::NeighborRows, Index>(
          op == Op::step_rows, problem, options, policy, m.cpu,
          [&](const Index& index, auto& rows) { index.neighbor_rows(rows, list_options); },
          [&](const auto& rows) { m.digest = digest_rows(rows); });
      break;
    case Op::pairs: {
      const Index index(problem.coords, problem.radius, options);
      spatialhash::PairList kept;
      m.ms = repeat(policy, [&] {
        kept = {};
        const Timer timer(m.cpu);
        spatialhash::PairList pairs = index.pairs();
        const double ms = timer.stop();
        kept = std::move(pairs);
        return ms;
      });
      m.digest = digest_pairs(kept, problem.size());
      break;
    }
    case Op::counts: {
      const Index index(problem.coords, problem.radius, options);
      std::vector<spatialhash::index_t> kept;
      m.ms = repeat(policy, [&] {
        kept = {};
        const Timer timer(m.cpu);
        std::vector<spatialhash::index_t> counts = index.neighbor_counts();
        const double ms = timer.stop();
        kept = std::move(counts);
        return ms;
      });
      m.digest = digest_counts(kept);
      break;
    }
    case Op::ball:
    case Op::ball_rows: {
      const Index index(problem.coords, problem.radius, options);
      const auto queries = static_cast<std::int64_t>(problem.queries.size() / Dim);
      const spatialhash::PointsView<Dim, double> positions(problem.queries.data(),
                                                           problem.queries.size() / Dim);
      std::vector<std::uint32_t> hits(static_cast<std::size_t>(queries));
      // All queries at once (the engines batch them where they can), as CSR lists (cross) or
      // NeighborRows (cross_rows); a row's length is its query's count.
      m.ms = repeat(policy, [&] {
        const Timer timer(m.cpu);
        if (op == Op::ball) {
          const auto lists = index.cross(positions, list_options);
          const double ms = timer.stop();
          for (std::int64_t q = 0; q < queries; ++q) {
            hits[q] = static_cast<std::uint32_t>(lists.count(static_cast<std::size_t>(q)));
          }
          return ms;
        }
        const auto rows = index.cross_rows(positions, list_options);
        const double ms = timer.stop();
        for (std::int64_t q = 0; q < queries; ++q) hits[q] = rows.count[q];
        return ms;
      });
      m.digest = digest_counts(hits);
      break;
    }
    case Op::ball_each: {
      const Index index(problem.coords, problem.radius, options);
      const auto queries = static_cast<std::int64_t>(problem.queries.size() / Dim);
      std::vector<std::uint32_t> hits(static_cast<std::size_t>(queries));
      // One ball() per query, each thread with its own result vector (reused: no allocation
      // once it has grown), as nanoflann's queries run.
      m.ms = repeat(policy, [&] {
        const Timer timer(m.cpu);
#pragma omp parallel num_threads(threads)
        {
          std::vector<spatialhash::index_t> found;
#pragma omp for schedule(dynamic, 1024)
          for (std::int64_t q = 0; q < queries; ++q) {
            typename Index::Position center;
            for (int k = 0; k < Dim; ++k) center[k] = problem.queries[q * Dim + k];
            index.ball(center, problem.radius, found);
            hits[q] = static_cast<std::uint32_t>(found.size());
          }
        }
        return timer.stop();
      });
      m.digest = digest_counts(hits);
      break;
    }
  }
  return m;
}

#define BENCH_INSTANTIATE(D, T)                                                                  \
  template Measurement run_ours<D, T>(const spatialhash::Options&,                               \
                                      const spatialhash::ListOptions&, const Problem<D, T>&, Op, \
                                      int, const RepPolicy&);
BENCH_INSTANTIATE(2, float)
BENCH_INSTANTIATE(2, double)
BENCH_INSTANTIATE(3, float)
BENCH_INSTANTIATE(3, double)
#undef BENCH_INSTANTIATE

}  // namespace bench
