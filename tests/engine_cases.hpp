// The engine configurations every oracle test runs: each engine with its defaults, plus cell_list
// with cells of edge r/2 (a 5^Dim stencil) and with cells of edge r never coarsened (sparse sets
// then keep a hash-table lattice: the grouped search's lookups off the dense array), so every
// lattice of the default engine is covered, and cell_list at each SIMD level below the best
// (AVX2, scalar), so every filter is covered.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spatialhash/spatialhash.hpp"

inline std::vector<spatialhash::Options> engine_cases() {
  std::vector<spatialhash::Options> cases;
  for (spatialhash::Engine engine : spatialhash::all_engines()) cases.push_back({.engine = engine});
  cases.push_back({.engine = spatialhash::Engine::cell_list, .cell_subdivision = 1});
  cases.push_back({.engine = spatialhash::Engine::cell_list, .cell_subdivision = 2});
  // The default engine at each SIMD level below the best this build runs on this machine (the
  // best is what automatic, above, picks; a case capped at it would repeat that case).
  const bool avx512 = spatialhash::simd_available(spatialhash::Simd::avx512);
  const bool avx2 = spatialhash::simd_available(spatialhash::Simd::avx2);
  if (avx512 && avx2)
    cases.push_back({.engine = spatialhash::Engine::cell_list, .simd = spatialhash::Simd::avx2});
  if (avx512 || avx2)
    cases.push_back({.engine = spatialhash::Engine::cell_list, .simd = spatialhash::Simd::scalar});
  return cases;
}

inline std::string engine_case_label(const ::testing::TestParamInfo<spatialhash::Options>& info) {
  std::string label(spatialhash::engine_name(info.param.engine));
  if (info.param.cell_subdivision > 0)
    label += "_sub" + std::to_string(info.param.cell_subdivision);
  if (info.param.simd == spatialhash::Simd::avx2) label += "_avx2";
  if (info.param.simd == spatialhash::Simd::scalar) label += "_scalar";
  return label;
}
