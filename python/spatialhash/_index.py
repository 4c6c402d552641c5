"""spatialhash.Index: the Python face of the C++ index, with SciPy-compatible query methods."""

from __future__ import annotations

from typing import Any, List, Optional, Set, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._pair_counts import count_pairs
from ._inputs import (
    MIN_RADIUS,
    as_boxsize,
    as_engine,
    as_index_int32,
    as_index_radius,
    as_points,
    as_positions,
    as_radius,
    as_threads,
    as_weights,
    check_choice,
    check_minkowski,
    check_radii,
)

IntArray = npt.NDArray[np.int64]
#: int64, or int32 where a method was given ``index_dtype=np.int32``.
IndexArray = npt.NDArray[np.signedinteger[Any]]
FloatArray = npt.NDArray[np.float64]


class Index:
    """Exact fixed-radius neighbor search over 2D or 3D points, built on spatial hashing.

    Build once for a radius, then query any radius up to it::

        import numpy as np, spatialhash
        index = spatialhash.Index(np.random.rand(100_000, 3), radius=0.02)
        pairs = index.query_pairs()          # (m, 2) int64, i < j, like cKDTree.query_pairs

    Parameters
    ----------
    points : array_like, shape (n, 2) or (n, 3)
        Coordinates. A C-contiguous, aligned float32 or float64 array in native byte order is
        used in place, without a copy: do not modify it while the index lives (call
        :meth:`update` after moving points). Other input is converted once and the converted
        copy is kept: float32 stays float32 (Fortran-ordered, strided, unaligned or byte-swapped
        float32 becomes a C-contiguous float32 copy), float64 stays float64, and everything else
        (lists, integer dtypes, float16, longdouble) becomes float64.
    radius : float
        The largest radius any query may use; finite and in [2**-500, 2**500] (about 3.1e-151
        to 3.3e150), where ``r*r`` is a normal double.
    engine : str, optional
        Search scheme (see :func:`spatialhash.engines`); all return identical results. Default
        ``"automatic"``.
    threads : int, optional
        Worker threads for building and for array queries; None or -1 means all cores; at most
        1024.
    boxsize : float or array_like of shape (m,), optional
        Periodic boundaries, as in ``scipy.spatial.cKDTree``: axis k is periodic with the box
        ``[0, boxsize[k])`` (a scalar applies to every axis) when its entry is finite and > 0;
        an entry of 0, below 0 or inf leaves that axis open. Neighbors follow the minimum-image
        convention; unlike cKDTree, points outside the box are accepted and wrapped (results are
        those of the wrapped points). The radius must be below half of every periodic edge.

    Neighbor rule
    -------------
    Points i != j are neighbors iff ``d2 <= r*r``, with ``d2 = (dx*dx + dy*dy) + dz*dz``
    evaluated in float64 (float32 input is converted exactly) without fused multiply-add. Pairs
    at exactly distance r and coincident points are neighbors; a point is never its own
    neighbor. scipy.spatial.cKDTree decides with its own arithmetic, so the two can disagree
    only on pairs within about one rounding error of r.

    Errors
    ------
    ValueError for NaN/infinite coordinates, bad shapes, bad radii (outside [2**-500, 2**500],
    or a query radius above the index radius), points spread over more than about 2**30 radii
    along an axis (the lattice's limit, every engine) and bad thread counts; TypeError for
    non-numeric input. Messages name the parameter as passed (``radius``, ``r``, ``max_distance``,
    ``threads``, ``workers``).

    The GIL is released while searching, so queries may run from several Python threads.
    """

    def __init__(
        self,
        points: Any,
        radius: float,
        *,
        engine: Optional[str] = None,
        threads: Optional[int] = None,
        boxsize: Any = None,
    ) -> None:
        data = as_points(points)
        value = as_index_radius(radius)
        name = as_engine(engine, _core.engine_names())
        box = as_boxsize(boxsize, data.shape[1])
        self._core = _core.Index(
            data, value, name, as_threads(threads), [] if box is None else box.tolist()
        )
        self._data = data
        self._boxsize = box

    # ---- properties ---------------------------------------------------------------------------

    @property
    def data(self) -> np.ndarray:
        """The indexed points, shape (n, m), as a read-only view (float32 or float64)."""
        view = self._data.view()
        view.flags.writeable = False
        return view

    @property
    def n(self) -> int:
        """Number of points (as cKDTree.n)."""
        return self._core.size

    @property
    def m(self) -> int:
        """Dimension, 2 or 3 (as cKDTree.m)."""
        return self._core.dim

    @property
    def boxsize(self) -> Optional[FloatArray]:
        """The periodic box edges (one per axis; 0, negative or inf: open axis), or None."""
        return None if self._boxsize is None else self._boxsize.copy()

    @property
    def radius(self) -> float:
        """The index radius: default and upper limit of every query radius."""
        return self._core.radius

    @property
    def engine(self) -> str:
        """Name of the engine in use (never "automatic")."""
        return self._core.engine

    @property
    def threads(self) -> int:
        """Number of worker threads."""
        return self._core.threads

    def __len__(self) -> int:
        return self._core.size

    def __repr__(self) -> str:
        box = "" if self._boxsize is None else f", boxsize={self._boxsize.tolist()!r}"
        return (
            f"spatialhash.Index(n={self.n}, dim={self.m}, dtype={self._data.dtype}, "
            f"radius={self.radius!r}, engine={self.engine!r}, threads={self.threads}{box})"
        )

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:
        """Pickles the points and settings; unpickling builds the index again."""
        return (_rebuild, (self._data, self.radius, self.engine, self.threads, self._boxsize))

    # ---- SciPy-compatible queries -------------------------------------------------------------

    def query_pairs(
        self,
        r: Optional[float] = None,
        p: float = 2.0,
        eps: float = 0.0,
        output_type: str = "ndarray",
        *,
        index_dtype: Any = np.int64,
    ) -> Union[IntArray, Set[Tuple[int, int]]]:
        """All pairs of points within distance r (default: the index radius), each once.

        Like ``scipy.spatial.cKDTree.query_pairs`` (same arguments; only p=2 is supported and
        eps is accepted but results are always exact). Note the default output_type here is
        ``'ndarray'``. ``index_dtype=np.int32`` returns the array as int32: the library's own
        pairs, handed over without an int64 copy (half the memory; ValueError for an index of
        2^31 points or more). A set holds Python ints either way.

        Returns
        -------
        ndarray of shape (m, 2), int64 (or int32), ``i < j`` in every row, rows in no particular
        order; or, for ``output_type='set'``, a set of ``(i, j)`` tuples.
        """
        check_minkowski(p, eps)
        check_choice(output_type, "output_type", ("ndarray", "set"))
        int32 = as_index_int32(index_dtype) and output_type == "ndarray"
        pairs, _ = self._core.pairs(as_radius(r, self.radius), False, False, int32)
        if output_type == "set":
            return _core.pairs_to_set(pairs)
        return pairs

    def query_ball_point(
        self,
        x: Any,
        r: Any = None,
        p: float = 2.0,
        eps: float = 0.0,
        workers: Optional[int] = None,
        return_sorted: Optional[bool] = None,
        return_length: bool = False,
    ) -> Any:
        """Indices of the indexed points within distance r of position(s) x.

        Like ``scipy.spatial.cKDTree.query_ball_point``. No point is excluded: an indexed point
        at x itself is reported.

        Parameters
        ----------
        x : array_like, shape (..., m)
            One position (shape (m,)) or many.
        r : float or array_like, optional
            Radius (default: the index radius), or one radius per position, broadcast against
            ``x.shape[:-1]``. Every radius must be finite and in [2**-500, index radius]; an
            error names the first bad entry (``r[1]``).
        p, eps : SciPy compatibility; only p=2, results always exact.
        workers : checked like ``threads`` but otherwise ignored (the index's ``threads``
            apply); accepted for SciPy compatibility.
        return_sorted : bool, optional
            Sort each list. None (default) sorts for many positions, not for one, as SciPy.
        return_length : bool
            Return the number of neighbors instead of the indices.

        Returns
        -------
        For one position: a list of int (or, with return_length, an int). For many: an object
        array of lists (or an int64 array of counts) of shape ``x.shape[:-1]``.
        """
        check_minkowski(p, eps)
        if workers is not None:
            as_threads(workers, "workers")
        positions = as_positions(x, self.m)
        single = positions.ndim == 1
        sort = (not single) if return_sorted is None else bool(return_sorted)
        if single and (r is None or np.ndim(r) == 0):
            # One position and one radius: searched on this thread, the list made in C++.
            found = self._core.ball(positions, as_radius(r, self.radius), sort)
            return len(found) if return_length else found
        shape = positions.shape[:-1]
        flat = np.ascontiguousarray(positions.reshape(-1, self.m))
        if r is None or np.ndim(r) == 0:
            radii = np.full(len(flat), as_radius(r, self.radius))
        else:
            radii = self._radii(r, shape)
        if return_length:
            lengths = self._core.ball_counts(flat, radii)
            return lengths[0] if single else lengths.reshape(shape)
        # One pass per position (measured faster than Index::cross's count-then-fill passes).
        offsets, indices, _ = self._core.balls(flat, radii, sort)
        if single:
            return indices.tolist()
        return _core.split_rows(offsets, indices).reshape(shape)

    def sparse_distance_matrix(
        self,
        other: Any = None,
        max_distance: Optional[float] = None,
        p: float = 2.0,
        output_type: str = "coo_matrix",
    ) -> Any:
        """Distances of all pairs (i, j) with point i of this index and point j of `other` at
        most max_distance apart (default: the index radius).

        Like ``scipy.spatial.cKDTree.sparse_distance_matrix``. `other` is another Index, an
        (k, m) array of points, or None for this index itself (then the diagonal, distance 0,
        is included, as SciPy does, and the matrix is the pairs of :meth:`query_pairs` in both
        directions: symmetric, with equal distances, in a periodic box too, where a ball query
        from each side can round the shifted image differently). Zero distances are stored
        explicitly.

        output_type: ``'coo_matrix'`` (default here), ``'csr_matrix'``, ``'dok_matrix'`` (all
        need SciPy), ``'dict'`` {(i, j): distance}, or ``'ndarray'`` (structured, fields i, j, v).
        The matrix shape is (self.n, len(other)).
        """
        check_minkowski(p, 0.0)
        kinds = ("coo_matrix", "csr_matrix", "dok_matrix", "dict", "ndarray")
        check_choice(output_type, "output_type", kinds)
        radius = as_radius(max_distance, self.radius, "max_distance")
        flat = None if other is None or other is self else self._other_points(other)
        columns = self.n if flat is None else len(flat)
        # The entries are written once, in C++, in the layout the output takes: the structured
        # array itself, CSR arrays for csr_matrix, COO arrays for the rest; int64 indices for the
        # dict, int32 for SciPy where the shape allows (SciPy would otherwise copy int64 indices
        # down to int32).
        layout = {"ndarray": "records", "csr_matrix": "csr"}.get(output_type, "coo")
        int32 = output_type != "dict" and max(self.n, columns) <= np.iinfo(np.int32).max
        if flat is None:
            # The neighbor lists (each pair's distance in both of its rows) and the diagonal,
            # each row ascending.
            entries = self._core.self_distance_entries(radius, layout, int32)
        else:
            # Column q lists this index's points near other's point q.
            entries = self._core.cross_distance_entries(flat, radius, layout, int32)
        if output_type == "ndarray":
            return entries
        if output_type == "dict":
            return _core.pairs_to_dict(*entries)
        try:
            import scipy.sparse
        except ImportError as error:
            raise ImportError(
                f"output_type={output_type!r} needs scipy; use 'dict' or 'ndarray' without it"
            ) from error
        shape = (self.n, columns)
        if output_type == "csr_matrix":
            indptr, indices, data = entries
            return scipy.sparse.csr_matrix((data, indices, indptr), shape=shape)
        i, j, distances = entries
        matrix = scipy.sparse.coo_matrix((distances, (i, j)), shape=shape)
        if output_type == "dok_matrix":
            return matrix.todok()
        return matrix

    def query_ball_tree(
        self, other: Any, r: Optional[float] = None, p: float = 2.0, eps: float = 0.0
    ) -> List[List[int]]:
        """For every indexed point i, the sorted indices of the points of `other` within r of it.

        Like ``scipy.spatial.cKDTree.query_ball_tree``: `other` is another Index or an (k, m)
        array of points (this index itself included: then each point finds itself). r defaults
        to, and may not exceed, this index's radius; this index's boxsize applies. Returns a
        list of n lists of int.
        """
        check_minkowski(p, eps)
        radius = as_radius(r, self.radius)
        flat = self._other_points(other)
        # Row q of the cross search holds this index's points near other's point q: the same
        # pairs, turned around so that row i lists other's points near point i, ascending.
        # (A counting sort in C++: NumPy's stable argsort had taken two thirds of the call.)
        offsets, mine, _ = self._core.cross(flat, radius, False, False, False)
        starts, theirs = _core.transpose_rows(offsets, mine, self.n, self.threads)
        return _core.split_rows(starts, theirs).tolist()

    def count_neighbors(
        self,
        other: Any,
        r: Any,
        p: float = 2.0,
        weights: Any = None,
        cumulative: bool = True,
    ) -> Any:
        """The number of pairs (x1, x2), x1 a point of this index and x2 one of `other`, with
        x1 and x2 at most r apart (the neighbor rule: d2 <= r*r), for one radius or many.

        Like ``scipy.spatial.cKDTree.count_neighbors``, exact. `other` is another Index, an
        (k, m) array of points, or this index (pairs then include (i, i) and both orders).
        r: a number or a 1-D array; each entry at most this index's radius, and either 0
        (coincident points) or at least ``MIN_RADIUS`` (cKDTree reads a negative r as -r; here
        it is a ValueError). With
        ``cumulative=False`` r must be non-decreasing and entry k counts the pairs with
        ``r[k-1] < d <= r[k]`` (``-inf < d <= r[0]`` for the first). weights: None; a tuple
        ``(self_weights, other_weights)`` (either may be None); or one array when `other` is
        this index. A pair then counts ``self_weights[i] * other_weights[j]``. This index's
        boxsize applies.

        Returns an int (a float with weights) for one radius, else an int64 (float64) array
        shaped like r. One
        cross search at the largest radius, in chunks of `other`'s points (memory bounded by the
        chunk), decides every radius from the pairs' distances; a radius equal to some pair's
        rounded distance is counted again by a search of its own (docs/python.md).
        """
        check_minkowski(p, 0.0)
        flat = self._other_points(other)
        radii, scalar = self._count_radii(r, bool(cumulative))
        self_weights, other_weights = self._pair_weights(weights, other is self, len(flat))
        # The largest radius (MIN_RADIUS when every one is 0: coincident points are within it).
        search_radius = max(float(radii.max(initial=0.0)), MIN_RADIUS)

        def search(chunk: np.ndarray, radius: float, with_distances: bool) -> Any:
            return self._core.cross(chunk, radius, False, with_distances, False)

        counts = count_pairs(flat, search, radii, search_radius, self_weights, other_weights)
        if not cumulative:
            counts = np.diff(counts, prepend=counts.dtype.type(0))
        return counts[0].item() if scalar else counts

    # ---- native extras --------------------------------------------------------------------------

    def neighbor_lists(
        self,
        r: Optional[float] = None,
        *,
        sort: bool = False,
        return_distances: bool = False,
        low_memory: bool = False,
        index_dtype: Any = np.int64,
        half: bool = False,
    ) -> Union[Tuple[IntArray, IndexArray], Tuple[IntArray, IndexArray, FloatArray]]:
        """Neighbors of every indexed point in compressed sparse row form.

        Returns ``(offsets, indices)``: the neighbors of point i are
        ``indices[offsets[i]:offsets[i + 1]]`` (int64; offsets has n + 1 entries). The lists
        are symmetric and exclude the point itself. With ``sort=True`` each list is ascending
        (otherwise its order is the engine's). With ``return_distances=True`` a third float64
        array gives the distance of each entry of `indices`.

        ``low_memory=True`` collects no rows in per-thread buffers: without distances the rows
        are written into the output itself and compacted there (within an eighth of slack; as
        fast as the default at 30 neighbors per point, up to 1.3x slower at 130), with distances
        it searches twice (once to count, once writing each row in place; 1.3-1.6x slower). The
        same lists, without a transient copy of the lists (4 bytes per entry) on top of them.

        ``index_dtype=np.int32`` returns `indices` as int32: the library's own array, handed
        over without the int64 copy (half the memory, and faster). Indexes of 2^31 points or
        more refuse it (ValueError). `offsets` stay int64.

        ``half=True`` gives half lists: each pair once, in the row of one of its two points (as a
        force loop using Newton's third law wants them), about half the search and the output.
        Which row is the engine's choice: the default engine's rows hold the neighbors after the
        point in its cell order, the other engines' the neighbors of larger index.
        """
        int32 = as_index_int32(index_dtype)
        offsets, indices, distances = self._core.neighbor_lists(
            as_radius(r, self.radius),
            bool(sort),
            bool(return_distances),
            bool(low_memory),
            int32,
            bool(half),
        )
        if return_distances:
            return offsets, indices, distances
        return offsets, indices

    def neighbor_rows(
        self,
        r: Optional[float] = None,
        *,
        sort: bool = False,
        return_distances: bool = False,
        index_dtype: Any = np.int64,
        half: bool = False,
    ) -> Union[
        Tuple[IntArray, IndexArray, IndexArray], Tuple[IntArray, IndexArray, IndexArray, FloatArray]
    ]:
        """The lists of :meth:`neighbor_lists`, each row where the search wrote it.

        Returns ``(start, count, indices)``: the neighbors of point i are
        ``indices[start[i]:start[i] + count[i]]`` (int64). Rows are not in point order, and the
        entries between them (a fraction of a percent) are -1. The search writes every row once,
        without the pass that puts the rows in point order, so this is faster than
        :meth:`neighbor_lists` and holds no second copy of the lists. ``sort``, ``half`` and
        ``return_distances`` as for :meth:`neighbor_lists` (distances between rows are NaN);
        ``index_dtype=np.int32`` makes `count` and `indices` int32 (the library's arrays, no
        copy; -1 between rows as well).
        """
        int32 = as_index_int32(index_dtype)
        start, count, indices, distances = self._core.neighbor_rows(
            as_radius(r, self.radius), bool(sort), bool(return_distances), int32, bool(half)
        )
        if return_distances:
            return start, count, indices, distances
        return start, count, indices

    def cross_lists(
        self,
        x: Any,
        r: Optional[float] = None,
        *,
        sort: bool = False,
        return_distances: bool = False,
        index_dtype: Any = np.int64,
    ) -> Union[Tuple[IntArray, IndexArray], Tuple[IntArray, IndexArray, FloatArray]]:
        """Neighbors among the indexed points of every position of x, in compressed sparse row
        form: :meth:`neighbor_lists` for another point set.

        x has shape (..., m); its leading axes are flattened, and row q belongs to flat position
        q. Returns ``(offsets, indices)`` (int64, offsets has one entry more than the positions):
        the indexed points within r (default: the index radius) of position q are
        ``indices[offsets[q]:offsets[q + 1]]``. No point is excluded (an indexed point at the
        position itself is reported). ``sort``, ``return_distances`` and ``index_dtype`` as for
        :meth:`neighbor_lists`.
        """
        int32 = as_index_int32(index_dtype)
        flat = self._flat_positions(x)
        offsets, indices, distances = self._core.cross(
            flat, as_radius(r, self.radius), bool(sort), bool(return_distances), int32
        )
        if return_distances:
            return offsets, indices, distances
        return offsets, indices

    def cross_rows(
        self,
        x: Any,
        r: Optional[float] = None,
        *,
        sort: bool = False,
        return_distances: bool = False,
        index_dtype: Any = np.int64,
    ) -> Union[
        Tuple[IntArray, IndexArray, IndexArray], Tuple[IntArray, IndexArray, IndexArray, FloatArray]
    ]:
        """The rows of :meth:`cross_lists`, each where the search wrote it, as
        :meth:`neighbor_rows` gives those of :meth:`neighbor_lists`.

        Returns ``(start, count, indices)``: the indexed points within r of flat position q are
        ``indices[start[q]:start[q] + count[q]]`` (int64); entries between rows are -1 (their
        distances NaN). Faster than :meth:`cross_lists`, without a second copy of the lists.
        ``index_dtype`` as for :meth:`neighbor_rows`.
        """
        int32 = as_index_int32(index_dtype)
        flat = self._flat_positions(x)
        start, count, indices, distances = self._core.cross_rows(
            flat, as_radius(r, self.radius), bool(sort), bool(return_distances), int32
        )
        if return_distances:
            return start, count, indices, distances
        return start, count, indices

    def count_neighbors_per_point(self, r: Optional[float] = None) -> IntArray:
        """Number of neighbors of every indexed point within r (default: the index radius),
        the point itself not counted: an int64 array of shape (n,), equal to
        ``np.diff(neighbor_lists(r)[0])`` but without building the lists."""
        return self._core.neighbor_counts(as_radius(r, self.radius))

    def pairs_with_distances(
        self, r: Optional[float] = None, *, sort: bool = False, index_dtype: Any = np.int64
    ) -> Tuple[IntArray, FloatArray]:
        """``(pairs, distances)``: the pairs of :meth:`query_pairs` ((m, 2) int64, i < j) and
        their Euclidean distances (float64, shape (m,)). ``sort=True`` orders the pairs
        lexicographically; ``index_dtype`` as for :meth:`query_pairs`."""
        int32 = as_index_int32(index_dtype)
        pairs, distances = self._core.pairs(as_radius(r, self.radius), bool(sort), True, int32)
        return pairs, distances

    def update(self, points: Any) -> None:
        """Re-indexes after the points moved: same shape, and the same dtype as ``data`` after
        the constructor's conversion (a float32 index needs float32 points; a float64 index
        takes float64 or anything the constructor converts to float64), else TypeError. The
        radius, engine and thread count stay. Like the constructor, the array is used in place
        when it can be, so do not modify it afterwards either."""
        data = as_points(points)
        if data.shape != self._data.shape:
            raise ValueError(f"update() needs shape {self._data.shape}, got {data.shape}")
        if data.dtype != self._data.dtype:
            raise TypeError(
                f"update() needs {self._data.dtype} points (the index's dtype), got "
                f"{data.dtype}; convert with points.astype(np.{self._data.dtype})"
            )
        self._core.update(data)
        self._data = data

    def _other_points(self, other: Any) -> FloatArray:
        """`other` (an Index, or points of shape (k, m)) as a C-contiguous float64 array."""
        points = other._data if isinstance(other, Index) else as_points(other, "other")
        if points.shape[1] != self.m:
            raise ValueError(f"other has dimension {points.shape[1]}, this index {self.m}")
        return np.ascontiguousarray(points, dtype=np.float64)

    def _count_radii(self, r: Any, cumulative: bool) -> Tuple[FloatArray, bool]:
        """count_neighbors' radii as a 1-D float64 array, and whether r was one number."""
        radii = np.asarray(r)
        if radii.dtype.kind not in "fiu" or radii.dtype == np.bool_:
            raise TypeError(f"r must hold real numbers, got dtype {radii.dtype}")
        if radii.ndim > 1:
            raise ValueError(f"r must be a number or a 1-D array, got shape {radii.shape}")
        scalar = radii.ndim == 0
        radii = radii.astype(np.float64).reshape(-1)

        def entry(bad: np.ndarray) -> str:
            k = int(np.argmax(bad))
            return f"r={radii[k]!r}" if scalar else f"r[{k}]={radii[k]!r}"

        if np.isnan(radii).any():
            raise ValueError(f"{entry(np.isnan(radii))}: a radius must be a number")
        if (radii < 0.0).any():
            raise ValueError(f"{entry(radii < 0.0)} is negative; a radius is 0 or more")
        tiny = (radii > 0.0) & (radii < MIN_RADIUS)
        if tiny.any():
            raise ValueError(
                f"{entry(tiny)} lies between 0 and spatialhash.MIN_RADIUS ({MIN_RADIUS!r})"
            )
        if (radii > self.radius).any():
            raise ValueError(
                f"{entry(radii > self.radius)} exceeds the index radius {self.radius!r}; build "
                "the Index with a radius at least as large as every query radius"
            )
        if not cumulative and np.any(np.diff(radii) < 0.0):
            k = int(np.argmax(np.diff(radii) < 0.0)) + 1
            raise ValueError(
                f"with cumulative=False r must be non-decreasing (bin edges), but r[{k}] < "
                f"r[{k - 1}]"
            )
        return radii, scalar

    def _pair_weights(
        self, weights: Any, same: bool, other_n: int
    ) -> Tuple[Optional[FloatArray], Optional[FloatArray]]:
        """count_neighbors' weights as (self_weights, other_weights), each float64 or None."""
        if weights is None:
            return None, None
        if isinstance(weights, tuple):
            if len(weights) != 2:
                raise ValueError(f"weights as a tuple needs 2 entries, got {len(weights)}")
            return (
                as_weights(weights[0], self.n, "weights[0]"),
                as_weights(weights[1], other_n, "weights[1]"),
            )
        if not same:
            raise ValueError(
                "one weights array needs other to be this index; give (self_weights, "
                "other_weights) for two point sets"
            )
        both = as_weights(weights, self.n, "weights")
        return both, both

    def _flat_positions(self, x: Any) -> FloatArray:
        """Positions of shape (..., m) as a C-contiguous (k, m) float64 array."""
        return np.ascontiguousarray(as_positions(x, self.m).reshape(-1, self.m))

    def _radii(self, r: Any, shape: Tuple[int, ...]) -> FloatArray:
        """Per-position radii broadcast to `shape`, flattened, each checked (an error names the
        first bad entry by its index in `r`)."""
        radii = np.asarray(r)
        if radii.dtype.kind not in "fiu":
            raise TypeError(f"r must hold real numbers, got dtype {radii.dtype}")
        radii = radii.astype(np.float64)
        try:
            broadcast = np.broadcast_to(radii, shape)
        except ValueError:
            raise ValueError(
                f"r of shape {np.shape(r)} does not broadcast to the positions' shape {shape}"
            ) from None
        check_radii(radii, self.radius)
        return np.ascontiguousarray(broadcast.reshape(-1))


def _rebuild(
    points: np.ndarray,
    radius: float,
    engine: str,
    threads: int,
    boxsize: Optional[np.ndarray] = None,
) -> Index:
    """Unpickling helper (see Index.__reduce__)."""
    return Index(points, radius, engine=engine, threads=threads, boxsize=boxsize)
