"""The one orchestrator: vault files, store, vectors and embedder meet here only.

``Engine`` composes collaborators that each own their state and know the
others only through the arguments they are given:

    Catalogue   note rows and the link index (the caches everyone shares)
    Embedding   the model, the text it embeds, the vector index
    Indexer     files -> rows, chunks, vectors
    Linker      relinking after moves, MEMORY.md and folder notes, link check
    Reader      search, context, get, related (writes nothing, takes no lock)
    Writer      add a note, append to today's log

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memvault.config import VaultConfig
from memvault.core.changes import ChangeSet, Known, Seen, diff, suspects
from memvault.core.ranking import Filters
from memvault.core.report import (
    Context,
    Hit,
    LinkProblem,
    NoteText,
    SkippedFile,
    SyncReport,
    WriteResult,
)
from memvault.engine.catalogue import Catalogue
from memvault.engine.embedding import Embedding
from memvault.engine.indexer import Indexer, Progress
from memvault.engine.linker import Linker, MemoryWritten
from memvault.engine.reader import NO_FILTERS, Reader
from memvault.engine.status import changed_problems, describe, keep_scan_skipped
from memvault.engine.writer import Writer
from memvault.errors import IndexCorrupt
from memvault.index.embedder import Embedder
from memvault.index.store import Store
from memvault.vault.files import VaultFS

log = logging.getLogger("memvault")

Listener = Callable[[SyncReport], None]
TOLD_AT_ONCE = 20  # problems logged one by one per sync; the rest as a count


class Engine:
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
        self.root = config.root
        self.read_only = read_only
        self.fs = VaultFS(config.root, config.vault.ignore, config.vault.max_note_bytes)
        self._lock = threading.RLock()  # one sync or write at a time
        self._listeners: list[Listener] = []
        self.last_sync_at: float | None = None
        self.store_rebuilt: str | None = None  # a damaged database found on open
        config.state_dir.mkdir(parents=True, exist_ok=True)
        if not read_only:
            self.fs.remove_temp_files()  # left by a write that was killed midway
        self.store = self._open_store()
        self.catalogue = Catalogue(self.store)
        self.embedding = Embedding(config, self.store, embedder)
        self.indexer = Indexer(config, self.fs, self.store, self.catalogue, self.embedding)
        self.linker = Linker(config, self.fs, self.store, self.catalogue)
        self.reader = Reader(config, self.fs, self.store, self.catalogue, self.embedding)
        self.writer = Writer(config, self.fs, clock or (lambda: dt.datetime.now().astimezone()))

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

    def close(self) -> None:
        with self._lock:
            if not self.read_only:  # the writer's vectors.bin is not a reader's to replace
                self.embedding.save()
            self.store.close()

    # -- listeners -------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener`` with the report of every sync that changed something."""
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    # -- sync ------------------------------------------------------------------------

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
            if self.embedding.indexed_with is not None:
                model_note = self.embedding.check_model()  # a new model: re-embed everything
            seen, scope, skipped = self._observe(paths)
            known = self.store.manifest()
            vanished: tuple[str, ...] = ()
            if scope is not None:
                known = {p: k for p, k in known.items() if p in scope}
                # named by an event, yet neither on disk nor indexed: created and gone
                # within one batch, or an event under a stale path (a folder renamed
                # while the observer caught up) -- the caller may want a full reconcile
                vanished = tuple(sorted(p for p in scope if p not in seen and p not in known))
            hashes = self.fs.hashes(suspects(known, seen))
            changes = diff(known, seen, hashes, scope)
            for path in changes.touched:
                self.store.touch_note(path, seen[path].size, seen[path].mtime_ns)
            report = self._apply(changes, progress)
            report = dataclasses.replace(
                report,
                skipped=tuple(skipped) + report.skipped,
                full=full,
                vanished=vanished,
                warnings=((model_note,) if model_note else ()) + report.warnings,
                seconds=time.perf_counter() - started,
            )
            self._tell_problems(report, skipped if full else None)
            self.last_sync_at = time.time()
            if report.changed:  # an idle sync writes nothing at all
                self.store.set_meta("last_sync", json.dumps(report.to_dict()))
                self.store.set_meta("last_sync_at", str(self.last_sync_at))
                for listener in list(self._listeners):
                    listener(report)
            since_save = time.monotonic() - self.embedding.last_save
            if full or since_save >= self.config.daemon.save_seconds:
                self.embedding.save()
            return report

    def _tell_problems(self, report: SyncReport, scanned: list[SkippedFile] | None) -> None:
        """Keep what a full scan skipped; log each problem once, when it appears (and
        when it is resolved). Problems are state: ``status`` lists them (engine.status)."""
        if scanned is not None:
            keep_scan_skipped(self.store, [(s.path, s.reason) for s in scanned])
        if not (report.changed or report.skipped or report.problems or report.warnings):
            return  # nothing can have appeared or gone
        appeared, resolved = changed_problems(self.store)
        for p in appeared[:TOLD_AT_ONCE]:
            log.warning("problem: %s: %s", p.path, p.reason)
        if len(appeared) > TOLD_AT_ONCE:  # a first sync of a big vault: no flood
            log.warning("and %d more problems (memvault status)", len(appeared) - TOLD_AT_ONCE)
        for p in resolved[:TOLD_AT_ONCE]:
            log.info("resolved: %s: %s", p.path, p.reason)
        if len(resolved) > TOLD_AT_ONCE:
            log.info("and %d more problems resolved", len(resolved) - TOLD_AT_ONCE)

    def _observe(
        self, paths: Iterable[str] | None
    ) -> tuple[dict[str, Seen], set[str] | None, list[SkippedFile]]:
        """What is on disk: everything (``paths`` None), or the named paths (and the notes
        inside any of them that is a folder). Attachments are tracked for links."""
        if paths is None:
            scan = self.fs.scan()
            self.catalogue.set_attachments(scan.attachments)
            seen = {p: Seen(s.size, s.mtime_ns) for p, s in scan.notes.items()}
            return seen, None, [SkippedFile(s.path, s.reason) for s in scan.skipped]
        scope: set[str] = set()
        seen = {}
        known: dict[str, Known] | None = None
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
                self.catalogue.attachment_seen(path, (self.root / path).is_file())
                continue
            scope.add(path)
            st = self.fs.stat(path)
            if st is not None:
                seen[path] = Seen(st.size, st.mtime_ns)
        return seen, scope, []

    def _apply(self, changes: ChangeSet, progress: Callable[[Progress], None] | None) -> SyncReport:
        memory_file = self.config.memory.file
        relinked: list[str] = []
        warnings: list[str] = []
        moves = dict(changes.moved)
        if changes:
            # cleared until MEMORY.md is brought up to date: a kill in between is healed
            self.store.set_meta("memory_synced", "")
        before = after = None
        if moves:
            before = self.catalogue.link_index()
            with self.store.transaction() as conn:
                for old, new in changes.moved:
                    self.store.rename_note(conn, old, new)
            self.catalogue.files_changed()
            after = self.catalogue.link_index()
            if self.config.vault.update_links_on_rename:
                relinked, problems = self.linker.relink(moves, before, after)
                warnings += problems
        deleted_labels: list[int] = []
        self.catalogue.changed(set(changes.deleted) | set(moves) | set(moves.values()))
        if changes.deleted:
            with self.store.transaction() as conn:
                for path in changes.deleted:
                    deleted_labels += self.store.delete_note(conn, path)
            self.catalogue.files_changed()
        self.embedding.forget(deleted_labels)
        todo = sorted(
            set(changes.created) | set(changes.modified) | set(moves.values()) | set(relinked)
        )
        indexed = self.indexer.index(todo, progress)
        warnings += indexed.warnings
        if changes.created or changes.deleted or moves:
            self.catalogue.files_changed()
        written = MemoryWritten()
        if changes or not self.store.meta("memory_synced"):
            written = self.linker.update_memory(moves, before, after)
            reindex = ([memory_file] if written.memory else []) + list(written.folder_notes)
            if reindex:
                self.indexer.index(reindex)
        if deleted_labels or indexed.embedded:
            self.embedding.maybe_compact()
        return SyncReport(
            created=changes.created,
            modified=tuple(p for p in changes.modified if p != memory_file),
            deleted=changes.deleted,
            moved=changes.moved,
            embedded_chunks=indexed.embedded,
            reused_chunks=indexed.reused,
            relinked=tuple(relinked),
            memory_written=written.memory,
            folder_notes_written=written.folder_notes,
            skipped=indexed.skipped,
            warnings=tuple(warnings),
            problems=written.problems,
        )

    # -- writes ----------------------------------------------------------------------

    def add_note(
        self,
        category: str,
        title: str,
        *,
        summary: str | None = None,
        fields: Mapping[str, str] | None = None,
        body: str | None = None,
        update: bool = False,
    ) -> WriteResult:
        """Create a note from the vault's template (never overwrites unless ``update``)."""
        with self._lock:
            path, created = self.writer.add_note(
                category, title, summary=summary, fields=fields, body=body, update=update
            )
            return WriteResult(path, created, self.sync(paths=[path]))

    def append_log(self, text: str) -> WriteResult:
        """Add ``- HH:MM text`` to today's log (created from the template, without its
        hints), after the day's last entry."""
        with self._lock:
            path, created = self.writer.append_log(text)
            return WriteResult(path, created, self.sync(paths=[path]))

    # -- reads -----------------------------------------------------------------------

    def search(
        self, query: str, k: int | None = None, filters: Filters = NO_FILTERS, group: bool = False
    ) -> list[Hit]:
        return self.reader.search(query, k, filters, group=group)

    def context(
        self, query: str, budget: int | None = None, filters: Filters = NO_FILTERS
    ) -> Context:
        return self.reader.context(query, budget, filters)

    def get(self, path: str, lines: str | None = None, heading: str | None = None) -> NoteText:
        return self.reader.get(path, lines=lines, heading=heading)

    def related(self, path: str, k: int = 10, exclude: Sequence[str] = ()) -> list[Hit]:
        return self.reader.related(path, k, exclude)

    def link_problems(self, include_alias: bool = True) -> list[LinkProblem]:
        return self.linker.link_problems(include_alias)

    def count_tokens(self, text: str) -> int:
        return self.embedding.count_tokens(text)

    def save(self) -> None:
        """Save the vector index if it changed (the daemon calls this when idle)."""
        self.embedding.save()

    def status(self) -> dict[str, Any]:
        """What is indexed, how big MEMORY.md is against its budget, what is stale."""
        return describe(
            self.config,
            self.fs,
            self.store,
            self.embedding.count_tokens,
            self.linker.link_problems(),
            self.last_sync_at,
        )


__all__ = ["Engine", "Progress"]
