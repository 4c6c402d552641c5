// What one contender run measures: the operations, the repetition policy, wall-clock timing and
// the digest of the results used to check that contenders agree.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "memory_in_use.hpp"
#include "spatialhash/types.hpp"

namespace bench {

/// The timed operations.
enum class Op {
  build,          ///< construct the index from scratch (including any reordering it does)
  rebuild_lists,  ///< construct + full CSR neighbor lists into fresh arrays
  step_lists,     ///< construct + full lists into the previous step's arrays (storage reused):
                  ///< what a simulation that keeps its lists does every step
  rebuild_rows,   ///< construct + the same lists as NeighborRows (rows where the search wrote
                  ///< them: Index::neighbor_rows) into fresh arrays
  step_rows,      ///< construct + NeighborRows into the previous step's arrays
  pairs,          ///< every unordered pair once, on an index built outside the timing
  counts,         ///< neighbor count of every point, on an index built outside the timing
  ball,       ///< ball queries at random positions, hits counted per query, threads over queries
  ball_rows,  ///< the same ball queries, ours as NeighborRows (Index::cross_rows)
  ball_each,  ///< the same ball queries, ours one Index::ball() call each (a caller that asks
              ///< query by query, as a game asks per body), threads over queries
};

std::string_view op_name(Op op);    ///< "build", "rebuild+lists", ...
std::string_view op_key(Op op);     ///< "build", "rebuild_lists", ... (flags, JSON)
Op parse_op(std::string_view key);  ///< throws std::invalid_argument
inline constexpr Op kAllOps[] = {Op::build,     Op::rebuild_lists, Op::step_lists, Op::rebuild_rows,
                                 Op::step_rows, Op::pairs,         Op::counts,     Op::ball,
                                 Op::ball_rows, Op::ball_each};
/// Whether `op` runs the ball queries (its items are the queries, not the points).
inline bool is_ball(Op op) {
  return op == Op::ball || op == Op::ball_rows || op == Op::ball_each;
}
/// Whether `op` produces full neighbor lists (as CSR lists or as NeighborRows).
inline bool makes_lists(Op op) {
  return op == Op::rebuild_lists || op == Op::step_lists || op == Op::rebuild_rows ||
         op == Op::step_rows;
}

/// The input of one contender run. Coordinates are interleaved, Dim per point.
template <int Dim, class T>
struct Problem {
  std::span<const T> coords;
  double radius = 0.0;
  std::span<const double> queries;  ///< ball query positions, Dim per query
  std::size_t size() const { return coords.size() / Dim; }
};

/// How often to repeat: at most `reps` times, and no more once the repetitions so far took
/// `budget_ms` in total, but at least kMinReps times unless the first repetition alone took the
/// budget (a slow contender then runs once). See repeat().
struct RepPolicy {
  int reps = 5;
  double budget_ms = 3000.0;
};

/// A fingerprint of a result, independent of the order the results come in. `total` counts
/// directed neighbor entries (rebuild_lists, counts), pairs (pairs) or hits (ball);
/// `per_item` holds the neighbor count of every point (every query for ball); `fingerprint` is
/// the wrap-around sum of a hash of every reported (i, j) entry (of (i, count_i) for counts and
/// ball), so two results with equal digests are equal with overwhelming probability.
struct Digest {
  std::uint64_t total = 0;
  std::uint64_t fingerprint = 0;
  std::vector<std::uint32_t> per_item;
};

/// CPU time of this process, all its threads together (milliseconds): in user code, and in the
/// kernel on its behalf (page faults, zeroing the pages of fresh memory, system calls).
struct CpuTime {
  double user_ms = 0.0;
  double kernel_ms = 0.0;
};

/// The process's CPU time so far (getrusage, RUSAGE_SELF).
CpuTime process_cpu_time();

/// Times of every repetition (milliseconds) and the digest of the last one's result.
struct Measurement {
  std::vector<double> ms;
  /// The process's CPU time over the timed parts of every repetition, summed (Timer::stop): how
  /// much of a run the kernel took, above all for fresh memory.
  CpuTime cpu;
  Digest digest;
  /// build only: bytes a built index holds (bytes_held_by below); -1 when not measured.
  double index_bytes = -1.0;
};

/// memory_in_use() (memory_in_use.hpp: heap bytes in use and the library's mapped blocks) held by
/// what make() returns, measured on a construction of its own (not a timed one): -1 where the C
/// library cannot say. Memory an engine freed again (its build's work arrays) does not count, so
/// the difference across a build is what the index keeps.
template <class Make>
double bytes_held_by(Make&& make) {
  const double before = memory_in_use();
  const auto held = make();
  (void)held;
  const double after = memory_in_use();
  return before < 0.0 || after < 0.0 ? -1.0 : after - before;
}

Digest digest_lists(const spatialhash::NeighborLists& lists);
/// The same digest as digest_lists() for the same lists held as NeighborRows.
Digest digest_rows(const spatialhash::NeighborRows& rows);
Digest digest_pairs(const spatialhash::PairList& pairs, std::size_t n);
Digest digest_counts(std::span<const std::uint32_t> counts);

/// Starts the OpenMP worker threads before anything is timed (each contender runs in a fresh
/// process, whose first parallel region would otherwise pay for creating them).
void warm_up_threads(int threads);

/// Touches `bytes` of fresh memory in huge pages where the system has them (one write per 4 KiB
/// page), and returns it to the system, so that the contender run next finds memory its (virtual)
/// machine already backs. On the development VM, memory the guest freed more than a few seconds
/// earlier is taken back by the host, and the first touch of 1 GB then costs about 1.2 s instead
/// of 60 ms (docs/benchmarks.md, "Noise"). The memory a contender allocates is still fresh to its
/// own process: the kernel zeroes every page it touches, a cost every process pays and the
/// figures keep.
void warm_up_memory(std::size_t bytes);

/// Memory warmed up before a run on `points` points (warm_up_memory): about what the largest run
/// touches (W3's lists and buffers take about 1 KiB per point), 64 MiB at least, 3 GiB at most.
std::size_t warm_memory_bytes(std::size_t points);

/// Times one repetition's timed part: stop() returns the wall-clock milliseconds since
/// construction and adds the process's CPU time over the same span to `tally`. Call stop() once.
class Timer {
 public:
  explicit Timer(CpuTime& tally) : tally_(tally) {}

  double stop() const {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
            .count();
    const CpuTime now = process_cpu_time();
    tally_.user_ms += now.user_ms - cpu_start_.user_ms;
    tally_.kernel_ms += now.kernel_ms - cpu_start_.kernel_ms;
    return ms;
  }

 private:
  CpuTime& tally_;
  CpuTime cpu_start_ = process_cpu_time();  // before the clock starts: members in this order
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

/// Repetitions a run gets before the budget may stop it (RepPolicy): the median of two is their
/// mean, and one repetition that met memory the VM had to back first (3-6x slower) would set it
/// (W3, 1M points, 1 thread: 2829 and 425 ms reported as 1627; docs/benchmarks.md).
inline constexpr int kMinReps = 3;

/// Calls `rep` (which returns the milliseconds of its timed part) as `policy` says.
template <class F>
std::vector<double> repeat(const RepPolicy& policy, F&& rep) {
  std::vector<double> ms;
  double spent = 0.0;
  for (int k = 0; k < policy.reps; ++k) {
    ms.push_back(rep());
    spent += ms.back();
    // Over the budget: stop after a first repetition alone, or after kMinReps or more.
    if (spent >= policy.budget_ms && (k == 0 || k + 1 >= kMinReps)) break;
  }
  return ms;
}

}  // namespace bench
