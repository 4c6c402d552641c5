"""Input handling found wanting by a review: unaligned and byte-swapped arrays are converted, not
refused; float32 stays float32 whatever its layout; thread counts, radii (the library's range
[2**-500, 2**500], values beyond float64) and per-position radii are checked with messages that
name the parameter (and the entry) the user passed. Results are compared with the NumPy brute
force (oracle_np)."""

import re

import numpy as np
import pytest

import oracle_np
import spatialhash
from spatialhash import _core, _inputs

RANGE = r"outside the supported radius range \[2\*\*-500, 2\*\*500\]"


def sample(n=200, dim=3, dtype=np.float64, seed=0):
    return np.random.default_rng([seed, dim]).random((n, dim)).astype(dtype)


def pair_set(pairs):
    return set(map(tuple, np.asarray(pairs).tolist()))


def unaligned(values):
    """A C-contiguous but unaligned copy of a 2-D float64 array (its data starts at an odd
    address)."""
    buffer = np.zeros(values.nbytes + 1, np.uint8)
    array = np.frombuffer(buffer, values.dtype, values.size, offset=1).reshape(values.shape)
    array[...] = values
    assert array.flags.c_contiguous and not array.flags.aligned
    return array


# ---- defect 1: unaligned arrays are converted ---------------------------------------------


def test_unaligned_points_are_copied():
    points = sample()
    given = unaligned(points)
    index = spatialhash.Index(given, 0.1)
    assert index.data.flags.aligned and index.data.flags.c_contiguous
    assert index.data.dtype == np.float64
    assert not np.shares_memory(index.data, given)
    np.testing.assert_array_equal(index.data, points)
    assert pair_set(index.query_pairs()) == oracle_np.pairs(points, 0.1)


def test_unaligned_update_queries_and_other():
    points = sample()
    moved = sample(seed=1)
    index = spatialhash.Index(points, 0.1)
    index.update(unaligned(moved))
    assert index.data.flags.aligned
    assert pair_set(index.query_pairs()) == oracle_np.pairs(moved, 0.1)
    queries = sample(40, seed=2)
    expected = oracle_np.balls(moved, queries, 0.1)
    found = index.query_ball_point(unaligned(queries), 0.1)
    assert [list(row) for row in found] == expected
    assert sorted(index.query_ball_point(unaligned(queries[:1])[0], 0.1)) == expected[0]
    matrix = index.sparse_distance_matrix(unaligned(queries), 0.1, output_type="ndarray")
    got = {(int(j), int(i)) for i, j in zip(matrix["i"], matrix["j"])}
    assert got == {(q, i) for q, row in enumerate(expected) for i in row}
    # The conversion helpers hand the C++ core aligned arrays on every path.
    assert _inputs.as_positions(unaligned(queries), 3).flags.aligned
    assert _inputs.as_points(unaligned(queries), "other").flags.aligned


# ---- defect 2: float32 stays float32 ------------------------------------------------------


@pytest.mark.parametrize(
    "convert",
    [
        lambda p: np.asfortranarray(p),
        lambda p: np.concatenate([p, p], axis=1)[:, ::2],
        lambda p: p[::-1],
        lambda p: p.astype(">f4"),
    ],
    ids=["fortran", "strided", "reversed", "big-endian"],
)
def test_float32_in_any_layout_stays_float32(convert):
    points = sample(dtype=np.float32)
    given = convert(points)
    index = spatialhash.Index(given, 0.1)
    assert index.data.dtype == np.float32
    assert index.data.flags.c_contiguous and index.data.flags.aligned
    np.testing.assert_array_equal(index.data, np.asarray(given, dtype=np.float32))
    widened = np.asarray(given, dtype=np.float64)
    assert pair_set(index.query_pairs()) == oracle_np.pairs(widened, 0.1)
    # update() takes float32 in any layout, and refuses float64 with a TypeError.
    moved = sample(dtype=np.float32, seed=3)
    index.update(convert(moved))
    assert index.data.dtype == np.float32
    assert pair_set(index.query_pairs()) == oracle_np.pairs(
        np.asarray(convert(moved), dtype=np.float64), 0.1
    )
    with pytest.raises(TypeError, match=r"update\(\) needs float32 points"):
        index.update(moved.astype(np.float64))


# ---- defect 3: thread counts --------------------------------------------------------------


@pytest.mark.parametrize("threads", [2**31, 2**70, _core.MAX_THREADS + 1])
def test_threads_above_the_limit(threads):
    assert spatialhash.MAX_THREADS == _core.MAX_THREADS == 1024
    assert (spatialhash.MIN_RADIUS, spatialhash.MAX_RADIUS) == (2.0**-500, 2.0**500)
    with pytest.raises(ValueError, match=r"threads must be at most 1024 \(the library's limit\)"):
        spatialhash.Index(sample(), 0.1, threads=threads)


def test_workers_errors_name_workers():
    index = spatialhash.Index(sample(), 0.1)
    position = sample(1)[0]
    with pytest.raises(TypeError, match="^workers must be an int or None"):
        index.query_ball_point(position, workers="all")
    with pytest.raises(ValueError, match="^workers must be a positive int"):
        index.query_ball_point(position, workers=0)
    with pytest.raises(ValueError, match="^workers must be at most 1024"):
        index.query_ball_point(position, workers=2**31)
    assert sorted(index.query_ball_point(position, workers=-1)) == oracle_np.balls(
        index.data, position[None], 0.1
    )[0]


# ---- defect 4: radii beyond float64 and outside [2**-500, 2**500] --------------------------


def test_huge_int_arguments_are_value_errors():
    points = sample()
    with pytest.raises(ValueError, match="^radius is " + RANGE):
        spatialhash.Index(points, 10**400)
    index = spatialhash.Index(points, 0.1)
    for call, name in [
        (lambda: index.query_pairs(10**400), "r"),
        (lambda: index.query_ball_point(points[0], 10**400), "r"),
        (lambda: index.neighbor_lists(-(10**400)), "r"),
        (lambda: index.sparse_distance_matrix(None, 10**400), "max_distance"),
    ]:
        with pytest.raises(ValueError, match=f"^{name} is " + RANGE):
            call()
    with pytest.raises(ValueError, match="^p is too large"):
        index.query_pairs(p=10**400)
    with pytest.raises(ValueError, match="^eps is too large"):
        index.query_pairs(eps=10**400)
    assert pair_set(index.query_pairs()) == oracle_np.pairs(points, 0.1)


@pytest.mark.parametrize("radius", [2.0**-501, 1e-200, 2.0**501, 1e300])
def test_index_radius_outside_the_range(radius):
    with pytest.raises(ValueError, match=f"^radius={re.escape(repr(radius))} is " + RANGE):
        spatialhash.Index(sample(), radius)


def test_query_radii_outside_the_range():
    points = sample()
    index = spatialhash.Index(points, 0.1)
    tiny = 2.0**-501
    calls = [
        (lambda: index.query_pairs(tiny), "r"),
        (lambda: index.query_ball_point(points[0], tiny), "r"),
        (lambda: index.query_ball_point(points[:3], tiny), "r"),
        (lambda: index.neighbor_lists(tiny), "r"),
        (lambda: index.count_neighbors_per_point(tiny), "r"),
        (lambda: index.pairs_with_distances(tiny), "r"),
        (lambda: index.sparse_distance_matrix(None, tiny), "max_distance"),
    ]
    for call, name in calls:
        with pytest.raises(ValueError, match=f"^{name}={re.escape(repr(tiny))} is " + RANGE):
            call()
    with pytest.raises(ValueError, match=r"^r\[1\]=" + re.escape(repr(tiny)) + " is " + RANGE):
        index.query_ball_point(points[:3], [0.1, tiny, 0.1])
    assert pair_set(index.query_pairs()) == oracle_np.pairs(points, 0.1)


@pytest.mark.parametrize("scale", [-500, 500])
def test_radius_range_ends_are_accepted(scale):
    # Points scaled by 2**scale (exactly) with radius 2**scale: the pairs of the unit-scale set
    # at radius 1, and the brute force on the scaled points agrees.
    base = np.random.default_rng(4).random((60, 2)) * 4.0
    points = base * 2.0**scale
    radius = 2.0**scale
    index = spatialhash.Index(points, radius)
    expected = oracle_np.pairs(points, radius)
    assert expected == oracle_np.pairs(base, 1.0) and expected
    assert pair_set(index.query_pairs()) == expected
    assert pair_set(index.query_pairs(radius)) == expected
    queries = points[:5]
    assert index.query_ball_point(queries, [radius] * 5).tolist() == oracle_np.balls(
        points, queries, radius
    )


# ---- defect 5: a bad per-position radius is named by its index ----------------------------


def test_bad_per_position_radius_names_the_entry():
    points = sample()
    index = spatialhash.Index(points, 0.1)
    positions = points[:3]
    with pytest.raises(ValueError, match=r"^r\[1\] must be finite and > 0, got nan"):
        index.query_ball_point(positions, [0.01, np.nan, 0.02])
    with pytest.raises(ValueError, match=r"^r\[2\] must be finite and > 0, got -0\.5"):
        index.query_ball_point(positions, [0.01, 0.02, -0.5], return_length=True)
    with pytest.raises(ValueError, match=r"^r\[2\]=0\.5 exceeds the index radius 0\.1"):
        index.query_ball_point(positions, [0.01, 0.02, 0.5])
    grid = points[:6].reshape(2, 3, 3)
    with pytest.raises(ValueError, match=r"^r\[1, 0\] must be finite and > 0, got inf"):
        index.query_ball_point(grid, [[0.01, 0.02, 0.03], [np.inf, 0.01, 0.01]])
    # Broadcast radii are named by their index in r itself.
    with pytest.raises(ValueError, match=r"^r\[0, 1\]=0\.2 exceeds the index radius"):
        index.query_ball_point(grid, [[0.01, 0.2, 0.03]])
    good = [0.01, 0.05, 0.1]
    assert index.query_ball_point(positions, good).tolist() == oracle_np.balls(
        points, positions, good
    )
