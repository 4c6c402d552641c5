#!/usr/bin/env bash
# Two commits of spatialhash in one process: builds BEFORE (a git revision) in a worktree with its
# namespace renamed, and the working tree's library, then times both repetition by repetition
# (bench/ab_inprocess_main.cpp). Less noisy than alternating two processes (bench/alternate.py):
# docs/benchmarks.md, "Noise".
#
#   bench/ab_inprocess.sh BEFORE WORKLOAD POINTS THREADS ROUNDS [ORDER]
#   bench/ab_inprocess.sh HEAD~1 W1 1000000 2 40
#
# ORDER is the points' order, shuffled (the default) or sorted (bench/workloads.hpp).
#
# Builds go to build-ab/ (BEFORE's library, the working tree's, the driver). Needs g++ and
# OpenMP (scripts/setup.sh installs them). AB_AFTER_BUILD=DIR takes the working tree's library
# from DIR, an existing Release build of it, instead of building it again (scripts/test.sh passes
# its build-test). AB_BEFORE_BUILD_TYPE (default Release) is BEFORE's CMake build type: CI's run
# (scripts/test.sh) builds it as Debug, which proves that build too and takes two thirds the time.
set -euo pipefail
if [ $# -ne 5 ] && [ $# -ne 6 ]; then
  sed -n '7,10p' "$0" | sed 's/^# *//' >&2
  exit 2
fi
cd "$(dirname "$0")/.."
if ! before=$(git rev-parse --quiet --verify "$1^{commit}"); then
  echo "bench/ab_inprocess.sh: BEFORE '$1' is not a git revision" >&2
  exit 2
fi
shift
out=build-ab
mkdir -p "$out"
library() {  # SOURCE BUILD_DIR EXTRA_FLAGS BUILD_TYPE: the static library alone
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE="$4" -DCMAKE_CXX_FLAGS="$3" \
    -DSPATIALHASH_BUILD_PYTHON=OFF -DSPATIALHASH_BUILD_TESTS=OFF -DSPATIALHASH_BUILD_BENCH=OFF \
    -DSPATIALHASH_BUILD_EXAMPLES=OFF -DSPATIALHASH_BUILD_CLI=OFF >/dev/null
  cmake --build "$2" --target spatialhash >/dev/null
}
if [ ! -d "$out/before-src" ] || [ "$(git -C "$out/before-src" rev-parse HEAD)" != "$before" ]; then
  rm -rf "$out/before-src"
  git worktree prune
  git worktree add --quiet --force --detach "$out/before-src" "$before"
fi
library "$out/before-src" "$out/before" "-Dspatialhash=spatialhash_before" \
  "${AB_BEFORE_BUILD_TYPE:-Release}"
after="$out/after"
if [ -n "${AB_AFTER_BUILD:-}" ]; then
  if ! grep -qx 'CMAKE_BUILD_TYPE:STRING=Release' "$AB_AFTER_BUILD/CMakeCache.txt" 2>/dev/null; then
    echo "bench/ab_inprocess.sh: AB_AFTER_BUILD '$AB_AFTER_BUILD' is not a Release build directory" >&2
    exit 2
  fi
  cmake --build "$AB_AFTER_BUILD" --target spatialhash >/dev/null
  after="$AB_AFTER_BUILD"
else
  library . "$after" "" Release
fi
flags=(-O2 -std=c++20 -fopenmp -Wall -Wextra -Werror)
g++ "${flags[@]}" -c bench/ab_inprocess_side.cpp -I "$out/before-src/include" \
  -Dspatialhash=spatialhash_before -DAB_SIDE_FUNCTION=ab_before_run -o "$out/side_before.o"
g++ "${flags[@]}" -c bench/ab_inprocess_side.cpp -I include -DAB_SIDE_FUNCTION=ab_after_run \
  -o "$out/side_after.o"
g++ "${flags[@]}" bench/ab_inprocess_main.cpp bench/workloads.cpp bench/measure.cpp -I bench \
  -I include "$out/side_before.o" "$out/side_after.o" "$out/before/libspatialhash.a" \
  "$after/libspatialhash.a" -o "$out/ab_inprocess"
"$out/ab_inprocess" "$@"
