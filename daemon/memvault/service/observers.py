"""The file observers: which one runs, kept alive, renewed; events into the queue.

``Observers`` owns watchdog's side of the watcher: it picks the observer
(native events, or polling on a network or FUSE mount and when inotify's
limits are exhausted, said once), installs the handler, restarts an observer
that died and renews the watches after folders arrived where notes are (not
in a dot-folder: ``.git/objects/0a`` at a commit, ``.trash/x``), each followed by a
full reconcile request (events were lost, or may have been). It schedules no
batch and syncs nothing: what it learns goes into the ``ChangeQueue``, and the
watcher's worker (``watcher.Watcher``) calls ``supervise`` and ``renew`` from
its own thread, which alone starts and stops observers.

The handler runs on watchdog's thread: it turns an absolute path into a
vault-relative posix path (NFC, ``watch_queue.PathMapper``), drops what the vault
ignores, and queues it. It drops, too, the events of memvault's own swaps: a move
between a note and one of memvault's temp files (no one else makes those names) when
the note is the very file memvault put there (``is_ours``: one ``stat``, its inode,
size and mtime as written). A relink of 10,000 notes queued 10,000 paths of its own,
past the queue's limit, folded into folders whose sync re-scanned the vault to find
nothing. A person's save is never one of those moves (an edit in place is a modify
event, an editor's atomic save a move from its own temp name: both queued), and a
person's version memvault swapped back (``swap.put_back``) is another inode. It does
no other I/O and never raises.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

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

from memvault.service.mounts import is_network_fs, limit_advice, mount_fs_type
from memvault.service.watch_queue import ChangeQueue
from memvault.vault.swap import TEMP_MARK

log = logging.getLogger("memvault.service.watcher")

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
RETRY_SECONDS = 30.0  # after a restart that failed (the vault folder gone, say)
KINDS = ("auto", "native", "polling")


class _Handler(FileSystemEventHandler):
    """Runs on watchdog's thread: map and enqueue, nothing else, never raise."""

    def __init__(self, owner: Observers) -> None:
        super().__init__()
        self.owner = owner

    def dispatch(self, event: FileSystemEvent) -> None:
        owner = self.owner
        try:
            if owner.on_raw is not None and owner.on_raw(event.src_path):
                return  # its owner's own mark (a door's barrier: service/door_watch.py)
            if event.is_directory and event.event_type == "modified":
                return  # a folder's listing changed: the entry's own event says what
            raws = [event.src_path]
            if event.dest_path:
                raws.append(event.dest_path)  # both sides of a move
            mapped = [owner.mapper(r) for r in raws]
            # a folder came where notes are (not .git/objects/0a, .trash/x, templates/x):
            # the worker renews the watches after its batch
            arrived = event.event_type in ("created", "moved") and mapped[-1] is not None
            if event.is_directory and arrived:
                owner.folders_arrived.set()
            paths = [p for p in mapped if p is not None]
            if _own_swap(event, raws, paths) and owner.is_ours(paths[0]):
                return  # memvault's own swap, and the note is still what it wrote
            if "" in paths:
                owner.queue.request_full("a change the watcher cannot place", debounce=True)
            elif paths:
                # a rename inside the vault: the kernel's word for it goes with the paths
                # (a note renamed and saved at once is still a rename: reported_moves)
                renamed = len(mapped) == 2 and None not in mapped and mapped[0] != mapped[1]
                owner.queue.put(paths, moves=[(paths[0], paths[1])] if renamed else ())
        except Exception as exc:  # the observer thread must survive anything
            owner.record_error(f"event handler: {exc!r}")
            log.exception("watcher: failed to handle %r", event)


def _own_swap(event: FileSystemEvent, raws: list[str | bytes], paths: list[str]) -> bool:
    """Whether the event is a move between one note and one of memvault's temp files
    (its swap's exchange: ``swap.temp_name`` is a name no one else makes)."""
    return (
        len(raws) == 2
        and len(paths) == 1
        and not event.is_directory
        and _temp(raws[0]) != _temp(raws[1])
    )


def _temp(raw: str | bytes) -> bool:
    """Whether an event's path names one of memvault's temp files (``swap.temp_name``)."""
    name = os.path.basename(os.fsdecode(raw))
    return name.startswith(".") and TEMP_MARK in name


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


class Observers:
    """The observer of one vault folder: chosen, started, supervised, renewed, stopped."""

    def __init__(
        self,
        root: str,
        mapper: Callable[[str | bytes], str | None],
        queue: ChangeQueue,
        setting: str,
        record_error: Callable[[str], None],
        is_ours: Callable[[str], bool] = lambda rel: False,
    ) -> None:
        if setting not in KINDS:
            raise ValueError(f"observer must be auto, native or polling, not {setting!r}")
        self.mapper = mapper
        self.is_ours = is_ours  # a note path: still exactly the file memvault wrote there
        # an event's raw path its owner takes itself, before any mapping (True: taken, not
        # queued): a kept vault's barrier files (service/door_watch.py); cheap, never raises
        self.on_raw: Callable[[str | bytes], bool] | None = None
        self.queue = queue
        self.setting = setting
        self.record_error = record_error
        self.root = Path(root)  # the real path (symlinks resolved): what events name
        self.kind = "none"  # native (inotify, fsevents...) | polling | none
        self.restarts = 0
        self.renewals = 0
        self.folders_arrived = threading.Event()  # set on watchdog's thread
        self.observer: BaseObserver | None = None
        self._handler = _Handler(self)
        self._hook = _OverflowHook(queue)
        self._warned = False
        self._retry_at = 0.0
        self._lock = threading.Lock()

    def start(self) -> None:
        logging.getLogger("watchdog.observers.inotify_c").addHandler(self._hook)
        try:
            self._start()
        except BaseException:
            logging.getLogger("watchdog.observers.inotify_c").removeHandler(self._hook)
            raise

    def stop(self) -> None:
        with self._lock:
            observer, self.observer = self.observer, None
        if observer is not None:
            _halt(observer)

    def detach(self) -> None:
        """Stopped for good: the overflow hook leaves watchdog's log too."""
        self.stop()
        logging.getLogger("watchdog.observers.inotify_c").removeHandler(self._hook)

    def alive(self) -> bool:
        observer = self.observer
        return (
            observer is not None
            and observer.is_alive()
            and all(e.is_alive() for e in observer.emitters)
        )

    def _start(self) -> None:
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
                self.observer = self._launch(_native_observer(), "native")
                return
            except OSError as exc:
                if self.setting == "native" or exc.errno not in (errno.ENOSPC, errno.EMFILE):
                    raise
                self._warn(
                    f"native file events are unavailable: {limit_advice(exc)}; "
                    f"polling every {POLL_SECONDS:g} s instead"
                )
        self.observer = self._launch(PollingObserver(timeout=POLL_SECONDS), "polling")

    def _launch(self, observer: BaseObserver, kind: str) -> BaseObserver:
        try:
            observer.schedule(
                self._handler, str(self.root), recursive=True, event_filter=EVENT_FILTER
            )
            observer.start()
        except BaseException:
            _halt(observer)
            raise
        name = type(observer).__name__.removesuffix("Observer").lower()
        self.kind = name if kind == "native" else "polling"
        for i, thread in enumerate([observer, *observer.emitters]):
            thread.name = f"memvault-observer-{i}"
        inner = getattr(observer, "_inotify_fd", None)
        if isinstance(inner, threading.Thread):
            inner.name = "memvault-inotify"
        return observer

    def _warn(self, message: str) -> None:
        if not self._warned:  # one clear warning, not one per restart
            log.warning("watcher: %s", message)
            self._warned = True

    def renew(self) -> None:
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
        self.folders_arrived.clear()
        if self.kind in ("polling", "none"):
            return  # polling compares snapshots: nothing to renew
        self.renewals += 1
        with self._lock:
            old, self.observer = self.observer, None
        try:
            self._start()  # the new watches first: no moment without any
        except Exception as exc:
            with self._lock:
                self.observer = old
            self.record_error(f"cannot renew the file watches: {exc!r}")
            log.exception("watcher: cannot renew the file watches")
            return
        if old is not None:
            _halt(old)  # meanwhile both saw events: a path synced twice is a no-op
        self.queue.request_full("folders were created or moved: watches renewed")

    def supervise(self) -> None:
        """Restart an observer that died (and reconcile: events were lost meanwhile)."""
        if self.alive() or time.monotonic() < self._retry_at:
            return
        self.restarts += 1
        self.record_error("the file observer stopped; restarted it")
        log.warning("watcher: the file observer died; restarting it and reconciling")
        self.stop()
        try:
            self._start()
        except Exception as exc:  # e.g. the vault folder is gone: try again later, quietly
            self.record_error(f"cannot restart the file observer: {exc!r}")
            log.exception("watcher: cannot restart the file observer; retrying in 30 s")
            self._retry_at = time.monotonic() + RETRY_SECONDS
            return
        self.queue.request_full("the file observer was restarted")


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


__all__ = ["EVENT_FILTER", "POLL_SECONDS", "Observers"]
