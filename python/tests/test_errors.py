"""Every error path: bad input raises ValueError (values, shapes, radii) or TypeError (kinds,
dtypes) with a message naming the problem, and leaves usable objects usable."""

import numpy as np
import pytest

import spatialhash
from spatialhash import _core

POINTS = np.random.default_rng(0).random((50, 3))


@pytest.fixture
def index():
    return spatialhash.Index(POINTS, 0.2)


# ---- construction ---------------------------------------------------------------------------


@pytest.mark.parametrize("axis,name", [(0, "x"), (1, "y"), (2, "z")])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_finite_coordinates_name_the_point(axis, name, bad, dtype):
    points = POINTS.astype(dtype)
    points[17, axis] = bad
    with pytest.raises(ValueError, match=rf"point 17 has a non-finite {name} coordinate"):
        spatialhash.Index(points, 0.2)


@pytest.mark.parametrize(
    "shape", [(10,), (10, 1), (10, 4), (10, 3, 1), (2, 2, 3), ()], ids=str
)
def test_bad_shapes(shape):
    with pytest.raises(ValueError, match=r"shape \(n, 2\) or \(n, 3\)"):
        spatialhash.Index(np.zeros(shape), 1.0)


def test_ragged_input():
    with pytest.raises(ValueError, match="could not be read as a numeric array"):
        spatialhash.Index([[0.0, 1.0], [2.0]], 1.0)


@pytest.mark.parametrize(
    "points",
    [
        np.zeros((4, 3), dtype=complex),
        np.zeros((4, 3), dtype=bool),
        np.array([["a", "b"], ["c", "d"]]),
        np.array([[1.0, None], [2.0, 3.0]], dtype=object),
        [[0.0, "x"], [1.0, 2.0]],
    ],
    ids=["complex", "bool", "str", "object", "list-with-str"],
)
def test_non_numeric_points_are_type_errors(points):
    with pytest.raises(TypeError, match="must hold real numbers"):
        spatialhash.Index(points, 1.0)


@pytest.mark.parametrize("radius", [0.0, -1.0, np.nan, np.inf, -np.inf])
def test_bad_radius_values(radius):
    with pytest.raises(ValueError, match="radius must be finite and > 0"):
        spatialhash.Index(POINTS, radius)


@pytest.mark.parametrize("radius", ["1", None, [1.0], True, 1j])
def test_bad_radius_types(radius):
    with pytest.raises(TypeError, match="radius must be a real number"):
        spatialhash.Index(POINTS, radius)


def test_radius_too_small_for_extent():
    with pytest.raises(ValueError, match="too small for the extent"):
        spatialhash.Index(np.array([[0.0, 0.0], [1e12, 0.0]]), 1e-6)


def test_bad_engine():
    with pytest.raises(ValueError, match=r"unknown engine 'kd_tree'; valid engines: automatic"):
        spatialhash.Index(POINTS, 0.2, engine="kd_tree")
    with pytest.raises(TypeError, match="engine must be a str"):
        spatialhash.Index(POINTS, 0.2, engine=3)


@pytest.mark.parametrize("threads", [0, -2, 10**6])
def test_bad_thread_counts(threads):
    with pytest.raises(ValueError, match="threads must be"):
        spatialhash.Index(POINTS, 0.2, threads=threads)


@pytest.mark.parametrize("threads", [1.5, "2", True])
def test_bad_thread_types(threads):
    with pytest.raises(TypeError, match="threads must be an int"):
        spatialhash.Index(POINTS, 0.2, threads=threads)


def test_positional_engine_is_rejected():
    with pytest.raises(TypeError):
        spatialhash.Index(POINTS, 0.2, "brute_force")


# ---- queries --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda ix, r: ix.query_pairs(r),
        lambda ix, r: ix.query_ball_point(POINTS[0], r),
        lambda ix, r: ix.neighbor_lists(r),
        lambda ix, r: ix.neighbor_rows(r),
        lambda ix, r: ix.cross_lists(POINTS[:3], r),
        lambda ix, r: ix.cross_rows(POINTS[:3], r),
        lambda ix, r: ix.count_neighbors_per_point(r),
        lambda ix, r: ix.pairs_with_distances(r),
        lambda ix, r: ix.sparse_distance_matrix(None, r),
    ],
    ids=[
        "query_pairs",
        "ball",
        "lists",
        "rows",
        "cross_lists",
        "cross_rows",
        "counts",
        "distances",
        "sparse",
    ],
)
@pytest.mark.parametrize(
    "r,error,message",
    [
        (0.3, ValueError, "exceeds the index radius"),
        (0.0, ValueError, "must be finite and > 0"),
        (-0.1, ValueError, "must be finite and > 0"),
        (np.nan, ValueError, "must be finite and > 0"),
        ("0.1", TypeError, "must be a real number"),
    ],
)
def test_bad_query_radius(index, call, r, error, message):
    with pytest.raises(error, match=message):
        call(index, r)
    assert len(index.query_pairs()) == len(spatialhash.Index(POINTS, 0.2).query_pairs())


def test_bad_per_position_radii(index):
    positions = POINTS[:4]
    with pytest.raises(ValueError, match="does not broadcast"):
        index.query_ball_point(positions, [0.1, 0.1])
    with pytest.raises(ValueError, match="exceeds the index radius"):
        index.query_ball_point(positions, [0.1, 0.1, 0.5, 0.1])
    with pytest.raises(ValueError, match="must be finite and > 0"):
        index.query_ball_point(positions, [0.1, np.nan, 0.1, 0.1])
    with pytest.raises(ValueError, match="must be finite and > 0"):
        index.query_ball_point(positions, [0.1, 0.1, 0.0, 0.1])
    with pytest.raises(TypeError, match="must hold real numbers"):
        index.query_ball_point(positions, ["a", "b", "c", "d"])


@pytest.mark.parametrize("x", [[0.0, 0.0], [[0.0, 0.0, 0.0, 0.0]], 0.5, np.zeros((2, 2))])
def test_ball_position_of_wrong_dimension(index, x):
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., 3\)"):
        index.query_ball_point(x)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_ball_position_not_finite(index, bad):
    positions = [[0.0, 0.0, 0.0], [0.0, 0.0, bad]]
    for kwargs in ({}, {"r": [0.1, 0.1]}, {"return_length": True}):
        with pytest.raises(ValueError, match="query position 1 has a non-finite coordinate 2"):
            index.query_ball_point(positions, **kwargs)
    with pytest.raises(ValueError, match="query point 1 has a non-finite coordinate 2"):
        index.sparse_distance_matrix(positions)
    for cross in (index.cross_lists, index.cross_rows):
        with pytest.raises(ValueError, match="query point 1 has a non-finite coordinate 2"):
            cross(positions)
        with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., 3\)"):
            cross([[0.0, 0.0]])
        with pytest.raises(TypeError, match="must hold real numbers"):
            cross(["a", "b", "c"])


def test_index_dtype_must_be_int32_or_int64(index):
    calls = (
        lambda **kw: index.neighbor_lists(**kw),
        lambda **kw: index.neighbor_rows(**kw),
        lambda **kw: index.cross_lists(POINTS[:3], **kw),
        lambda **kw: index.cross_rows(POINTS[:3], **kw),
        lambda **kw: (index.query_pairs(**kw),),
        lambda **kw: index.pairs_with_distances(**kw)[:1],
    )
    for call in calls:
        for bad in (np.float32, np.uint32, np.int16, "float64"):
            with pytest.raises(ValueError, match="index_dtype must be numpy.int32 or numpy.int64"):
                call(index_dtype=bad)
        for bad in ("no such type", object()):
            with pytest.raises(TypeError, match="index_dtype must be numpy.int32 or numpy.int64"):
                call(index_dtype=bad)
        # Still usable, both dtypes.
        assert call(index_dtype=np.int32)[-1].dtype == np.int32
        assert call(index_dtype=np.int64)[-1].dtype == np.int64


def test_ball_position_not_numeric(index):
    with pytest.raises(TypeError, match="must hold real numbers"):
        index.query_ball_point(["a", "b", "c"])


@pytest.mark.parametrize(
    "kwargs,error,message",
    [
        ({"p": 1}, ValueError, r"only the Euclidean distance is supported \(p=2\)"),
        ({"p": np.inf}, ValueError, "only the Euclidean distance"),
        ({"eps": -1.0}, ValueError, "eps must be >= 0"),
        ({"p": "2"}, TypeError, "p must be a real number"),
    ],
)
def test_scipy_compatibility_arguments(index, kwargs, error, message):
    with pytest.raises(error, match=message):
        index.query_pairs(**kwargs)
    with pytest.raises(error, match=message):
        index.query_ball_point(POINTS[0], **kwargs)


def test_bad_output_types(index):
    with pytest.raises(ValueError, match="output_type must be one of 'ndarray', 'set'"):
        index.query_pairs(output_type="list")
    with pytest.raises(TypeError, match="output_type must be a str"):
        index.query_pairs(output_type=None)
    with pytest.raises(ValueError, match="output_type must be one of 'coo_matrix'"):
        index.sparse_distance_matrix(output_type="lil_matrix")
    with pytest.raises(ValueError, match="p=2"):
        index.sparse_distance_matrix(p=1.0)


def test_sparse_other_of_wrong_dimension(index):
    with pytest.raises(ValueError, match="other has dimension 2, this index 3"):
        index.sparse_distance_matrix(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="other has dimension 2, this index 3"):
        index.sparse_distance_matrix(spatialhash.Index(np.zeros((4, 2)), 1.0))
    with pytest.raises(ValueError, match="non-finite"):
        index.sparse_distance_matrix(np.full((4, 3), np.nan))


def test_workers_is_checked(index):
    with pytest.raises(TypeError, match="^workers must be an int"):
        index.query_ball_point(POINTS[0], workers="all")


# ---- update ---------------------------------------------------------------------------------


def test_update_errors_leave_the_index_unchanged(index):
    before = index.query_pairs(output_type="set")
    with pytest.raises(ValueError, match=r"update\(\) needs shape \(50, 3\)"):
        index.update(POINTS[:10])
    with pytest.raises(TypeError, match=r"update\(\) needs float64 points"):
        index.update(POINTS.astype(np.float32))
    moved = POINTS.copy()
    moved[3, 1] = np.nan
    with pytest.raises(ValueError, match="point 3 has a non-finite y coordinate"):
        index.update(moved)
    assert index.query_pairs(output_type="set") == before


# ---- the raw extension (its own checks, for callers that bypass the Python layer) ----------


def test_core_checks_its_arguments():
    with pytest.raises(TypeError, match="float32 or float64"):
        _core.Index(np.zeros((3, 3), dtype=np.int32), 1.0)
    with pytest.raises(ValueError, match="C-contiguous"):
        _core.Index(np.zeros((3, 6))[:, ::2], 1.0)
    with pytest.raises(ValueError, match=r"shape \(n, 2\) or \(n, 3\)"):
        _core.Index(np.zeros((3, 5)), 1.0)
    core = _core.Index(np.zeros((3, 3)), 1.0)
    with pytest.raises(ValueError, match=r"query positions must have shape \(m, 3\)"):
        core.cross(np.zeros((2, 2)), 1.0, False, False, False)
    with pytest.raises(ValueError, match=r"query positions must have shape \(m, 3\)"):
        core.cross_rows(np.zeros((2, 2)), 1.0, False, False, False)
    with pytest.raises(ValueError, match="2 radii for 3 query positions"):
        core.balls(np.zeros((3, 3)), np.ones(2), False)
    with pytest.raises(ValueError, match="out of order"):
        _core.split_rows(np.array([0, 3, 1]), np.arange(3))
    with pytest.raises(ValueError, match="out of order"):
        _core.split_rows(np.array([0, 5]), np.arange(3))
