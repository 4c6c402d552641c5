# Type stub of the C++ extension spatialhash._core (bindings in python/src/).
from typing import Dict, List, Optional, Set, Tuple, Union

import numpy as np

MIN_RADIUS: float
MAX_RADIUS: float
MAX_THREADS: int

def engine_names() -> List[str]: ...
def split_rows(offsets: np.ndarray, indices: np.ndarray) -> np.ndarray: ...
def transpose_rows(
    offsets: np.ndarray, indices: np.ndarray, columns: int, threads: int = ...
) -> Tuple[np.ndarray, np.ndarray]: ...
def pairs_to_set(pairs: np.ndarray) -> Set[Tuple[int, int]]: ...
def distance_bins(
    distances: np.ndarray, thresholds: np.ndarray, weights: Optional[np.ndarray] = None
) -> Tuple[np.ndarray, np.ndarray]: ...
def pairs_to_dict(
    i: np.ndarray, j: np.ndarray, values: np.ndarray
) -> Dict[Tuple[int, int], float]: ...

class Index:
    def __init__(
        self,
        points: np.ndarray,
        radius: float,
        engine: str = ...,
        threads: int = ...,
        boxsize: List[float] = ...,
    ) -> None: ...
    @property
    def dim(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def radius(self) -> float: ...
    @property
    def engine(self) -> str: ...
    @property
    def threads(self) -> int: ...
    @property
    def single_precision(self) -> bool: ...
    def pairs(
        self, radius: float, sorted: bool, with_distances: bool, int32: bool
    ) -> Tuple[np.ndarray, Optional[np.ndarray]]: ...
    def neighbor_lists(
        self,
        radius: float,
        sorted: bool,
        with_distances: bool,
        low_memory: bool,
        int32: bool,
        half: bool,
    ) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]: ...
    def neighbor_rows(
        self, radius: float, sorted: bool, with_distances: bool, int32: bool, half: bool
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, Optional[np.ndarray]]: ...
    def self_distance_entries(
        self, radius: float, layout: str, int32: bool
    ) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray, np.ndarray]]: ...
    def cross_distance_entries(
        self, queries: np.ndarray, radius: float, layout: str, int32: bool
    ) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray, np.ndarray]]: ...
    def neighbor_counts(self, radius: float) -> np.ndarray: ...
    def cross(
        self,
        queries: np.ndarray,
        radius: float,
        sorted: bool,
        with_distances: bool,
        int32: bool,
    ) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]: ...
    def cross_rows(
        self,
        queries: np.ndarray,
        radius: float,
        sorted: bool,
        with_distances: bool,
        int32: bool,
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, Optional[np.ndarray]]: ...
    def balls(
        self, queries: np.ndarray, radii: np.ndarray, sorted: bool
    ) -> Tuple[np.ndarray, np.ndarray, None]: ...
    def ball_counts(self, queries: np.ndarray, radii: np.ndarray) -> np.ndarray: ...
    def update(self, points: np.ndarray) -> None: ...
