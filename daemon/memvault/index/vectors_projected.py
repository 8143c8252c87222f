"""hnswlib over projected vectors, each search ranked again by the full ones.

``ProjectedVectors`` is a ``VectorSearch`` (index/seam.py) around a ``VectorIndex`` of
``projection.out`` dimensions (index/projection.py): what goes in is projected on the
way, a query takes more candidates from the graph (``candidates``), ranked again by
their full vectors, read from cache.db (``full``: the labels found and their rows; a
chunk whose vector the cache lost keeps the graph's score). A search's answer, and its
scores, are then the full vectors' cosines, as without the projection, for the
candidates the graph finds; a graph node takes 908 bytes instead of 1,676 (bench/RESULTS.md,
"The graph on 192 dimensions").

The graph file records its projection (``ident``, with the checksum the store keeps):
a file built under another projection, or none, is rebuilt from the cache on open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import numpy as np

from memvault.index.projection import Projection
from memvault.index.vectors import (
    OpenReport,
    VectorsWanted,
    _checked,
    query_vector,
)

# candidates taken from the graph for ``k`` hits: twice as many, and at least 40 more
# (a search's 100 -> 200, a context's 300 -> 600, 10 -> 50; bench/RESULTS.md)
OVER, EXTRA = 2, 40


class Graph(Protocol):
    """What holds the projected vectors: a ``VectorIndex``, or a cold read of its saved
    graph (vectors_cold.py's ``ColdGraph``, searched through this class too)."""

    dim: int

    def open(self, want: VectorsWanted) -> OpenReport: ...
    def add(self, labels: Sequence[int], vectors: np.ndarray) -> None: ...
    def delete(self, labels: Iterable[int]) -> int: ...
    def query(
        self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None
    ) -> list[tuple[int, float]]: ...
    def save(self) -> str | None: ...
    def compact(self, vectors_for: Callable[[Sequence[int]], np.ndarray]) -> None: ...
    def deleted_ratio(self) -> float: ...
    def labels(self) -> set[int]: ...
    @property
    def dirty(self) -> bool: ...


def candidates(k: int) -> int:
    return max(k * OVER, k + EXTRA)


Full = Callable[[Sequence[int]], tuple[list[int], np.ndarray]]


class ProjectedVectors:
    """A ``VectorSearch`` whose graph holds projected vectors (see the module)."""

    def __init__(self, inner: Graph, projection: Projection, full: Full) -> None:
        if inner.dim != projection.out:
            raise ValueError(f"a graph of {inner.dim} dimensions for a {projection.ident}")
        self.inner = inner
        self.projection = projection
        self.dim = projection.dim
        self.full = full

    def projected(
        self, vectors_for: Callable[[Sequence[int]], np.ndarray]
    ) -> Callable[[Sequence[int]], np.ndarray]:
        return lambda labels: self.projection.apply(
            _checked(vectors_for(labels), len(labels), self.dim)
        )

    def open(self, want: VectorsWanted) -> OpenReport:
        sha, _, ident = (want.expected_sha or "").partition("+")
        same = sha and ident == self.projection.ident  # else: built otherwise, rebuilt
        return self.inner.open(
            VectorsWanted(sha if same else None, want.labels, self.projected(want.vectors_for))
        )

    def add(self, labels: Sequence[int], vectors: np.ndarray) -> None:
        # the full vectors as VectorIndex takes its own: float16-exact (the cache's int8
        # rows rounded alike, so a loaded graph is the saved one), finite, non-zero
        self.inner.add(labels, self.projection.apply(_checked(vectors, len(labels), self.dim)))

    def delete(self, labels: Iterable[int]) -> int:
        return self.inner.delete(labels)

    def query(
        self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None
    ) -> list[tuple[int, float]]:
        q = query_vector(vector, self.dim)
        if k <= 0:
            return []
        found = self.inner.query(self.projection.apply(q)[0], candidates(k), allowed)
        if not found:
            return []
        labels = [label for label, _ in found]
        have, rows = self.full(labels)
        norm = float(np.linalg.norm(q)) or 1.0
        scores = dict(found)  # the graph's, for a chunk whose full vector is not cached
        if have:
            full = np.asarray(rows, dtype=np.float32)
            lengths = np.linalg.norm(full, axis=1)
            lengths[lengths == 0] = 1.0
            sims = (full @ (q / norm)) / lengths
            scores.update(zip(have, (float(s) for s in sims), strict=True))
        ranked = sorted(labels, key=lambda label: (-scores[label], label))
        return [(label, scores[label]) for label in ranked[:k]]

    def save(self) -> str | None:
        sha = self.inner.save()
        return None if sha is None else f"{sha}+{self.projection.ident}"

    def compact(self, vectors_for: Callable[[Sequence[int]], np.ndarray]) -> None:
        self.inner.compact(self.projected(vectors_for))

    def deleted_ratio(self) -> float:
        return self.inner.deleted_ratio()

    def labels(self) -> set[int]:
        return self.inner.labels()

    @property
    def dirty(self) -> bool:
        return self.inner.dirty
