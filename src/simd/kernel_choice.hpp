// The run-time choice among a kernel's builds (scalar, AVX2, AVX-512), one policy for every
// kernel: the widest level that this build holds, this processor runs and the caller's cap
// (Options::simd) allows.
#pragma once

#include "spatialhash/types.hpp"

namespace spatialhash::detail {

/// The widest of avx512, avx2 and scalar at or below `limit` (automatic: no cap) that this build
/// holds and this processor runs. Never a level this build leaves out.
Simd kernel_level(Simd limit);

/// The build of one kernel that kernel_level(limit) names. A level this build leaves out has a
/// null kernel (SPATIALHASH_AVX512_KERNEL, SPATIALHASH_AVX2_KERNEL), which is never chosen.
template <class Fn>
Fn choose_kernel(Simd limit, Fn avx512, Fn avx2, Fn scalar) {
  switch (kernel_level(limit)) {
    case Simd::avx512:
      return avx512;
    case Simd::avx2:
      return avx2;
    default:
      return scalar;
  }
}

}  // namespace spatialhash::detail

/// A kernel's AVX-512 build where this build has one (SPATIALHASH_AVX512=ON), null otherwise:
/// naming an AVX kernel only through these keeps a build without it free of references to it (a
/// macro of any arguments, for template arguments with commas).
#ifdef SPATIALHASH_HAVE_AVX512
#define SPATIALHASH_AVX512_KERNEL(...) (__VA_ARGS__)
#else
#define SPATIALHASH_AVX512_KERNEL(...) nullptr
#endif
/// A kernel's AVX2 build where this build has one (SPATIALHASH_AVX2=ON), null otherwise.
#ifdef SPATIALHASH_HAVE_AVX2
#define SPATIALHASH_AVX2_KERNEL(...) (__VA_ARGS__)
#else
#define SPATIALHASH_AVX2_KERNEL(...) nullptr
#endif
