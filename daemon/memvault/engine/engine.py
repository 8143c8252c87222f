"""The one orchestrator: vault files, store, vectors and embedder meet here only.

``Engine`` composes collaborators that each own their state and know the
others only through the arguments they are given:

    Catalogue   note rows and the link index (the caches everyone shares)
    Attachments the manifest of files that are not notes (linked, not indexed)
    Embedding   the model, the text it embeds, the vector index
    Indexer     files -> rows, chunks, vectors
    Linker      relinking after moves, MEMORY.md and folder notes, link check
    Applier     a sync's steps 3 to 6: a ChangeSet made true in the index and vault
    Reader      search, context, get, related (writes nothing, takes no lock)
    Writer      add a note, append to today's log
    MemoryCommands  Claude's memory tool: view, create, str_replace, insert, delete, rename

``sync`` is the single code path for the start-up reconcile, a watcher's batch
of paths and the periodic timer:

1. scan (everything, or just the given paths) and stat;
2. hash only what the size+mtime fast path cannot vouch for; diff -> ChangeSet;
3. moves of notes (by content hash) and of attachments (by size and mtime,
   ``Attachments``): rename rows (vectors stay) and journal the moves in the same
   transaction, then re-target links that no longer lead where they did
   (``update_links_on_rename``, in the vault's ``newLinkFormat``); the journal is
   cleared once MEMORY.md is relinked too, and a sync that finds it (a kill
   midway) finishes that relink first; a note that kept changing keeps it, and the
   next sync tries that note again (``relink_journal``);
4. deletes: drop rows, FTS entries and vectors;
5. created + modified (+ relinked): parse, chunk, embed only chunks whose
   embedded text is new (the cache answers the rest), commit per batch;
6. MEMORY.md and folder notes, compare-and-swap, only when something changed.

Steps 1 and 2 are here (with engine.observe); 3 to 6 are ``Applier.apply``
(engine/applier.py), which the engine makes over its collaborators and its lock.

A long sync (a full reconcile, or more notes than one batch) steps aside
between its batches (``TurnLock``): a sync or a write waiting for the lock (a
person's save) goes first, with the long sync's moves, deletes and relinks
already done and only notes left to index (``Applier.long_syncs``). Such a
sync writes MEMORY.md provisionally: what is indexed so far plus its own change, never
dropping a line for a pending note (core.memory_md); the long sync's last step
writes it whole. It leaves the relink journal to the sync that wrote it. A kill
meanwhile leaves committed batches, the journal and ``memory_synced`` cleared:
the next sync's diff finds the rest.

Each write path (add, log, the memory tool) is a few lines here around its
collaborator, kept with the others. What a sync finds on disk is engine.observe's;
what it changes, engine.applier's; the problems it logs, engine.status's.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import logging
import shlex
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memvault.config import VaultConfig
from memvault.core.changes import Known, moved_on, reported_moves, to_hash
from memvault.core.ranking import Filters
from memvault.core.results import (
    Context,
    Hit,
    LinkProblem,
    NoteRequest,
    NoteText,
    SyncReport,
    WriteResult,
)
from memvault.engine import link_verdicts as verdicts
from memvault.engine import racy_rows, relink_journal
from memvault.engine.applier import Applier
from memvault.engine.attachments import Attachments
from memvault.engine.beside import VectorsBeside
from memvault.engine.carry_over import CarryOver
from memvault.engine.catalogue import Catalogue
from memvault.engine.clone_guard import open_team_index
from memvault.engine.embedding import Embedding
from memvault.engine.folders import FolderNames
from memvault.engine.indexer import BATCH_NOTES, Indexer, Progress
from memvault.engine.linker import Linker
from memvault.engine.memory_tool import MemoryCommands
from memvault.engine.observe import compared, moved_and_edited, observe
from memvault.engine.reader import NO_FILTERS, Reader
from memvault.engine.relink_journal import Resumed
from memvault.engine.status import keep_memory_settings as settings_check
from memvault.engine.status import pack_report, tell_problems
from memvault.engine.status_away import describe_or_away
from memvault.engine.this_copy import marked
from memvault.engine.turns import TurnLock
from memvault.engine.writer import Writer
from memvault.errors import IndexCorrupt, MemvaultError, NotIndexed, VaultNotFound
from memvault.index.embedder import Embedder
from memvault.index.seam import is_postgres
from memvault.index.store import Store
from memvault.vault.files import VaultFS
from memvault.vault.git_exclude import keep_temps_out
from memvault.vault.lock import upgrade_guard
from memvault.vault.state_dir import ensure_state_dir

log = logging.getLogger("memvault")

Listener = Callable[[SyncReport], None]


class Engine:
    """Everything memvault does to one vault. Thread-safe; one writer per vault.

    The one orchestrator: sync (observe here, the rest ``Applier.apply``), the vector
    lane and the write paths, each step a call to a collaborator; the reads are
    one-line delegations kept here so adapters see one object.
    """

    def __init__(
        self,
        config: VaultConfig,
        embedder: Embedder | Callable[[], Embedder] | None = None,
        *,
        read_only: bool = False,
        clock: Callable[[], dt.datetime] | None = None,
        writer_wait: float = 0.0,
        daemon: bool = False,
    ) -> None:
        self.config = config
        self.root = config.root
        self.read_only = read_only
        v = config.vault  # quiet_ms: a file saved within it may be a save in progress
        self.fs = VaultFS(config.root, v.ignore, v.max_note_bytes, quiet_ms=v.quiet_ms)
        self.fs.own_names = frozenset({config.memory.file})  # (named back: VaultFS._named_so)
        self.unindexed: Callable[[str], None] = lambda path: None  # a daemon syncs it again
        self._lock = TurnLock()  # one sync or write at a time; a reconcile steps aside
        self._listeners: list[Listener] = []
        self.last_sync_at: float | None = None
        self.store_rebuilt: str | None = None  # a damaged database found on open
        self._daemon = daemon
        # A vault never indexed, opened to read: nothing is written, not even .memvault/;
        # the index lives in memory and is empty (``indexed`` says so).
        postgres = is_postgres(config)  # the index in PostgreSQL (index/seam.py)
        self.indexed = (config.state_dir / "index.db").exists() if not postgres else True
        if not read_only:
            ensure_state_dir(config.state_dir)
            self.fs.remove_temp_files()  # left by a write that was killed midway
            keep_temps_out(config.root)  # and kept out of git (its info/exclude)
            self.indexed = True
        self.store: Store = (
            open_team_index(config, read_only=read_only, wait=writer_wait, daemon=daemon)
            if postgres
            else self._open_store()
            if self.indexed
            else Store.in_memory()
        )
        self.catalogue = Catalogue(self.store)
        self.following = verdicts.Following(self.store)
        self.attachments = Attachments(self.store)
        self.embedding = Embedding(
            config, self.store, embedder, read_only=read_only, model_apart=daemon,
            cold_reads=not daemon,
        )  # fmt: skip
        self.indexer = Indexer(config, self.fs, self.store, self.catalogue, self.embedding)
        self.carry_over = CarryOver(config, self.fs, self.store, self.catalogue, self.embedding)
        self.linker = Linker(config, self.fs, self.store, self.catalogue, lean=not daemon)
        self.reader = Reader(config, self.fs, self.store, self.catalogue, self.embedding)
        self.folders = FolderNames(config, self.fs, lambda: self.catalogue.notes().keys())
        self.writer = Writer(config, self.fs, self.catalogue, clock)
        sync = lambda paths: self.sync(paths, vectors=False)  # noqa: E731
        self.memory_commands = MemoryCommands(config, self.fs, self.catalogue, sync)
        self.applier = Applier(
            config, self.fs, self.store, self.catalogue, self.following, self.attachments,
            self.embedding, self.indexer, self.carry_over, self.linker, self._lock,
        )  # fmt: skip
        read_only or settings_check(self.store, config.memory_fingerprint())  # MEMORY.md config

    def _open_store(self) -> Store:
        """Open the databases; a damaged one is deleted and rebuilt from the vault.

        A damaged index.db takes vectors.bin with it (its labels mean nothing
        any more); a damaged cache.db only costs re-embedding. Each is retried
        once: a second failure is a real error, not a damaged file.
        """
        index, cache = self.config.state_dir / "index.db", self.config.state_dir / "cache.db"
        trusting = not self._daemon  # a daemon checks at every start (index/integrity.py)
        guard = (lambda: upgrade_guard(self.config.state_dir)) if self.read_only else None
        for _ in range(3):
            try:
                return Store(index, cache, upgrade_lock=guard, trusting=trusting)
            except IndexCorrupt as exc:
                if exc.path is None:
                    raise
                log.warning("%s; it is rebuilt from the vault", exc)
                self.store_rebuilt = exc.path
                for suffix in ("", "-wal", "-shm", ".checked"):
                    Path(f"{exc.path}{suffix}").unlink(missing_ok=True)
                if Path(exc.path) == index:
                    (self.config.state_dir / "vectors.bin").unlink(missing_ok=True)
        return Store(index, cache, upgrade_lock=guard, trusting=trusting)

    def close(self) -> None:
        with self._lock:
            if not self.read_only:  # the writer's vectors.bin is not a reader's to replace
                self.embedding.save()
            self.embedding.release_model(0)  # a model process of its own ends now
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
        *,
        vectors: bool = True,
        moves: Sequence[tuple[str, str]] = (),
    ) -> SyncReport:
        """Bring the index and MEMORY.md in line with the files (all, or ``paths``).

        The structure lane always runs; with ``vectors`` the vector lane then runs
        here until nothing is pending (the daemon passes False and runs it in the
        background instead; writes pass False and leave it to the next sync).
        ``moves``: renames the file system reported, (old, new) in order (a watcher's
        move events): moves whatever the files became (``changes.reported_moves``)."""
        with self._lock:
            # a vault folder moved or deleted under us: its notes are not "all deleted"
            self.fs.check_root()
            started = time.perf_counter()
            looked_ns = time.time_ns()  # before any file is read: its rows racy or not
            racy = racy_rows.recorded(self.store)
            full = paths is None
            model_note = None
            if self.embedding.indexed_with is not None:
                model_note = self.embedding.check_model()  # a new model: re-embed everything
            resumed = Resumed()
            if (
                not self.applier.long_syncs
            ):  # a kill's, or notes that kept changing (relink_journal)
                resumed = relink_journal.resume(
                    self.store,
                    self.catalogue,
                    self.linker,
                    self.config.vault.update_links_on_rename,
                )
            else:  # let in by a long sync: it owns its journal; it committed notes meanwhile
                self.catalogue.files_changed()
            self.linker.look_at_git()  # git changing the tree from now on: MEMORY.md waits
            seen, scope, skipped, attachments = observe(
                self.fs, self.store, self.attachments, paths, self.config.memory.file
            )
            vanished: tuple[str, ...] = ()
            known: Mapping[str, Known]
            if scope is not None and len(scope) <= BATCH_NOTES:  # a save: its own rows
                rows = {p: self.store.note(p) for p in scope}
                known = {p: Known(r.size, r.mtime_ns, r.sha256) for p, r in rows.items() if r}
            else:
                known = self.store.manifest()
            if scope is not None:
                known = {p: known[p] for p in scope if p in known}
                # named by an event, yet neither on disk nor indexed: created and gone
                # within one batch, or an event under a stale path (a folder renamed
                # while the observer caught up) -- the caller may want a full reconcile
                vanished = tuple(sorted(p for p in scope if p not in seen and p not in known))
            hashes = self.fs.hashes(to_hash(known, seen, racy))
            changes = reported_moves(compared(known, seen, hashes, scope, self.store), moves)
            held = moved_on(changes, moves, vanished)  # renamed and gone on: not deleted
            if held:
                kept = {old for old, _ in held}
                deleted = tuple(p for p in changes.deleted if p not in kept)
                changes = dataclasses.replace(changes, deleted=deleted)
            changes = moved_and_edited(changes, self.fs, self.store, self.config.memory.file)
            for path in changes.touched:
                self.store.touch_note(path, seen[path].size, seen[path].mtime_ns)
            # the vector lane beside a full sync's structure lane (the second core)
            beside_on = vectors and full and self.store.vectors_beside
            with (
                VectorsBeside(self.embedding, self._lock, enabled=beside_on) as beside,
                self.following.sync(),  # a sync that dies before its links follow: healed
            ):
                report = self.applier.apply(changes, progress, attachments, full=full)
            # the racy rows as the structure lane wrote them, before the vector step: one
            # that fails (the model's process away) left them written, and trusted
            written = racy_rows.written_paths(report, changes.touched, self.config.memory.file)
            written.update(resumed.relinked, (s.path for s in skipped))
            checked = {p: seen[p] for p in racy if p in hashes and p in seen}
            racy_rows.settle(self.store, looked_ns, checked, written)
            if vectors:
                embedded, indexed = self.embed_pending(progress)
                embedded, indexed = embedded + beside.embedded, indexed + beside.indexed
                report = dataclasses.replace(
                    report,
                    embedded_chunks=embedded,
                    reused_chunks=report.reused_chunks + indexed - embedded,
                )
            report = dataclasses.replace(
                report,
                relinked=tuple(sorted(set(resumed.relinked) | set(report.relinked))),
                # as the journal has them now: a waiting note renamed by this sync, by its
                # new name (the watcher syncs these paths again)
                relink_waiting=relink_journal.waiting(self.store)[1],
                skipped=tuple(skipped) + report.skipped,
                full=full,
                vanished=vanished,
                moved_on=held,
                warnings=((model_note,) if model_note else ()) + resumed.warnings + report.warnings,
                seconds=time.perf_counter() - started,
            )
            tell_problems(self.store, report, skipped if full else None)
            if self.linker.waits_for_git:  # git changed the tree under it: MEMORY.md by
                self.unindexed(self.config.memory.file)  # a daemon's next batch, at once
            self.last_sync_at = time.time()
            if report.changed:  # an idle sync writes nothing at all
                self.store.set_meta("last_sync", pack_report(report.to_dict()))
                self.store.set_meta("last_sync_at", str(self.last_sync_at))
                for listener in list(self._listeners):
                    listener(report)
            if full:
                self.embedding.save()
            elif time.monotonic() - self.embedding.last_save >= self.config.daemon.save_seconds:
                self.embedding.save_when_due()  # not the whole vector index for one note
        if full:  # after bulk work (a deleted folder frees pages), the lock let go
            self.store.reclaim()
        return report

    # -- the vector lane -------------------------------------------------------------

    def embed_pending(
        self,
        progress: Callable[[Progress], None] | None = None,
        *,
        steps: int | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> tuple[int, int]:
        """Give pending chunks their vectors, a bounded step at a time, until none is
        pending (or ``steps`` ran, or ``stop()`` says so). The model runs outside the
        engine's lock: syncs and writes go on meanwhile. Returns (chunks the model
        embedded, chunks indexed)."""
        embedded = indexed = 0
        total, _ = self.store.pending_state()
        done = 0
        while total and (steps is None or steps > 0) and not (stop and stop()):
            step = self.embedding.embed_pending(self._lock)
            if not step.indexed and not step.remaining:
                break
            embedded, indexed, done = (
                embedded + step.embedded,
                indexed + step.indexed,
                done + step.indexed,
            )
            total = max(total, done + step.remaining)
            if progress is not None:
                progress(Progress(done, total, embedded, "vectors"))
            if not step.remaining:
                break
            steps = None if steps is None else steps - 1
        if indexed:
            self.embedding.maybe_compact()
        return embedded, indexed

    def warm_up(self) -> None:
        """Build MEMORY.md's lists and the link index, load the model and open the vector
        index (each otherwise built or loaded by the first save, or the first search, that
        needs it: seconds at 100,000 notes)."""
        with self._lock:
            self.linker.warm()
        _ = self.embedding.embedder
        if self.embedding.indexed_with:
            _ = self.embedding.vectors

    def compact_caches(self) -> None:
        """Let the state kept between syncs go (the catalogue's rows, the link index,
        MEMORY.md's lists), then read it again in the room it left: after bulk work, before
        the daemon hands freed memory back. Read beside the old state, the new one filled
        its holes and pymalloc kept every arena (100,000 notes: 634 MB idle after a rename,
        524 MB let go first; docs/ARCHITECTURE.md). A search or a save meanwhile waits.
        Then index.db's free pages go back to the disk (``Store.reclaim``)."""
        if self.read_only:
            return
        started = time.perf_counter()
        with self._lock:  # the lists are the syncs' own
            self.linker.forget_kept()
            self.catalogue.forget()
        gc.collect()  # what the old state held in cycles goes now, not at some later pass
        self.catalogue.notes()  # outside the sync lock: a save meanwhile waits for the rows
        self.catalogue.link_index()
        with self._lock:
            self.linker.rebuild_kept()
        self.store.reclaim()  # and index.db's free pages back to the disk, in steps
        log.info("kept state read again in %.1f s", time.perf_counter() - started)

    def pending_vectors(self) -> tuple[int, float | None]:
        """Chunks waiting for their vectors, and since when the oldest has (unix time)."""
        return self.store.pending_state()

    # -- writes ----------------------------------------------------------------------

    def add_note(self, note: NoteRequest) -> WriteResult:
        """Create a note from the vault's template (never overwrites unless ``update``)."""
        with self._lock:
            wrote = self.writer.add_note(note)
            # the structure at once; the vectors are the next sync's (or the daemon's lane)
            report = self._index_written(wrote.path)
            return WriteResult(wrote.path, wrote.created, report, wrote.written, wrote.note)

    def append_log(self, text: str) -> WriteResult:
        """Add ``- HH:MM text`` to today's log (created from the template, without its
        hints), after the day's last entry; the same line at the same minute is not
        written again (``written`` False)."""
        with self._lock:
            wrote = self.writer.append_log(text)
            return WriteResult(
                wrote.path, wrote.created, self._index_written(wrote.path), wrote.written
            )

    def memory_tool(self, command: Mapping[str, Any]) -> str:
        """One command of Claude's memory tool (engine.memory_tool): the command and
        the sync after it are one turn of the lock."""
        with self._lock:
            return self.memory_commands.run(command)

    def _index_written(self, path: str) -> SyncReport:
        """The structure sync after a write that is on disk. Its failure (the index's disk
        full) is a warning: an error would have the caller write again (a log entry twice)."""
        try:
            return self.sync(paths=[path], vectors=False)
        except (MemvaultError, OSError, sqlite3.Error) as exc:
            if isinstance(exc, VaultNotFound):
                raise
            log.warning("%s written, but not indexed yet: %s", path, exc)
            self.unindexed(path)  # (the daemon's watcher skips its own writes: queued)
            why = f"{path} is written, but not indexed yet ({exc}); the next sync indexes it"
            return SyncReport(warnings=(why,))

    # -- reads -----------------------------------------------------------------------

    def search(
        self, query: str, k: int | None = None, filters: Filters = NO_FILTERS, group: bool = False
    ) -> list[Hit]:
        self._needs_index("search")
        hits = self.reader.search(query, k, self.folders.resolve(filters), group=group)[0]
        return marked(self.reader, hits)  # a reader's copy lacking a note (this_copy)

    def context(
        self, query: str, budget: int | None = None, filters: Filters = NO_FILTERS
    ) -> Context:
        self._needs_index("context")
        return self.reader.context(query, budget, self.folders.resolve(filters))

    def _needs_index(self, what: str) -> None:
        if not self.indexed:
            raise NotIndexed(
                f"{self.root} is not indexed yet, so there is nothing to {what} "
                f"(nothing was written): `memvault sync --vault {shlex.quote(str(self.root))}` indexes it "
                "(and keeps MEMORY.md), `memvault up` also keeps it current"
            )

    def get(self, path: str, lines: str | None = None, heading: str | None = None) -> NoteText:
        return self.reader.get(path, lines=lines, heading=heading)

    def related(self, path: str, k: int = 10, exclude: Sequence[str] = ()) -> list[Hit]:
        self._needs_index("compare")
        return marked(self.reader, self.reader.related(path, k, exclude))

    def link_problems(self, include_alias: bool = True) -> list[LinkProblem]:
        return self.linker.link_problems(include_alias)

    def count_tokens(self, text: str) -> int:
        return self.embedding.count_tokens(text)

    def save(self) -> None:
        """Save the vector index if it changed."""
        self.embedding.save()

    def save_when_due(self) -> None:
        """Save the vector index if enough of it changed since its last save (the daemon
        calls this when idle: ``Embedding.save_when_due``)."""
        self.embedding.save_when_due()

    def status(self) -> dict[str, Any]:
        """What is indexed, how big MEMORY.md is against its budget, what is stale (or,
        the index not answering, what the files say and why: ``status_away``)."""
        data = describe_or_away(
            self.config,
            self.fs,
            self.store,
            self.embedding.count_tokens,
            lambda scan, unread: self.linker.link_problems(
                scan=scan, as_written=False, unread=unread
            ),
            self.last_sync_at,
        )
        data["indexed"] = self.indexed
        return data


__all__ = ["Engine", "Progress"]
