"""The one orchestrator: vault files, store, vectors and embedder meet here only.

``sync`` is the single code path for the start-up reconcile, a watcher's batch
of paths and the periodic timer:

1. scan (everything, or just the given paths) and stat;
2. hash only what the size+mtime fast path cannot vouch for; diff -> ChangeSet;
3. moves: rename rows (vectors stay), then re-target links that no longer
   lead where they did (``update_links_on_rename``);
4. deletes: drop rows, FTS entries and vectors;
5. created + modified (+ relinked): parse, chunk, embed only chunks whose
   embedded text is new (the cache answers the rest), commit per batch;
6. MEMORY.md and folder notes, compare-and-swap, only when something changed.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from memvault.config import VaultConfig
from memvault.core.changes import ChangeSet, Known, Seen, diff, suspects
from memvault.core.report import SkippedFile, SyncReport
from memvault.core.text import NotText
from memvault.core.wikilinks import LinkIndex
from memvault.embedder import Embedder, make_embedder, model_id_for, token_counter_for
from memvault.engine_index import IndexMixin, Progress
from memvault.engine_links import LinkMixin
from memvault.engine_reads import ReadMixin
from memvault.engine_writes import WriteMixin
from memvault.errors import IndexCorrupt, NoteNotFound
from memvault.store import Store
from memvault.store_rows import NoteRow
from memvault.vault import VaultFS
from memvault.vectors import VectorIndex

log = logging.getLogger("memvault")


class Engine(IndexMixin, LinkMixin, ReadMixin, WriteMixin):
    """Everything memvault does to one vault. Thread-safe; one writer per vault."""

    def __init__(
        self,
        config: VaultConfig,
        embedder: Embedder | None = None,
        *,
        read_only: bool = False,
        clock: Callable[[], dt.datetime] | None = None,
    ) -> None:
        self.config = config
        self.clock = clock or (lambda: dt.datetime.now().astimezone())
        self.root = config.root
        self.fs = VaultFS(config.root, config.vault.ignore, config.vault.max_note_bytes)
        self._lock = threading.RLock()  # one sync or write at a time
        # Lazy opening (model, vectors, link index) has its own lock, so searches
        # are never stuck behind a long sync holding ``_lock``.
        self._open_lock = threading.RLock()
        self._embedder = embedder
        self._vectors: VectorIndex | None = None
        self._attachments: set[str] = set()
        self._link_index: LinkIndex | None = None
        self._last_save = time.monotonic()
        self.listeners: list[Callable[[SyncReport], None]] = []
        self._tokenizer: Callable[[str], int] | None = None
        self._model_id: str | None = None
        self._meta_cache: dict[str, NoteRow] | None = None  # read side: note rows by path
        self._meta_dirty: set[str] = set()  # paths whose rows changed since the cache was read
        self._read_lock = threading.Lock()
        self.last_sync_at: float | None = None
        self.store_rebuilt: str | None = None  # a damaged database found on open
        config.state_dir.mkdir(parents=True, exist_ok=True)
        if not read_only:
            self.fs.remove_temp_files()  # left by a write that was killed midway
        self.store = self._open_store()

    # -- opening ---------------------------------------------------------------------

    def _open_store(self) -> Store:
        """Open the databases; a damaged one is deleted and rebuilt from the vault.

        A damaged index.db takes vectors.bin with it (its labels mean nothing
        any more); a damaged cache.db only costs re-embedding. Each is retried
        once: a second failure is a real error, not a damaged file.
        """
        index, cache = self.config.state_dir / "index.db", self.config.state_dir / "cache.db"
        for _ in range(3):
            try:
                return Store(index, cache)
            except IndexCorrupt as exc:
                if exc.path is None:
                    raise
                log.warning("%s; it is rebuilt from the vault", exc)
                self.store_rebuilt = exc.path
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{exc.path}{suffix}").unlink(missing_ok=True)
                if Path(exc.path) == index:
                    (self.config.state_dir / "vectors.bin").unlink(missing_ok=True)
        return Store(index, cache)

    @property
    def embedder(self) -> Embedder:
        """The embedding model, loaded once, on first use (seconds: only when needed)."""
        if self._embedder is None:
            with self._open_lock:
                if self._embedder is None:
                    emb = make_embedder(self.config.index)
                    expected, self._embedder = self._model_id, emb
                    if expected is not None and expected != emb.model_id:
                        # the configured backend could not run (ONNX fell back to torch):
                        # vectors of the expected model must never meet this one's
                        self._vectors = None
                        self._check_model()
                    if self.store.meta("dim") != str(emb.dim):
                        self.store.set_meta("dim", str(emb.dim))
        return self._embedder

    def count_tokens(self, text: str) -> int:
        """Word pieces of the embedding model, counted without loading the model."""
        if self._tokenizer is None:
            if self._embedder is not None:
                self._tokenizer = self._embedder.count_tokens
            else:
                self._tokenizer = token_counter_for(self.config.index)
        return self._tokenizer(text)

    @property
    def vectors(self) -> VectorIndex:
        """The vector index, opened (and reconciled with the db) on first use."""
        if self._vectors is not None:
            return self._vectors
        with self._open_lock:
            if self._vectors is None:
                self._check_model()
                # the dimension is recorded, so deleting vectors never needs the model
                dim = self.store.meta("dim")
                vi = VectorIndex(
                    self.config.state_dir / "vectors.bin",
                    int(dim) if dim else self.embedder.dim,
                    m=self.config.index.hnsw_m,
                    ef_construction=self.config.index.ef_construction,
                    ef_search=self.config.index.ef_search,
                )
                report = vi.open(
                    self.store.meta("vectors_sha"), self.store.labels(), self._vectors_for
                )
                if report.rebuilt_reason or report.added or report.removed:
                    log.info("vector index: %s", report)
                self._vectors = vi
            return self._vectors

    def _vectors_for(self, labels: Sequence[int]) -> np.ndarray:
        dim = int(self.store.meta("dim") or self.embedder.dim)
        found, matrix = self.store.vectors_for(self.model_id(), labels, dim)
        if len(found) != len(labels):
            # cached vectors lost: re-embed those chunks from their stored text
            missing = sorted(set(labels) - set(found))
            rows = self.store.chunk_rows(missing)
            notes = {r.path for r in rows.values()}
            log.warning("re-embedding %d chunks whose cached vectors are gone", len(missing))
            self._embed_missing(notes)
            found, matrix = self.store.vectors_for(self.model_id(), labels, dim)
        return matrix

    def model_id(self) -> str:
        """The embedding model's identity, known without loading the model."""
        if self._embedder is not None:
            return self._embedder.model_id
        if self._model_id is None:
            self._model_id = model_id_for(self.config.index)
        return self._model_id

    def _check_model(self) -> str | None:
        """A different model than the index was built with means a full re-embed."""
        model = self.model_id()
        previous = self.store.meta("model_id")
        if previous == model:
            return None
        message = None
        if previous is not None:
            message = f"embedding model changed from {previous} to {model}: re-embedding every note"
            log.warning("%s", message)
            with self.store.transaction() as conn:
                labels = [r[0] for r in conn.execute("SELECT label FROM chunks")]
                self.store.delete_chunks(conn, labels)
                # stale hash and mtime: every note is a suspect, hashed, and re-indexed
                conn.execute("UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE kind = 'note'")
                self.store.set_meta("model_changed", f"{previous} -> {model}", conn)
            (self.config.state_dir / "vectors.bin").unlink(missing_ok=True)
            self.store.set_meta("vectors_sha", "")
            self.store.set_meta("dim", "")  # the new model's dimension is learnt when it loads
        self.store.set_meta("model_id", model)
        return message

    def close(self) -> None:
        with self._lock:
            self.save_vectors()
            self.store.close()

    def save_vectors(self) -> None:
        with self._open_lock:
            if self._vectors is None or not self._vectors.dirty:
                return
            sha = self._vectors.save()
            if sha:
                self.store.set_meta("vectors_sha", sha)
            self._last_save = time.monotonic()

    # -- the link graph ------------------------------------------------------------------

    def link_index(self) -> LinkIndex:
        """Every file of the vault for link resolution; rebuilt only when files come or go."""
        with self._open_lock:
            if self._link_index is None:
                paths, aliases = self.store.paths_and_aliases()
                self._link_index = LinkIndex(paths + sorted(self._attachments), aliases)
            return self._link_index

    def _changed_rows(self, paths: Iterable[str]) -> None:
        """Tell the read side's cache which note rows changed."""
        with self._read_lock:
            self._meta_dirty.update(paths)

    # -- sync ------------------------------------------------------------------------------

    def sync(
        self,
        paths: Iterable[str] | None = None,
        progress: Callable[[Progress], None] | None = None,
    ) -> SyncReport:
        """Bring the index and MEMORY.md in line with the files (all, or ``paths``)."""
        with self._lock:
            started = time.perf_counter()
            full = paths is None
            model_note = None
            if self.store.meta("model_id") is not None:
                model_note = self._check_model()  # a new model: every note is re-embedded now
            seen, scope, skipped = self._observe(paths)
            known = self.store.manifest()
            vanished: tuple[str, ...] = ()
            if scope is not None:
                known = {p: k for p, k in known.items() if p in scope}
                # named by an event, yet neither on disk nor indexed: created and gone
                # within one batch, or an event under a stale path (a folder renamed
                # while the observer caught up) -- the caller may want a full reconcile
                vanished = tuple(sorted(p for p in scope if p not in seen and p not in known))
            hashes = self._hash(suspects(known, seen))
            changes = diff(known, seen, hashes, scope)
            for path in changes.touched:
                self.store.touch_note(path, seen[path].size, seen[path].mtime_ns)
            report = self._apply(changes, seen, progress)
            report = _with(
                report,
                skipped=tuple(skipped) + report.skipped,
                full=full,
                vanished=vanished,
                warnings=((model_note,) if model_note else ()) + report.warnings,
                seconds=time.perf_counter() - started,
            )
            self.last_sync_at = time.time()
            if report.changed:  # an idle sync writes nothing at all
                self.store.set_meta("last_sync", json.dumps(report.to_dict()))
                self.store.set_meta("last_sync_at", str(self.last_sync_at))
                for listener in list(self.listeners):
                    listener(report)
            if time.monotonic() - self._last_save >= self.config.daemon.save_seconds or full:
                self.save_vectors()
            return report

    def _observe(
        self, paths: Iterable[str] | None
    ) -> tuple[dict[str, Seen], set[str] | None, list[SkippedFile]]:
        if paths is None:
            scan = self.fs.scan()
            if set(scan.attachments) != self._attachments:
                self._attachments = set(scan.attachments)
                self._link_index = None
            seen = {p: Seen(s.size, s.mtime_ns) for p, s in scan.notes.items()}
            return seen, None, [SkippedFile(s.path, s.reason) for s in scan.skipped]
        scope: set[str] = set()
        seen = {}
        known = None
        for raw in paths:
            path = raw.strip("/")
            if not path or self.fs.is_ignored(path):
                continue
            if not path.lower().endswith(".md"):
                # a folder (moved or deleted as a whole), or an attachment
                known = known if known is not None else self.store.manifest()
                inside = [p for p in known if p.startswith(path + "/")]
                full_dir = self.root / path
                if inside or full_dir.is_dir():
                    scope |= set(inside)
                    if full_dir.is_dir():
                        for p, s in self.fs.scan(path).notes.items():
                            scope.add(p)
                            seen[p] = Seen(s.size, s.mtime_ns)
                    continue
                before = path in self._attachments
                now = (self.root / path).is_file()
                if before != now:
                    (self._attachments.add if now else self._attachments.discard)(path)
                    self._link_index = None
                continue
            scope.add(path)
            st = self.fs.stat(path)
            if st is not None:
                seen[path] = Seen(st.size, st.mtime_ns)
        return seen, scope, []

    def _hash(self, paths: Sequence[str]) -> dict[str, str]:
        out = {}
        for path in paths:
            try:
                out[path] = self.fs.read(path, cap=0).sha256
            except (NoteNotFound, OSError, NotText):
                continue
        return out

    def _apply(
        self, changes: ChangeSet, seen: dict[str, Seen], progress: Callable[[Progress], None] | None
    ) -> SyncReport:
        memory_file = self.config.memory.file
        relinked: list[str] = []
        warnings: list[str] = []
        moves = dict(changes.moved)
        if changes:
            # cleared until MEMORY.md is brought up to date: a kill in between is healed
            self.store.set_meta("memory_synced", "")
        before = after = None
        if moves:
            before = self.link_index()
            with self.store.transaction() as conn:
                for old, new in changes.moved:
                    self.store.rename_note(conn, old, new)
            self._link_index = None
            after = self.link_index()
            if self.config.vault.update_links_on_rename:
                relinked, problems = self._relink(moves, before, after)
                warnings += problems
        deleted_labels: list[int] = []
        self._changed_rows(set(changes.deleted) | set(moves) | set(moves.values()))
        if changes.deleted:
            with self.store.transaction() as conn:
                for path in changes.deleted:
                    deleted_labels += self.store.delete_note(conn, path)
            self._link_index = None
        if deleted_labels and self.store.meta("model_id"):
            self.vectors.delete(deleted_labels)
        todo = sorted(
            set(changes.created) | set(changes.modified) | set(moves.values()) | set(relinked)
        )
        embedded, reused, skipped, index_warnings = self._index(todo, progress)
        warnings += index_warnings
        if changes.created or changes.deleted or moves:
            self._link_index = None
        memory_written, problems = False, []
        folder_written: tuple[str, ...] = ()
        if changes or not self.store.meta("memory_synced"):
            memory_written, folder_written, problems = self._update_memory(moves, before, after)
        if deleted_labels or embedded:
            self._maybe_compact()
        return SyncReport(
            created=changes.created,
            modified=tuple(p for p in changes.modified if p != memory_file),
            deleted=changes.deleted,
            moved=changes.moved,
            embedded_chunks=embedded,
            reused_chunks=reused,
            relinked=tuple(relinked),
            memory_written=memory_written,
            folder_notes_written=folder_written,
            skipped=tuple(skipped),
            warnings=tuple(warnings),
            problems=tuple(problems),
        )

    def _maybe_compact(self) -> None:
        vi = self._vectors
        if vi is not None and vi.deleted_ratio() > self.config.index.compact_ratio:
            vi.compact(self._vectors_for)
            self.save_vectors()
            self.store.prune_cache(self.model_id())


def _with(report: SyncReport, **changes: object) -> SyncReport:
    return dataclasses.replace(report, **changes)  # type: ignore[arg-type]


__all__ = ["Engine", "Known", "Progress"]
