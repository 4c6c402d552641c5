"""Adversarial cases for the exactness fuzz, and the check of one case against a float64 oracle.

The neighbor rule (include/spatialhash/index.hpp) is exact: points i != j are neighbors iff
d2 <= r*r, d2 = (dx*dx + dy*dy) + dz*dz in float64 without FMA on the converted coordinates. In a
periodic box every point is wrapped first, and for i < j each axis uses d = w_i - (w_j + s*L)
with the image w_j + s*L rounded to double first; a ball query uses |c - (w_j + s*L)| with c
wrapped. The generators below aim at the places where a grid search can break that rule: pairs at
exactly r or a few ulps from it, float32 inputs whose float32 arithmetic would decide otherwise,
large offsets, wide ranges of scale, duplicates, lattices aligned with the cells, periodic seams.

Each generator takes (numpy Generator, dim) and returns a Case (float64 points, radius, box or
None). check_case() builds a spatialhash.Index for one engine / thread count / dtype and returns
the discrepancies with the oracle as strings (empty: none). Used by test_fuzz_smoke.py (a fixed
set of seeds) and by python/fuzz_exactness.py (long runs); plan() maps a seed to a whole case.
Without a box the oracle is oracle_np's rule; the minimum image is added here.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

import spatialhash

ENGINES = spatialhash.engines()

# Messages of the documented refusals: a lattice too large for the spread of the points
# (dense_grid, sorted_index), or an extent of more than 2^30 radii (every engine; float32 can
# round a large-offset cloud onto a few points one float32 ulp, many radii, apart).
KNOWN_REFUSALS = ("dense_grid refuses a lattice", "sorted_index packs", "more than 2^30 cells")

TRIPLES_2D = [(3, 4, 5), (5, 12, 13), (7, 24, 25), (8, 15, 17), (20, 21, 29), (0, 5, 5)]
TRIPLES_3D = [(2, 3, 6, 7), (1, 4, 8, 9), (4, 4, 7, 9), (2, 6, 9, 11), (1, 2, 2, 3), (0, 3, 4, 5),
              (0, 0, 5, 5), (12, 15, 16, 25)]
BLOCK = 256  # oracle rows per block


class Case(NamedTuple):
    points: np.ndarray  # (n, dim) float64
    radius: float
    box: Optional[list] = None  # boxsize for Index (None: no box)


# ---- oracle -----------------------------------------------------------------------------------


def periodic_edges(box, dim: int) -> dict:
    """{axis: L} for the periodic axes of a boxsize (finite and > 0, as Index reads it)."""
    if box is None:
        return {}
    edges = np.broadcast_to(np.asarray(box, dtype=np.float64), (dim,))
    return {k: float(L) for k, L in enumerate(edges) if np.isfinite(L) and L > 0}


def wrap(points: np.ndarray, box) -> np.ndarray:
    """wrap_coordinate (box.hpp) with lower 0: x if 0 <= x < L, else x - floor(x / L) * L, and 0
    if rounding left that outside [0, L)."""
    out = np.array(points, dtype=np.float64)
    for k, L in periodic_edges(box, out.shape[1]).items():
        x = out[:, k]
        w = x - np.floor(x / L) * L
        w = np.where((w >= 0.0) & (w < L), w, 0.0)
        out[:, k] = np.where((x >= 0.0) & (x < L), x, w)
    return out


def squared_distances(a: np.ndarray, b: np.ndarray, box) -> np.ndarray:
    """d2[p, q] between rows a[p] (the i or ball center side) and b[q] (the j side, shifted), both
    already wrapped: per axis the smallest |a - (b + s*L)|, then summed x, y, z in that order."""
    edges = periodic_edges(box, a.shape[1])
    total = None
    for k in range(a.shape[1]):
        ak, bk = a[:, k, None], b[None, :, k]
        d = np.abs(ak - bk)
        if k in edges:
            d = np.minimum(d, np.abs(ak - (bk + edges[k])))
            d = np.minimum(d, np.abs(ak - (bk - edges[k])))
        total = d * d if total is None else total + d * d
    return total


def oracle_pairs(points: np.ndarray, r: float, box) -> tuple[np.ndarray, np.ndarray]:
    """(pairs (m, 2) with i < j in lexicographic order, d2 of each) under the pair rule."""
    w = wrap(points, box)
    found, d2s = [np.zeros((0, 2), np.int64)], [np.zeros(0)]
    for start in range(0, len(w), BLOCK):
        d2 = squared_distances(w[start : start + BLOCK], w, box)
        rows, cols = np.nonzero(d2 <= r * r)
        keep = rows + start < cols
        rows, cols = rows[keep], cols[keep]
        found.append(np.stack([rows + start, cols], axis=1))
        d2s.append(d2[rows, cols])
    pairs, d2 = np.concatenate(found), np.concatenate(d2s)
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    return pairs[order], d2[order]


def oracle_balls(points: np.ndarray, positions: np.ndarray, r: float, box) -> list:
    """Sorted neighbor lists of each position under the ball rule (no exclusion)."""
    d2 = squared_distances(wrap(positions, box), wrap(points, box), box)
    return [np.flatnonzero(row <= r * r).tolist() for row in d2]


def both_directions(pairs: np.ndarray, d2: np.ndarray):
    """(rows, cols, d2) of every pair in both directions, ordered by row, then column."""
    rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
    cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
    d2 = np.concatenate([d2, d2])
    order = np.lexsort((cols, rows))
    return rows[order], cols[order], d2[order]


# ---- generators -------------------------------------------------------------------------------


def _triple(rng, dim):
    """An integer vector and its exact integer length."""
    table = TRIPLES_2D if dim == 2 else TRIPLES_3D
    *vector, length = table[rng.integers(len(table))]
    return np.array(vector, dtype=np.float64), float(length)


def _unit_vectors(rng, k, dim):
    u = rng.normal(size=(k, dim))
    return u / np.linalg.norm(u, axis=1, keepdims=True)


def _step_ulps(x, steps):
    """x moved by steps[...] ulps (at most 3 either way), elementwise."""
    for s in range(3):
        x = np.where(steps > s, np.nextafter(x, np.inf), x)
        x = np.where(steps < -s, np.nextafter(x, -np.inf), x)
    return x


def pythagorean_pairs(rng, dim):
    # Integer points plus copies moved by a Pythagorean vector: pairs at exactly r, scaled by a
    # power of two (still exact) and offset by a power of two.
    vector, length = _triple(rng, dim)
    base = rng.integers(-50, 50, size=(int(rng.integers(5, 200)), dim)).astype(np.float64)
    copies = [base + vector[rng.permutation(dim)] * rng.choice([-1, 1], dim) for _ in range(2)]
    scale = 2.0 ** int(rng.integers(-30, 30))
    offset = float(rng.choice([0.0, 1.0, -1.0])) * 2.0 ** int(rng.integers(0, 40))
    points = rng.permutation(np.concatenate([base, *copies])) * scale + offset
    return Case(points, length * scale)


def ulp_pairs(rng, dim):
    # Pairs at r along a random direction or an axis, then moved 1-3 ulps per coordinate.
    k = int(rng.integers(2, 200))
    r = float(10.0 ** rng.uniform(-5, 5))
    offset = float(10.0 ** rng.uniform(0, 8)) * float(rng.choice([0, 1, -1]))
    a = rng.random((k, dim)) * r * 10 + offset
    if rng.random() < 0.5:
        u = np.eye(dim)[rng.integers(0, dim, k)]
    else:
        u = _unit_vectors(rng, k, dim)
    b = _step_ulps(a + u * r, rng.integers(-3, 4, size=(k, dim)))
    return Case(rng.permutation(np.concatenate([a, b])), r)


def float32_disagreeing_pairs(rng, dim):
    # float32 points about r apart (+-2 float32 ulps) far from the origin, where evaluating the
    # rule in float32 would decide differently from float64.
    k = int(rng.integers(5, 200))
    offset = float(rng.choice([1.0, 100.0, 1e4, 1e6]))
    r = float(rng.choice([0.1, 0.3, 1.0, 7.0]))
    a = (rng.random((k, dim)) * 5 * r + offset).astype(np.float32)
    b = (a + _unit_vectors(rng, k, dim) * r).astype(np.float32)
    steps = rng.integers(-2, 3, size=(k, dim))
    b = np.where(steps > 0, np.nextafter(b, np.float32(np.inf)), b)
    b = np.where(steps < 0, np.nextafter(b, np.float32(-np.inf)), b)
    return Case(rng.permutation(np.concatenate([a, b])).astype(np.float64), r)


def large_offset(rng, dim):
    # A cloud a few cells wide, 1e3..1e12 away from the origin (sometimes flat on one axis).
    n = int(rng.integers(10, 400))
    offset = 10.0 ** rng.uniform(3, 12) * float(rng.choice([1, -1]))
    r = float(10.0 ** rng.uniform(-4, 1))
    points = rng.random((n, dim)) * r * n ** (1 / dim) * 1.2 + offset
    if rng.random() < 0.3:
        points[:, rng.integers(dim)] = offset
    return Case(points, r)


def wide_scale_blobs(rng, dim):
    # Gaussian blobs of 0.1r..5r spread whose centers lie up to 1e7 r apart (sparse lattices).
    r = float(10.0 ** rng.uniform(-3, 3))
    spread = 10.0 ** rng.uniform(1, 7) * r
    blobs = [center + rng.normal(size=(int(rng.integers(1, 120)), dim)) * r * rng.uniform(0.1, 5)
             for center in rng.random((int(rng.integers(1, 8)), dim)) * spread]
    return Case(np.concatenate(blobs) * float(rng.choice([1, -1])), r)


def duplicates_and_tiny(rng, dim):
    # n = 0..3, one point repeated, a few sites repeated, or points on multiples of r (cell
    # boundaries, many pairs at exactly r or 0).
    r = float(10.0 ** rng.uniform(-2, 2))
    kind = rng.integers(4)
    if kind == 0:
        points = rng.random((int(rng.integers(0, 4)), dim)) * r * 2
    elif kind == 1:
        points = np.tile(rng.random((1, dim)) * 100, (int(rng.integers(2, 300)), 1))
    elif kind == 2:
        sites = rng.random((int(rng.integers(1, 30)), dim)) * r * 5
        points = sites[rng.integers(0, len(sites), int(rng.integers(2, 400)))]
    else:
        points = rng.integers(-10, 10, (int(rng.integers(2, 400)), dim)) * r
    return Case(points.astype(np.float64), r)


def lattice(rng, dim):
    # A regular lattice of spacing r, r/2, 2r (or r/3, r/sqrt2), sometimes jittered, sometimes
    # offset: many distances exactly at or near r, points on cell boundaries.
    r = float(rng.choice([1.0, 0.1, 0.3, 2.0**-7, 1e-3, 7.0]))
    spacing = r * float(rng.choice([1.0, 0.5, 2.0, 1 / 3, 0.7071067811865476]))
    side = int(rng.integers(2, 20 if dim == 2 else 8))
    grid = np.stack(np.meshgrid(*[np.arange(side)] * dim, indexing="ij"), -1).reshape(-1, dim)
    points = grid * spacing
    if rng.random() < 0.5:
        jitter = float(rng.choice([1e-12, 1e-3, 0.25]))
        points = points + rng.uniform(-1, 1, points.shape) * spacing * jitter
    points = points + float(rng.choice([0.0, -1e4, 3e6]))
    return Case(rng.permutation(points), r)


def periodic_box(rng, dim):
    # A periodic box (all axes, a scalar, or one axis open) with points outside the box, on the
    # seams, at exactly r across a seam, or on a lattice commensurate with the box.
    L = float(rng.choice([1.0, 10.0, 3.7, 1.86, 100.0, 2.0**20, 0.01]))
    r = L * float(rng.choice([0.49, 0.3, 0.1, 0.05, 0.4999999999, 1 / 2.1]))
    box = [L] * dim
    if rng.random() < 0.3:
        box[rng.integers(dim)] = float(rng.choice([0.0, np.inf]))
    elif rng.random() < 0.3:
        box = L
    n = int(rng.integers(2, 400))
    points = rng.random((n, dim)) * L
    kind = rng.integers(4)
    if kind == 0:  # outside the box, up to three edges away
        points += rng.integers(-3, 4, (n, dim)) * L
    elif kind == 1:  # on or within rounding of a seam
        seams = [0.0, L, np.nextafter(L, 0), -0.0, -1e-300, -1e-17 * L, L * (1 + 1e-16)]
        points[: n // 3, rng.integers(dim)] = rng.choice(seams, n // 3)
    elif kind == 2:  # pairs at exactly r (as the rule computes it) across the seam of one axis
        half, axis = n // 2, rng.integers(dim)
        points[half : 2 * half] = points[:half]
        points[:half, axis] = rng.choice([0.0, L - r / 2, L * 0.999], half)
        ahead = points[:half, axis] + r
        points[half : 2 * half, axis] = ahead - L * (ahead >= L)
    else:  # lattice commensurate with the box
        side = max(2, int(round(n ** (1 / dim))))
        grid = np.stack(np.meshgrid(*[np.arange(side)] * dim, indexing="ij"), -1)
        points = grid.reshape(-1, dim) * (L / side)
    return Case(points, r, box)


GENERATORS = [pythagorean_pairs, ulp_pairs, float32_disagreeing_pairs, large_offset,
              wide_scale_blobs, duplicates_and_tiny, lattice, periodic_box]


class Plan(NamedTuple):
    seed: int
    generator: str
    engine: str
    dtype: type
    dim: int
    case: Case


def plan(seed: int) -> Plan:
    """The case of one seed: generators in turn, engines rotated so that every (generator,
    engine) combination comes once in len(GENERATORS) * len(ENGINES) consecutive seeds, dim and
    dtype drawn from the seed."""
    rng = np.random.default_rng(seed)
    generator = GENERATORS[seed % len(GENERATORS)]
    engine = ENGINES[(seed // len(GENERATORS)) % len(ENGINES)]
    dim = int(rng.choice([2, 3]))
    dtype = np.float32 if rng.random() < 0.5 else np.float64
    return Plan(seed, generator.__name__, engine, dtype, dim, generator(rng, dim))


# ---- the check --------------------------------------------------------------------------------


def ball_positions(rng, points: np.ndarray, r: float) -> np.ndarray:
    """A few positions: on indexed points, at r from them along an axis (and one ulp either
    side), along a random direction, and one far away."""
    dim = points.shape[1]
    far = rng.normal(size=(1, dim)) * 1e6
    if len(points) == 0:
        return far
    on = points[rng.integers(0, len(points), 3)]
    along_axis = on + np.eye(dim)[rng.integers(0, dim, 3)] * r * rng.choice([-1, 1], (3, 1))
    around = np.concatenate([np.nextafter(along_axis, np.inf), np.nextafter(along_axis, -np.inf)])
    random_direction = on + _unit_vectors(rng, 3, dim) * r
    return np.concatenate([on, along_axis, around, random_direction, far])


def _sorted_rows(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The order sorting (first, second) rows lexicographically."""
    return np.lexsort((second, first))


def _compare_pairs(got, want: np.ndarray, label: str) -> list:
    got = np.asarray(got, dtype=np.int64).reshape(-1, 2)
    got = got[_sorted_rows(got[:, 0], got[:, 1])]
    if np.array_equal(got, want):
        return []
    got, want = set(map(tuple, got.tolist())), set(map(tuple, want.tolist()))
    return [f"{label}: {len(got)} pairs, want {len(want)}; "
            f"extra {sorted(got - want)[:5]} missing {sorted(want - got)[:5]}"]


def _compare_lists(index, pairs, d2, n) -> list:
    offsets, cols, distances = index.neighbor_lists(sort=True, return_distances=True)
    rows, want_cols, want_d2 = both_directions(pairs, d2)
    counts, want_counts = np.diff(offsets), np.bincount(rows, minlength=n)
    if not np.array_equal(counts, want_counts):
        bad = np.flatnonzero(counts != want_counts)[:5]
        return [f"neighbor_lists: counts differ at rows {bad}"]
    if not np.array_equal(cols, want_cols):
        bad = np.flatnonzero(cols != want_cols)[:5]
        return [f"neighbor_lists: indices differ at entries {bad}"]
    if not np.array_equal(distances, np.sqrt(want_d2)):
        bad = np.flatnonzero(distances != np.sqrt(want_d2))[0]
        return [f"neighbor_lists: distance of ({rows[bad]}, {cols[bad]}) is {distances[bad]!r}, "
                f"want {np.sqrt(want_d2[bad])!r}"]
    return []


def _compare_counts(index, pairs, n) -> list:
    counts = index.count_neighbors_per_point()
    want = np.bincount(pairs.ravel(), minlength=n)
    if np.array_equal(counts, want):
        return []
    return [f"count_neighbors_per_point: rows {np.flatnonzero(counts != want)[:5]} differ"]


def _compare_self_matrix(index, pairs, d2, n) -> list:
    matrix = index.sparse_distance_matrix(output_type="ndarray")
    i, j, v = matrix["i"].astype(np.int64), matrix["j"].astype(np.int64), matrix["v"]
    by_row, by_column = _sorted_rows(i, j), _sorted_rows(j, i)
    if not (np.array_equal(i[by_row], j[by_column]) and np.array_equal(j[by_row], i[by_column])
            and np.array_equal(v[by_row], v[by_column])):
        return ["sparse_distance_matrix(self): not symmetric"]
    rows, cols, want_d2 = both_directions(pairs, d2)
    diagonal = np.arange(n)
    rows, cols = np.concatenate([rows, diagonal]), np.concatenate([cols, diagonal])
    want_v = np.concatenate([np.sqrt(want_d2), np.zeros(n)])
    order = _sorted_rows(rows, cols)
    if not (np.array_equal(i[by_row], rows[order]) and np.array_equal(j[by_row], cols[order])):
        return [f"sparse_distance_matrix(self): {len(i)} entries, want the {len(rows)} of the "
                "pairs in both directions plus the diagonal"]
    if not np.array_equal(v[by_row], want_v[order]):
        bad = np.flatnonzero(v[by_row] != want_v[order])[0]
        return [f"sparse_distance_matrix(self): distance of ({i[by_row][bad]}, {j[by_row][bad]}) "
                f"is {v[by_row][bad]!r}, want {want_v[order][bad]!r}"]
    return []


def _compare_balls(index, points, r, box, rng) -> list:
    positions = ball_positions(rng, points, r)
    want = oracle_balls(points, positions, r, box)
    many = [sorted(row) for row in index.query_ball_point(positions, r)]
    one_by_one = [sorted(index.query_ball_point(p)) for p in positions]
    problems = []
    for label, got in (("query_ball_point(many)", many), ("query_ball_point(one)", one_by_one)):
        bad = [q for q in range(len(positions)) if got[q] != want[q]]
        if bad:
            q = bad[0]
            problems.append(f"{label}: position {positions[q].tolist()} gives {got[q][:10]}, "
                            f"want {want[q][:10]}")
    return problems


def check_case(case: Case, engine: str, threads: int, dtype, rng) -> Optional[list]:
    """Discrepancies between spatialhash and the oracle on one case (empty list: none), or None
    when the engine refuses the case with a documented lattice-size refusal. `rng` draws the
    ball query positions."""
    points = np.asarray(case.points).astype(dtype).astype(np.float64)  # the values indexed
    r, box, n = case.radius, case.box, len(points)
    try:
        index = spatialhash.Index(points.astype(dtype), r, engine=engine, threads=threads,
                                  boxsize=box)
    except ValueError as error:
        if any(message in str(error) for message in KNOWN_REFUSALS):
            return None
        return [f"Index(): ValueError: {error}"]
    pairs, d2 = oracle_pairs(points, r, box)
    below = float(np.nextafter(r, 0))
    try:
        problems = _compare_pairs(index.query_pairs(), pairs, "query_pairs")
        problems += _compare_pairs(index.query_pairs(below), pairs[d2 <= below * below],
                                   "query_pairs(nextafter(r, 0))")
        problems += _compare_lists(index, pairs, d2, n)
        problems += _compare_counts(index, pairs, n)
        problems += _compare_self_matrix(index, pairs, d2, n)
        problems += _compare_balls(index, points, r, box, rng)
    except Exception as error:  # a query that raises is a discrepancy too
        problems = [f"a query raised {type(error).__name__}: {error}"]
    return problems
