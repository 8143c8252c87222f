"""Watch the vault: watchdog events -> a bounded queue -> debounced batches -> sync.

    observer thread (watchdog)        worker thread (ours)
    handler.dispatch: map + enqueue   take a due batch -> sync(paths) -> repeat
                                      timers: periodic reconcile, idle save, supervisor
                                      a full reconcile -> the reconcile thread (ours)

The handler does no I/O and never syncs: it turns an absolute path into a
vault-relative posix path (NFC), drops what the vault ignores, and puts it
in ``ChangeQueue``. The worker flushes a batch when the queue has been quiet
for ``debounce_ms`` or, under a continuous stream, when its oldest change is
``max_wait`` old (so a busy vault still converges). More pending paths than
``limit`` collapse into one "full reconcile" request instead of growing the
queue without bound. Sync compares hashes, so the events of the daemon's own
writes cost one cheap no-op batch and never a loop.

A full reconcile (at start, after a lost observer, on the timer) and a long
batch (more than ``BIG_BATCH`` paths, as a `git pull` makes, or a folder moved
in: its notes are all synced) run in a thread of their own,
one at a time, while the worker goes on taking the batches of paths that come
meanwhile: the engine's reconcile steps aside for them
between its batches, so a person's save waits for one batch of the reconcile,
not for all of it (engine.turns). Only the reconcile reports progress.

Native events need inotify (or FSEvents / ReadDirectoryChangesW). When the
inotify limits are exhausted, or the vault is on a network or FUSE mount
whose changes inotify does not see, the watcher polls instead and says so
once. An exception in the handler or in sync is logged and kept in
``last_error``; neither kills the watcher. A dead observer is restarted and
followed by a full reconcile, since events were lost while it was down.
"""

from __future__ import annotations

import errno
import logging
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from memvault.daemon.mounts import is_network_fs, limit_advice, mount_fs_type
from memvault.daemon.watch_queue import (
    DEFAULT_LIMIT,
    MAX_WAIT_SECONDS,
    Batch,
    ChangeQueue,
    PathMapper,
)

log = logging.getLogger("memvault.daemon.watcher")

# Only what can change a note; opens and no-write closes (our own reads) are not asked for.
EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    DirCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    DirDeletedEvent,
    FileMovedEvent,
    DirMovedEvent,
    FileClosedEvent,
]
POLL_SECONDS = 2.0
BIG_BATCH = 200  # more paths than this sync beside the small batches (one engine batch)
SUPERVISE_SECONDS = 2.0


class SyncCancelled(Exception):
    """Raised from the progress callback to end a long sync early at shutdown."""


class _Handler(FileSystemEventHandler):
    """Runs on watchdog's thread: map and enqueue, nothing else, never raise."""

    def __init__(self, owner: Watcher) -> None:
        super().__init__()
        self.owner = owner

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            if event.is_directory and event.event_type == "modified":
                return  # a folder's listing changed: the entry's own event says what
            raws = [event.src_path]
            if event.dest_path:
                raws.append(event.dest_path)  # both sides of a move
            if event.is_directory and event.event_type in ("created", "moved"):
                self.owner.folders_arrived()
            paths = [p for p in (self.owner.mapper(r) for r in raws) if p is not None]
            if "" in paths:
                self.owner.queue.request_full("a change the watcher cannot place", debounce=True)
            elif paths:
                self.owner.queue.put(paths)
        except Exception as exc:  # the observer thread must survive anything
            self.owner.record_error(f"event handler: {exc!r}")
            log.exception("watcher: failed to handle %r", event)


class _OverflowHook(logging.Handler):
    """watchdog reports a kernel queue overflow only in its log: turn it into a reconcile."""

    def __init__(self, queue: ChangeQueue) -> None:
        super().__init__(logging.WARNING)
        self.queue = queue

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.queue.request_full("inotify event queue overflowed", debounce=True)


def _native_observer() -> BaseObserver:
    from watchdog.observers import Observer

    return Observer()


class Watcher:
    """Keeps ``sync`` fed with what changed under ``root``; owns its threads.

    ``sync(paths, progress)`` gets a list of vault-relative paths, or None for
    a full reconcile. ``save`` (optional) is called once the vault has been
    quiet for ``idle_save_seconds`` after a sync, so a burst's vectors reach
    disk even when no further event comes. ``after_first`` runs once, after the
    first successful batch, outside the lag accounting (the daemon loads the model).
    ``on_change`` (optional, cheap, must not raise) is told when a batch begins and
    ends and when an error is recorded: what `info()` shows may have changed.
    """

    def __init__(
        self,
        root: Path,
        sync: Callable[[list[str] | None, Callable[[Any], None]], Any],
        *,
        is_ignored: Callable[[str], bool],
        debounce_ms: int = 300,
        observer: str = "auto",
        reconcile_seconds: float = 300.0,
        save: Callable[[], None] | None = None,
        idle_save_seconds: float = 5.0,
        limit: int = DEFAULT_LIMIT,
        max_wait: float = MAX_WAIT_SECONDS,
        on_progress: Callable[[Any], None] | None = None,
        after_first: Callable[[], None] | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        if observer not in ("auto", "native", "polling"):
            raise ValueError(f"observer must be auto, native or polling, not {observer!r}")
        self.root = Path(root)
        self._sync = sync
        self._save = save
        self._on_progress = on_progress
        self._after_first = after_first  # run once after the first good batch (a warm-up)
        self._on_change = on_change or (lambda: None)
        self.mapper = PathMapper(self.root, is_ignored)
        self.queue = ChangeQueue(debounce_ms / 1000, max_wait, limit)
        self.setting = observer
        self.reconcile_seconds = reconcile_seconds
        self.idle_save_seconds = idle_save_seconds
        self.observer_kind = "none"
        self.restarts = 0
        self.batches = 0
        self.batches_failed = 0  # consecutive, for the retry back-off
        self.last_error: str | None = None
        self.last_batch: dict[str, Any] | None = None
        self._observer: BaseObserver | None = None
        self._handler = _Handler(self)
        self._hook = _OverflowHook(self.queue)
        self._warned = False
        self._retry_observer_at = 0.0
        self._stopping = threading.Event()
        self._folders_arrived = threading.Event()  # watches to renew after this batch
        self.renewals = 0
        self._busy_since: float | None = None  # a batch of paths in flight, since
        self._reconcile_since: float | None = None  # a full reconcile in flight, since
        self._reconciler: threading.Thread | None = None
        self.let_through = 0  # batches synced while a full reconcile was in flight
        self._needs_save = False
        self._last_sync = time.monotonic()
        self._worker: threading.Thread | None = None
        self._lock = threading.Lock()

    # -- life cycle ---------------------------------------------------------------------

    def start(self, initial_reconcile: bool = True) -> None:
        """Start observing (events queue up from now on), then the worker."""
        logging.getLogger("watchdog.observers.inotify_c").addHandler(self._hook)
        try:
            self._start_observer()
        except BaseException:
            logging.getLogger("watchdog.observers.inotify_c").removeHandler(self._hook)
            raise
        if initial_reconcile:
            self.queue.request_full("start-up reconcile")
        self._worker = threading.Thread(target=self._run, name="memvault-watcher", daemon=True)
        self._worker.start()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop observing, let the batch in flight finish (a long one is cancelled
        between notes), join. False if the worker is still busy after ``timeout``."""
        self._stopping.set()
        self._stop_observer()
        self.queue.wake()
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in (self._worker, self._reconciler):
            if thread is not None:
                thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
                if thread.is_alive():
                    log.warning("watcher: the batch in flight did not finish within %s s", timeout)
                    return False
        self._worker = self._reconciler = None
        self._stop_observer()  # one the supervisor may have restarted meanwhile
        logging.getLogger("watchdog.observers.inotify_c").removeHandler(self._hook)
        return True

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # -- observers ----------------------------------------------------------------------

    def _start_observer(self) -> None:
        kind = self.setting
        if kind == "auto":
            fs = mount_fs_type(self.root)
            if is_network_fs(fs):
                self._warn(
                    f"the vault is on a {fs} filesystem, where native file events miss "
                    f"changes made elsewhere: polling every {POLL_SECONDS:g} s instead"
                )
                kind = "polling"
        if kind != "polling":
            try:
                self._observer = self._launch(_native_observer(), "native")
                return
            except OSError as exc:
                if self.setting == "native" or exc.errno not in (errno.ENOSPC, errno.EMFILE):
                    raise
                self._warn(
                    f"native file events are unavailable: {limit_advice(exc)}; "
                    f"polling every {POLL_SECONDS:g} s instead"
                )
        self._observer = self._launch(PollingObserver(timeout=POLL_SECONDS), "polling")

    def _launch(self, observer: BaseObserver, kind: str) -> BaseObserver:
        try:
            observer.schedule(
                self._handler, str(self.mapper.root), recursive=True, event_filter=EVENT_FILTER
            )
            observer.start()
        except BaseException:
            _halt(observer)
            raise
        name = type(observer).__name__.removesuffix("Observer").lower()
        self.observer_kind = name if kind == "native" else "polling"
        for i, thread in enumerate([observer, *observer.emitters]):
            thread.name = f"memvault-observer-{i}"
        inner = getattr(observer, "_inotify_fd", None)
        if isinstance(inner, threading.Thread):
            inner.name = "memvault-inotify"
        return observer

    def _stop_observer(self) -> None:
        with self._lock:
            observer, self._observer = self._observer, None
        if observer is not None:
            _halt(observer)

    def _warn(self, message: str) -> None:
        if not self._warned:  # one clear warning, not one per restart
            log.warning("watcher: %s", message)
            self._warned = True

    def observer_alive(self) -> bool:
        observer = self._observer
        return (
            observer is not None
            and observer.is_alive()
            and all(e.is_alive() for e in observer.emitters)
        )

    def folders_arrived(self) -> None:
        """A folder was created or moved in (observer thread: only a flag)."""
        self._folders_arrived.set()

    def _renew_watches(self) -> None:
        """Watch every folder afresh, then reconcile what the old watches may have missed.

        inotify watches a tree one folder at a time, and watchdog adds the watches of
        a folder that arrives by walking it while it may still be changing: a
        subfolder renamed during the walk (and its name reused) leaves the renamed
        folder unwatched or watched under another's name, and every later change in
        it is lost or misnamed. Nothing in the events tells; so after any batch in
        which folders were created or moved in, the native observer is started again
        (a fresh walk of the tree as it is now) and a full reconcile (size and mtime,
        cheap) covers whatever happened before the new watches were in place.
        """
        self._folders_arrived.clear()
        if self.observer_kind in ("polling", "none") or self.stopping:
            return  # polling compares snapshots: nothing to renew
        self.renewals += 1
        with self._lock:
            old, self._observer = self._observer, None
        try:
            self._start_observer()  # the new watches first: no moment without any
        except Exception as exc:
            with self._lock:
                self._observer = old
            self.record_error(f"cannot renew the file watches: {exc!r}")
            log.exception("watcher: cannot renew the file watches")
            return
        if old is not None:
            _halt(old)  # meanwhile both saw events: a path synced twice is a no-op
        self.queue.request_full("folders were created or moved: watches renewed")

    def _supervise(self) -> None:
        if self.stopping or self.observer_alive() or time.monotonic() < self._retry_observer_at:
            return
        self.restarts += 1
        self.record_error("the file observer stopped; restarted it")
        log.warning("watcher: the file observer died; restarting it and reconciling")
        self._stop_observer()
        try:
            self._start_observer()
        except Exception as exc:  # e.g. the vault folder is gone: try again later, quietly
            self.record_error(f"cannot restart the file observer: {exc!r}")
            log.exception("watcher: cannot restart the file observer; retrying in 30 s")
            self._retry_observer_at = time.monotonic() + 30
            return
        self.queue.request_full("the file observer was restarted")

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
            if self._needs_save and now - self._last_sync >= self.idle_save_seconds:
                self._idle_save()
            due = self.queue.due_in(paths_only=reconciling)
            waits = [next_check - now, next_reconcile - now, math.inf if due is None else due]
            if self._needs_save:
                waits.append(self._last_sync + self.idle_save_seconds - now)
            self.queue.wait(max(0.0, min(waits)))

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
            report = self._sync(paths, self._cancel_only if let_through else self._progress)
        except SyncCancelled:
            log.info("watcher: sync cancelled at shutdown (the next start reconciles)")
            return
        except Exception as exc:
            log.exception(
                "watcher: sync of %s failed; retrying",
                "everything" if paths is None else f"{len(paths)} paths",
            )
            # put back with the time of its first change: the lag stays true
            if paths is None:
                self.queue.request_full(batch.reason, since=batch.oldest)
            else:
                self.queue.put(paths, since=batch.oldest)
            self.queue.retry_after(min(60.0, 2.0 ** min(self.batches_failed, 6)))
            self.batches_failed += 1
            self.record_error(f"sync failed: {exc!r}")  # tells on_change, with the count
            return
        finally:
            if own_thread:
                self._reconcile_since = None
            else:
                self._busy_since = None
            self._last_sync = time.monotonic()
        self.batches_failed = 0
        self.batches += 1
        self.let_through += let_through
        self._needs_save = self._save is not None
        if self._folders_arrived.is_set() and threading.current_thread() is self._worker:
            self._renew_watches()  # the worker's alone: it owns the observer
        if paths is not None and getattr(report, "vanished", None):
            # An event named a note that is neither there nor indexed. Usually a file
            # created and gone within one batch; but a folder renamed and its old name
            # reused before the observer caught up makes watchdog report later events
            # under the old path. A full reconcile (size+mtime, cheap) settles both.
            self.queue.request_full("events named notes that are not there", debounce=True)
        changed = bool(getattr(report, "changed", True))
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
                report.summary() if hasattr(report, "summary") else report,
            )
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

    def _progress(self, progress: Any) -> None:
        if self._on_progress is not None:
            self._on_progress(progress)
        self._cancel_only(progress)

    def _cancel_only(self, progress: Any) -> None:
        """Stop a sync at shutdown (the next start reconciles what it left)."""
        if self.stopping and getattr(progress, "done", 0) < getattr(progress, "total", 0):
            raise SyncCancelled()

    def _idle_save(self) -> None:
        self._needs_save = False
        if self._save is None:
            return
        try:
            self._save()
        except Exception as exc:
            self.record_error(f"saving the vector index failed: {exc!r}")
            log.exception("watcher: saving the vector index failed")

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
            "observer": self.observer_kind,
            "observer_alive": self.observer_alive(),
            "queue": len(self.queue),
            "lag_seconds": self.lag_seconds(),
            "last_error": self.last_error,
            "restarts": self.restarts,
            "watch_renewals": self.renewals,
            "overflows": self.queue.overflows,
            "batches": self.batches,
            "reconciling": self.reconciling,
            "let_through": self.let_through,  # batches synced during a full reconcile
            "failed_batches": self.batches_failed,  # in a row, up to now; 0 once one succeeds
            "last_batch": self.last_batch,
        }


def _halt(observer: BaseObserver) -> None:
    """Stop an observer and its emitters, started or not, without raising."""
    try:
        observer.stop()
    except Exception:  # a half-started observer may fail to stop cleanly
        log.debug("watcher: stopping the observer failed", exc_info=True)
    if observer.is_alive():
        observer.join(5)
    for emitter in list(observer.emitters):
        if emitter.is_alive():
            emitter.join(5)
    inner = getattr(observer, "_inotify_fd", None)
    if isinstance(inner, threading.Thread) and inner.is_alive():
        inner.stop()  # type: ignore[attr-defined]
        inner.join(5)


__all__ = ["SyncCancelled", "Watcher", "is_network_fs", "limit_advice", "mount_fs_type"]
