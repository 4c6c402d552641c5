"""Property-based tests (Hypothesis): on arbitrary small point sets, often with exact ties
(coordinates on a coarse grid, duplicates), every query equals the NumPy brute force, and equals
cKDTree whenever no distance lies within rounding of r."""

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.spatial import cKDTree

import oracle_np
import spatialhash

DTYPES = st.sampled_from([np.float32, np.float64])
DIMS = st.sampled_from([2, 3])


@st.composite
def point_sets(draw):
    """(points, r): coordinates on a coarse grid (many pairs at exactly r) or free floats."""
    dim = draw(DIMS)
    dtype = draw(DTYPES)
    n = draw(st.integers(0, 60))
    if draw(st.booleans()):
        step = draw(st.sampled_from([0.25, 0.1, 1.0, 3.0]))
        grid = draw(hnp.arrays(np.int64, (n, dim), elements=st.integers(-4, 4)))
        points = (grid * step).astype(dtype)
        r = step * draw(st.sampled_from([1.0, 2.0, np.sqrt(2.0), np.sqrt(3.0), 2.5]))
    else:
        floats = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=32)
        points = draw(hnp.arrays(dtype, (n, dim), elements=floats))
        r = draw(st.floats(1e-3, 8.0))
    return points, float(r)


@given(point_sets(), st.sampled_from(spatialhash.engines()))
def test_pairs_and_lists_equal_brute_force(case, engine):
    points, r = case
    try:
        index = spatialhash.Index(points, r, engine=engine)
    except ValueError as error:
        # dense_grid documents that it refuses a lattice too large for the points' spread.
        assume(not (engine == "dense_grid" and "dense_grid refuses a lattice" in str(error)))
        raise
    expected = oracle_np.pairs(points, r)
    got = index.query_pairs()
    assert got.shape == (len(expected), 2)
    assert set(map(tuple, got.tolist())) == expected

    offsets, indices = index.neighbor_lists(sort=True)
    lists = [indices[offsets[i] : offsets[i + 1]].tolist() for i in range(len(points))]
    assert lists == oracle_np.neighbor_sets(points, r)
    assert index.count_neighbors_per_point().tolist() == np.diff(offsets).tolist()


@given(point_sets(), st.data())
def test_ball_queries_equal_brute_force(case, data):
    points, r = case
    dim = points.shape[1]
    positions = data.draw(
        hnp.arrays(np.float64, (data.draw(st.integers(1, 8)), dim), elements=st.floats(-12, 12))
    )
    if len(points) and data.draw(st.booleans()):
        positions[0] = points[0]  # a position exactly on an indexed point
    fraction = data.draw(st.sampled_from([1.0, 0.5]))
    index = spatialhash.Index(points, r)
    got = index.query_ball_point(positions, r * fraction, return_sorted=True)
    assert [list(row) for row in got] == oracle_np.balls(points, positions, r * fraction)
    lengths = index.query_ball_point(positions, r * fraction, return_length=True)
    assert lengths.tolist() == [len(row) for row in got]


@given(point_sets())
@settings(max_examples=60)
def test_equal_to_ckdtree_away_from_r(case):
    points, r = case
    assume(len(points) > 1 and not oracle_np.near_r(points, points, r))
    index = spatialhash.Index(points, r)
    tree = cKDTree(points)
    assert index.query_pairs(output_type="set") == tree.query_pairs(r)
    got = index.query_ball_point(points, return_sorted=True)
    assert [list(row) for row in got] == [list(row) for row in tree.query_ball_point(points, r)]


@given(point_sets(), st.sampled_from([0.3, 0.6, 1.0]))
def test_distances_and_smaller_radii(case, fraction):
    points, r = case
    q = r * fraction
    index = spatialhash.Index(points, r)
    pairs, distances = index.pairs_with_distances(q, sort=True)
    expected = oracle_np.pair_distances(points, q)
    assert pairs.tolist() == sorted(map(list, expected))
    assert distances.tolist() == [expected[tuple(p)] for p in pairs.tolist()]
    # Results for a smaller radius are a subset of those for the index radius.
    assert set(map(tuple, pairs.tolist())) <= index.query_pairs(output_type="set")


@given(point_sets(), st.data())
def test_pair_counts_equal_brute_force(case, data):
    # Radii at r and below it on the same grid steps, so that pairs often reach a radius exactly.
    points, r = case
    fractions = data.draw(
        st.lists(st.sampled_from([0.0, 0.25, 0.5, 1 / np.sqrt(2.0), 1.0]), min_size=1, max_size=6)
    )
    radii = np.array([r * f for f in fractions])
    index = spatialhash.Index(points, r)
    widened = points.astype(np.float64)
    expected = [0] * len(radii)
    for _, d2 in oracle_np.squared_distances(widened, widened):
        for k, radius in enumerate(radii):
            expected[k] += int(np.count_nonzero(d2 <= radius * radius))
    assert index.count_neighbors(index, radii).tolist() == expected
    assert index.count_neighbors(points, float(radii[0])) == expected[0]
