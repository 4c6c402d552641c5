// Thread-count helpers: the only place that talks to the OpenMP runtime directly.
#pragma once

#ifdef _OPENMP
#include <omp.h>
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

}  // namespace spatialhash::detail
