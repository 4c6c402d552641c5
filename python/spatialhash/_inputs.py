"""Argument checking and conversion for spatialhash.Index: every error a user can cause with a
bad argument is raised here, as TypeError (wrong kind of value) or ValueError (wrong value)."""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional

import numpy as np

#: dtypes the C++ core reads in place; everything else numeric is converted to float64 once.
NATIVE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def as_points(points: Any, name: str = "points") -> np.ndarray:
    """Returns `points` as a C-contiguous (n, 2) or (n, 3) float32/float64 array.

    float32 and float64 C-contiguous arrays are returned as they are (no copy); other layouts,
    integer or other real dtypes and nested sequences are converted once (to float64 unless
    already float32/float64)."""
    array = _numeric_array(points, name)
    if array.ndim != 2 or array.shape[1] not in (2, 3):
        raise ValueError(f"{name} must have shape (n, 2) or (n, 3), got shape {array.shape}")
    if array.dtype not in NATIVE_DTYPES:
        array = array.astype(np.float64)
    return np.ascontiguousarray(array)


def as_positions(x: Any, dim: int, name: str = "x") -> np.ndarray:
    """Query positions: an array whose last axis has length `dim`, converted to float64."""
    array = _numeric_array(x, name)
    if array.ndim == 0 or array.shape[-1] != dim:
        raise ValueError(
            f"{name} must have shape (..., {dim}) to match the {dim}D index, got shape "
            f"{array.shape}"
        )
    return array.astype(np.float64, copy=False)


def as_radius(r: Any, default: float, name: str = "r") -> float:
    """A query radius: `default` (the index radius) for None, else a finite number in
    (0, default]."""
    if r is None:
        return default
    value = as_real(r, name)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    if value > default:
        raise ValueError(
            f"{name}={value!r} exceeds the index radius {default!r}; build the Index with a "
            "radius at least as large as every query radius"
        )
    return value


def as_real(value: Any, name: str) -> float:
    """A real number (bool excluded; 0-d arrays accepted) as float; TypeError otherwise."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def as_threads(threads: Optional[int]) -> int:
    """The C++ thread count: 0 (all cores) for None or -1, else a positive int."""
    if threads is None:
        return 0
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, numbers.Integral):
        raise TypeError(f"threads must be an int or None, got {type(threads).__name__}")
    value = int(threads)
    if value == -1:
        return 0
    if value < 1:
        raise ValueError(f"threads must be a positive int, -1 or None (all cores), got {value}")
    return value


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
