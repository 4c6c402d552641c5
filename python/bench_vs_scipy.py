#!/usr/bin/env python3
"""Times spatialhash against scipy.spatial.cKDTree (query_pairs, query_ball_point,
sparse_distance_matrix, count_neighbors, query_ball_tree) and scikit-learn's NearestNeighbors.radius_neighbors on uniform random
points with a radius chosen for a given mean number of neighbors, and prints the ratios.

    /usr/bin/python3 python/bench_vs_scipy.py                       # 100k and 1M points, 3D
    /usr/bin/python3 python/bench_vs_scipy.py --sizes 20000 --repeat 1 --markdown

Run it with the module built (PYTHONPATH=build-python/python, or after `pip install .`). Every
figure is the best of --repeat runs, index build included ("total") and excluded ("query");
spatialhash and scikit-learn use all cores, cKDTree.query_pairs has no thread option.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Callable, List, Tuple

import numpy as np
from scipy.spatial import cKDTree

# Python puts this script's folder first on sys.path, and it holds the source package (without
# the compiled _core): drop it so the built or installed module is imported.
_HERE = Path(__file__).resolve().parent
sys.path = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
import spatialhash  # noqa: E402


def best_of(repeat: int, run: Callable[[], object]) -> Tuple[float, object]:
    """(fastest wall time in seconds, result of the last run)."""
    best, result = math.inf, None
    for _ in range(repeat):
        result = None  # free the previous result first, as a caller reusing the name would
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def radius_for(n: int, dim: int, neighbors: float) -> float:
    """Radius giving `neighbors` expected neighbors per point for n uniform points in [0, 1)^dim
    (fewer near the faces of the box)."""
    ball = math.pi if dim == 2 else 4.0 / 3.0 * math.pi
    return (neighbors / (n * ball)) ** (1.0 / dim)


def bench_size(args, n: int) -> List[Tuple[str, float, float]]:
    """Rows (what, spatialhash seconds, other seconds) for one problem size."""
    rng = np.random.default_rng(n)
    points = rng.random((n, args.dim)).astype(args.dtype)
    r = radius_for(n, args.dim, args.neighbors)
    queries = points[rng.permutation(n)[: min(n, args.ball_queries)]].astype(np.float64)
    threads = args.threads
    rows = []

    def build():
        return spatialhash.Index(points, r, engine=args.engine, threads=threads)

    t_build, index = best_of(args.repeat, build)
    t_tree_build, tree = best_of(args.repeat, lambda: cKDTree(points))

    # query_pairs, ndarray output on both sides.
    t_pairs, pairs = best_of(args.repeat, lambda: index.query_pairs())
    t_tree_pairs, tree_pairs = best_of(
        args.repeat, lambda: tree.query_pairs(r, output_type="ndarray")
    )
    mean = 2.0 * len(pairs) / n
    print(
        f"n={n:,} dim={args.dim} {np.dtype(args.dtype).name} r={r:.6g}: {len(pairs):,} pairs, "
        f"{mean:.1f} neighbors per point, engine {index.engine}, {index.threads} threads"
    )
    if len(pairs) != len(tree_pairs):
        print(f"  note: cKDTree found {len(tree_pairs):,} pairs (rounding at r differs)")
    rows.append(("build index", t_build, t_tree_build))
    rows.append(("query_pairs (query)", t_pairs, t_tree_pairs))
    rows.append(("query_pairs (total)", t_build + t_pairs, t_tree_build + t_tree_pairs))

    # query_ball_point, lists and lengths, all cores on both sides.
    t_ball, _ = best_of(args.repeat, lambda: index.query_ball_point(queries))
    t_tree_ball, _ = best_of(
        args.repeat, lambda: tree.query_ball_point(queries, r, workers=-1, return_sorted=True)
    )
    rows.append((f"query_ball_point x{len(queries):,} (lists)", t_ball, t_tree_ball))
    t_len, _ = best_of(args.repeat, lambda: index.query_ball_point(queries, return_length=True))
    t_tree_len, _ = best_of(
        args.repeat, lambda: tree.query_ball_point(queries, r, workers=-1, return_length=True)
    )
    rows.append((f"query_ball_point x{len(queries):,} (lengths)", t_len, t_tree_len))

    # sparse_distance_matrix of the index against the positions as a second set, ndarray output
    # (fields i, j, v) on both sides; cKDTree's second tree is built before the clock starts.
    other = cKDTree(queries)
    t_sdm, ours = best_of(
        args.repeat, lambda: index.sparse_distance_matrix(queries, r, output_type="ndarray")
    )
    t_tree_sdm, theirs = best_of(
        args.repeat, lambda: tree.sparse_distance_matrix(other, r, output_type="ndarray")
    )
    if len(ours) != len(theirs):
        print(f"  note: cKDTree found {len(theirs):,} entries, we {len(ours):,} (rounding at r)")
    rows.append((f"sparse_distance_matrix x{len(queries):,} (ndarray)", t_sdm, t_tree_sdm))

    # count_neighbors of the points against the positions at 11 radii from 0 to r (bin edges of
    # a pair-correlation histogram), and query_ball_tree against them; cKDTree has no threads
    # for either.
    edges = np.linspace(0.0, r, 11)
    t_count, counts = best_of(
        args.repeat, lambda: index.count_neighbors(queries, edges, cumulative=False)
    )
    t_tree_count, tree_counts = best_of(
        args.repeat, lambda: tree.count_neighbors(other, edges, cumulative=False)
    )
    if counts.tolist() != tree_counts.tolist():
        print("  note: cKDTree's counts differ (rounding at a bin edge)")
    rows.append((f"count_neighbors x{len(queries):,}, 11 radii", t_count, t_tree_count))
    t_tree_lists, _ = best_of(args.repeat, lambda: index.query_ball_tree(queries))
    t_tree_tree, _ = best_of(args.repeat, lambda: tree.query_ball_tree(other, r))
    rows.append((f"query_ball_tree x{len(queries):,}", t_tree_lists, t_tree_tree))

    if not args.no_sklearn:
        from sklearn.neighbors import NearestNeighbors

        t_fit, model = best_of(
            args.repeat, lambda: NearestNeighbors(radius=r, n_jobs=-1).fit(points)
        )
        t_radius, _ = best_of(
            args.repeat, lambda: model.radius_neighbors(queries, return_distance=False)
        )
        rows.append((f"sklearn radius_neighbors x{len(queries):,} (query)", t_ball, t_radius))
        rows.append(
            (f"sklearn radius_neighbors x{len(queries):,} (total)", t_build + t_ball, t_fit + t_radius)
        )
    return rows


def report(rows: List[Tuple[str, float, float]], markdown: bool) -> None:
    if markdown:
        print("| operation | spatialhash | reference | speed-up |")
        print("|---|---:|---:|---:|")
        for what, ours, theirs in rows:
            print(f"| {what} | {ours * 1e3:.1f} ms | {theirs * 1e3:.1f} ms | {theirs / ours:.1f}x |")
    else:
        print(f"  {'operation':<44} {'spatialhash':>12} {'reference':>12} {'speed-up':>9}")
        for what, ours, theirs in rows:
            print(f"  {what:<44} {ours * 1e3:>9.1f} ms {theirs * 1e3:>9.1f} ms {theirs / ours:>8.1f}x")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--dim", type=int, choices=(2, 3), default=3)
    parser.add_argument("--neighbors", type=float, default=30.0, help="mean neighbors per point")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float64")
    parser.add_argument("--ball-queries", type=int, default=100_000, help="positions per ball query")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is kept)")
    parser.add_argument("--threads", type=int, default=None, help="spatialhash threads (default all)")
    parser.add_argument("--engine", default=None, help="spatialhash engine (default automatic)")
    parser.add_argument("--no-sklearn", action="store_true", help="skip scikit-learn")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args()
    if args.repeat < 1 or args.ball_queries < 1 or min(args.sizes) < 2:
        parser.error("--repeat and --ball-queries must be >= 1, sizes >= 2")

    print(f"spatialhash {spatialhash.__version__}, {os.cpu_count()} cores; reference = cKDTree "
          "(or scikit-learn where named); speed-up = reference time / spatialhash time\n")
    for n in args.sizes:
        report(bench_size(args, n), args.markdown)


if __name__ == "__main__":
    main()
