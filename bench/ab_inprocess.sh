#!/usr/bin/env bash
# Two commits of spatialhash in one process: builds BEFORE (a git revision) in a worktree with its
# namespace renamed, and the working tree's library, then times both repetition by repetition
# (bench/ab_inprocess_main.cpp). Less noisy than alternating two processes (bench/alternate.py):
# docs/benchmarks.md, "Noise".
#
#   bench/ab_inprocess.sh BEFORE WORKLOAD POINTS THREADS ROUNDS
#   bench/ab_inprocess.sh HEAD~1 W1 1000000 2 40
#
# Builds go to build-ab/ (BEFORE's library, the working tree's, the driver). Needs g++ and
# OpenMP (scripts/setup.sh installs them).
set -euo pipefail
if [ $# -ne 5 ]; then
  sed -n '7,8p' "$0" | sed 's/^# *//' >&2
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
library() {  # SOURCE BUILD_DIR EXTRA_FLAGS: the static library alone, Release
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="$3" \
    -DSPATIALHASH_BUILD_PYTHON=OFF -DSPATIALHASH_BUILD_TESTS=OFF -DSPATIALHASH_BUILD_BENCH=OFF \
    -DSPATIALHASH_BUILD_EXAMPLES=OFF -DSPATIALHASH_BUILD_CLI=OFF >/dev/null
  cmake --build "$2" --target spatialhash >/dev/null
}
if [ ! -d "$out/before-src" ] || [ "$(git -C "$out/before-src" rev-parse HEAD)" != "$before" ]; then
  rm -rf "$out/before-src"
  git worktree prune
  git worktree add --quiet --force --detach "$out/before-src" "$before"
fi
library "$out/before-src" "$out/before" "-Dspatialhash=spatialhash_before"
library . "$out/after" ""
flags=(-O2 -std=c++20 -fopenmp -Wall -Wextra -Werror)
g++ "${flags[@]}" -c bench/ab_inprocess_side.cpp -I "$out/before-src/include" \
  -Dspatialhash=spatialhash_before -DAB_SIDE_FUNCTION=ab_before_run -o "$out/side_before.o"
g++ "${flags[@]}" -c bench/ab_inprocess_side.cpp -I include -DAB_SIDE_FUNCTION=ab_after_run \
  -o "$out/side_after.o"
g++ "${flags[@]}" bench/ab_inprocess_main.cpp bench/workloads.cpp bench/measure.cpp -I bench \
  -I include "$out/side_before.o" "$out/side_after.o" "$out/before/libspatialhash.a" \
  "$out/after/libspatialhash.a" -o "$out/ab_inprocess"
"$out/ab_inprocess" "$@"
