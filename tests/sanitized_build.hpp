// Whether the tests run under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/test.sh's
// second build, where a test runs several times slower; CMake defines SPATIALHASH_TESTS_SANITIZED
// there). The tests whose data sizes set that run's time take fewer cases or smaller sets there,
// each still on every code path it was written for; the release build runs them in full.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <vector>

#ifdef SPATIALHASH_TESTS_SANITIZED
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

/// The cases of a loop: all of `all`, or their first `sanitized` under the sanitizers (list the
/// ones that must stay first).
template <class T>
std::vector<T> fewer_when_sanitized(std::initializer_list<T> all, std::size_t sanitized) {
  std::vector<T> chosen(all);
  if (kSanitizedBuild) chosen.resize(std::min(sanitized, chosen.size()));
  return chosen;
}
