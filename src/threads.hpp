// Thread-count helpers: the only place that talks to the OpenMP runtime directly.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>

#ifdef _OPENMP
#include <omp.h>
#endif
#if __has_include(<pthread.h>)
#include <pthread.h>
#endif

namespace spatialhash::detail {

/// 0 (or less) means every core the OpenMP runtime offers.
inline int resolve_threads(int requested) {
#ifdef _OPENMP
  return requested > 0 ? requested : omp_get_max_threads();
#else
  (void)requested;
  return 1;
#endif
}

inline int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/// The number of threads in the team running the caller. Inside `#pragma omp parallel
/// num_threads(k)` it can be fewer than k: a call from inside another parallel region gets a
/// team of one thread unless the program enables nested parallelism, and OMP_DYNAMIC or
/// OMP_THREAD_LIMIT may give fewer. Work shared out by thread_id() is shared by this, never by k
/// (sharing by k left the slices of missing threads undone: wrong sorts, wrong lists, a hang).
inline int team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

/// Whether this process is a child forked after the library first asked for more than one
/// thread (set by the fork handler usable_threads() registers). A fact about the process, not
/// library state: the one process-wide variable the library keeps.
inline std::atomic<bool>& forked_after_threads() {
  static std::atomic<bool> forked{false};
  return forked;
}

/// The threads a parallel region may ask for: `requested`, or one in a process forked after
/// this library started OpenMP threads. GNU libgomp's thread pool does not survive fork(): in the
/// child a team of more than one thread waits forever for pool threads that were not copied
/// (Python's multiprocessing forks its workers by default on Linux). Every parallel region of
/// the library and the Python module goes through this (parallel_region()). The fork handler is
/// registered the first time more than one thread is asked for, before the first team that could
/// start the pool.
inline int usable_threads(int requested) {
  if (requested <= 1) return requested;
#if __has_include(<pthread.h>)
  static const bool handler = pthread_atfork(nullptr, nullptr, [] {
                                forked_after_threads().store(true, std::memory_order_relaxed);
                              }) == 0;
  (void)handler;
#endif
  return forked_after_threads().load(std::memory_order_relaxed) ? 1 : requested;
}

/// Threads for a cheap pass over `items` items (a bounding box, a finiteness check: about a
/// nanosecond an item): one per kItemsPerPassThread items, at least one, at most `requested`. A
/// team costs a few microseconds, more than such a pass over a few thousand items.
inline constexpr std::size_t kItemsPerPassThread = 8192;
inline int threads_for_pass(std::size_t items, int requested) {
  return static_cast<int>(std::clamp<std::size_t>(
      items / kItemsPerPassThread, 1, static_cast<std::size_t>(std::max(requested, 1))));
}

/// Runs `body` on a team of usable_threads(requested) threads, each thread calling it once, as
/// `#pragma omp parallel` would: body's work-sharing constructs (`omp for`, `single`, `barrier`)
/// are orphaned and bind to that team. A team of one outside any parallel region calls body
/// directly instead: its orphaned constructs then bind to the calling thread alone and run
/// serially, without a region. GNU libgomp makes a `futex` wake system call at every barrier even
/// in a team of one (each region ends with one, each `omp for` without `nowait` adds one): that
/// was most of a 10-point build's time. Inside a caller's active region it still opens a region
/// (nested, so of one thread unless the program enables nesting), so that the orphaned constructs
/// bind to a team of their own, never to the caller's. Reductions go through the body's own
/// variables (Clang requires a reduction variable to be shared in the construct's region, which a
/// lambda's captures are not): each thread combines its part into an atomic or its own slot.
template <class Body>
void parallel_region(int requested, Body&& body) {
#ifdef _OPENMP
  const int threads = usable_threads(requested);
  if (threads > 1 || omp_in_parallel()) {
#pragma omp parallel num_threads(threads)
    body();
    return;
  }
#else
  (void)requested;
#endif
  body();
}

}  // namespace spatialhash::detail
