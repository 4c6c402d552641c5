"""Pair counts over many radii at once (``Index.count_neighbors``), exact by the neighbor rule.

One cross search at the largest radius, in chunks of query positions, gives every pair's distance
``d = sqrt(d2)`` (float64, correctly rounded). Whether a pair counts at radius r is the rule's
``d2 <= r*r``, and the distance alone decides it except at one value: with ``s = sqrt(r*r)``
rounded as NumPy rounds it, ``d < s`` implies ``d2 <= r*r`` and ``d > s`` implies ``d2 > r*r``
(a correctly rounded square root is monotone: were ``d2 > r*r``, ``d`` would round to at least
``s``; were ``d2 <= r*r``, to at most ``s``). Pairs with ``d == s`` exactly are ties: a radius
that meets one is counted again by a search of its own at r, which applies the rule itself.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import numpy as np

from . import _core

#: Entries (pairs) one chunk of the cross search aims at: 16 bytes each (index and distance).
CHUNK_ENTRIES = 1 << 22
#: Positions in the first chunk, before any entries per position are known.
FIRST_CHUNK = 4096
#: The fewest positions in a chunk after the first.
MIN_CHUNK = 256

#: Cross search: (positions (k, m) float64, radius, with_distances) -> (offsets, indices,
#: distances or None), rows in the order of the positions.
CrossSearch = Callable[[np.ndarray, float, bool], Tuple[np.ndarray, np.ndarray, Any]]


def _chunks(positions: np.ndarray, search: CrossSearch, radius: float, with_distances: bool):
    """Yields (first position, offsets, indices, distances) of the cross search over chunks of
    the positions, each sized from the last one's entries per position to hold about
    CHUNK_ENTRIES pairs."""
    start, size = 0, FIRST_CHUNK
    while start < len(positions):
        chunk = positions[start : start + size]
        offsets, indices, distances = search(chunk, radius, with_distances)
        yield start, offsets, indices, distances
        start += len(chunk)
        per_position = max(1.0, len(indices) / len(chunk))
        size = int(min(max(CHUNK_ENTRIES / per_position, MIN_CHUNK), 1 << 20))


def _entry_weights(
    start: int,
    offsets: np.ndarray,
    indices: np.ndarray,
    self_weights: Optional[np.ndarray],
    other_weights: Optional[np.ndarray],
) -> Optional[np.ndarray]:
    """Each pair's weight in one chunk (the indexed point's times the position's), or None when
    neither side is weighted."""
    if self_weights is None and other_weights is None:
        return None
    weights = np.ones(len(indices))
    if self_weights is not None:
        weights *= self_weights[indices]
    if other_weights is not None:
        per_row = np.diff(offsets)
        weights *= np.repeat(other_weights[start : start + len(per_row)], per_row)
    return weights


def _weighted_total(
    positions: np.ndarray,
    search: CrossSearch,
    radius: float,
    self_weights: Optional[np.ndarray],
    other_weights: Optional[np.ndarray],
) -> Any:
    """The rule's own count at one radius: sum over pairs of their weights (int without any)."""
    total: Any = 0 if self_weights is None and other_weights is None else 0.0
    for start, offsets, indices, _ in _chunks(positions, search, radius, False):
        weights = _entry_weights(start, offsets, indices, self_weights, other_weights)
        total += len(indices) if weights is None else float(weights.sum())
    return total


def count_pairs(
    positions: np.ndarray,
    search: CrossSearch,
    radii: np.ndarray,
    search_radius: float,
    self_weights: Optional[np.ndarray],
    other_weights: Optional[np.ndarray],
) -> np.ndarray:
    """Cumulative (weighted) counts of the pairs (indexed point, position) with d2 <= r*r, one per
    entry of `radii` (1-D float64, each 0 or in [MIN_RADIUS, search_radius]; 0 counts coincident
    points). int64 without weights, float64 with."""
    weighted = self_weights is not None or other_weights is not None
    thresholds = np.sqrt(radii * radii)  # s of each radius
    # r = 0: d2 <= 0 exactly when d == 0, i.e. d below the least positive double (a nonzero d2
    # has a root above 1e-162, so no pair ties with it).
    thresholds[radii == 0.0] = np.nextafter(0.0, 1.0)
    order = np.argsort(thresholds, kind="stable")
    sorted_s = thresholds[order]
    # Bin b holds the pairs whose d is at or above b of the sorted thresholds: they count at the
    # thresholds from the b-th (0-based) on, so the counts are the bins' running sums. A pair tied
    # with a threshold sits beyond it like the pairs above it; that threshold is counted again.
    bins = np.zeros(len(sorted_s) + 1, dtype=np.float64 if weighted else np.int64)
    ties = np.zeros(len(sorted_s), dtype=bool)
    for start, offsets, indices, distances in _chunks(positions, search, search_radius, True):
        weights = _entry_weights(start, offsets, indices, self_weights, other_weights)
        chunk_bins, chunk_ties = _core.distance_bins(distances, sorted_s, weights)
        bins += chunk_bins
        ties |= chunk_ties
    sorted_counts = np.cumsum(bins)[:-1]
    ties = np.isin(sorted_s, sorted_s[ties])  # repeated radii tie alike
    searched: dict = {}
    for k in np.flatnonzero(ties):
        radius = float(radii[order[k]])
        if radius not in searched:
            searched[radius] = _weighted_total(
                positions, search, radius, self_weights, other_weights
            )
        sorted_counts[k] = searched[radius]
    counts = np.empty_like(sorted_counts)
    counts[order] = sorted_counts
    return counts
