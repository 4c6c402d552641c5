#!/usr/bin/env bash
# Quick start, command 1: set everything up, build, and run the main job (one million
# jittered-lattice particles, r = 2 x spacing, all neighbor lists).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build --target neighbors_demo
./build/examples/neighbors_demo
