#!/usr/bin/env python3
"""Times neighbor lists on the same clusters spread over wider and wider extents, and prints each
spread's time against the narrowest one's (same run).

100 Gaussian blobs of 10,000 points (sigma 1, r = 0.35: about 40 neighbors per point) have their
centers drawn in a cube of edge `spread`. Past a spread of about 1e4, the blobs no longer touch:
every spread has the same neighbor lists, and only the lattice's extent grows (up to 3e7 cells
per axis). That is the shape of geospatial data: dense local structure, far-apart sites.

    PYTHONPATH=build-bench/python /usr/bin/python3 python/bench_wide_extent.py [--repeat 5]

Each figure is the best of --repeat runs of Index(points, r) + neighbor_lists(), all cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# Python puts this script's folder first on sys.path, and it holds the source package (without
# the compiled _core): drop it so the built or installed module is imported.
_HERE = Path(__file__).resolve().parent
sys.path = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import spatialhash  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per spread (best is kept)")
    parser.add_argument("--threads", type=int, default=None, help="threads (default: all cores)")
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    blobs, per, r = 100, 10_000, 0.35
    local = rng.normal(size=(blobs, per, 3))
    narrowest = None
    print("| spread | extent / r | ms | ns per point | x narrowest | entries |")
    print("|---:|---:|---:|---:|---:|---:|")
    for spread in (50.0, 1e4, 1e5, 1e6, 1e7):
        centers = rng.uniform(0.0, spread, size=(blobs, 1, 3))
        points = (local + centers).reshape(-1, 3)
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            index = spatialhash.Index(points, r, threads=args.threads)
            offsets, indices = index.neighbor_lists()
            best = min(best, time.perf_counter() - start)
        narrowest = narrowest or best
        print(f"| {spread:.0e} | {spread / r:.2e} | {best * 1e3:.1f} | "
              f"{best * 1e9 / len(points):.1f} | {best / narrowest:.2f} | {indices.size} |")


if __name__ == "__main__":
    main()
