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

}  // namespace spatialhash::detail
