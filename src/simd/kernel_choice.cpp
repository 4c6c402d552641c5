// What this build and processor run (simd_available) and the level of kernel chosen at run time
// (kernel_level; see kernel_choice.hpp).
#include "kernel_choice.hpp"

namespace spatialhash {

bool simd_available(Simd level) {
  switch (level) {
    case Simd::avx512:
#ifdef SPATIALHASH_HAVE_AVX512
      return __builtin_cpu_supports("avx512f");
#else
      return false;
#endif
    case Simd::avx2:
#ifdef SPATIALHASH_HAVE_AVX2
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
      return false;
#endif
    case Simd::automatic:
    case Simd::scalar:
      return true;
  }
  return false;
}

}  // namespace spatialhash

namespace spatialhash::detail {

Simd kernel_level(Simd limit) {
  if ((limit == Simd::automatic || limit == Simd::avx512) && simd_available(Simd::avx512)) {
    return Simd::avx512;
  }
  if (limit != Simd::scalar && simd_available(Simd::avx2)) return Simd::avx2;
  return Simd::scalar;
}

}  // namespace spatialhash::detail
