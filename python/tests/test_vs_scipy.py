"""spatialhash against scipy.spatial.cKDTree and the NumPy brute force on random, clustered,
lattice and duplicate-heavy data, 2D and 3D, float32 and float64. Radii are nudged away from
every pair distance (oracle_np.radius_away_from_pairs) so cKDTree's rounding cannot differ."""

import numpy as np
import pytest
from scipy.spatial import cKDTree

import oracle_np
import spatialhash

N = 1500
RADIUS = {2: 0.05, 3: 0.12}

CASES = [
    (kind, dim, dtype)
    for kind in oracle_np.DATASETS
    for dim in (2, 3)
    for dtype in (np.float32, np.float64)
]


def make_case(kind, dim, dtype, seed=0):
    rng = np.random.default_rng([seed, dim, list(oracle_np.DATASETS).index(kind)])
    points = oracle_np.DATASETS[kind](rng, N, dim).astype(dtype)
    r = oracle_np.radius_away_from_pairs(points, RADIUS[dim])
    return points, r


def as_pair_set(array, dtype=np.int64):
    assert array.ndim == 2 and array.shape[1] == 2 and array.dtype == dtype
    assert np.all(array[:, 0] < array[:, 1])
    result = set(map(tuple, array.tolist()))
    assert len(result) == len(array), "a pair was reported twice"
    return result


@pytest.mark.parametrize("kind,dim,dtype", CASES)
def test_query_pairs_matches_ckdtree(kind, dim, dtype):
    points, r = make_case(kind, dim, dtype)
    index = spatialhash.Index(points, r)
    expected = cKDTree(points).query_pairs(r)
    assert len(expected) > 0
    assert as_pair_set(index.query_pairs()) == expected
    assert index.query_pairs(output_type="set") == expected
    assert expected == oracle_np.pairs(points, r)
    # int32 (the library's own pairs, no int64 copy): the same pairs; a set is the same set.
    assert as_pair_set(index.query_pairs(index_dtype=np.int32), np.int32) == expected
    assert index.query_pairs(output_type="set", index_dtype=np.int32) == expected


@pytest.mark.parametrize("kind,dim,dtype", CASES)
def test_query_ball_point_matches_ckdtree(kind, dim, dtype):
    points, r = make_case(kind, dim, dtype)
    rng = np.random.default_rng(7)
    # Half the positions are indexed points (a point finds itself), half anywhere in the box.
    lo, hi = points.min(axis=0), points.max(axis=0)
    positions = np.concatenate(
        [points[rng.integers(0, N, 100)].astype(np.float64), lo + (hi - lo) * rng.random((100, dim))]
    )
    r = oracle_np.radius_away_from_pairs(points, r, positions)
    tree = cKDTree(points)
    index = spatialhash.Index(points, r)

    ours = index.query_ball_point(positions)
    theirs = tree.query_ball_point(positions, r, return_sorted=True)
    assert ours.shape == theirs.shape == (len(positions),)
    assert [list(row) for row in ours] == [list(row) for row in theirs]
    assert [list(row) for row in ours] == oracle_np.balls(points, positions, r)

    lengths = index.query_ball_point(positions, return_length=True)
    assert lengths.tolist() == tree.query_ball_point(positions, r, return_length=True).tolist()

    # Fewer positions than make a batch (64) are searched one by one: the same answers.
    for few in (positions[:63], positions[100:105]):
        rows = index.query_ball_point(few)
        assert [list(row) for row in rows] == oracle_np.balls(points, few, r)
        lengths = index.query_ball_point(few, return_length=True)
        assert lengths.tolist() == [len(row) for row in rows]

    # Every position on its own (the single-position path, no batch): the same rows.
    expected = oracle_np.balls(points, positions, r)
    assert [index.query_ball_point(q, return_sorted=True) for q in positions] == expected
    assert [index.query_ball_point(q, return_length=True) for q in positions] == [
        len(row) for row in expected
    ]

    # The native cross queries: CSR rows and NeighborRows, unsorted and sorted, with distances.
    offsets, indices = index.cross_lists(positions, sort=True)
    assert offsets.dtype == indices.dtype == np.int64 and len(offsets) == len(positions) + 1
    assert [indices[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == expected
    offsets, indices, distances = index.cross_lists(positions, return_distances=True)
    assert [sorted(indices[a:b].tolist()) for a, b in zip(offsets[:-1], offsets[1:])] == expected
    owner = np.repeat(np.arange(len(positions)), np.diff(offsets))
    np.testing.assert_allclose(
        distances, np.linalg.norm(positions[owner] - points[indices].astype(np.float64), axis=1)
    )
    start, count, indices = index.cross_rows(positions, sort=True)
    assert start.dtype == count.dtype == indices.dtype == np.int64
    assert [indices[s : s + c].tolist() for s, c in zip(start, count)] == expected
    covered = np.zeros(len(indices), dtype=np.int64)
    for s, c in zip(start, count):
        covered[s : s + c] += 1
    assert covered.max(initial=0) <= 1 and (indices[covered == 0] == -1).all()
    start, count, indices, distances = index.cross_rows(positions, return_distances=True)
    assert [sorted(indices[s : s + c].tolist()) for s, c in zip(start, count)] == expected
    entries = np.concatenate([np.arange(s, s + c) for s, c in zip(start, count)])
    owner = np.repeat(np.arange(len(positions)), count)
    np.testing.assert_allclose(
        distances[entries],
        np.linalg.norm(positions[owner] - points[indices[entries]].astype(np.float64), axis=1),
    )
    assert np.isnan(distances[covered == 0]).all()
    # int32 indices: the same rows, -1 between the rows of cross_rows.
    offsets, indices = index.cross_lists(positions, sort=True, index_dtype=np.int32)
    assert offsets.dtype == np.int64 and indices.dtype == np.int32
    assert [indices[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == expected
    start, count, indices = index.cross_rows(positions, sort=True, index_dtype=np.int32)
    assert start.dtype == np.int64 and count.dtype == indices.dtype == np.int32
    assert [indices[s : s + c].tolist() for s, c in zip(start, count)] == expected
    covered = np.zeros(len(indices), dtype=np.int64)
    for s, c in zip(start, count):
        covered[s : s + c] += 1
    assert (indices[covered == 0] == -1).all()
    # Leading axes are flattened; a smaller radius.
    start, count, indices = index.cross_rows(positions.reshape(2, -1, dim), r * 0.5, sort=True)
    assert [indices[s : s + c].tolist() for s, c in zip(start, count)] == oracle_np.balls(
        points, positions, r * 0.5
    )

    single = index.query_ball_point(positions[0])
    assert isinstance(single, list)
    assert sorted(single) == sorted(tree.query_ball_point(positions[0], r))
    assert index.query_ball_point(positions[0], return_sorted=True) == sorted(single)
    assert index.query_ball_point(positions[0], return_length=True) == len(single)


@pytest.mark.parametrize("dim", (2, 3))
def test_query_ball_point_per_position_radii_and_nd_shapes(dim):
    points, r = make_case("clustered", dim, np.float64, seed=3)
    rng = np.random.default_rng(11)
    positions = points[rng.integers(0, N, 24)].reshape(4, 6, dim)
    radii = r * rng.uniform(0.2, 1.0, size=(4, 6))
    flat_radii = radii.reshape(-1)
    ours = spatialhash.Index(points, r).query_ball_point(positions, radii)
    theirs = cKDTree(points).query_ball_point(positions, radii, return_sorted=True)
    assert ours.shape == theirs.shape == (4, 6)
    expected = oracle_np.balls(points, positions.reshape(-1, dim), flat_radii)
    assert [list(row) for row in ours.reshape(-1)] == expected
    # cKDTree may round differently only for distances within 1e-9 of a radius.
    for q, (pos, rad) in enumerate(zip(positions.reshape(-1, dim), flat_radii)):
        if not oracle_np.near_r(points, pos[None, :], rad):
            assert list(ours.reshape(-1)[q]) == list(theirs.reshape(-1)[q])
    # A radius array broadcast along one axis.
    column = r * np.array([[0.3], [0.5], [0.7], [1.0]])
    broadcast = spatialhash.Index(points, r).query_ball_point(positions, column)
    expected = oracle_np.balls(
        points, positions.reshape(-1, dim), np.broadcast_to(column, (4, 6)).reshape(-1)
    )
    assert [list(row) for row in broadcast.reshape(-1)] == expected


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_sparse_distance_matrix_matches_ckdtree(dtype):
    points, r = make_case("uniform", 3, dtype, seed=5)
    others = np.random.default_rng(2).random((300, 3)).astype(dtype)
    r = oracle_np.radius_away_from_pairs(points, r, others)
    index = spatialhash.Index(points, r)
    tree = cKDTree(points)

    for other_arg, other_tree in ((None, tree), (others, cKDTree(others))):
        ours = index.sparse_distance_matrix(other_arg, r)
        theirs = tree.sparse_distance_matrix(other_tree, r, output_type="coo_matrix")
        assert ours.shape == theirs.shape
        ours_dict = {(i, j): v for i, j, v in zip(ours.row, ours.col, ours.data)}
        theirs_dict = {(i, j): v for i, j, v in zip(theirs.row, theirs.col, theirs.data)}
        assert ours_dict.keys() == theirs_dict.keys()
        keys = list(ours_dict)
        np.testing.assert_allclose(
            [ours_dict[k] for k in keys], [theirs_dict[k] for k in keys], rtol=1e-12, atol=0
        )
        csr = index.sparse_distance_matrix(other_arg, r, output_type="csr_matrix")
        assert abs(csr - theirs.tocsr()).max() <= 1e-12 * r
        as_dict = index.sparse_distance_matrix(other_arg, r, output_type="dict")
        assert as_dict.keys() == theirs_dict.keys()
        structured = index.sparse_distance_matrix(other_arg, r, output_type="ndarray")
        theirs_structured = tree.sparse_distance_matrix(other_tree, r, output_type="ndarray")
        assert structured.dtype == theirs_structured.dtype
        assert len(structured) == len(theirs_structured)
        structured_dict = dict(
            zip(zip(structured["i"].tolist(), structured["j"].tolist()), structured["v"].tolist())
        )
        assert structured_dict.keys() == theirs_dict.keys()
        np.testing.assert_allclose(
            [structured_dict[k] for k in keys], [theirs_dict[k] for k in keys], rtol=1e-12, atol=0
        )
        # SciPy's index type for the shape (int32 here): no copy in coo_matrix.
        assert ours.row.dtype == ours.col.dtype == theirs.row.dtype


@pytest.mark.parametrize("kind,dim,dtype", CASES[::3])
def test_native_extras_match_oracle(kind, dim, dtype):
    points, r = make_case(kind, dim, dtype, seed=9)
    index = spatialhash.Index(points, r)
    expected_lists = oracle_np.neighbor_sets(points, r)

    for low_memory in (False, True):
        offsets, indices = index.neighbor_lists(sort=True, low_memory=low_memory)
        assert offsets.dtype == indices.dtype == np.int64
        assert len(offsets) == N + 1 and offsets[0] == 0 and offsets[-1] == len(indices)
        assert [indices[offsets[i] : offsets[i + 1]].tolist() for i in range(N)] == expected_lists

    offsets, indices, distances = index.neighbor_lists(return_distances=True)
    rows = np.repeat(np.arange(N), np.diff(offsets))
    reference = points.astype(np.float64)
    np.testing.assert_allclose(
        distances, np.linalg.norm(reference[rows] - reference[indices], axis=1), rtol=1e-12
    )

    counts = index.count_neighbors_per_point()
    assert counts.dtype == np.int64
    assert counts.tolist() == [len(row) for row in expected_lists]

    # The same lists as rows where the search wrote them: each in bounds, no two overlapping,
    # every other entry -1; sorted rows equal the oracle's, distances those of the pairs.
    start, count, indices = index.neighbor_rows(sort=True)
    assert start.dtype == count.dtype == indices.dtype == np.int64
    assert len(start) == len(count) == N
    assert [indices[start[i] : start[i] + count[i]].tolist() for i in range(N)] == expected_lists
    covered = np.zeros(len(indices), dtype=np.int64)
    for i in range(N):
        covered[start[i] : start[i] + count[i]] += 1
    assert covered.max(initial=0) <= 1 and (indices[covered == 0] == -1).all()
    start, count, indices, distances = index.neighbor_rows(return_distances=True)
    rows = np.repeat(np.arange(N), count)
    entries = np.concatenate([np.arange(s, s + c) for s, c in zip(start, count)])
    np.testing.assert_allclose(
        distances[entries],
        np.linalg.norm(reference[rows] - reference[indices[entries]], axis=1),
        rtol=1e-12,
    )
    assert sorted(map(sorted, [indices[s : s + c].tolist() for s, c in zip(start, count)])) == sorted(
        expected_lists
    )

    # int32 indices (the library's arrays, no int64 copy): the same lists, rows and counts.
    offsets, indices = index.neighbor_lists(sort=True, index_dtype=np.int32)
    assert offsets.dtype == np.int64 and indices.dtype == np.int32
    assert [indices[offsets[i] : offsets[i + 1]].tolist() for i in range(N)] == expected_lists
    offsets, indices, distances = index.neighbor_lists(return_distances=True, index_dtype="int32")
    rows = np.repeat(np.arange(N), np.diff(offsets))
    np.testing.assert_allclose(
        distances, np.linalg.norm(reference[rows] - reference[indices], axis=1), rtol=1e-12
    )
    start, count, indices = index.neighbor_rows(sort=True, index_dtype=np.int32)
    assert start.dtype == np.int64 and count.dtype == indices.dtype == np.int32
    assert [indices[start[i] : start[i] + count[i]].tolist() for i in range(N)] == expected_lists
    covered = np.zeros(len(indices), dtype=np.int64)
    for i in range(N):
        covered[start[i] : start[i] + count[i]] += 1
    assert covered.max(initial=0) <= 1 and (indices[covered == 0] == -1).all()

    pairs, dists = index.pairs_with_distances(sort=True)
    expected = oracle_np.pair_distances(points, r)
    assert pairs.tolist() == sorted(map(list, expected))
    np.testing.assert_allclose(dists, [expected[tuple(p)] for p in pairs.tolist()], rtol=1e-15)
    pairs, dists = index.pairs_with_distances(index_dtype=np.int32)
    assert pairs.dtype == np.int32 and pairs.shape == (len(expected), 2)
    assert sorted(map(list, pairs.tolist())) == sorted(map(list, expected))
    np.testing.assert_allclose(dists, [expected[tuple(p)] for p in pairs.tolist()], rtol=1e-15)


@pytest.mark.parametrize("kind", list(oracle_np.DATASETS))
def test_smaller_query_radius_matches_ckdtree(kind):
    points, r = make_case(kind, 3, np.float64, seed=4)
    index = spatialhash.Index(points, r)
    tree = cKDTree(points)
    for fraction in (0.25, 0.5, 0.9):
        q = oracle_np.radius_away_from_pairs(points, r * fraction)
        assert as_pair_set(index.query_pairs(q)) == tree.query_pairs(q)
        expected = oracle_np.neighbor_sets(points, q)
        assert index.count_neighbors_per_point(q).tolist() == list(map(len, expected))
