// Whether the tests run under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/test.sh's
// second build, where a test runs several times slower; CMake defines SPATIALHASH_TESTS_SANITIZED
// there). The tests whose data sizes set that run's time take fewer cases or smaller sets there,
// each still on every code path it was written for; the release build runs them in full.
#pragma once

#ifdef SPATIALHASH_TESTS_SANITIZED
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
