"""Independent reference for the Python tests: a NumPy double-precision brute force applying the
neighbor rule literally (d2 = (dx*dx + dy*dy) + dz*dz in float64 on the converted coordinates,
neighbor iff d2 <= r*r), plus the test data sets and the "no pair near r" filter that makes a
comparison with scipy's cKDTree meaningful (cKDTree rounds differently right at r)."""

from __future__ import annotations

import numpy as np

BLOCK = 512  # rows per block, keeps the (block, n) distance matrices small


def _d2_block(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared distances between rows of a and rows of b, summed x, y, z in that order."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    total = None
    for k in range(a.shape[1]):
        d = a[:, None, k] - b[None, :, k]
        total = d * d if total is None else total + d * d
    return total


def squared_distances(points: np.ndarray, queries: np.ndarray):
    """Yields (first row, d2 block) for blocks of query rows against all points."""
    for start in range(0, len(queries), BLOCK):
        yield start, _d2_block(queries[start : start + BLOCK], points)


def pairs(points: np.ndarray, r: float) -> set:
    """All (i, j), i < j, with d2 <= r*r."""
    r2 = float(r) * float(r)
    out = set()
    for start, d2 in squared_distances(points, points):
        rows, cols = np.nonzero(d2 <= r2)
        rows = rows + start
        keep = rows < cols
        out.update(zip(rows[keep].tolist(), cols[keep].tolist()))
    return out


def pair_distances(points: np.ndarray, r: float) -> dict:
    """{(i, j): sqrt(d2)} for every pair of pairs()."""
    r2 = float(r) * float(r)
    out = {}
    for start, d2 in squared_distances(points, points):
        rows, cols = np.nonzero(d2 <= r2)
        for i, j in zip((rows + start).tolist(), cols.tolist()):
            if i < j:
                out[(i, j)] = float(np.sqrt(d2[i - start, j]))
    return out


def balls(points: np.ndarray, queries: np.ndarray, radii) -> list:
    """Sorted list of the points within radii[q] of queries[q] (no exclusion), per query."""
    radii = np.broadcast_to(np.asarray(radii, dtype=np.float64), (len(queries),))
    out = []
    for start, d2 in squared_distances(points, queries):
        for row in range(d2.shape[0]):
            r = radii[start + row]
            out.append(np.nonzero(d2[row] <= r * r)[0].tolist())
    return out


def neighbor_sets(points: np.ndarray, r: float) -> list:
    """Neighbors of every point (self excluded), as sorted lists."""
    lists = [[] for _ in range(len(points))]
    for i, j in sorted(pairs(points, r)):
        lists[i].append(j)
        lists[j].append(i)
    return [sorted(row) for row in lists]


def near_r(points: np.ndarray, queries: np.ndarray, r: float, band: float = 1e-9) -> bool:
    """True if some point lies within a relative `band` of distance r from some query."""
    r2 = float(r) * float(r)
    for _, d2 in squared_distances(points, queries):
        if np.any(np.abs(d2 - r2) <= band * r2):
            return True
    return False


def radius_away_from_pairs(points: np.ndarray, r: float, queries=None) -> float:
    """r, nudged up by relative steps of 1e-6 until no distance is within 1e-9 of it, so that
    cKDTree and the exact rule must agree."""
    queries = points if queries is None else queries
    for _ in range(100):
        if not near_r(points, queries, r):
            return r
        r *= 1.0 + 1e-6
    raise AssertionError("could not find a radius away from every pair distance")


# ---- data sets --------------------------------------------------------------------------------


def uniform(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    return rng.random((n, dim))


def clustered(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Tight Gaussian blobs around a few centers, with wide density contrast."""
    centers = rng.random((8, dim))
    which = rng.integers(0, len(centers), n)
    scale = rng.choice([0.005, 0.02, 0.08], size=len(centers))
    return centers[which] + rng.normal(size=(n, dim)) * scale[which, None]


def lattice(rng: np.random.Generator, n: int, dim: int, spacing: float = 0.05) -> np.ndarray:
    """Points of a regular lattice (many pairs at exactly the lattice distances)."""
    side = int(np.ceil(n ** (1.0 / dim)))
    axes = np.meshgrid(*[np.arange(side) * spacing] * dim, indexing="ij")
    grid = np.stack([a.ravel() for a in axes], axis=1)
    return grid[rng.permutation(len(grid))[:n]]


def duplicates(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Only a few distinct positions, each repeated many times (pairs at distance 0)."""
    sites = rng.random((max(2, n // 40), dim))
    return sites[rng.integers(0, len(sites), n)]


DATASETS = {"uniform": uniform, "clustered": clustered, "lattice": lattice, "duplicates": duplicates}
