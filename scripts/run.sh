#!/usr/bin/env bash
# Quick start, command 1: set everything up, build, and run the main job (one million
# jittered-lattice particles, r = 2 x spacing, all neighbor lists).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build --target spatialhash_cli neighbors_demo
echo "== spatialhash: one million jittered-lattice particles (spacing 1, +-0.05), r = 2"
./build/cli/spatialhash generate --lattice 100 --jitter 0.05 --precision float -o build/points.npy
./build/cli/spatialhash lists build/points.npy -r 2 -o build/lists.npz
echo "== the same job through the C++ API (examples/neighbors_demo.cpp; its own random jitter)"
./build/examples/neighbors_demo
