"""Index.count_neighbors and Index.query_ball_tree against scipy.spatial.cKDTree (radii away from
every pair distance, where cKDTree's rounding cannot differ) and against the NumPy brute force
(every radius, ties at r included: lattice distances such as sqrt(2) and sqrt(3), and r = 0)."""

import numpy as np
import pytest
from scipy.spatial import cKDTree

import oracle_np
import spatialhash

N = 1200


def two_sets(kind, dim, dtype, seed=0):
    rng = np.random.default_rng([seed, dim, list(oracle_np.DATASETS).index(kind)])
    a = oracle_np.DATASETS[kind](rng, N, dim).astype(dtype)
    b = oracle_np.DATASETS[kind](rng, N // 2, dim).astype(dtype)
    return a, b


def oracle_counts(a, b, radii, wa=None, wb=None):
    """Cumulative (weighted) counts of pairs (i of a, j of b) with d2 <= r*r, per radius."""
    wa = np.ones(len(a)) if wa is None else wa
    wb = np.ones(len(b)) if wb is None else wb
    counts = np.zeros(len(radii))
    for start, d2 in oracle_np.squared_distances(a, b):
        # d2 has a row per point of b (the queries) and a column per point of a.
        weight = wb[start : start + len(d2), None] * wa[None, :]
        for k, r in enumerate(radii):
            counts[k] += weight[d2 <= r * r].sum()
    return counts


def radii_away(a, b, radii):
    """Each radius nudged until no pair distance between a and b is within 1e-9 of it."""
    return np.array([oracle_np.radius_away_from_pairs(a, r, b) for r in radii])


@pytest.mark.parametrize("kind", list(oracle_np.DATASETS))
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_count_neighbors_matches_ckdtree(kind, dim, dtype):
    a, b = two_sets(kind, dim, dtype)
    top = {2: 0.06, 3: 0.15}[dim]
    radii = radii_away(a, b, np.linspace(top / 5, top, 5))
    index = spatialhash.Index(a, top * 1.01)
    tree_a, tree_b = cKDTree(a), cKDTree(b)
    expected = tree_a.count_neighbors(tree_b, radii)
    assert expected[-1] > 0
    assert index.count_neighbors(b, radii).tolist() == expected.tolist()
    assert index.count_neighbors(spatialhash.Index(b, top), radii).tolist() == expected.tolist()
    assert index.count_neighbors(b, radii).tolist() == oracle_counts(a, b, radii).tolist()
    binned = index.count_neighbors(b, radii, cumulative=False)
    assert binned.tolist() == tree_a.count_neighbors(tree_b, radii, cumulative=False).tolist()
    # One radius: a Python int, as cKDTree gives.
    one = index.count_neighbors(b, float(radii[2]))
    assert type(one) is int and one == expected[2]
    # The index with itself: every (i, j) and (i, i), as cKDTree counts them.
    self_radii = radii_away(a, a, radii)
    assert (
        index.count_neighbors(index, self_radii).tolist()
        == tree_a.count_neighbors(tree_a, self_radii).tolist()
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weighted_counts_match_ckdtree_and_the_oracle(dtype):
    a, b = two_sets("clustered", 3, dtype, seed=1)
    radii = radii_away(a, b, [0.02, 0.05, 0.1])
    rng = np.random.default_rng(5)
    wa, wb = rng.random(len(a)), rng.random(len(b))
    index = spatialhash.Index(a, 0.11)
    tree_a, tree_b = cKDTree(a), cKDTree(b)
    for weights, oracle_weights in [((wa, wb), (wa, wb)), ((wa, None), (wa, None)),
                                    ((None, wb), (None, wb))]:
        ours = index.count_neighbors(b, radii, weights=weights)
        assert ours.dtype == np.float64
        np.testing.assert_allclose(ours, tree_a.count_neighbors(tree_b, radii, weights=weights),
                                   rtol=1e-12)
        np.testing.assert_allclose(ours, oracle_counts(a, b, radii, *oracle_weights), rtol=1e-12)
    # One array: the index against itself.
    self_radii = radii_away(a, a, radii)
    np.testing.assert_allclose(
        index.count_neighbors(index, self_radii, weights=wa),
        tree_a.count_neighbors(tree_a, self_radii, weights=wa),
        rtol=1e-12,
    )
    one = index.count_neighbors(b, float(radii[0]), weights=(wa, wb))
    assert type(one) is float


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_counts_at_radii_that_pairs_reach_exactly(dtype):
    # A jitter-free lattice: many pairs at exactly 1, sqrt(2), sqrt(3) and 2 spacings, where the
    # rounded distance of a pair can equal the rounded radius; and duplicated points (r = 0).
    side = np.arange(9, dtype=np.float64) * 0.25
    grid = np.stack(np.meshgrid(side, side, side, indexing="ij"), axis=-1).reshape(-1, 3)
    points = np.concatenate([grid, grid[::7]]).astype(dtype)
    radii = np.array([0.0, 0.25, np.sqrt(2) * 0.25, np.sqrt(3) * 0.25, 0.5, 0.5, 0.3])
    index = spatialhash.Index(points, 0.5)
    rng = np.random.default_rng(2)
    weights = rng.random(len(points))
    expected = oracle_counts(points, points, radii)
    assert index.count_neighbors(index, radii).tolist() == expected.tolist()
    np.testing.assert_allclose(
        index.count_neighbors(index, radii, weights=weights),
        oracle_counts(points, points, radii, weights, weights),
        rtol=1e-12,
    )
    binned = index.count_neighbors(points, np.sort(radii), cumulative=False)
    assert binned.tolist() == np.diff(oracle_counts(points, points, np.sort(radii)),
                                      prepend=0).tolist()
    # Every radius alone gives the same count as in the array.
    for k, r in enumerate(radii):
        assert index.count_neighbors(points, float(r)) == expected[k]


def test_counts_in_many_chunks(monkeypatch):
    # The cross search over `other` in chunks of a few positions: the same counts, ties included.
    from spatialhash import _pair_counts

    a, b = two_sets("lattice", 3, np.float64, seed=2)
    radii = np.array([0.0, 0.05, 0.05 * np.sqrt(2), 0.1, 0.13])
    rng = np.random.default_rng(6)
    wa, wb = rng.random(len(a)), rng.random(len(b))
    index = spatialhash.Index(a, 0.13)
    whole = index.count_neighbors(b, radii)
    weighted = index.count_neighbors(b, radii, weights=(wa, wb))
    monkeypatch.setattr(_pair_counts, "FIRST_CHUNK", 7)
    monkeypatch.setattr(_pair_counts, "MIN_CHUNK", 3)
    monkeypatch.setattr(_pair_counts, "CHUNK_ENTRIES", 40)
    assert index.count_neighbors(b, radii).tolist() == whole.tolist()
    assert whole.tolist() == oracle_counts(a, b, radii).tolist()
    np.testing.assert_allclose(index.count_neighbors(b, radii, weights=(wa, wb)), weighted,
                               rtol=1e-12)


def test_periodic_counts_equal_the_ball_queries():
    rng = np.random.default_rng(4)
    box = np.array([1.0, 1.0, 0.5])
    # Points of a lattice across the seam (some outside the box, wrapped), so that radii meet
    # pairs' distances exactly.
    steps = np.arange(4) * 0.125 - 0.125
    lattice = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), axis=-1).reshape(-1, 3)
    points = np.concatenate([rng.random((900, 3)) * box, lattice])
    index = spatialhash.Index(points, 0.2, boxsize=box)
    radii = np.array([0.0, 0.05, 0.125, 0.125 * np.sqrt(2), 0.2])
    counts = index.count_neighbors(points, radii)
    # r = 0 by a ball of MIN_RADIUS: no two distinct points here are that close.
    balls = np.maximum(radii, spatialhash.MIN_RADIUS)
    lengths = [index.query_ball_point(points, r, return_length=True).sum() for r in balls]
    assert counts.tolist() == lengths
    tree = cKDTree(np.mod(points, box), boxsize=box)
    away = radii_away(points, points, [0.07, 0.15])
    assert index.count_neighbors(index, away).tolist() == tree.count_neighbors(tree, away).tolist()


@pytest.mark.parametrize("kind", list(oracle_np.DATASETS))
@pytest.mark.parametrize("dim", [2, 3])
def test_query_ball_tree_matches_ckdtree(kind, dim):
    a, b = two_sets(kind, dim, np.float64, seed=3)
    r = oracle_np.radius_away_from_pairs(a, {2: 0.05, 3: 0.12}[dim], b)
    index = spatialhash.Index(a, r)
    ours = index.query_ball_tree(spatialhash.Index(b, r))
    theirs = cKDTree(a).query_ball_tree(cKDTree(b), r)
    assert isinstance(ours, list) and len(ours) == len(a)
    assert ours == [sorted(row) for row in theirs]
    # The same lists from the brute force: row i of a holds the points of b near a[i].
    assert ours == oracle_np.balls(b, a, r)
    assert index.query_ball_tree(b) == ours
    # With itself: each point finds itself too.
    assert index.query_ball_tree(index, r / 2) == oracle_np.balls(a, a, r / 2)


def test_errors_name_what_is_wrong():
    a = np.random.default_rng(0).random((50, 3))
    index = spatialhash.Index(a, 0.2)
    with pytest.raises(ValueError, match=r"r\[1\]=-0.1 is negative"):
        index.count_neighbors(a, [0.1, -0.1])
    with pytest.raises(ValueError, match=r"r=0.3 exceeds the index radius"):
        index.count_neighbors(a, 0.3)
    with pytest.raises(ValueError, match=r"r\[0\]=inf exceeds the index radius"):
        index.count_neighbors(a, [np.inf])
    with pytest.raises(ValueError, match=r"r\[2\]=nan: a radius must be a number"):
        index.count_neighbors(a, [0.1, 0.1, np.nan])
    with pytest.raises(ValueError, match="between 0 and spatialhash.MIN_RADIUS"):
        index.count_neighbors(a, 1e-200)
    with pytest.raises(ValueError, match="1-D array"):
        index.count_neighbors(a, [[0.1]])
    with pytest.raises(TypeError, match="real numbers"):
        index.count_neighbors(a, "0.1")
    with pytest.raises(ValueError, match=r"non-decreasing .* r\[1\] < r\[0\]"):
        index.count_neighbors(a, [0.1, 0.05], cumulative=False)
    with pytest.raises(ValueError, match=r"weights\[1\] must have shape \(40,\)"):
        index.count_neighbors(a[:40], 0.1, weights=(np.ones(50), np.ones(41)))
    with pytest.raises(ValueError, match="one weights array needs other to be this index"):
        index.count_neighbors(a, 0.1, weights=np.ones(50))
    with pytest.raises(ValueError, match="tuple needs 2 entries"):
        index.count_neighbors(index, 0.1, weights=(np.ones(50),))
    with pytest.raises(ValueError, match="only the Euclidean distance"):
        index.count_neighbors(a, 0.1, p=1)
    with pytest.raises(ValueError, match="other has dimension 2, this index 3"):
        index.count_neighbors(a[:, :2], 0.1)
    with pytest.raises(ValueError, match="other has dimension 2, this index 3"):
        index.query_ball_tree(a[:, :2])
    with pytest.raises(ValueError, match="exceeds the index radius"):
        index.query_ball_tree(a, 0.5)


@pytest.mark.parametrize("engine", spatialhash.engines())
@pytest.mark.parametrize("boxsize", [None, 1.0])
def test_half_lists_hold_each_pair_once(engine, boxsize):
    rng = np.random.default_rng(8)
    points = oracle_np.DATASETS["lattice"](rng, 800, 3).astype(np.float32)
    r = 0.05 * np.sqrt(2.0)  # pairs at exactly r on the lattice
    index = spatialhash.Index(points, r, engine=engine, boxsize=boxsize)
    expected = index.query_pairs(output_type="set")
    if boxsize is None:
        assert expected == oracle_np.pairs(points, r)
    offsets, indices, distances = index.neighbor_lists(half=True, sort=True, return_distances=True)
    found = []
    for i in range(len(points)):
        row = indices[offsets[i] : offsets[i + 1]]
        assert np.all(np.diff(row) > 0)
        found += [(min(i, int(j)), max(i, int(j))) for j in row]
    assert len(found) == len(expected) and set(found) == expected
    # Each entry's distance is its pair's.
    pairs, pair_distances = index.pairs_with_distances(sort=True)
    by_pair = dict(zip(map(tuple, pairs.tolist()), pair_distances.tolist()))
    for i in range(len(points)):
        row = slice(offsets[i], offsets[i + 1])
        for j, d in zip(indices[row], distances[row]):
            assert by_pair[(min(i, int(j)), max(i, int(j)))] == d
    start, count, row_indices = index.neighbor_rows(half=True)
    found_rows = [
        (min(i, int(j)), max(i, int(j)))
        for i in range(len(points))
        for j in row_indices[start[i] : start[i] + count[i]]
    ]
    assert len(found_rows) == len(expected) and set(found_rows) == expected
