"""Exactness at the boundary, against the NumPy brute force only (cKDTree may round differently
there): lattices with many pairs at exactly distance r, float32 coordinates that are not exact
decimals, coincident points, and every engine."""

import numpy as np
import pytest

import oracle_np
import spatialhash


def integer_lattice(side, dim, spacing):
    axes = np.meshgrid(*[np.arange(side, dtype=np.float64) * spacing] * dim, indexing="ij")
    return np.stack([a.ravel() for a in axes], axis=1)


def check_all_queries(points, r, engine=None):
    index = spatialhash.Index(points, r, engine=engine)
    expected_pairs = oracle_np.pairs(points, r)
    got = index.query_pairs()
    assert set(map(tuple, got.tolist())) == expected_pairs
    assert len(got) == len(expected_pairs)
    expected_lists = oracle_np.neighbor_sets(points, r)
    offsets, indices = index.neighbor_lists(sort=True)
    assert [indices[offsets[i] : offsets[i + 1]].tolist() for i in range(len(points))] == (
        expected_lists
    )
    assert index.count_neighbors_per_point().tolist() == [len(row) for row in expected_lists]
    positions = points[:: max(1, len(points) // 50)].astype(np.float64)
    balls = index.query_ball_point(positions, return_sorted=True)
    assert [list(row) for row in balls] == oracle_np.balls(points, positions, r)
    return len(expected_pairs)


@pytest.mark.parametrize("dim", (2, 3))
@pytest.mark.parametrize("dtype", (np.float32, np.float64))
@pytest.mark.parametrize(
    "spacing,r_over_spacing",
    [
        (1.0, 1.0),  # axis neighbors at exactly r
        (1.0, 2.0),
        (0.5, 2.0),  # exact binary fractions
        (0.1, 1.0),  # 0.1 is inexact: ties decided by the rounded coordinates
        (0.1, 3.0),
        (0.3, np.sqrt(2.0)),  # diagonal neighbors within rounding of r
    ],
)
def test_lattice_pairs_at_exactly_r(dim, dtype, spacing, r_over_spacing):
    side = 9 if dim == 3 else 24
    points = integer_lattice(side, dim, spacing).astype(dtype)
    r = spacing * r_over_spacing
    count = check_all_queries(points, r)
    assert count > 0
    # Pairs at exactly r are neighbors: the rule is d2 <= r*r, not d2 < r*r.
    if spacing == 1.0:
        assert np.any(
            np.isclose(
                np.linalg.norm(
                    points[[0]].astype(np.float64) - points.astype(np.float64), axis=1
                ),
                r,
            )
        )


@pytest.mark.parametrize("dim", (2, 3))
def test_coincident_points_are_neighbors(dim):
    rng = np.random.default_rng(1)
    sites = rng.random((5, dim))
    points = np.repeat(sites, 20, axis=0)
    index = spatialhash.Index(points, 1e-9)
    got = set(map(tuple, index.query_pairs().tolist()))
    assert got == oracle_np.pairs(points, 1e-9)
    assert len(got) == 5 * 20 * 19 // 2
    assert index.count_neighbors_per_point().tolist() == [19] * 100
    # A ball query at a site finds all its copies (no self exclusion for positions).
    assert index.query_ball_point(sites[2], return_sorted=True) == list(range(40, 60))


@pytest.mark.parametrize("engine", spatialhash.engines())
@pytest.mark.parametrize("dim", (2, 3))
@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_every_engine_matches_oracle(engine, dim, dtype):
    rng = np.random.default_rng([dim, 17])
    lattice = integer_lattice(6, dim, 0.25)
    blob = 0.5 + rng.normal(size=(200, dim)) * 0.05
    dup = np.repeat(rng.random((4, dim)), 10, axis=0)
    points = np.concatenate([lattice, blob, dup]).astype(dtype)
    count = check_all_queries(points, 0.25, engine=engine)
    assert count > 0
    index = spatialhash.Index(points, 0.25, engine=engine)
    assert index.engine in spatialhash.engines()
    if engine != "automatic":
        assert index.engine == engine


def test_float32_input_is_judged_in_double():
    # d2 = 1 + 2^-26: in float32 arithmetic that rounds to exactly 1 = r*r (a neighbor); in
    # double, as the rule demands, it is above r*r (not a neighbor).
    points = np.array([[0.0, 0.0], [1.0, 2.0**-13]], dtype=np.float32)
    dy = np.float32(2.0**-13)
    assert np.float32(1.0) + dy * dy == np.float32(1.0)
    assert spatialhash.Index(points, 1.0).query_pairs().shape == (0, 2)
    assert oracle_np.pairs(points, 1.0) == set()
    assert spatialhash.Index(points, 1.0).query_ball_point([0.0, 0.0]) == [0]
    wider = 1.0 + 2.0**-26
    assert spatialhash.Index(points, wider).query_pairs().tolist() == [[0, 1]]
    assert oracle_np.pairs(points, wider) == {(0, 1)}
