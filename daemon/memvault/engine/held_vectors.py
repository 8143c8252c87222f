"""The vector index of one vault as this process holds it (``HeldVectors``): opened in
full for the writes (and reconciled with the db), or, in a process that is no daemon,
read cold for a search (index/vectors_cold.py); chunks put in and taken out, saved
when due, compacted. The model's side (its identity, the vectors' dimension, the cached
vectors, a model change) is ``engine/embedding.py``'s, asked through ``ModelSide``;
both share one lock, and a model change drops what is held here (``drop``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from memvault.config import VaultConfig
from memvault.errors import StorageError
from memvault.index.seam import VectorSearch, is_postgres
from memvault.index.store import Store
from memvault.index.vectors import VectorsWanted
from memvault.index.vectors_cold import cold_search

log = logging.getLogger("memvault")

# The daemon writes vectors.bin (the whole hnswlib index: ~200 MB at 100,000 notes) once
# the vectors changed since its last save reach this share of the index, or the oldest
# such change is SAVE_AGE_SECONDS old (``save_when_due``), not after every save: a save of
# one note then costs its own vectors, not the vault's. What is not saved yet is never
# lost: the file on disk is the one whose sha256 the store holds, and opening it adds the
# chunks it lacks from the embedding cache (VectorIndex.open).
SAVE_SHARE = 0.01
SAVE_AGE_SECONDS = 600.0
# A process that is no daemon (a CLI write, the next command's catch-up of a note just
# written) leaves up to this many chunks it embedded out of the graph while the full
# index is not open: their vectors are in cache.db, the cold reader searches them exactly
# beside the saved graph (index/vectors_cold.MISSING_MOST) and the next full open adds
# them. Opening the whole graph to add a few vectors cost a write or a search ~1 s at
# 10,000 notes (and its save rewrote vectors.bin); past this (a `memvault sync` of many),
# the full open, as before.
LEFT_OUT_MOST = 256


class ModelSide(Protocol):
    """What the vectors ask of the model's side (``Embedding``)."""

    def check_model(self) -> str | None: ...
    def dim(self) -> int: ...
    def model_id(self) -> str: ...
    def vectors_for(self, labels: Sequence[int]) -> np.ndarray: ...
    def cache_lost(self, label: int) -> bool: ...
    def line_texts(self, chunk_texts: Iterable[str]) -> dict[str, str]: ...


class Unsaved:
    """The vector index's changes since its last save: how many vectors were added or
    deleted, since when, and the index's size. A save is due when ``SAVE_SHARE`` of the
    index (at least one vector) changed, or the oldest change is ``SAVE_AGE_SECONDS``
    old: the daemon's saves when idle."""

    def __init__(self) -> None:
        self.count = 0
        self.since: float | None = None
        self.size = 0
        self.last_save = time.monotonic()

    def changed(self, count: int, grown: int) -> None:
        self.count += count
        self.size = max(0, self.size + grown)
        if self.since is None:
            self.since = time.monotonic()

    def due(self) -> bool:
        old = self.since is None or time.monotonic() - self.since >= SAVE_AGE_SECONDS
        return old or self.count >= max(1.0, self.size * SAVE_SHARE)

    def saved(self) -> None:
        self.last_save = time.monotonic()
        self.count, self.since = 0, None


def vector_file(state_dir: Path) -> Path:
    """vectors.bin's path; a folder there is a StorageError saying so (a field test was
    told of a temp file's "Is a directory", exit 1)."""
    path = state_dir / "vectors.bin"
    if path.is_dir():
        raise StorageError(f"{path}: a folder is where the vector index goes; move it away")
    return path


class HeldVectors:
    """The vectors of one vault: each way of opening them on first use, thread-safe
    (``lock``: the model side's, so a model change and an open never cross)."""

    def __init__(
        self,
        config: VaultConfig,
        store: Store,
        model: ModelSide,
        lock: threading.RLock,
        *,
        cold_reads: bool,
    ) -> None:
        self.config = config
        self._store = store
        self._model = model
        self._lock = lock
        self._cold_reads = cold_reads
        self.opened: VectorSearch | None = None  # the full index, once open
        self._cold: VectorSearch | None = None
        self._adding_lock = threading.Lock()
        self._adding: set[int] = set()  # labels off the queue on their way into the index
        self._forgotten: set[int] = set()  # of those, the ones deleted meanwhile
        self.unsaved = Unsaved()  # the vector index's changes since its last save
        self._left_out = 0  # chunks this process embedded and left out of the graph

    def _graph_left(self) -> bool:
        """Whether the graph is this process's to leave as saved: no daemon, the full
        index not open, hnswlib's file (pgvector's is the store's own table)."""
        return self._cold_reads and self.opened is None and not is_postgres(self.config)

    def adding(self, count: int) -> VectorSearch | None:
        """Where ``count`` chunks leaving the queue go (asked before the queue changes:
        the full open reconciles with it): the full index, opened now; or None, left out
        of the graph (``LEFT_OUT_MOST``; the cold reader and the next full open find
        them by the db)."""
        with self._lock:
            saved = self._store.meta("vectors_sha")  # a graph to leave (none: built now)
            if self._graph_left() and saved and self._left_out + count <= LEFT_OUT_MOST:
                self._left_out += count
                self._cold = None  # read again with the db's labels of now
                return None
            return self.full

    def drop(self) -> None:
        """Let both go (a model change: its vectors must never meet the old one's)."""
        with self._lock:
            self.opened = self._cold = None

    def _index(self) -> VectorSearch:
        """The store's vector index for this model, not opened yet."""
        return self._store.vector_index(  # hnswlib, or pgvector (index/seam.py)
            vector_file(self.config.state_dir),
            self._model.dim(),  # recorded: deleting vectors never needs the model
            self.config.index,
            self._model.model_id(),
        )

    @property
    def full(self) -> VectorSearch:
        """The vector index, opened (and reconciled with the db) on first use."""
        if self.opened is not None:
            return self.opened
        with self._lock:
            if self.opened is None:
                self._model.check_model()
                vi = self._index()
                # pending chunks have no vector yet: the lane adds them, not the reconcile
                wanted = self._store.embedded_labels()
                if wanted and self._model.cache_lost(min(wanted)):
                    wanted = set()  # every chunk queued; vectors.bin deleted: opened empty
                report = vi.open(
                    VectorsWanted(self._store.meta("vectors_sha"), wanted, self._model.vectors_for)
                )
                self.unsaved.size = len(wanted)
                if report.rebuilt_reason or report.added or report.removed:
                    log.info("vector index: %s", report)
                self.opened, self._cold = vi, None
            return self.opened

    @property
    def searching(self) -> VectorSearch:
        """What a search reads: the index once open; before, in a process that is no
        daemon (``cold_reads``), the saved graph read cold (index/vectors_cold.py)."""
        if self.opened is None and self._cold_reads and self._cold is None:
            with self._lock:
                if self.opened is None and self._cold is None:
                    self._model.check_model()
                    vi = self._index()
                    first = self._store.embedded_label_array(first=True).tolist()
                    if first and not self._model.cache_lost(first[0]):  # else: the full open's
                        sha = self._store.meta("vectors_sha")
                        labels = self._store.embedded_label_array
                        self._cold = cold_search(vi, sha, labels, self._model.vectors_for)
        return self.opened or self._cold or self.full

    def take(self, done: list[int], *, add_outside: bool, left_out: bool = False) -> None:
        """Chunks just off the vector lane's queue (under the engine's lock): into the
        index now, or (``add_outside``) by ``add_outside`` once the lock is let go;
        ``left_out``: neither (``adding`` said None)."""
        if left_out:
            return
        if not add_outside:
            self.add(done)
        elif done:
            with self._adding_lock:
                self._adding.update(done)

    def add_outside(self, vi: VectorSearch, labels: list[int]) -> None:
        """Put chunks off the queue into ``vi`` without the engine's lock; those a sync
        deleted meanwhile (``forget`` saw them on their way in) are deleted after."""
        try:
            found, matrix = self._store.vectors_for(
                self._model.model_id(), labels, self._model.dim()
            )
            vi.add(found, matrix)
            self.unsaved.changed(len(found), len(found))  # what save_when_due counts
        finally:
            with self._adding_lock:
                self._adding.difference_update(labels)
                gone = self._forgotten.intersection(labels)
                self._forgotten.difference_update(gone)
            if gone:
                done = vi.delete(gone)
                self.unsaved.changed(done, -done)

    def add(self, labels: Sequence[int]) -> None:
        """Put these new chunks' cached vectors into the index."""
        if labels:
            found, matrix = self._store.vectors_for(
                self._model.model_id(), labels, self._model.dim()
            )
            self.full.add(found, matrix)
            self.unsaved.changed(len(found), len(found))

    def forget(self, labels: Sequence[int]) -> None:
        """Take deleted chunks out of the index (the caller: only after a first embedding)."""
        with self._adding_lock:  # off the queue, not in the index yet: deleted once in
            self._forgotten.update(label for label in labels if label in self._adding)
        if self.opened is None and not self._store.meta("vectors_sha"):
            # no vectors saved (a new model's re-embed just began): when the index
            # opens, it is built from the db, so opening it now (loading the model for
            # its dimension, in the structure lane) would buy nothing
            return
        if self._graph_left():  # a label the db dropped is deleted to the cold reader and
            with self._lock:  # to the full open alike: the saved graph is left as it is,
                self._cold = None  # and read again with the db's labels of now
            return
        done = self.full.delete(labels)
        self.unsaved.changed(done, -done)

    def save_when_due(self) -> bool:
        """Save the vector index when a save is due (``Unsaved.due``); True if it saved."""
        with self._lock:
            vi = self.opened
            if vi is None or not vi.dirty or not self.unsaved.due():
                return False
            self.save()
            return True

    def save(self) -> None:
        """Save the vector index if it changed, recording its hash in the store."""
        with self._lock:
            if self.opened is None or not self.opened.dirty:
                return
            if not self.config.state_dir.is_dir():
                # .memvault/ deleted, or the vault moved away: its index.db (where the
                # file's hash goes) went with it; a save would only make a stray folder
                return
            sha = self.opened.save()
            if sha:
                self._store.set_meta("vectors_sha", sha)
            self.unsaved.saved()

    def maybe_compact(self) -> None:
        """Rebuild the index from the cache once deleted slots pass ``compact_ratio``."""
        vi = self.opened
        if vi is not None and vi.deleted_ratio() > self.config.index.compact_ratio:
            vi.compact(self._model.vectors_for)
            self.save()
            lines = self._model.line_texts(self._store.chunk_texts())
            self._store.prune_cache(self._model.model_id(), keep=lines.keys())


__all__ = ["SAVE_AGE_SECONDS", "SAVE_SHARE", "HeldVectors", "ModelSide", "Unsaved", "vector_file"]
