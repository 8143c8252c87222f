"""A cold read of vectors.bin: hnswlib's search walked over the saved graph, each vector
read from the cache as the walk reaches it (a command run with no daemon up).

``VectorIndex.open`` puts every live vector back into hnswlib's file before it can
search (vectors_file.py: the graph form keeps none): every chunk's vector read from
cache.db and a full file assembled in the temp folder, 0.6 s at 10,000 notes and
7 s at 100,000 (bench/RESULTS.md, "A cold command"), for one search that reads a
few thousand of them. ``ColdGraph`` reads the graph form where it lies and runs
hnswlib 0.8's ``searchKnn`` itself — the greedy descent on the upper levels, then
``searchBaseLayerST`` at level 0 with ``ef`` = max(ef_search, k), its heaps, ties and
stopping rule — reading a vector only when the walk computes its distance (the
same float16-exact, normalized rows a full open hands hnswlib). What the saved graph
lacks is what a full open would add: the chunks embedded since the save (and the
twins, never saved: vector_twins.py) are searched exactly, beside the walk; the
labels it holds that the db no longer has are deleted, as the open marks them. So a
hit is the walk's over the saved graph or exact, never worse than the full open's.

Anything unusual is left to the full open (``open`` returns None): no checksum or a
file not the one last saved, a full (older) file, another M, a label the db holds
deleted in the file (the open rebuilds), more than ``MISSING_MOST`` chunks the saved
graph lacks (the open adds them, and a writer's close saves the graph). Read-only: the writes open the full index.
"""

from __future__ import annotations

import hashlib
import heapq
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memvault.errors import IndexCorrupt
from memvault.index.vectors import OpenReport, VectorIndex, VectorsWanted
from memvault.index.vectors_file import _DELETE_MARK, FOOTER, GRAPH_MAGIC, HEADER, normalized
from memvault.index.vectors_projected import ProjectedVectors

if TYPE_CHECKING:
    from memvault.index.seam import VectorSearch

Vectors = Callable[[Sequence[int]], np.ndarray]
# The vectors read kept between queries, in bytes: a context's second query (and a
# process's next search) walks near the first. One walk at 100,000 notes reads a few
# thousand (ef_search 200, 2M = 32 links a node): 32 MB holds several walks of 384
# dimensions (4 MB each at most), where a count (200,000) let a process kept between an
# agent's calls grow to 300 MB at 384 dimensions and 600 MB at 768.
KEPT_BYTES = 32 * 1024 * 1024
# The chunks the saved graph lacks are read and compared at every search: past this many
# (a daemon killed before its save, mid-catch-up) the full open runs instead, which puts
# them into the graph, and the writer's close saves it: the next command walks it whole.
# (Kept cold, no read ever repaired it, and each search read them all again.)
MISSING_MOST = 4096


class ColdGraph:
    """The saved graph, searched as hnswlib searches it (see the module)."""

    def __init__(
        self,
        data: bytes,
        dim: int,
        ef_search: int,
        want_labels: np.ndarray,
        vectors_for: Vectors,
    ) -> None:
        h = HEADER.unpack_from(data)
        (_, _, elements, per, label_offset, data_offset, max_level, entry, max_m, max_m0) = h[:10]
        self.dim = dim
        self.ef_search = ef_search
        self._vectors_for = vectors_for
        self._n = elements
        self._entry = entry
        self._max_level = max_level
        self._max_m0 = max_m0
        level0 = np.frombuffer(data, np.uint8, elements * per, HEADER.size).reshape(elements, per)
        self._level0 = level0
        self._data_offset = data_offset
        self._label = level0[:, label_offset:per].copy().view("<u8").ravel().astype(np.int64)
        dead = (level0[:, 2] & _DELETE_MARK).astype(bool)
        wanted = np.sort(np.asarray(want_labels, dtype=np.int64))  # unique: chunk labels
        in_db = _within(self._label, wanted)
        if (dead & in_db).any():
            raise _Unusual("a label the db holds is deleted in the file")
        self._searchable = ~dead & in_db  # an element the walk may return
        self._deletions = bool((~self._searchable).any())
        self._missing = np.setdiff1d(wanted, self._label[~dead], assume_unique=True)
        if len(self._missing) > MISSING_MOST:
            raise _Unusual("the saved graph lacks too many chunks")
        self._in_db = in_db
        # the deleted elements' vectors: in the file, in element order, before the footer
        count = int(dead.sum())
        start = len(data) - FOOTER.size - count * dim * 4
        self._dead_rank = np.cumsum(dead) - 1
        self._dead_vectors = np.frombuffer(data, "<f4", count * dim, start).reshape(count, dim)
        level0_end = HEADER.size + elements * per
        self._upper = _upper_levels(data, level0_end, start, elements, max_m, max_level)
        self._words = np.frombuffer(data, "<u4", (start - level0_end) // 4, level0_end)
        self._per_level = max_m + 1  # words
        self._kept: dict[int, np.ndarray] = {}
        self._kept_lock = threading.Lock()  # searches on several threads share it
        if elements and (entry >= elements or self._level(entry) != max_level):
            raise IndexCorrupt("vectors file entry point is not on the top level")

    @property
    def nodes(self) -> int:
        return int(self._searchable.sum())

    # --- the graph -----------------------------------------------------------------

    def _level(self, element: int) -> int:
        at = self._upper.get(element)
        return 0 if at is None else at[1]

    def _links(self, element: int, level: int) -> np.ndarray:
        if level == 0:
            row = self._level0[element]
            size = int(row[0]) | int(row[1]) << 8
            links = row[4 : self._data_offset].view("<u4")
        else:
            at = self._upper.get(element)
            if at is None or level > at[1]:
                raise IndexCorrupt("vectors file graph links out of range")
            start = at[0] + (level - 1) * self._per_level
            size = int(self._words[start]) & 0xFFFF
            links = self._words[start + 1 : start + self._per_level]
        if size > len(links):
            raise IndexCorrupt("vectors file graph links out of range")
        out = links[:size].astype(np.int64)
        if len(out) and int(out.max()) >= self._n:
            raise IndexCorrupt("vectors file graph links out of range")
        return out

    # --- the vectors -----------------------------------------------------------------

    def _rows(self, elements: Sequence[int]) -> np.ndarray:
        """The elements' vectors as the full file holds them (normalized), kept (up to
        ``KEPT_BYTES``). Searches may run on several threads: each reads the kept ones
        into its own dict under the lock, so one's eviction never takes another's rows."""
        with self._kept_lock:
            kept = self._kept
            got = {e: kept[e] for e in elements if e in kept}
        need = [e for e in dict.fromkeys(elements) if e not in got]
        if need:
            fresh: dict[int, np.ndarray] = {}
            ask = [e for e in need if self._in_db[e] and not self._dead(e)]
            if ask:
                rows = normalized(_exact16(self._vectors_for(self._label[ask].tolist()), self.dim))
                fresh.update(zip(ask, rows, strict=True))
            for e in need:
                if e not in fresh:  # deleted in the file: its own; gone from the db: zeros
                    fresh[e] = (
                        self._dead_vectors[self._dead_rank[e]].astype(np.float32)
                        if self._dead(e)
                        else np.zeros(self.dim, np.float32)
                    )
            got.update(fresh)
            with self._kept_lock:
                if (len(self._kept) + len(fresh)) * self.dim * 4 > KEPT_BYTES:
                    self._kept = {}  # let go of them all: the next walk reads its own
                self._kept.update(fresh)
        return np.stack([got[e] for e in elements]) if elements else np.zeros((0, self.dim))

    def _dead(self, element: int) -> bool:
        return bool(self._level0[element, 2] & _DELETE_MARK)

    def _distances(self, q: np.ndarray, elements: Sequence[int]) -> list[float]:
        return (np.float32(1.0) - self._rows(elements) @ q).astype(np.float32).tolist()

    # --- search ----------------------------------------------------------------------

    def query(
        self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None
    ) -> list[tuple[int, float]]:
        """As ``VectorIndex.query`` over the index a full open would make (see the module)."""
        q = normalized(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
        if k <= 0:
            return []
        found: list[tuple[float, int]] = []
        count = self.nodes
        if count:
            asked = min(k, count)
            found = self._search(q, asked, max(self.ef_search, asked), allowed)
            if len(found) < asked:  # hnswlib cannot return k: the allowed nodes, exactly
                every = np.flatnonzero(self._searchable).tolist()
                ok = [e for e in every if allowed is None or allowed(int(self._label[e]))]
                found = sorted(zip(self._distances(q, ok), ok, strict=True))
            found = [(d, int(self._label[e])) for d, e in found]
        missing = [x for x in self._missing.tolist() if allowed is None or allowed(x)]
        if missing:
            rows = normalized(_exact16(self._vectors_for(missing), self.dim))
            dists = (np.float32(1.0) - rows @ q).astype(np.float32).tolist()
            found.extend(zip(dists, missing, strict=True))
        found.sort(key=lambda hit: hit[0])  # stable: the walk's first at a tie
        return [(label, 1.0 - d) for d, label in found[:k]]

    def _search(
        self, q: np.ndarray, k: int, ef: int, allowed: Callable[[int], bool] | None
    ) -> list[tuple[float, int]]:
        """hnswlib's ``searchKnn``: (distance, element) of the ``k`` best, best first."""
        current = self._entry
        best = self._distances(q, [current])[0]
        for level in range(self._max_level, 0, -1):
            changed = True
            while changed:
                changed = False
                links = self._links(current, level).tolist()
                for d, cand in zip(self._distances(q, links), links, strict=True):
                    if d < best:
                        best, current, changed = d, cand, True
        top = self._base_layer(q, current, ef, allowed)
        while len(top) > k:
            heapq.heappop(top)
        return sorted((-d, -e) for d, e in top)

    def _base_layer(
        self, q: np.ndarray, start: int, ef: int, allowed: Callable[[int], bool] | None
    ) -> list[tuple[float, int]]:
        """``searchBaseLayerST``: top as a heap of (-distance, -element), worst on top
        (hnswlib's max-heap of (distance, element)); candidates (distance, -element)."""

        def passes(e: int) -> bool:
            return bool(self._searchable[e]) and (allowed is None or allowed(int(self._label[e])))

        full_walk = allowed is not None or self._deletions  # hnswlib's stopping rule
        top: list[tuple[float, int]] = []
        candidates: list[tuple[float, int]] = []
        visited = {start}
        if passes(start):
            d = self._distances(q, [start])[0]
            lower = d
            top.append((-d, -start))
            candidates.append((d, -start))
        else:
            lower = float(np.finfo(np.float32).max)
            candidates.append((lower, -start))
        while candidates:
            d_current, neg = candidates[0]
            if d_current > lower and (len(top) == ef or not full_walk):
                break
            heapq.heappop(candidates)
            fresh = [e for e in dict.fromkeys(self._links(-neg, 0).tolist()) if e not in visited]
            visited.update(fresh)
            for d, e in zip(self._distances(q, fresh), fresh, strict=True):
                if len(top) < ef or lower > d:
                    heapq.heappush(candidates, (d, -e))
                    if passes(e):
                        heapq.heappush(top, (-d, -e))
                    if len(top) > ef:
                        heapq.heappop(top)
                    if top:
                        lower = -top[0][0]
        return top

    # --- the rest of a VectorSearch: read-only (the writes open the full index) ------

    def open(self, want: VectorsWanted) -> OpenReport:
        raise RuntimeError("a cold read is opened by open_cold")

    def add(self, labels: Sequence[int], vectors: np.ndarray) -> None:
        raise RuntimeError("a cold read of the vectors takes no writes")

    def delete(self, labels: Iterable[int]) -> int:
        raise RuntimeError("a cold read of the vectors takes no writes")

    def compact(self, vectors_for: Vectors) -> None:
        raise RuntimeError("a cold read of the vectors takes no writes")

    def save(self) -> str | None:
        return None

    def deleted_ratio(self) -> float:
        return 0.0

    def labels(self) -> set[int]:
        searchable = self._label[self._searchable].tolist()
        return {*searchable, *self._missing.tolist()}

    @property
    def dirty(self) -> bool:
        return False


class _Unusual(Exception):
    """What the full open handles (the module's list): no cold read then."""


def cold_search(
    vi: object, expected_sha: str | None, labels: Callable[[], np.ndarray], vectors_for: Vectors
) -> VectorSearch | None:
    """``vi`` (the store's ``vector_index``, not opened) read cold, as ``open`` would
    hold it for ``labels()`` (the db's, sorted) and ``vectors_for``: hnswlib's graph as
    it was saved, or its projection's (each search ranked again by the full vectors, as
    ``ProjectedVectors`` ranks); None when the full open must run (pgvector too: its
    search reads no file)."""
    if isinstance(vi, ProjectedVectors):
        sha, _, ident = (expected_sha or "").partition("+")
        graph = vi.inner
        if not sha or ident != vi.projection.ident or not isinstance(graph, VectorIndex):
            return None  # built otherwise: the full open rebuilds it
        inner = open_cold(
            graph.path, graph.dim, graph.m, graph.ef_search,
            sha, labels(), vi.projected(vectors_for),
        )  # fmt: skip
        return None if inner is None else ProjectedVectors(inner, vi.projection, vi.full)
    if isinstance(vi, VectorIndex):
        return open_cold(vi.path, vi.dim, vi.m, vi.ef_search, expected_sha, labels(), vectors_for)
    return None


def open_cold(
    path: Path,
    dim: int,
    m: int,
    ef_search: int,
    expected_sha: str | None,
    labels: Iterable[int] | np.ndarray,
    vectors_for: Vectors,
) -> ColdGraph | None:
    """The saved graph at ``path`` to search cold, or None when the full open must run
    (the module's list; a damaged file too: the full open says so and rebuilds)."""
    if expected_sha is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != expected_sha:
        return None
    if len(data) < HEADER.size + FOOTER.size or data[-4:] != GRAPH_MAGIC:
        return None  # a full file (memvault before the graph form), or not ours
    h = HEADER.unpack_from(data)
    offset0, _, elements, per, label_offset, data_offset, max_level = h[:7]
    max_m, max_m0, file_m = h[8], h[9], h[10]
    if (
        offset0 != 0
        or file_m != m
        or (max_m, max_m0) != (m, 2 * m)
        or FOOTER.unpack_from(data, len(data) - FOOTER.size)[0] != dim
        or label_offset != data_offset
        or data_offset != max_m0 * 4 + 4
        or per != label_offset + 8
        or not 0 <= max_level < 64
        or HEADER.size + elements * per > len(data)
    ):
        return None
    labels = labels if isinstance(labels, np.ndarray) else np.fromiter(labels, dtype=np.int64)
    try:
        return ColdGraph(data, dim, ef_search, labels, vectors_for)
    except (_Unusual, IndexCorrupt, ValueError):
        return None


def _upper_levels(
    data: bytes, start: int, end: int, elements: int, max_m: int, max_level: int
) -> dict[int, tuple[int, int]]:
    """element -> (the word its level-1 list starts at, its top level), for the elements
    above level 0 (about one in M): the size words of the others are zeros, skipped in
    numpy, so the walk over the file costs the upper elements, not every element."""
    if (end - start) % 4:
        raise IndexCorrupt("vectors file upper graph levels are inconsistent")
    words = np.frombuffer(data, "<u4", (end - start) // 4, start)
    per_level = max_m + 1
    nonzero = np.flatnonzero(words)
    out: dict[int, tuple[int, int]] = {}
    pos = element = 0
    at = 0  # index into nonzero
    while element < elements:
        at = int(np.searchsorted(nonzero, pos, side="left")) if at < len(nonzero) else at
        nxt = int(nonzero[at]) if at < len(nonzero) else len(words)
        element += nxt - pos  # the elements whose size word is zero
        if element >= elements:
            if element > elements or nxt != len(words):
                raise IndexCorrupt("vectors file has trailing bytes")
            break
        size = int(words[nxt])
        if size % (per_level * 4) or not 0 < size // (per_level * 4) <= max_level:
            raise IndexCorrupt("vectors file upper graph levels are inconsistent")
        levels = size // (per_level * 4)
        out[element] = (nxt + 1, levels)
        pos = nxt + 1 + levels * per_level
        if pos > len(words):
            raise IndexCorrupt("vectors file truncated in the upper graph levels")
        element += 1
    else:
        if pos != len(words):
            raise IndexCorrupt("vectors file has trailing bytes")
    return out


def _within(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which of ``values`` are in ``sorted_set`` (sorted, unique): one binary search each."""
    if not len(sorted_set):
        return np.zeros(len(values), bool)
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return np.asarray(sorted_set[at] == values)


def _exact16(vectors: np.ndarray, dim: int) -> np.ndarray:
    """The rows as the index holds them: float16-exact float32 (``vectors._checked``)."""
    array = np.asarray(vectors)
    if array.ndim != 2 or array.shape[1] != dim:
        raise ValueError(f"expected vectors of {dim} dimensions, got {array.shape}")
    return array.astype(np.float16).astype(np.float32)


__all__ = ["ColdGraph", "cold_search", "open_cold"]
