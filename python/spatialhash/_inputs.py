"""Argument checking and conversion for spatialhash.Index: every error a user can cause with a
bad argument is raised here, as TypeError (wrong kind of value) or ValueError (wrong value)."""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Tuple

import numpy as np

from . import _core

#: dtypes the C++ core reads in place (from C-contiguous, aligned arrays); float32 in another byte
#: order is converted to float32, everything else numeric to float64, once.
NATIVE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

#: Radii the library accepts, index and query radii alike: 2**-500 to 2**500, where r*r is a
#: normal, finite double.
MIN_RADIUS: float = _core.MIN_RADIUS
MAX_RADIUS: float = _core.MAX_RADIUS
RADIUS_RANGE = f"[2**-500, 2**500] = [{MIN_RADIUS!r}, {MAX_RADIUS!r}]"

#: The most worker threads an index may use.
MAX_THREADS: int = _core.MAX_THREADS


def as_points(points: Any, name: str = "points") -> np.ndarray:
    """Returns `points` as a C-contiguous, aligned (n, 2) or (n, 3) float32/float64 array in
    native byte order.

    Such an array is returned as it is (no copy). Otherwise one converted copy is made: float32
    input (any layout or byte order) stays float32, float64 stays float64, and every other real
    dtype (integers, float16, longdouble) and nested sequences become float64."""
    array = _numeric_array(points, name)
    if array.ndim != 2 or array.shape[1] not in (2, 3):
        raise ValueError(f"{name} must have shape (n, 2) or (n, 3), got shape {array.shape}")
    return np.require(array, dtype=_native_dtype(array.dtype), requirements=["C", "A"])


def as_positions(x: Any, dim: int, name: str = "x") -> np.ndarray:
    """Query positions: an array whose last axis has length `dim`, as a C-contiguous, aligned
    float64 array (converted only where needed)."""
    array = _numeric_array(x, name)
    if array.ndim == 0 or array.shape[-1] != dim:
        raise ValueError(
            f"{name} must have shape (..., {dim}) to match the {dim}D index, got shape "
            f"{array.shape}"
        )
    return np.require(array, dtype=np.float64, requirements=["C", "A"])


def as_index_radius(radius: Any, name: str = "radius") -> float:
    """The index radius: a finite number in [MIN_RADIUS, MAX_RADIUS]."""
    return _checked_radius(_radius_as_float(radius, name), name)


def as_radius(r: Any, default: float, name: str = "r") -> float:
    """A query radius: `default` (the index radius) for None, else a finite number in
    [MIN_RADIUS, default]."""
    if r is None:
        return default
    value = _checked_radius(_radius_as_float(r, name), name)
    if value > default:
        raise ValueError(
            f"{name}={value!r} exceeds the index radius {default!r}; build the Index with a "
            "radius at least as large as every query radius"
        )
    return value


def as_real(value: Any, name: str) -> float:
    """A real number (bool excluded; 0-d arrays accepted) as float; TypeError otherwise, and
    ValueError for one too large in magnitude for a float64 (such as 10**400)."""
    try:
        return _real_as_float(value, name)
    except OverflowError:
        raise ValueError(
            f"{name} is too large in magnitude to be a float64 (beyond 1.8e308)"
        ) from None


def as_threads(threads: Optional[int], name: str = "threads") -> int:
    """The C++ thread count: 0 (all cores) for None or -1, else an int in [1, MAX_THREADS].
    `name` is the parameter as the caller wrote it ("threads", or SciPy's "workers")."""
    if threads is None:
        return 0
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, numbers.Integral):
        raise TypeError(f"{name} must be an int or None, got {type(threads).__name__}")
    value = int(threads)
    if value == -1:
        return 0
    if value < 1:
        raise ValueError(f"{name} must be a positive int, -1 or None (all cores), got {value}")
    if value > MAX_THREADS:
        raise ValueError(f"{name} must be at most {MAX_THREADS} (the library's limit), got {value}")
    return value


def check_radii(radii: np.ndarray, limit: float, name: str = "r") -> None:
    """Checks an array of per-position radii (float64, any shape) like as_radius checks one,
    naming the first bad entry by its index in `radii` (``r[1]``, ``r[0, 2]``)."""
    flat = radii.reshape(-1)
    bad = ~(np.isfinite(flat) & (flat > 0.0))
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(
            f"{_entry(name, radii.shape, k)} must be finite and > 0, got {float(flat[k])!r}"
        )
    bad = (flat < MIN_RADIUS) | (flat > MAX_RADIUS)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(
            f"{_entry(name, radii.shape, k)}={float(flat[k])!r} is outside the supported radius "
            f"range {RADIUS_RANGE}"
        )
    bad = flat > limit
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(
            f"{_entry(name, radii.shape, k)}={float(flat[k])!r} exceeds the index radius "
            f"{limit!r}; build the Index with a radius at least as large as every query radius"
        )


def as_weights(weights: Any, n: int, name: str) -> Optional[np.ndarray]:
    """Pair-count weights: None, or n real numbers as a 1-D float64 array."""
    if weights is None:
        return None
    array = _numeric_array(weights, name)
    if array.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one weight per point, got {array.shape}")
    return np.ascontiguousarray(array, dtype=np.float64)


def as_index_int32(index_dtype: Any) -> bool:
    """Whether `index_dtype` asks for int32 indices (True) or int64 ones (False): anything
    numpy.dtype() turns into one of the two; any other dtype is a ValueError, and what is no
    dtype at all a TypeError, both naming index_dtype."""
    try:
        dtype = np.dtype(index_dtype)
    except TypeError as error:
        raise TypeError(
            f"index_dtype must be numpy.int32 or numpy.int64, got {index_dtype!r}"
        ) from error
    if dtype == np.int32:
        return True
    if dtype == np.int64:
        return False
    raise ValueError(f"index_dtype must be numpy.int32 or numpy.int64, got {dtype}")


def as_engine(engine: Optional[str], known: list) -> str:
    """An engine name from `known` ("automatic" for None)."""
    if engine is None:
        return "automatic"
    if not isinstance(engine, str):
        raise TypeError(f"engine must be a str or None, got {type(engine).__name__}")
    if engine not in known:
        raise ValueError(f"unknown engine {engine!r}; valid engines: {', '.join(known)}")
    return engine


def check_minkowski(p: Any, eps: Any) -> None:
    """SciPy compatibility arguments: only p=2 (Euclidean) exists here; eps >= 0 is accepted
    and ignored, since exact results satisfy any approximation bound."""
    if as_real(p, "p") != 2.0:
        raise ValueError(f"only the Euclidean distance is supported (p=2), got p={p!r}")
    eps_value = as_real(eps, "eps")
    if not eps_value >= 0.0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")


def check_choice(value: Any, name: str, choices: tuple) -> str:
    """One of the strings in `choices`."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def as_boxsize(boxsize: Any, dim: int) -> Optional[np.ndarray]:
    """SciPy's boxsize: None, a scalar for every axis, or one entry per axis, as a float64 array
    of `dim` entries. An entry > 0 and finite makes its axis periodic with the box [0, entry);
    0, a negative value or inf leaves the axis open (as in cKDTree). NaN is refused."""
    if boxsize is None:
        return None
    array = _numeric_array(boxsize, "boxsize").astype(np.float64)
    if array.ndim == 0:
        array = np.full(dim, float(array))
    if array.shape != (dim,):
        raise ValueError(
            f"boxsize must be a scalar or have {dim} entries (one per axis), got shape "
            f"{array.shape}"
        )
    for axis in range(dim):
        if math.isnan(array[axis]):
            raise ValueError(f"boxsize[{axis}] (axis {axis}, {'xyz'[axis]}) is nan")
    return array


def _native_dtype(dtype: np.dtype) -> np.dtype:
    """float32 (any byte order) -> native float32; everything else -> native float64."""
    if dtype.kind == "f" and dtype.itemsize == 4:
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _real_as_float(value: Any, name: str) -> float:
    """as_real, but a value beyond the float64 range raises OverflowError."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def _radius_as_float(value: Any, name: str) -> float:
    """A radius argument as float; ValueError naming the supported range for one beyond the
    float64 range."""
    try:
        return _real_as_float(value, name)
    except OverflowError:
        raise ValueError(
            f"{name} is outside the supported radius range {RADIUS_RANGE} (too large in "
            "magnitude to be a float64)"
        ) from None


def _checked_radius(value: float, name: str) -> float:
    """`value` if finite and in [MIN_RADIUS, MAX_RADIUS]; ValueError naming `name` otherwise."""
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    if not MIN_RADIUS <= value <= MAX_RADIUS:
        raise ValueError(f"{name}={value!r} is outside the supported radius range {RADIUS_RANGE}")
    return value


def _entry(name: str, shape: Tuple[int, ...], k: int) -> str:
    """The entry with flat index k of an array `name` of `shape`, as ``name[i, j]``."""
    index = np.unravel_index(k, shape) if shape else ()
    return f"{name}[{', '.join(str(int(i)) for i in index)}]"


def _numeric_array(value: Any, name: str) -> np.ndarray:
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:
        raise ValueError(f"{name} could not be read as a numeric array: {error}") from None
    if array.dtype.kind not in "fiu":
        raise TypeError(
            f"{name} must hold real numbers (float32/float64 preferred), got dtype {array.dtype}"
        )
    return array
