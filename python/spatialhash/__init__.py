"""spatialhash: exact fixed-radius neighbor search in 2D and 3D, built on spatial hashing.

A drop-in alternative to ``scipy.spatial.cKDTree`` for radius queries::

    import numpy as np, spatialhash
    index = spatialhash.Index(np.random.rand(100_000, 3), radius=0.02)
    pairs = index.query_pairs()        # (m, 2) int64 array, i < j

See ``help(spatialhash.Index)`` for every method and the exact neighbor rule.
"""

from __future__ import annotations

from typing import List

try:
    from . import _core
except ImportError as error:  # the source tree's package, without the compiled extension
    raise ImportError(
        "spatialhash._core is not built here: build the module with CMake "
        "(-DSPATIALHASH_BUILD_PYTHON=ON) and put <build>/python on PYTHONPATH, or run "
        "`/usr/bin/python3 -m pip install --no-build-isolation .` from the repository root"
    ) from error
from ._index import Index  # noqa: E402

#: The radii an index and its queries accept: [2**-500, 2**500], where r*r is a normal double.
MIN_RADIUS: float = _core.MIN_RADIUS
MAX_RADIUS: float = _core.MAX_RADIUS
#: The most worker threads an index may use (``threads``, ``workers``).
MAX_THREADS: int = _core.MAX_THREADS

__all__ = ["Index", "engines", "MIN_RADIUS", "MAX_RADIUS", "MAX_THREADS", "__version__"]
__version__ = "0.1.0"


def engines() -> List[str]:
    """Names accepted by ``Index(engine=...)``, ``"automatic"`` (the default) first. Every
    engine returns identical results; they differ in speed and memory."""
    return list(_core.engine_names())
