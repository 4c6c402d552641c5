"""Periodic boxes (Index(..., boxsize=...)) against scipy.spatial.cKDTree(boxsize=...) and a
NumPy minimum-image brute force: 2D and 3D, float32 and float64, all or some axes periodic,
points outside the box; plus update(), pickling and the error paths. Radii are nudged away from
every minimum-image distance so cKDTree's own rounding cannot differ from the exact rule."""

import pickle

import numpy as np
import pytest
from scipy.spatial import cKDTree

import spatialhash

N = 600


def periodic_axes(boxsize, dim):
    box = np.broadcast_to(np.asarray(boxsize, dtype=np.float64), (dim,))
    return box, (box > 0) & np.isfinite(box)


def wrap(points, boxsize):
    """Into [0, L) on periodic axes, independently of spatialhash (np.mod, then the seam)."""
    x = np.array(points, dtype=np.float64)
    box, periodic = periodic_axes(boxsize, x.shape[-1])
    for k in np.flatnonzero(periodic):
        w = np.mod(x[..., k], box[k])
        w[w >= box[k]] = 0.0
        x[..., k] = w
    return x


def min_image_distances(points, boxsize):
    """Every pair's minimum-image distance (n, n), in float64."""
    x = wrap(points, boxsize)
    box, periodic = periodic_axes(boxsize, x.shape[1])
    d = x[:, None, :] - x[None, :, :]
    for k in np.flatnonzero(periodic):
        d[..., k] -= box[k] * np.round(d[..., k] / box[k])
    return np.sqrt((d * d).sum(axis=-1))


def radius_away(points, boxsize, r):
    dist = min_image_distances(points, boxsize)
    for _ in range(100):
        if not np.any(np.abs(dist - r) < 1e-9 * max(r, 1.0)):
            return r
        r *= 1.0 + 1e-6
    raise AssertionError("no radius away from every distance")


def make_points(dim, dtype, boxsize, seed, outside=False):
    rng = np.random.default_rng([seed, dim])
    box, periodic = periodic_axes(boxsize, dim)
    extent = np.where(periodic, box, 4.0)
    points = rng.random((N, dim)) * extent
    if outside:  # move by whole boxes, negative included, on periodic axes only
        points += rng.integers(-4, 5, size=(N, dim)) * np.where(periodic, box, 0.0)
    return points.astype(dtype)


def pair_set(array):
    assert array.ndim == 2 and np.all(array[:, 0] < array[:, 1])
    result = set(map(tuple, array.tolist()))
    assert len(result) == len(array), "a pair was reported twice"
    return result


CASES = [
    (dim, dtype, boxsize, outside)
    for dim in (2, 3)
    for dtype in (np.float32, np.float64)
    for boxsize in ("scalar", "per_axis", "mixed")
    for outside in (False, True)
]


def boxsize_of(kind, dim):
    if kind == "scalar":
        return 1.0
    if kind == "per_axis":
        return [1.0, 1.3, 0.9][:dim]
    return [1.0, 0.0, np.inf][:dim]  # axis 0 periodic, the others open (cKDTree's convention)


@pytest.mark.parametrize("dim,dtype,kind,outside", CASES)
def test_matches_ckdtree(dim, dtype, kind, outside):
    boxsize = boxsize_of(kind, dim)
    points = make_points(dim, dtype, boxsize, seed=1, outside=outside)
    r = radius_away(points.astype(np.float64), boxsize, 0.11 if dim == 2 else 0.2)
    index = spatialhash.Index(points, r, boxsize=boxsize)
    # cKDTree's ball queries mishandle an inf entry (its pairs do not): give it 0, also open.
    tree_box = np.where(np.isfinite(np.broadcast_to(boxsize, (dim,))), boxsize, 0.0)
    tree = cKDTree(wrap(points, boxsize), boxsize=tree_box)

    want = set(map(tuple, tree.query_pairs(r, output_type="ndarray").tolist()))
    assert len(want) > 100
    assert pair_set(index.query_pairs()) == want

    # Lists symmetric and equal to the tree's; counts their lengths.
    offsets, indices = index.neighbor_lists(sort=True)
    counts = index.count_neighbors_per_point()
    rows = tree.query_ball_point(wrap(points, boxsize), r, return_sorted=True)
    for i in range(N):
        mine = indices[offsets[i] : offsets[i + 1]].tolist()
        assert mine == [j for j in rows[i] if j != i]
        assert counts[i] == len(mine)

    # Ball queries at positions in and far outside the box (cKDTree wraps them itself).
    rng = np.random.default_rng(7)
    queries = (rng.random((40, dim)) * 5.0 - 2.0).astype(np.float64)
    qr = radius_away(np.vstack([points.astype(np.float64), queries]), boxsize, 0.8 * r)
    got = index.query_ball_point(queries, qr, return_sorted=True)
    ref = tree.query_ball_point(queries, qr, return_sorted=True)
    for q in range(len(queries)):
        assert got[q] == ref[q], f"ball {q} at {queries[q]}"
        # One position at a time (searched without the batch): the same row.
        one = index.query_ball_point(queries[q], qr, return_sorted=True)
        assert one == ref[q], f"single ball {q} at {queries[q]}"
        assert index.query_ball_point(queries[q], qr, return_length=True) == len(ref[q])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_distances_and_sparse_matrix_use_minimum_image(dtype):
    boxsize = [1.0, 1.2, 0.8]
    points = make_points(3, dtype, boxsize, seed=3, outside=True)
    r = radius_away(points.astype(np.float64), boxsize, 0.15)
    index = spatialhash.Index(points, r, boxsize=boxsize)
    dist = min_image_distances(points.astype(np.float64), boxsize)
    pairs, distances = index.pairs_with_distances()
    np.testing.assert_allclose(distances, dist[pairs[:, 0], pairs[:, 1]], rtol=1e-12, atol=1e-15)
    tree = cKDTree(wrap(points, boxsize), boxsize=boxsize)
    off_diagonal = lambda d: {key: v for key, v in d.items() if key[0] != key[1]}  # noqa: E731
    mine = off_diagonal(index.sparse_distance_matrix(max_distance=r, output_type="dict"))
    ref = off_diagonal(tree.sparse_distance_matrix(tree, r, output_type="dict"))
    assert len(ref) > 100 and set(mine) == set(ref)
    for key, value in ref.items():
        assert mine[key] == pytest.approx(value, rel=1e-12, abs=1e-15)


def test_self_sparse_matrix_is_symmetric_at_a_tie_across_the_seam():
    # Two points across the x seam, r exactly their distance by the pair rule (w_i - (w_j + sL)
    # with i < j). A ball query from point 1 rounds its image of point 0 the other way and finds
    # it just outside r; the self matrix is the pairs in both directions, so it stays symmetric.
    a, b = 0.025591081235012837, 0.9975231848162968
    points = np.array([[a, 0.5], [b, 0.5]])
    r = abs(a - (b - 1.0))
    assert abs(b - (a + 1.0)) > r  # the tie this test is about: each side rounds differently
    for engine in spatialhash.engines():
        index = spatialhash.Index(points, r, boxsize=1.0, engine=engine)
        assert index.query_pairs().tolist() == [[0, 1]]
        matrix = index.sparse_distance_matrix(output_type="dict")
        assert set(matrix) == {(0, 0), (0, 1), (1, 0), (1, 1)}, engine
        assert matrix[(0, 1)] == matrix[(1, 0)] == index.pairs_with_distances()[1][0]
        assert matrix[(0, 0)] == matrix[(1, 1)] == 0.0


def test_narrow_box_reports_each_pair_once():
    # Boxes only 2.1 r wide: the stencil wraps onto itself.
    points = make_points(3, np.float64, 1.0, seed=4)[:200]
    r = radius_away(points, 1.0, 1.0 / 2.1)
    index = spatialhash.Index(points, r, boxsize=1.0)
    tree = cKDTree(points, boxsize=1.0)
    assert pair_set(index.query_pairs()) == tree.query_pairs(r)


def test_update_with_drifting_points_and_pickle():
    boxsize = [1.0, 1.0]
    rng = np.random.default_rng(5)
    points = rng.random((N, 2))
    index = spatialhash.Index(points, 0.08, boxsize=boxsize)
    for step in range(3):
        points = points + rng.normal(0.0, 0.3, points.shape)  # drifts out, never wrapped here
        index.update(points)
        r = radius_away(points, boxsize, 0.08)
        if r != 0.08:
            continue  # a distance within rounding of r: cKDTree may legitimately differ
        tree = cKDTree(wrap(points, boxsize), boxsize=boxsize)
        assert pair_set(index.query_pairs()) == tree.query_pairs(0.08), f"step {step}"
    copy = pickle.loads(pickle.dumps(index))
    assert copy.boxsize.tolist() == [1.0, 1.0]
    assert pair_set(copy.query_pairs()) == pair_set(index.query_pairs())
    assert "boxsize=[1.0, 1.0]" in repr(index)
    assert spatialhash.Index(points, 0.08).boxsize is None


def test_errors_name_the_axis():
    points = np.random.default_rng(6).random((10, 3))
    message = r"radius 0\.5 is not below half the box edge 1 on axis 1 \(y\)"
    with pytest.raises(ValueError, match=message):
        spatialhash.Index(points, 0.5, boxsize=[2.0, 1.0, 2.0])
    with pytest.raises(ValueError, match=r"axis 0 \(x\)"):
        spatialhash.Index(points, 0.6, boxsize=1.0)
    with pytest.raises(ValueError, match=r"boxsize\[2\] \(axis 2, z\) is nan"):
        spatialhash.Index(points, 0.1, boxsize=[1.0, 1.0, np.nan])
    with pytest.raises(ValueError, match=r"3 entries"):
        spatialhash.Index(points, 0.1, boxsize=[1.0, 1.0])
    with pytest.raises(TypeError, match="boxsize"):
        spatialhash.Index(points, 0.1, boxsize="big")
    # An open axis (0) does not limit the radius.
    assert spatialhash.Index(points, 0.6, boxsize=[2.0, 0.0, 2.0]).radius == 0.6
