#!/usr/bin/env bash
# The one command for the benchmark suite: builds spatialhash_bench (Release, in build-bench),
# runs it with the flags given (default: everything, see docs/benchmarks.md), saves the printed
# tables and the JSON in build-bench/, and draws the plots under docs/bench/.
#   bench/run.sh                                   # all workloads, 10k..4M, every engine
#   bench/run.sh --sizes 100k,1M --ops rebuild_lists
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench --target spatialhash_bench
./build-bench/bench/spatialhash_bench --json build-bench/bench.json "$@" | tee build-bench/bench.txt
/usr/bin/python3 bench/plot.py build-bench/bench.json --out docs/bench
