"""The hnswlib vector index: fresh labels, growth, compaction, atomic saves, one lock.

Rules this wrapper enforces (DESIGN.md, "The index"):

- Labels are never reused, not even after a delete: re-adding a deleted label
  with ``replace_deleted=True`` corrupts hnswlib 0.8's label map, so
  ``allow_replace_deleted`` is never used and ``add`` refuses any label this
  object has seen since ``open`` (labels read from the file count as seen).
- One ``threading.Lock`` around every call: hnswlib is not safe for queries
  during inserts.
- A file is handed to hnswlib only when its sha256 is the one recorded at the
  last save *and* its structure checks out (header fields against the
  dimension, sizes against the file length, every graph link in range):
  ``load_index`` trusts the file and can crash the process on a truncated or
  foreign one. Anything else is rebuilt from the embedding cache.
- ``save`` writes a temp file in the same folder, fsyncs it, then
  ``os.replace`` it over the index, so a crash leaves the old or the new file.
- The file is the graph without the live vectors (vectors_file.py: the cache holds
  them): ``open`` asks ``vectors_for`` for them, as a rebuild does, and hands hnswlib
  a full file in the temp folder. The index holds float16-exact vectors only (what
  the cache gives back, rounded on the way in), so a loaded index is the saved one.

hnswlib's ``get_ids_list`` includes deleted labels and it has no call listing
them, so deletions are tracked here, and read from the file's element flags
on open.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock (and no deleting a file still open)
    fcntl = None  # type: ignore[assignment]

import hnswlib
import numpy as np

from memvault.errors import IndexCorrupt, StorageError
from memvault.index.vector_twins import MIN_CAPACITY, Twins, digests, nodes
from memvault.index.vectors_file import (
    HEADER,
    IndexFileInfo,
    inspect_index_file,
    write_full,
    write_graph,
)

_DENSE = 1 << 27  # labels below this are kept as bits (at most 16 MB: 134 million chunks)
_BATCH = 4096  # vectors fetched and inserted per step when (re)building


@dataclass(frozen=True, slots=True)
class VectorsWanted:
    """What a vector index is opened to hold (``open`` of ``VectorIndex`` and
    ``PgVectors``, index/seam.py's ``VectorSearch``): the db's truth."""

    expected_sha: str | None  # the checksum recorded for the vectors file last saved, if any
    labels: Collection[int]  # the chunks that have their vectors
    vectors_for: Callable[[Sequence[int]], np.ndarray]  # their vectors, (len(labels), dim)


@dataclass(frozen=True, slots=True)
class OpenReport:
    """What ``VectorIndex.open`` did: loaded the file, or rebuilt it and why."""

    loaded: bool
    rebuilt_reason: str | None  # None when the file was loaded
    added: int  # vectors inserted (all of them on a rebuild)
    removed: int  # labels the file held that the db does not (marked deleted)


class _Labels:
    """A set of labels that stays small for the daemon's months: one bit per label below
    ``_DENSE`` (labels come from AUTOINCREMENT, so they are dense), a set above. As a
    set of ints a label costs ~70 bytes: the live labels of 500,000 chunks (100,000
    notes) were ~35 MB of a daemon's memory, every label ever added as many again (a
    note saved thousands of times a day grew the daemon by megabytes a week). The
    bitmap: one byte per 8 labels. Iterates in ascending order."""

    def __init__(self, labels: Iterable[int] = ()) -> None:
        self._bits = bytearray()
        self._sparse: set[int] = set()
        self._count = 0
        self.update(labels)

    def __contains__(self, label: object) -> bool:
        if not isinstance(label, int) or label < 0:
            return False
        if label >= _DENSE:
            return label in self._sparse
        byte = label >> 3
        return byte < len(self._bits) and bool(self._bits[byte] & (1 << (label & 7)))

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __iter__(self) -> Iterator[int]:
        bits = np.unpackbits(np.frombuffer(bytes(self._bits), np.uint8), bitorder="little")
        yield from np.flatnonzero(bits).tolist()
        yield from sorted(self._sparse)

    def add(self, label: int) -> None:
        if label >= _DENSE:
            if label not in self._sparse:
                self._sparse.add(label)
                self._count += 1
            return
        byte, bit = label >> 3, 1 << (label & 7)
        if byte >= len(self._bits):
            self._bits.extend(bytes(max(byte + 1 - len(self._bits), len(self._bits))))
        if not self._bits[byte] & bit:
            self._bits[byte] |= bit
            self._count += 1

    def update(self, labels: Iterable[int]) -> None:
        for label in labels:
            self.add(int(label))

    def discard(self, label: int) -> None:
        if label >= _DENSE:
            if label in self._sparse:
                self._sparse.discard(label)
                self._count -= 1
            return
        byte, bit = label >> 3, 1 << (label & 7)
        if byte < len(self._bits) and self._bits[byte] & bit:
            self._bits[byte] &= ~bit & 0xFF
            self._count -= 1


class VectorIndex:
    """A cosine hnswlib index at ``path`` whose labels mirror the db's chunk labels.

    Call ``open`` before anything else. ``query`` returns cosine similarity
    (``1 - distance``), best first.
    """

    def __init__(
        self, path: Path, dim: int, *, m: int = 16, ef_construction: int = 200, ef_search: int = 100
    ) -> None:
        self.path = Path(path)
        self.dim = dim
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self._lock = threading.Lock()
        self._index: hnswlib.Index | None = None
        self._live = _Labels()
        self._deleted = _Labels()  # marked deleted in the current hnswlib index
        self._ever = _Labels()  # every label seen since open: never accepted again
        self._twins = Twins()  # labels whose vector a node already holds (vector_twins.py)
        self._dirty = False
        # while a compaction builds outside the lock: the adds and deletes since it began
        self._since: list[tuple[list[int], np.ndarray | None]] | None = None

    # --- opening -------------------------------------------------------------

    def open(self, want: VectorsWanted) -> OpenReport:
        """Load the saved index if it is the one last saved, else rebuild; then reconcile.

        ``want.labels`` is the db's truth; ``want.vectors_for(labels)`` returns their
        vectors (from the embedding cache) as a (len(labels), dim) array.
        Labels the index lacks are added, labels the db lacks are deleted.
        """
        wanted = {int(label) for label in want.labels}
        vectors_for = want.vectors_for
        with self._lock:
            twins = Twins()
            try:
                index, info = self._load(want.expected_sha, wanted, vectors_for, twins)
            except IndexCorrupt as exc:
                return self._rebuild(sorted(wanted), vectors_for, str(exc))
            in_file = {int(x) for x in info.labels}
            dead = {int(x) for x in info.labels[info.deleted]}
            revived = wanted & dead
            if revived:
                # A deleted label cannot be revived (never reuse labels): rebuild.
                reason = f"{len(revived)} labels the db holds are deleted in the vectors file"
                return self._rebuild(sorted(wanted), vectors_for, reason)
            live = in_file - dead
            missing = sorted(wanted - live)  # new since the save, and the twins (not saved)
            extra = live - wanted
            for label in extra:  # first: a twin of one of them is found a node of its own
                index.mark_deleted(label)
            kept = _Labels(live - extra)
            inserted = 0
            for batch in _batches(missing):
                vectors = _checked(vectors_for(batch), len(batch), self.dim)
                inserted += len(twins.place(index, batch, vectors, kept.__contains__))
                kept.update(batch)
            self._index = index
            self._live = kept
            self._deleted = _Labels(dead | extra)
            self._ever = _Labels(in_file | set(missing))
            self._twins = twins
            # a full file (memvault before the graph form) is saved as the graph next time
            self._dirty = bool(inserted or extra) or not info.graph_only
            return OpenReport(loaded=True, rebuilt_reason=None, added=inserted, removed=len(extra))

    def _load(
        self,
        expected_sha: str | None,
        wanted: set[int],
        vectors_for: Callable[[Sequence[int]], np.ndarray],
        twins: Twins,
    ) -> tuple[hnswlib.Index, IndexFileInfo]:
        """The saved index, its nodes' digests put in ``twins`` as their vectors are read
        (a full file's are not read: its copies are found again after a rebuild only)."""
        if not self.path.exists():
            raise IndexCorrupt("no vectors file")
        if expected_sha is None:
            raise IndexCorrupt("no checksum recorded for the vectors file")
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise IndexCorrupt(f"vectors file unreadable: {exc.strerror or exc}") from None
        if hashlib.sha256(data).hexdigest() != expected_sha:
            raise IndexCorrupt("vectors file checksum mismatch (not the file last saved)")
        info = inspect_index_file(data, self.dim)
        if info.m != self.m:
            raise IndexCorrupt(f"vectors file built with M={info.m}, configured M={self.m}")
        if not info.graph_only:
            del data
            return self._load_file(self.path, len(info.labels)), info

        def vectors_of(labels: Sequence[int]) -> np.ndarray:
            # a label the db no longer has (marked deleted right after): a zero vector
            # (its own may be gone from the cache; the graph only walks through it)
            ask = [label for label in labels if label in wanted]
            out = np.zeros((len(labels), self.dim), dtype=np.float32)
            if ask:
                rows = _checked(vectors_for(ask), len(ask), self.dim)
                at = {label: i for i, label in enumerate(ask)}
                for i, label in enumerate(labels):
                    if label in at:
                        out[i] = rows[at[label]]
                twins.load(digests(rows), ask)
            return out

        # hnswlib loads from a path only: the full file is put together in the temp
        # folder (a reader's .memvault/ may be read-only), loaded, and deleted; held
        # locked meanwhile, so the next open deletes one a kill left (``_sweep_loads``)
        _sweep_loads(tempfile.gettempdir())
        try:
            fd, name = tempfile.mkstemp(prefix=_LOAD_PREFIX, suffix=".bin")
        except OSError as exc:  # no room or no temp folder: built from the cache instead
            raise IndexCorrupt(f"no temp file to load the vectors graph: {exc}") from None
        try:
            _lock(fd)
            try:
                with os.fdopen(os.dup(fd), "wb") as out:
                    write_full(data, info, self.dim, vectors_of, out)
            except OSError as exc:
                raise IndexCorrupt(f"the vectors graph could not be put together: {exc}") from None
            del data
            return self._load_file(Path(name), len(info.labels)), info
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)
            os.close(fd)

    def _load_file(self, path: Path, elements: int) -> hnswlib.Index:
        index = hnswlib.Index(space="cosine", dim=self.dim)
        try:
            # max_elements >= the count: hnswlib allocates this many slots, not the header's.
            index.load_index(str(path), max_elements=max(elements, MIN_CAPACITY))
        except RuntimeError as exc:  # hnswlib's own checks (none expected after ours)
            raise IndexCorrupt(f"vectors file refused by hnswlib: {exc}") from None
        index.set_ef(self.ef_search)
        return index

    def _rebuild(
        self, labels: list[int], vectors_for: Callable[[Sequence[int]], np.ndarray], reason: str
    ) -> OpenReport:
        index, twins = self._build(labels, vectors_for)
        self._install(index, labels, twins)
        self._ever = _Labels(labels)
        added = len(labels) - len(twins)
        return OpenReport(loaded=False, rebuilt_reason=reason, added=added, removed=0)

    def _build(
        self, labels: list[int], vectors_for: Callable[[Sequence[int]], np.ndarray]
    ) -> tuple[hnswlib.Index, Twins]:
        """A new index of ``labels``, one node per distinct vector, and its twins."""
        index = hnswlib.Index(space="cosine", dim=self.dim)
        capacity = max(len(labels) + len(labels) // 4, MIN_CAPACITY)
        index.init_index(max_elements=capacity, ef_construction=self.ef_construction, M=self.m)
        index.set_ef(self.ef_search)
        twins = Twins()
        every = lambda label: True  # noqa: E731 (nothing is deleted in a new index)
        for batch in _batches(labels):
            vectors = _checked(vectors_for(batch), len(batch), self.dim)
            twins.place(index, batch, vectors, every)
        return index, twins

    def _install(self, index: hnswlib.Index, labels: list[int], twins: Twins) -> None:
        self._index = index
        self._live = _Labels(labels)
        self._deleted = _Labels()
        self._twins = twins
        self._dirty = True

    # --- changes -------------------------------------------------------------

    def add(self, labels: Sequence[int], vectors: np.ndarray) -> None:
        """Insert vectors under fresh labels, growing the index as needed.

        Raises ValueError for a label seen before (even a deleted one), a
        duplicate in ``labels``, a negative label, or a zero / non-finite vector.
        """
        batch = [int(label) for label in labels]
        array = _checked(vectors, len(batch), self.dim)
        if not batch:
            return
        if len(set(batch)) != len(batch):
            raise ValueError("duplicate labels in one add")
        if min(batch) < 0:
            raise ValueError("labels must be >= 0")
        with self._lock:
            index = self._require_open()
            reused = [label for label in batch if label in self._ever]
            if reused:
                raise ValueError(f"label {reused[0]} was used before; labels are never reused")
            self._place(index, batch, array)
            self._ever.update(batch)
            if self._since is not None:  # a compaction builds meanwhile: replayed on it
                self._since.append((batch, array))

    def delete(self, labels: Iterable[int]) -> int:
        """Mark labels deleted; unknown or already deleted ones are ignored. Returns how many."""
        with self._lock:
            index = self._require_open()
            gone = self._drop(index, (int(label) for label in labels))
            if gone and self._since is not None:  # a compaction builds meanwhile
                self._since.append((gone, None))
            return len(gone)

    def _place(self, index: hnswlib.Index, batch: list[int], array: np.ndarray) -> None:
        """New labels in: a node each, or a twin of the node holding its vector."""
        if self._twins.place(index, batch, array, self._live.__contains__):
            self._dirty = True
        self._live.update(batch)

    def _drop(self, index: hnswlib.Index, labels: Iterable[int]) -> list[int]:
        """Live labels out (unknown and deleted ones are ignored); the ones taken out."""
        gone: list[int] = []
        for label in labels:
            if label in self._live:
                marked = self._twins.drop(index, label)
                self._live.discard(label)
                if marked is not None:
                    self._deleted.add(marked)
                    self._dirty = True
                gone.append(label)
        return gone

    def compact(self, vectors_for: Callable[[Sequence[int]], np.ndarray]) -> None:
        """Rebuild with the live labels only (same labels), dropping deleted slots.

        The new index is built outside the lock: queries, adds and deletes go on in the
        old one meanwhile (at 100,000 notes a build takes minutes), each add and delete
        also logged; the log is replayed on the new index as it is put in place. A
        compaction already running, or an index closed or reopened meanwhile, keeps
        what is there (the build is dropped)."""
        with self._lock:
            old = self._require_open()
            if self._since is not None:
                return  # one compaction at a time
            labels = list(self._live)  # ascending
            self._since = []
        built: tuple[hnswlib.Index, Twins] | None = None
        try:
            built = self._build(labels, vectors_for)
        finally:
            with self._lock:
                since, self._since = self._since, None
                if built is not None and self._index is old:
                    self._install(built[0], labels, built[1])
                    self._replay(since)

    def _replay(self, since: list[tuple[list[int], np.ndarray | None]]) -> None:
        """The adds (labels, vectors) and deletes (labels, None) made while the index
        now in place was built, in their order."""
        index = self._require_open()
        for batch, array in since:
            if array is not None:
                self._place(index, batch, array)
            else:
                self._drop(index, batch)

    def deleted_ratio(self) -> float:
        """Deleted slots / all slots: compact when it passes ``index.compact_ratio``."""
        with self._lock:
            total = self._node_count() + len(self._deleted)
            return len(self._deleted) / total if total else 0.0

    # --- queries -------------------------------------------------------------

    def query(
        self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest live labels as (label, cosine similarity), best first.

        ``allowed(label)`` restricts the candidates. When hnswlib cannot return
        ``k`` hits (a filter allowing fewer labels), the allowed labels are
        searched exactly instead.
        """
        q = query_vector(vector, self.dim)
        with self._lock:
            index = self._require_open()
            count = self._node_count()
            if k <= 0 or count <= 0:
                return []
            asked = min(k, count)
            index.set_ef(max(self.ef_search, asked))
            try:
                found, distances = index.knn_query(
                    q, k=asked, num_threads=1, filter=self._twins.admits(allowed)
                )
            except RuntimeError:
                return self._exact(index, q, k, allowed)
            hits = ((int(n), 1.0 - float(d)) for n, d in zip(found[0], distances[0], strict=True))
            return self._twins.spread(hits, k, allowed)

    def _exact(
        self, index: hnswlib.Index, q: np.ndarray, k: int, allowed: Callable[[int], bool] | None
    ) -> list[tuple[int, float]]:
        admits = self._twins.admits(allowed)
        candidates = [  # ascending
            x for x in nodes(self._live, self._twins.of) if admits is None or admits(x)
        ]
        if not candidates:
            return []
        norm = float(np.linalg.norm(q))
        stored = np.asarray(index.get_items(candidates), dtype=np.float32)  # normalized by hnswlib
        sims = stored @ (q / norm if norm else q)
        order = np.argsort(-sims, kind="stable")
        return self._twins.spread(((candidates[i], float(sims[i])) for i in order), k, allowed)

    # --- persistence ---------------------------------------------------------

    def save(self) -> str | None:
        """Write the index atomically if it changed; its sha256, or None if unchanged."""
        with self._lock:
            index = self._require_open()
            if not self._dirty:
                return None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tag = uuid.uuid4().hex[:12]
            # both temp files carry the temp mark: a kill leaves nothing remove_temp_files misses
            full = self.path.with_name(f".{self.path.name}.memvault-tmp-{tag}-full")
            tmp = self.path.with_name(f".{self.path.name}.memvault-tmp-{tag}")
            try:
                index.save_index(str(full))  # hnswlib's file, then its graph form (no vectors)
                with full.open("rb") as src, tmp.open("wb") as out:
                    write_graph(src, out, self.dim, full.stat().st_size)
                full.unlink()
                with tmp.open("rb") as f:
                    sha = hashlib.file_digest(f, "sha256").hexdigest()
                    os.fsync(f.fileno())
                os.replace(tmp, self.path)
            except BaseException as exc:
                full.unlink(missing_ok=True)
                tmp.unlink(missing_ok=True)
                if isinstance(exc, OSError):  # named by the file, not by its temp copy
                    why = exc.strerror or str(exc)
                    raise StorageError(
                        f"{self.path}: cannot write the vector index: {why}"
                    ) from exc
                raise
            _fsync_dir(self.path.parent)
            self._dirty = False
            return sha

    # --- state ---------------------------------------------------------------

    @property
    def dirty(self) -> bool:
        """True when the index changed since the last open or save."""
        with self._lock:
            return self._dirty

    def labels(self) -> set[int]:
        """The live labels (a copy)."""
        with self._lock:
            return set(self._live)

    def _node_count(self) -> int:
        """The graph's live nodes: the live labels but the twins."""
        return len(self._live) - len(self._twins)

    def _require_open(self) -> hnswlib.Index:
        if self._index is None:
            raise RuntimeError("VectorIndex.open() has not been called")
        return self._index


_LOAD_PREFIX = "memvault-vectors-"


def _lock(fd: int) -> None:
    """Hold an open's temp file (a lock of the file itself, across processes and pid
    namespaces; gone with the process, however it ends)."""
    if fcntl is not None:
        with contextlib.suppress(OSError):  # a folder without locks: a kill's file stays
            fcntl.flock(fd, fcntl.LOCK_EX)


def _sweep_loads(folder: str) -> None:
    """Delete the full files that opens killed midway left in ``folder`` (kill -9, the
    OOM killer: no ``finally`` ran): those no process holds locked (``_lock``). Each
    holds every live vector (~0.8 GB at 100,000 notes; RAM, on a tmpfs /tmp)."""
    if fcntl is None:
        return
    try:
        names = [n for n in os.listdir(folder) if n.startswith(_LOAD_PREFIX) and n.endswith(".bin")]
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass  # held: an open in progress
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)
        finally:
            os.close(fd)


def query_vector(vector: np.ndarray, dim: int) -> np.ndarray:
    """A query as every vector search takes it: one row of ``dim`` float32s."""
    q = np.asarray(vector, dtype=np.float32).reshape(-1)
    if q.shape != (dim,):
        raise ValueError(f"query vector has shape {q.shape}, expected ({dim},)")
    return q


def _batches(labels: list[int]) -> Iterable[list[int]]:
    for start in range(0, len(labels), _BATCH):
        yield labels[start : start + _BATCH]


def _checked(vectors: np.ndarray, rows: int, dim: int) -> np.ndarray:
    """The rows as the index takes them: float16-exact (the cache's rows rounded, and so
    what a load gives back: vectors_file.py), as float32."""
    array = np.asarray(vectors)
    if array.shape != (rows, dim):
        raise ValueError(f"expected vectors of shape ({rows}, {dim}), got {array.shape}")
    array = np.ascontiguousarray(array.astype(np.float16).astype(np.float32))
    # hnswlib normalizes for cosine: a zero or NaN row would poison the graph.
    if rows and (not np.isfinite(array).all() or (np.linalg.norm(array, axis=1) == 0).any()):
        raise ValueError("vectors must be finite and non-zero")
    return array


def _fsync_dir(folder: Path) -> None:
    """Make the rename durable; not possible on every platform (the rename is atomic anyway)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


__all__ = [
    "HEADER",
    "IndexFileInfo",
    "OpenReport",
    "VectorIndex",
    "VectorsWanted",
    "inspect_index_file",
    "query_vector",
]
