"""The Python API itself: input handling (copies or not, kept alive), properties, return types,
update(), threads, empty input, concurrent use from Python threads, forked workers, and
documentation."""

import gc
import itertools
import multiprocessing
import pickle
import threading

import numpy as np
import pytest

import oracle_np
import spatialhash


def sample(n=800, dim=3, dtype=np.float64, seed=0):
    return np.random.default_rng([seed, dim]).random((n, dim)).astype(dtype)


def pair_set(index, r=None):
    return set(map(tuple, index.query_pairs(r).tolist()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_contiguous_float_input_is_not_copied(dtype):
    points = sample(dtype=dtype)
    index = spatialhash.Index(points, 0.1)
    assert np.shares_memory(index.data, points)
    assert index.data.dtype == dtype
    assert not index.data.flags.writeable
    assert points.flags.writeable  # the caller's array is left as it was


@pytest.mark.parametrize(
    "convert",
    [
        lambda p: p.tolist(),
        lambda p: np.asfortranarray(p),
        lambda p: np.concatenate([p, p], axis=1)[:, ::2],
        lambda p: (p * 1000).astype(np.int32),
        lambda p: p.astype(np.float16),
        lambda p: p.astype(">f8"),
    ],
    ids=["list", "fortran", "strided", "int32", "float16", "big-endian"],
)
def test_other_input_is_converted_once(convert):
    original = sample(200)
    given = convert(original)
    index = spatialhash.Index(given, 100.0 if np.asarray(given).dtype.kind == "i" else 0.1)
    reference = np.asarray(given, dtype=np.float64)
    assert index.data.dtype == np.float64
    assert index.data.flags.c_contiguous
    np.testing.assert_array_equal(index.data, reference)
    assert pair_set(index) == oracle_np.pairs(reference, index.radius)


@pytest.mark.parametrize("make", [lambda: sample(), lambda: sample().tolist()], ids=["array", "list"])
def test_points_are_kept_alive(make):
    points = make()
    expected = oracle_np.pairs(np.asarray(points, dtype=np.float64), 0.1)
    index = spatialhash.Index(points, 0.1)
    del points
    gc.collect()
    garbage = [np.full((800, 3), 1e6) for _ in range(20)]  # reuse the freed memory, if any
    assert pair_set(index) == expected
    del garbage


def test_read_only_input_is_used_in_place():
    points = sample(300)
    points.flags.writeable = False
    index = spatialhash.Index(points, 0.1)
    assert np.shares_memory(index.data, points)
    assert pair_set(index) == oracle_np.pairs(points, 0.1)


def test_pickle_round_trip():
    index = spatialhash.Index(sample(400, dim=2, dtype=np.float32), 0.05, threads=1)
    copy = pickle.loads(pickle.dumps(index))
    assert repr(copy) == repr(index)
    assert np.array_equal(copy.data, index.data) and copy.data.dtype == np.float32
    assert pair_set(copy) == pair_set(index)


def test_properties_and_repr():
    points = sample(dim=2, dtype=np.float32)
    index = spatialhash.Index(points, 0.05, engine="brute_force", threads=1)
    assert (index.n, index.m, len(index)) == (800, 2, 800)
    assert index.radius == 0.05
    assert index.engine == "brute_force"
    assert index.threads == 1
    assert repr(index) == (
        "spatialhash.Index(n=800, dim=2, dtype=float32, radius=0.05, engine='brute_force', "
        "threads=1)"
    )
    assert spatialhash.engines()[0] == "automatic"
    assert "brute_force" in spatialhash.engines()
    assert spatialhash.__version__


def test_default_threads_use_all_cores():
    assert spatialhash.Index(sample(), 0.1).threads >= 1
    assert spatialhash.Index(sample(), 0.1, threads=-1).threads >= 1
    assert spatialhash.Index(sample(), 0.1, threads=3).threads == 3


def test_results_do_not_depend_on_threads():
    points = sample(2000)
    one = spatialhash.Index(points, 0.08, threads=1)
    three = spatialhash.Index(points, 0.08, threads=3)
    assert pair_set(one) == pair_set(three)
    a, b = one.neighbor_lists(sort=True), three.neighbor_lists(sort=True)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert np.array_equal(one.count_neighbors_per_point(), three.count_neighbors_per_point())


def test_return_types_follow_scipy():
    index = spatialhash.Index(sample(), 0.1)
    pairs = index.query_pairs()
    assert isinstance(pairs, np.ndarray) and pairs.dtype == np.int64 and pairs.shape[1] == 2
    as_set = index.query_pairs(output_type="set")
    assert isinstance(as_set, set) and all(type(i) is int for pair in as_set for i in pair)
    one = index.query_ball_point([0.5, 0.5, 0.5])
    assert isinstance(one, list) and all(type(i) is int for i in one)
    many = index.query_ball_point([[0.5, 0.5, 0.5], [0.1, 0.1, 0.1]])
    assert many.dtype == object and many.shape == (2,) and isinstance(many[0], list)
    assert many[0] == sorted(one)
    lengths = index.query_ball_point([[0.5, 0.5, 0.5]] * 3, return_length=True)
    assert lengths.dtype == np.int64 and lengths.tolist() == [len(one)] * 3
    # Results are ordinary writable arrays the caller owns.
    offsets, indices, distances = index.neighbor_lists(return_distances=True)
    for array in (pairs, offsets, indices, distances):
        assert array.flags.writeable
        array[...] = 0


@pytest.mark.parametrize("gc_on", [True, False])
def test_split_rows_matches_slices_and_leaves_the_collector_as_it_was(gc_on):
    """split_rows (the lists of query_ball_point) against plain slicing: indices that repeat
    (shared ints), spread far beyond the entry count or negative (an int per entry), empty rows
    and offsets that skip a prefix; the cyclic collector is on or off after it as it was before."""
    from spatialhash import _core

    rng = np.random.default_rng(5)
    cases = [
        (np.array([0, 3, 3, 7, 10]), rng.integers(0, 4, 10)),  # few distinct values
        (np.array([2, 4, 9]), rng.integers(0, 10**12, 9)),  # far more spread than entries
        (np.array([0, 2, 5]), np.array([-3, 7, -3, 0, 2**62])),  # negative and huge
        (np.array([0]), np.arange(0)),
    ]
    was = gc.isenabled()
    try:
        (gc.enable if gc_on else gc.disable)()
        for offsets, indices in cases:
            rows = _core.split_rows(offsets, indices)
            expected = [indices[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])]
            assert rows.dtype == object and rows.tolist() == expected
            assert all(type(i) is int for row in rows for i in row)
            assert gc.isenabled() == gc_on
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_distance_entry_layouts_match_the_brute_force(dtype):
    """The entries behind sparse_distance_matrix, written once in C++ in each layout (structured
    records, COO or CSR arrays with int64 or int32 indices), against a double-precision brute
    force, entry by entry and in order: records and COO with itself row by row, each row
    ascending with its diagonal entry (distance 0) in place, against positions column by column,
    each column's rows ascending; CSR row by row, each row's columns ascending. An unknown
    layout is a ValueError naming it."""
    points = sample(n=600, dtype=dtype, seed=4)
    positions = sample(n=150, dtype=np.float64, seed=5)
    r = 0.12
    index = spatialhash.Index(points, r)
    converted = points.astype(np.float64)
    d2_self = np.concatenate([d for _, d in oracle_np.squared_distances(converted, converted)])
    # Rows: the positions; columns: the points.
    d2_cross = np.concatenate([d for _, d in oracle_np.squared_distances(converted, positions)])
    expected_self = [
        (i, j, 0.0 if j == i else float(np.sqrt(d2_self[i, j])))
        for i in range(len(points))
        for j in np.nonzero(d2_self[i] <= r * r)[0].tolist()
    ]
    expected_cross = [
        (i, q, float(np.sqrt(d2_cross[q, i])))
        for q in range(len(positions))
        for i in np.nonzero(d2_cross[q] <= r * r)[0].tolist()
    ]
    flat = np.ascontiguousarray(positions)

    def check(got, expected):
        got = list(got)
        assert [(i, j) for i, j, _ in got] == [e[:2] for e in expected]
        np.testing.assert_allclose([v for _, _, v in got], [e[2] for e in expected], rtol=1e-12)

    for expected, entries in (
        (expected_self, lambda *layout: index._core.self_distance_entries(r, *layout)),
        (expected_cross, lambda *layout: index._core.cross_distance_entries(flat, r, *layout)),
    ):
        records = entries("records", False)
        assert records.dtype == np.dtype([("i", np.intp), ("j", np.intp), ("v", np.float64)])
        check(zip(records["i"].tolist(), records["j"].tolist(), records["v"].tolist()), expected)
        for int32, index_type in ((False, np.int64), (True, np.int32)):
            i, j, v = entries("coo", int32)
            assert i.dtype == j.dtype == index_type and v.dtype == np.float64
            check(zip(i.tolist(), j.tolist(), v.tolist()), expected)
            indptr, indices, data = entries("csr", int32)
            assert indptr.dtype == indices.dtype == index_type and data.dtype == np.float64
            assert len(indptr) == len(points) + 1 and indptr[0] == 0
            rows = np.repeat(np.arange(len(points)), np.diff(indptr))
            check(zip(rows.tolist(), indices.tolist(), data.tolist()), sorted(expected))
    with pytest.raises(ValueError, match="entry layout.*'csc'"):
        index._core.self_distance_entries(r, "csc", False)
    with pytest.raises(ValueError, match="entry layout.*'int32'"):
        index._core.cross_distance_entries(flat, r, "int32", True)


def test_transpose_rows_matches_a_stable_argsort():
    """transpose_rows (query_ball_tree's rows turned around) against NumPy's stable argsort of the
    column indices: random rows with repeated columns, empty rows, columns no row holds, no
    entries, and enough entries for the threads to share (each owning a range of columns, 1, 2
    and 3 threads); an index outside [0, columns), offsets out of order or a column count outside
    [0, 2^32] are a ValueError naming it."""
    from spatialhash import _core

    rng = np.random.default_rng(13)
    cases = []
    for rows, columns, mean in [
        (50, 40, 6),
        (7, 1000, 3),
        (30, 5, 0.5),
        (0, 4, 0),
        (3, 0, 0),
        (20000, 7001, 9),
    ]:
        lengths = rng.poisson(mean, rows) if columns > 0 else np.zeros(rows, dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        cases.append((offsets, rng.integers(0, max(columns, 1), offsets[-1]), columns))
    for (offsets, indices, columns), threads in itertools.product(cases, (1, 2, 3)):
        starts, transposed = _core.transpose_rows(offsets, indices, columns, threads)
        row_of = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
        order = np.argsort(indices, kind="stable")
        expected_starts = np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=columns))])
        assert starts.tolist() == expected_starts.tolist()
        assert transposed.tolist() == row_of[order].tolist()
    with pytest.raises(ValueError, match=r"index 5 at entry 2 is outside \[0, 5\)"):
        _core.transpose_rows(np.array([0, 3]), np.array([0, 4, 5]), 5)
    with pytest.raises(ValueError, match=r"index -1 at entry 0"):
        _core.transpose_rows(np.array([0, 1]), np.array([-1]), 5)
    with pytest.raises(ValueError, match="offset 2 is out of order"):
        _core.transpose_rows(np.array([0, 2, 1]), np.array([0, 1]), 5)
    with pytest.raises(ValueError, match="offset 0 is out of order"):
        _core.transpose_rows(np.array([1, 2]), np.array([0, 1]), 5)
    for columns in (-1, 2**32 + 1, 10**15):  # no offsets array of that size is attempted
        message = r"columns must be in \[0, 2\^32\], got " + str(columns)
        with pytest.raises(ValueError, match=message):
            _core.transpose_rows(np.array([0, 1]), np.array([0]), columns)


@pytest.mark.parametrize("gc_on", [True, False])
def test_pairs_to_set_matches_tuples_and_leaves_the_collector_as_it_was(gc_on):
    """pairs_to_set (query_pairs' output_type='set') against a set built in Python: repeated
    indices (shared ints), indices spread far beyond the pair count, none; a wrong shape is a
    ValueError; the cyclic collector is on or off after it as it was before."""
    from spatialhash import _core

    rng = np.random.default_rng(9)
    cases = [
        rng.integers(0, 50, (400, 2)),
        rng.integers(0, 10**15, (7, 2)),
        np.zeros((0, 2), dtype=np.int64),
    ]
    was = gc.isenabled()
    try:
        (gc.enable if gc_on else gc.disable)()
        for pairs in cases:
            got = _core.pairs_to_set(pairs)
            assert got == set(map(tuple, pairs.tolist()))
            assert all(type(i) is int for pair in got for i in pair)
            assert gc.isenabled() == gc_on
        with pytest.raises(ValueError, match=r"shape \(m, 2\)"):
            _core.pairs_to_set(np.zeros((3, 3), dtype=np.int64))
        assert gc.isenabled() == gc_on
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("gc_on", [True, False])
def test_pairs_to_dict_matches_a_dict_built_in_python(gc_on):
    """pairs_to_dict (sparse_distance_matrix's output_type='dict') against dict(zip(...)):
    repeated indices (shared ints; a repeated key keeps its last value, as in Python), indices
    spread far beyond the pair count, none; mismatched or non-1-D arrays are a ValueError; the
    cyclic collector is on or off after it as it was before."""
    from spatialhash import _core

    rng = np.random.default_rng(10)
    cases = [
        (rng.integers(0, 30, 500), rng.integers(0, 40, 500), rng.random(500)),
        (rng.integers(0, 10**15, 9), rng.integers(0, 10**15, 9), rng.random(9)),
        (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)),
    ]
    was = gc.isenabled()
    try:
        (gc.enable if gc_on else gc.disable)()
        for i, j, values in cases:
            got = _core.pairs_to_dict(i, j, values)
            assert got == dict(zip(zip(i.tolist(), j.tolist()), values.tolist()))
            assert all(type(a) is int and type(b) is int for a, b in got)
            assert all(type(v) is float for v in got.values())
            assert gc.isenabled() == gc_on
        for i, j, values in [
            (np.zeros(3, dtype=np.int64), np.zeros(2, dtype=np.int64), np.zeros(3)),
            (np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64), np.zeros(2)),
            (np.zeros((3, 1), dtype=np.int64), np.zeros(3, dtype=np.int64), np.zeros(3)),
        ]:
            with pytest.raises(ValueError, match="1-D arrays of one length"):
                _core.pairs_to_dict(i, j, values)
        assert gc.isenabled() == gc_on
    finally:
        (gc.enable if was else gc.disable)()


def test_empty_and_tiny_inputs():
    for dim in (2, 3):
        empty = spatialhash.Index(np.empty((0, dim)), 1.0)
        assert len(empty) == 0
        assert empty.query_pairs().shape == (0, 2)
        assert empty.query_pairs(output_type="set") == set()
        offsets, indices = empty.neighbor_lists()
        assert offsets.tolist() == [0] and indices.size == 0
        start, count, indices = empty.neighbor_rows()
        assert start.shape == count.shape == (0,) and (indices == -1).all()
        offsets, indices = empty.cross_lists(np.zeros((2, dim)))
        assert offsets.tolist() == [0, 0, 0] and indices.size == 0
        start, count, indices = empty.cross_rows(np.zeros((2, dim)))
        assert count.tolist() == [0, 0] and (indices == -1).all()
        assert empty.count_neighbors_per_point().shape == (0,)
        assert empty.query_ball_point(np.zeros(dim)) == []
        assert empty.query_ball_point(np.empty((0, dim))).shape == (0,)
        assert empty.sparse_distance_matrix().shape == (0, 0)
        assert empty.sparse_distance_matrix(output_type="csr_matrix").shape == (0, 0)
        assert empty.sparse_distance_matrix(np.zeros((2, dim)), output_type="csr_matrix").shape == (
            0,
            2,
        )
        assert empty.sparse_distance_matrix(output_type="ndarray").shape == (0,)
        single = spatialhash.Index(np.ones((1, dim)), 1.0)
        assert single.query_pairs().shape == (0, 2)
        assert single.query_ball_point(np.ones(dim)) == [0]


def test_update_moves_points():
    points = sample(600)
    index = spatialhash.Index(points, 0.1)
    moved = np.ascontiguousarray(points[::-1]) * 0.5
    index.update(moved)
    assert np.shares_memory(index.data, moved)
    assert pair_set(index) == oracle_np.pairs(moved, 0.1)
    index.update(moved.tolist())  # converted like the constructor's input
    assert pair_set(index) == oracle_np.pairs(moved, 0.1)


def test_concurrent_queries_from_python_threads():
    points = sample(3000)
    index = spatialhash.Index(points, 0.06, threads=1)
    expected = pair_set(index)
    expected_balls = [list(row) for row in index.query_ball_point(points[:200])]
    results, errors = [], []

    def work():
        try:
            for _ in range(3):
                results.append(pair_set(index) == expected)
                balls = index.query_ball_point(points[:200])
                results.append([list(row) for row in balls] == expected_balls)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors
    assert len(results) == 24 and all(results)


# What a forked worker finds (module globals: a fork copies them, nothing is pickled).
_FORKED_POINTS = None
_FORKED_INDEX = None


def _pairs_in_forked_worker(_):
    built = spatialhash.Index(_FORKED_POINTS, 0.05, threads=2)
    return pair_set(built), pair_set(_FORKED_INDEX)


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="no fork() here"
)
def test_forked_workers_after_the_parent_used_threads():
    # multiprocessing's default on Linux. GNU libgomp's thread pool does not survive fork(): a
    # search on two threads in the child waited forever. Children search on one thread now,
    # with an index they build and with the one they inherited.
    global _FORKED_POINTS, _FORKED_INDEX
    _FORKED_POINTS = sample(10000, seed=5)
    _FORKED_INDEX = spatialhash.Index(_FORKED_POINTS, 0.05, threads=2)
    expected = oracle_np.pairs(_FORKED_POINTS, 0.05)
    assert pair_set(_FORKED_INDEX) == expected  # the parent's threads have started
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map_async(_pairs_in_forked_worker, range(2)).get(timeout=120)
    assert len(results) == 2
    for built, inherited in results:
        assert built == expected
        assert inherited == expected
    assert pair_set(_FORKED_INDEX) == expected  # the parent keeps its threads


def test_update_while_other_threads_query():
    points = sample(1500)
    moved = np.ascontiguousarray(points + 0.25)
    index = spatialhash.Index(points, 0.07)
    before, after = oracle_np.pairs(points, 0.07), oracle_np.pairs(moved, 0.07)
    seen, errors = [], []

    def query():
        try:
            for _ in range(6):
                seen.append(pair_set(index))
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    workers = [threading.Thread(target=query) for _ in range(3)]
    for worker in workers:
        worker.start()
    index.update(moved)
    for worker in workers:
        worker.join()
    assert not errors
    assert all(result in (before, after) for result in seen)
    assert pair_set(index) == after


def test_help_documents_every_public_method():
    text = spatialhash.Index.__doc__
    assert "d2 <= r*r" in text and "ValueError" in text and "TypeError" in text
    for name in (
        "query_pairs",
        "query_ball_point",
        "sparse_distance_matrix",
        "neighbor_lists",
        "neighbor_rows",
        "cross_lists",
        "cross_rows",
        "count_neighbors_per_point",
        "pairs_with_distances",
        "update",
    ):
        method = getattr(spatialhash.Index, name)
        assert method.__doc__ and len(method.__doc__) > 80, name
        assert "return" in method.__annotations__, name
    assert spatialhash.__doc__ and "Index" in spatialhash.__doc__
