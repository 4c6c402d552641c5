#!/usr/bin/env bash
# Quick start, command 2: set everything up, build, and run every test:
#   1. release build with -Wall -Wextra -Werror: C++ tests, CLI tests, Python tests, benchmark smoke,
#      and the in-process A/B tool built and run once
#   2. the C++ tests again under AddressSanitizer + UndefinedBehaviorSanitizer, built with Clang
#   3. a portable build with Clang, without AVX2 and AVX-512 (the library and its kernel-choice
#      tests)
#   4. clang-format check, and an install + find_package(spatialhash) consumer build
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)
# Test processes run side by side (ctest -j) and each starts OpenMP teams: idle OpenMP threads
# sleep instead of spinning, so they do not steal the cores of the other tests.
export OMP_WAIT_POLICY=passive
# SPATIALHASH_TEST_SHARDS: each test program runs as a few CTest entries of many tests each, not
# one process per test (cmake/GTestEntries.cmake): under the sanitizers a process start costs 0.11 s.
# SPATIALHASH_TEST_COMPILE_OPTIONS reach the test programs' own files only, never the library's.

echo "== release build (-Werror), all tests"
# The test programs at -O2 (the library at -O3): their compile, 13% shorter in this build.
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPATIALHASH_WERROR=ON \
  -DSPATIALHASH_BUILD_PYTHON=ON -DPython_EXECUTABLE=/usr/bin/python3 -DSPATIALHASH_TEST_SHARDS=ON \
  -DSPATIALHASH_TEST_COMPILE_OPTIONS=-O2 >/dev/null
cmake --build build-test -j "$jobs"
ctest --test-dir build-test --output-on-failure -j "$jobs"

echo "== in-process A/B tool (bench/ab_inprocess.sh), against HEAD itself, 20000 points"
# Its after side is the library of the release build above (a second build of it took 70 s); its
# before side is a Debug build, which also proves that the library, every SIMD kernel included,
# compiles at -O0 (intrinsics that need an immediate argument see no constant folding there).
AB_AFTER_BUILD=build-test AB_BEFORE_BUILD_TYPE=Debug bash bench/ab_inprocess.sh HEAD W1 20000 1 2

echo "== sanitizer build (ASan + UBSan; Clang), C++ tests"
# Clang (Debian 12's is 14), the second compiler here besides the portable build below: this build
# compiled in 242-247 s instead of GCC's 354 s on 2 cores (its tests as fast), and with -Werror on: Clang
# warns of nothing in the library, the tool or the tests, where GCC 12 reports false
# maybe-uninitialized warnings inside libstdc++'s <regex> once ASan instruments it. Its OpenMP
# runtime is LLVM's libomp (the release build's is GCC's libgomp): both runtimes run the tests.
# SPATIALHASH_AVX512=OFF: this build also proves a build without AVX-512; its default engine runs
# the AVX2 filter where the processor has it, and the tests add cases capped at the scalar one.
# -O1 -g1 (line tables: reports still name file and line): the default engine, then one file,
# compiled in 87 s instead of 147 s with RelWithDebInfo's -O2 -g (GCC), and this build was most of
# CI's 28 minutes on 2 cores. Split by purpose (cell_list*.cpp), its largest file takes 26 s.
# The test programs' own files without ASan's use-after-scope check (a quarter of their compile
# time): it guards the scopes of their locals, not the library's, which keeps every check.
# A build directory made with another compiler goes first (as for the portable build below).
grep -qs '^CMAKE_CXX_COMPILER:.*clang++$' build-asan/CMakeCache.txt || rm -rf build-asan
cmake -S . -B build-asan -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DSPATIALHASH_WERROR=ON \
  -DSPATIALHASH_AVX512=OFF -DSPATIALHASH_SANITIZE=ON -DSPATIALHASH_BUILD_BENCH=OFF -DSPATIALHASH_BUILD_EXAMPLES=OFF \
  -DSPATIALHASH_BUILD_PYTHON=OFF -DSPATIALHASH_TEST_SHARDS=ON \
  -DSPATIALHASH_TEST_COMPILE_OPTIONS=-fno-sanitize-address-use-after-scope >/dev/null
cmake --build build-asan -j "$jobs"
# tests/lsan_suppressions.txt: what libomp itself keeps past exit.
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  LSAN_OPTIONS="suppressions=$PWD/tests/lsan_suppressions.txt" \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE no_sanitizer

echo "== portable build (Clang; no AVX2, no AVX-512): the library, and the kernel choice at run time"
# What a machine without x86 vector extensions builds: no AVX source compiled and none of its
# kernels referenced (src/simd/kernel_choice.hpp). -O0: it proves the build, not the speed; the
# scalar kernels' results are tested in the builds above (their cases capped at Simd::scalar).
# Clang, as for the sanitizer build: it refuses what GCC lets pass (lambdas capturing structured
# bindings, which Clang implements from 16 on), and here without the x86 kernels' sources.
# A build directory made with another compiler goes first: CMake would drop the options below
# along with its cache when the compiler changes, and build with AVX2 on.
grep -qs '^CMAKE_CXX_COMPILER:.*clang++$' build-portable/CMakeCache.txt || rm -rf build-portable
cmake -S . -B build-portable -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DSPATIALHASH_WERROR=ON -DSPATIALHASH_AVX512=OFF -DSPATIALHASH_AVX2=OFF \
  -DSPATIALHASH_BUILD_BENCH=OFF -DSPATIALHASH_BUILD_EXAMPLES=OFF -DSPATIALHASH_BUILD_CLI=OFF \
  -DSPATIALHASH_BUILD_PYTHON=OFF >/dev/null
cmake --build build-portable -j "$jobs" --target test_kernel_choice test_cell_keys
./build-portable/tests/test_kernel_choice --gtest_brief=1
./build-portable/tests/test_cell_keys --gtest_brief=1

echo "== clang-format"
git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror

echo "== install + find_package(spatialhash)"
rm -rf build-install
cmake --install build-test --prefix build-install/prefix >/dev/null
cmake -S tests/consumer -B build-install/consumer -G Ninja \
  -DCMAKE_PREFIX_PATH="$PWD/build-install/prefix" >/dev/null
cmake --build build-install/consumer
./build-install/consumer/consumer

echo "all tests passed"
