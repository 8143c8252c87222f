"""Watch the vault: watchdog events -> a bounded queue -> debounced batches -> sync.

    observer thread (watchdog)        worker thread (ours)
    handler.dispatch: map + enqueue   take a due batch -> sync(paths) -> repeat
    (observers.py)                    timers: periodic reconcile, idle save, supervisor
                                      a long batch -> the reconcile thread (ours)

This module schedules batches; ``observers.Observers`` owns the observers
(which one, supervised, renewed) and their handler, which does no I/O and never
syncs: it puts vault-relative paths in ``ChangeQueue``. The worker flushes a
batch when the queue has been quiet for ``quiet_ms`` (``vault.quiet_ms``) or, under a continuous
stream, when its oldest change is ``max_wait`` old (so a busy vault still
converges). More pending paths than ``limit`` fold into their folders (a bulk
rename or a pull of thousands of files is one batch of a few folders, each
reconciled by size and mtime), and only past ``limit`` folders into one full
reconcile: the queue never grows without bound. Sync compares hashes, so the
events of the daemon's own writes cost one cheap no-op batch and never a loop.

A full reconcile (at start, after a lost observer, on the timer) and a long
batch (more than ``BIG_BATCH`` paths, as a `git pull` makes, or a folder moved
in: its notes are all synced) run in a thread of their own,
one at a time, while the worker goes on taking the batches of paths that come
meanwhile: the engine's reconcile steps aside for them
between its batches, so a person's save waits for one batch of the reconcile,
not for all of it (engine.turns). Only the reconcile reports progress.

An exception in the handler or in sync is logged and kept in ``last_error``;
neither kills the watcher. A dead observer is restarted (``Observers.supervise``)
and followed by a full reconcile, since events were lost while it was down.
"""

from __future__ import annotations

import errno
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from memvault.config import QUIET_MS
from memvault.core.results import SyncReport
from memvault.engine.indexer import Progress
from memvault.errors import MemvaultError
from memvault.service.mounts import is_network_fs, limit_advice, mount_fs_type
from memvault.service.observers import Observers
from memvault.service.watch_queue import (
    DEFAULT_LIMIT,
    MAX_WAIT_SECONDS,
    Batch,
    ChangeQueue,
    PathMapper,
)

log = logging.getLogger("memvault.service.watcher")
WARNINGS_KEPT = 20  # the last syncs' warnings /status shows (and each batch logs)

BIG_BATCH = 200  # more paths than this sync beside the small batches (one engine batch)
START_UP = "start-up reconcile"  # the first batch's reason
SUPERVISE_SECONDS = 2.0

OnProgress = Callable[[Progress], None]


class Sync(Protocol):
    """What the watcher calls with a batch: its paths (None: everything), the progress
    to tell, and the renames the file system reported for it, (old, new) in order."""

    def __call__(
        self, paths: list[str] | None, progress: OnProgress, *, moves: Sequence[tuple[str, str]]
    ) -> SyncReport: ...


class SyncCancelled(Exception):
    """Raised from the progress callback to end a long sync early at shutdown."""


@dataclass(frozen=True, slots=True)
class WatchSettings:
    """How the watcher batches: the daemon's settings, in the watcher's units."""

    quiet_ms: int = QUIET_MS
    observer: str = "auto"  # auto | native | polling
    reconcile_seconds: float = 300.0
    idle_save_seconds: float = 5.0
    limit: int = DEFAULT_LIMIT  # paths queued one by one before they fold into folders
    max_wait: float = MAX_WAIT_SECONDS


@dataclass(frozen=True, slots=True)
class WatchHooks:
    """What the watcher tells its owner; each optional, cheap, and must not raise.

    ``save`` runs once the vault has been quiet for ``idle_save_seconds`` after a sync
    (a burst's vectors reach disk even when no further event comes); ``on_progress``
    gets a long sync's progress; ``after_first`` runs once, after the first good batch,
    outside the lag accounting (the daemon loads the model); ``on_change`` is told when
    a batch begins and ends and when an error is recorded (what ``info()`` shows);
    ``after_bulk`` runs once the vault is quiet again (with the idle save) after a
    start-up reconcile that changed something or a batch that changed more than
    ``BIG_BATCH`` notes (the daemon lets its kept state go, reads it again and gives
    the memory freed back to the system: ``heap.trim``); a later full reconcile that
    changed fewer is no bulk work, nor a start-up reconcile that changed nothing."""

    save: Callable[[], None] | None = None
    on_progress: OnProgress | None = None
    after_first: Callable[[], None] | None = None
    on_change: Callable[[], None] | None = None
    after_bulk: Callable[[], object] | None = None


class Watcher:
    """Keeps ``sync`` fed with what changed under ``root``; owns its threads.

    ``sync(paths, progress, moves=...)`` gets a list of vault-relative paths (a folder
    stands for everything under it), or None for a full reconcile, and the renames the
    file system reported for them (``Sync``), and returns its report.
    """

    def __init__(
        self,
        root: Path,
        sync: Sync,
        *,
        is_ignored: Callable[[str], bool],
        is_ours: Callable[[str], bool] = lambda rel: False,
        settings: WatchSettings = WatchSettings(),
        hooks: WatchHooks = WatchHooks(),
    ) -> None:
        self.root = Path(root)
        self._sync = sync
        self._hooks = hooks
        self._after_first = hooks.after_first  # run once after the first good batch
        self._on_change = hooks.on_change or (lambda: None)
        self.settings = settings
        self.queue = ChangeQueue(settings.quiet_ms, settings.max_wait, settings.limit)
        mapper = PathMapper(self.root, is_ignored)
        self.observers = Observers(
            mapper.root, mapper, self.queue, settings.observer, self.record_error, is_ours
        )
        self.reconcile_seconds = settings.reconcile_seconds
        self.idle_save_seconds = settings.idle_save_seconds
        self.batches = 0
        self.batches_failed = 0  # consecutive, for the retry back-off
        self.last_error: str | None = None
        self.last_batch: dict[str, Any] | None = None
        # what the last syncs warned of (a link a rename could not re-target...): in the
        # log and /status, as `memvault sync` prints them, newest last
        self.warnings: deque[str] = deque(maxlen=WARNINGS_KEPT)
        # when each was said (time.time()): a warning outlives what it warned of (a
        # merge conflict resolved since), and status says how long ago it was
        self.warned_at: deque[float] = deque(maxlen=WARNINGS_KEPT)
        self._stopping = threading.Event()
        self._busy_since: float | None = None  # a batch of paths in flight, since
        self._reconcile_since: float | None = None  # a full reconcile in flight, since
        self._reconciler: threading.Thread | None = None
        self.let_through = 0  # batches synced while a full reconcile was in flight
        self._needs_save = False
        self._bulk_done = False  # a long batch since the last idle save: after_bulk is due
        self._last_sync = time.monotonic()
        # notes whose links a relink could not re-target (they kept changing): synced
        # again after a back-off (1, 2, 4 ... 60 s), so their links follow once the
        # saves stop, with no event of their own (engine.relink_journal)
        self._relink_retry: tuple[float, frozenset[str]] | None = None
        self._relink_retries = 0
        self._worker: threading.Thread | None = None
        self._lock = threading.Lock()

    # -- life cycle ---------------------------------------------------------------------

    def start(self, initial_reconcile: bool = True) -> None:
        """Start observing (events queue up from now on), then the worker."""
        self.observers.start()
        if initial_reconcile:
            self.queue.request_full(START_UP)
        self._worker = threading.Thread(target=self._run, name="memvault-watcher", daemon=True)
        self._worker.start()

    def watch_changes_here(self) -> None:
        """A reader daemon's watcher (engine/changed_here), on native file events only. It
        only names the notes saved here, and the daemon served before it watched: where
        such events are not to be had (a network or FUSE mount, inotify's limits used up,
        an observer that fails to start), it neither polls the whole vault every 2 s (9 % of
        a core at 10,000 notes, 41 % at 50,000, where a reader used none:
        bench/reader_idle_watch.py) nor stops the daemon (with ``observer = "native"``, it
        exited 1): it says once why the notes saved here are not named, and serves
        without. ``observer = "polling"`` set: it polls, as asked."""
        kind = mount_fs_type(self.root)
        if self.settings.observer == "auto" and is_network_fs(kind):
            why = f"the vault is on a {kind} filesystem, where native file events miss changes"
        else:
            if self.settings.observer == "auto":
                self.observers.setting = "native"  # no polling in its stead
            try:
                self.start(initial_reconcile=False)
                return
            except OSError as exc:
                self.stop()
                why = limit_advice(exc) if exc.errno in (errno.ENOSPC, errno.EMFILE) else str(exc)
        log.warning(
            "watcher: %s; a reader daemon does not poll its vault, so a search does not name "
            "the notes saved here while it runs (those git listed at its start, it does)",
            why,
        )

    def stop(self, timeout: float | None = None) -> bool:
        """Stop observing, let the batch in flight finish (a long one is cancelled
        between notes), join. False if the worker is still busy after ``timeout``."""
        self._stopping.set()
        self.observers.stop()
        self.queue.wake()
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in (self._worker, self._reconciler):
            if thread is not None:
                thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
                if thread.is_alive():
                    log.warning("watcher: the batch in flight did not finish within %s s", timeout)
                    return False
        self._worker = self._reconciler = None
        self.observers.detach()  # one the supervisor may have restarted meanwhile
        return True

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # -- the observers (observers.py), as status shows them ------------------------------

    @property
    def mapper(self) -> Callable[[str | bytes], str | None]:
        """Event path -> vault path (the handler's, on watchdog's thread)."""
        return self.observers.mapper

    @mapper.setter
    def mapper(self, mapper: Callable[[str | bytes], str | None]) -> None:
        self.observers.mapper = mapper

    def observer_alive(self) -> bool:
        return self.observers.alive()

    def _supervise(self) -> None:
        if not self.stopping:
            self.observers.supervise()

    # -- the worker -----------------------------------------------------------------------

    def _run(self) -> None:
        next_reconcile = time.monotonic() + self.reconcile_seconds
        next_check = time.monotonic() + SUPERVISE_SECONDS
        while not self.stopping:
            now = time.monotonic()
            if now >= next_check:
                self._supervise()
                next_check = now + SUPERVISE_SECONDS
            if now >= next_reconcile:
                self.queue.request_full("periodic reconcile")
                next_reconcile = now + self.reconcile_seconds
            reconciling = self.reconciling
            batch = self.queue.take(paths_only=reconciling)
            if batch is not None:
                if batch.paths is None or (not reconciling and self._long(batch.paths)):
                    self._start_reconcile(batch)
                    if batch.paths is None:
                        next_reconcile = time.monotonic() + self.reconcile_seconds
                else:
                    self._run_batch(batch, let_through=reconciling)
                continue
            if self._arrived_unrenewed(reconciling):
                # folders arrived in a batch the reconcile thread ran (a folder renamed:
                # its relink's own writes bring no batch of the worker's any more)
                self.observers.renew()
                continue
            if self._relink_retry is not None and now >= self._relink_retry[0]:
                self.queue.put(self._relink_retry[1])
                self._relink_retry = None
                continue
            if self._needs_save and now - self._last_sync >= self.idle_save_seconds:
                self._idle_save()
            due = self.queue.due_in(paths_only=reconciling)
            waits = [next_check - now, next_reconcile - now, math.inf if due is None else due]
            if self._relink_retry is not None:
                waits.append(self._relink_retry[0] - now)
            if self._needs_save:
                waits.append(self._last_sync + self.idle_save_seconds - now)
            self.queue.wait(max(0.0, min(waits)))

    def _arrived_unrenewed(self, reconciling: bool) -> bool:
        """Folders arrived, nothing is queued or in flight, and no batch of the worker's
        renewed the watches after them (``_run_batch`` does, on the worker)."""
        return (
            self.observers.folders_arrived.is_set()
            and not reconciling
            and not len(self.queue)
            and not self.stopping
        )

    @property
    def reconciling(self) -> bool:
        """A full reconcile (or a big batch) is in flight: small batches are let through."""
        return self._reconciler is not None

    def _long(self, paths: frozenset[str]) -> bool:
        """Many paths, or a folder: a sync that may index thousands of notes."""
        if len(paths) > BIG_BATCH:
            return True
        return any(not p.lower().endswith(".md") and (self.root / p).is_dir() for p in paths)

    def lets_through(self) -> bool:
        """Whether the batch this thread syncs is one let through a reconcile in flight."""
        return self.reconciling and threading.current_thread() is not self._reconciler

    def _start_reconcile(self, batch: Batch) -> None:
        def run() -> None:
            try:
                self._run_batch(batch, let_through=False)
            finally:
                self._reconciler = None
                self.queue.wake()  # the worker may start the next one

        self._reconciler = threading.Thread(target=run, name="memvault-reconcile", daemon=True)
        self._reconciler.start()

    def _run_batch(self, batch: Batch, let_through: bool) -> None:
        paths = None if batch.paths is None else sorted(batch.paths)
        own_thread = threading.current_thread() is self._reconciler
        if own_thread:
            self._reconcile_since = batch.oldest
        else:
            self._busy_since = batch.oldest
        started = time.monotonic()
        self._on_change()
        try:
            # only the reconcile reports progress (a batch let through would clobber it)
            progress = self._cancel_only if let_through else self._progress
            report = self._sync(paths, progress, moves=batch.moves)
        except SyncCancelled:
            log.info("watcher: sync cancelled at shutdown (the next start reconciles)")
            return
        except Exception as exc:
            what = "everything" if paths is None else f"{len(paths)} paths"
            delay = min(60.0, 2.0 ** min(self.batches_failed, 6))
            if isinstance(exc, MemvaultError):  # the index's server away, a full disk: said
                # in a line (a field test's log held a 30-line traceback per retry)
                log.error("watcher: sync of %s failed: %s; retrying in %.0f s", what, exc, delay)
            else:  # a fault of memvault's own: where it happened, for a bug report
                log.exception("watcher: sync of %s failed; retrying in %.0f s", what, delay)
            # put back with the time of its first change: the lag stays true
            if paths is None:
                self.queue.put((), moves=batch.moves)
                self.queue.request_full(batch.reason, since=batch.oldest)
            else:
                self.queue.put(paths, since=batch.oldest, moves=batch.moves)
            self.queue.retry_after(delay)
            self.batches_failed += 1
            why = str(exc) if isinstance(exc, MemvaultError) else repr(exc)
            self.record_error(f"sync failed: {why}")  # tells on_change, with the count
            return
        finally:
            if own_thread:
                self._reconcile_since = None
            else:
                self._busy_since = None
            self._last_sync = time.monotonic()
        self.batches_failed = 0
        self.batches += 1
        self._retry_relink(report.relink_waiting)
        self.let_through += let_through
        self._needs_save = self._hooks.save is not None or self._hooks.after_bulk is not None
        notes = (report.created, report.modified, report.deleted, report.moved, report.relinked)
        if (batch.reason == START_UP and report.changed) or sum(map(len, notes)) > BIG_BATCH:
            # the start-up reconcile that found changes, a pull, a folder renamed across
            # many notes; not a periodic reconcile that changed a few notes or none (the
            # kept state read again every 5 minutes: ~5 s of CPU at 50,000 notes for
            # nothing), nor a start that found nothing changed: the warm-up has just
            # built that state (read again, it cost 5 s at 100,000 notes and left the
            # daemon 73-85 MB larger; bench/RESULTS.md, "Memory after bulk work, let go
            # first")
            self._bulk_done = True
        arrived = self.observers.folders_arrived.is_set() and not self.stopping
        if arrived and threading.current_thread() is self._worker:
            self.observers.renew()  # the worker's alone: it owns the observer
        if report.moved_on:  # renamed, then moved on before the sync: follow it next batch
            self.queue.put([old for old, _ in report.moved_on], moves=report.moved_on, earlier=True)
        if paths is not None and report.vanished:
            # An event named a note that is neither there nor indexed. Usually a file
            # created and gone within one batch; but a folder renamed and its old name
            # reused before the observer caught up makes watchdog report later events
            # under the old path. A full reconcile (size+mtime, cheap) settles both.
            self.queue.request_full("events named notes that are not there", debounce=True)
        changed = report.changed
        self.last_batch = {
            "paths": None if paths is None else len(paths),
            "reason": batch.reason,
            "changed": changed,
            "seconds": round(time.monotonic() - started, 3),
        }
        if changed or paths is None:
            log.info(
                "watcher: synced %s (%s): %s",
                "everything" if paths is None else f"{len(paths)} paths",
                batch.reason,
                report.summary(),
            )
        for warning in report.warnings[:WARNINGS_KEPT]:
            log.warning("watcher: %s", warning)
        if len(report.warnings) > WARNINGS_KEPT:
            log.warning("watcher: and %d more warnings", len(report.warnings) - WARNINGS_KEPT)
        said = report.warnings[-WARNINGS_KEPT:]
        self.warnings.extend(said)
        self.warned_at.extend([time.time()] * len(said))
        self._on_change()
        if self._after_first is not None and not let_through:  # after the reconcile's end
            with self._lock:
                hook, self._after_first = self._after_first, None
            if hook is None:
                return
            try:
                hook()
            except Exception as exc:
                self.record_error(f"after the first sync: {exc!r}")
                log.exception("watcher: the after-first-sync hook failed")

    def _retry_relink(self, waiting: Sequence[str]) -> None:
        """Sync ``waiting`` (notes a relink left) again after the back-off; a sync that
        left none resets it."""
        if not waiting:
            self._relink_retries = 0
            return
        delay = min(60.0, 2.0**self._relink_retries)
        self._relink_retries = min(self._relink_retries + 1, 6)
        self._relink_retry = (time.monotonic() + delay, frozenset(waiting))
        self.queue.wake()  # the worker's wait takes the new deadline in

    def _progress(self, progress: Progress) -> None:
        if self._hooks.on_progress is not None:
            self._hooks.on_progress(progress)
        self._cancel_only(progress)

    def _cancel_only(self, progress: Progress) -> None:
        """Stop a sync at shutdown (the next start reconciles what it left)."""
        if self.stopping and progress.done < progress.total:
            raise SyncCancelled()

    def _idle_save(self) -> None:
        self._needs_save = False
        if self._hooks.save is not None:
            try:
                self._hooks.save()
            except Exception as exc:
                self.record_error(f"saving the vector index failed: {exc!r}")
                log.exception("watcher: saving the vector index failed")
        if self._bulk_done and self._hooks.after_bulk is not None:
            self._bulk_done = False
            try:
                self._hooks.after_bulk()
            except Exception:
                log.exception("watcher: the after-bulk hook failed")

    def record_error(self, message: str) -> None:
        self.last_error = message
        self._on_change()

    # -- what status shows --------------------------------------------------------------

    def lag_seconds(self) -> float | None:
        """Age of the oldest change not yet synced (queued or in flight), or None."""
        times = [
            t for t in (self.queue.oldest, self._busy_since, self._reconcile_since) if t is not None
        ]
        return round(time.monotonic() - min(times), 3) if times else None

    def info(self) -> dict[str, Any]:
        return {
            "observer": self.observers.kind,
            "observer_alive": self.observer_alive(),
            "queue": len(self.queue),
            "lag_seconds": self.lag_seconds(),
            "last_error": self.last_error,
            "restarts": self.observers.restarts,
            "watch_renewals": self.observers.renewals,
            "overflows": self.queue.overflows,
            "batches": self.batches,
            "reconciling": self.reconciling,
            "let_through": self.let_through,  # batches synced during a full reconcile
            "failed_batches": self.batches_failed,  # in a row, up to now; 0 once one succeeds
            "retry_in_seconds": self.queue.retry_in() if self.batches_failed else None,
            "last_batch": self.last_batch,
            "warnings": list(self.warnings),
            "warnings_seconds_ago": [round(time.time() - t) for t in self.warned_at],
        }


__all__ = [
    "SyncCancelled",
    "WatchHooks",
    "WatchSettings",
    "Watcher",
    "is_network_fs",
    "limit_advice",
    "mount_fs_type",
]
