"""What changed under a vault kept open between an adapter's calls (memvault/door.py).

A kept vault answers each ``"read"`` or ``"query"`` (and ``"peek"``, while watched: door.py)
as a vault opened for the call would:
its structure synced first. Without a watcher that is a full sync (every note stat'ed,
the manifest compared: ~1 s of CPU a call at 100,000 notes). ``DoorWatch`` holds the
daemon's observer (``observers.Observers``: native events, its handler, its queue's
folding and overflow) on the vault while it is kept, so a call syncs only the paths seen
changed since the last one, with the renames as the file system reported them, as the
daemon's watcher passes them.

A call must see every change made before it began, and a kernel event may not yet have
reached the observer's thread when the call comes 1 ms after a save. So each call first
puts a barrier through the event stream (watchman's "cookie"): it creates a file of a
name of its own in ``.memvault/`` (watched with the rest) and waits until the observer's
thread has handled that file's event. inotify gives one instance's events in the order
they happened and watchdog hands them on in that order, so every change before the
cookie has been queued by then. A cookie left by a process killed in its barrier is
removed as a watcher starts (``_sweep``: its pid no longer alive).

It cannot vouch, and the call syncs everything as before (``changes`` returns None),
when: no full sync has run since the observer started (the first call after the vault
was opened here, but where door.py started the observer before the open's sync) or for
``daemon.reconcile_seconds`` (the daemon's periodic reconcile: an event lost whatever
the cause is found within it), the observer could not start
(inotify's limits, no native events: a network mount, where it is not started; a
``.memvault/`` that is a symlink out of the watched tree, where no cookie's event would
come), died, or the cookie could not be made or did not come back within
``BARRIER_SECONDS`` (then the watcher is stopped: each call after syncs everything, no
longer waiting for a barrier); when the queue overflowed (past
``watch_queue.DEFAULT_LIMIT`` paths that do not fold into folders, or the kernel's own
queue: watchdog's overflow warning) or folders arrived (the daemon's rule: watches
renewed, then a full sync covers what the old ones may have missed; here the old let go
first, and watches that cannot start again leave no watcher: ``_watch_afresh``).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import threading
import time
from collections.abc import Sequence

from memvault.api import Vault
from memvault.core.results import SyncReport
from memvault.service.mounts import is_network_fs, mount_fs_type
from memvault.service.observers import Observers
from memvault.service.watch_queue import DEFAULT_LIMIT, ChangeQueue, PathMapper

log = logging.getLogger("memvault.service.watcher")

BARRIER_SECONDS = 2.0  # a cookie's event later than this: the call syncs everything
COOKIE = "door-cookie-"  # .memvault/door-cookie-<pid>-<n>: a barrier file's name
_COUNT = itertools.count()

Changes = tuple[list[str], Sequence[tuple[str, str]]]


class DoorWatch:
    """A native observer on a kept vault's folder and the changes it queued (module doc).
    ``start`` may fail quietly (then every call syncs everything); ``stop`` lets its
    threads and inotify descriptor go."""

    def __init__(self, vault: Vault, limit: int = DEFAULT_LIMIT) -> None:
        self.root = vault.root
        self.state_dir = vault.config.state_dir
        # quiet 0, max_wait 0: whatever is queued is due at the next call
        self.queue = ChangeQueue(0, 0.0, limit)
        mapper = PathMapper(self.root, vault.is_ignored)
        self.observers = Observers(
            mapper.root, mapper, self.queue, "native", self._error, vault.is_ours
        )
        self.observers.on_raw = self._raw
        state = os.path.realpath(self.state_dir)
        self._prefix = os.path.join(state, COOKIE)
        self._cookies_seen = os.path.dirname(state) == mapper.root  # (in the watched tree)
        self._wanted = ""  # the cookie the call waits for
        self._arrived = threading.Event()
        self.vouched = False  # a full sync began after the observer started
        # the daemon's periodic reconcile, for an event lost whatever the cause: a kept
        # vault in constant use would otherwise never look over every note again
        self.reconcile_seconds = float(vault.config.daemon.reconcile_seconds)
        self._full_at = 0.0  # monotonic: when the last full sync began
        self.started = False
        self.synced = {"paths": 0, "everything": 0}  # the calls' syncs, each kind

    def start(self) -> bool:
        """Start observing; False (said in the debug log) when it cannot."""
        if is_network_fs(mount_fs_type(self.root)):
            return False  # native events miss other machines' changes there
        if not self._cookies_seen:
            # .memvault/ a symlink to elsewhere: not in the watched tree (watchdog does not
            # follow symlinks), so no cookie's event would ever come: each call 2 s late
            log.debug("door: %s's .memvault/ is not in its folder: no watcher", self.root)
            return False
        _sweep(os.path.dirname(self._prefix))  # (before the observer: no events of it)
        try:
            self.observers.start()
        except Exception as exc:  # (a thread that cannot start: RuntimeError) never the call's
            limits = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EMFILE)
            why = "inotify's limits" if limits else repr(exc)
            log.debug("door: no watcher on %s (%s): each call syncs everything", self.root, why)
            self.observers.detach()
            return False
        self.started = True
        return True

    def stop(self) -> None:
        if self.started:
            self.observers.detach()
            self.started = False

    def forget_in_child(self) -> None:
        """In a forked child: close this process's copies of the parent's inotify
        descriptors (watchdog opens them without close-on-exec), which would keep the
        kernel's watches and queue alive as long as the child lives; the parent's observer
        (its threads are not in the child) is not stopped."""
        inner = getattr(self.observers.observer, "_inotify_fd", None)
        for name in ("_inotify_fd", "_kill_r", "_kill_w"):
            fd = getattr(inner, name, None)
            if isinstance(fd, int):
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.started = False

    def _error(self, message: str) -> None:
        """What the observer says went wrong (each call syncs everything meanwhile)."""
        log.debug("door: %s: %s", self.root, message)

    def _raw(self, raw: str | bytes) -> bool:
        path = os.fsdecode(raw)
        if not path.startswith(self._prefix):
            return False
        if path == self._wanted:
            self._arrived.set()
        return True

    def changes(self) -> Changes | None:
        """The vault paths changed since the last call and the renames among them, or
        None when this watch cannot vouch for them (the module doc): sync everything,
        after ``full_sync_begins``."""
        if not (self.started and self.vouched and self.observers.alive()):
            return None
        if time.monotonic() - self._full_at >= self.reconcile_seconds:
            return None
        # the barrier first: a folder's arrival is known once its event has been handled
        if not self._barrier():
            # the cookie unwritable, or its event late: whatever the cause, it would be
            # again, each call waiting BARRIER_SECONDS for nothing; watched no more while
            # the vault is kept (each call syncs everything, as with no watcher)
            log.debug("door: no barrier through %s's events: its watcher stopped", self.root)
            self.stop()
            return None
        if self.observers.folders_arrived.is_set():
            return None
        batch = self.queue.take()
        if batch is None:
            self.synced["paths"] += 1
            return [], ()
        if batch.paths is None:  # overflowed (or watchdog's overflow)
            return None
        self.synced["paths"] += 1
        return sorted(batch.paths), batch.moves

    def synced_paths(self, report: SyncReport | None) -> None:
        """What a sync of the paths ``changes`` gave left for the next call, as the
        daemon's watcher reads its batch's report: a note renamed and moved on before
        the sync is followed next time, and a path named that is neither there nor
        indexed (a folder renamed and its old name reused before the observer caught
        up: later events named under the old path) makes the next call sync everything."""
        if report is None:
            return
        if report.moved_on:
            self.queue.put([old for old, _ in report.moved_on], moves=report.moved_on, earlier=True)
        if report.vanished:
            self.vouched = False

    def full_sync_begins(self) -> None:
        """A full sync of the structure begins now: what was queued before is covered by
        it (and what comes from now on is queued for the next call)."""
        self.synced["everything"] += 1
        self._full_at = time.monotonic()
        if not self.started:
            return
        if not self.observers.alive():
            self.observers.supervise()  # a dead observer restarted (or tried again later)
        elif self.observers.folders_arrived.is_set():
            self._watch_afresh()
        self.queue.take()  # (what comes after: queued for the next call, synced twice at worst)
        self.vouched = self.observers.alive()

    def _watch_afresh(self) -> None:
        """Folders arrived: the tree's watches afresh (watchdog may have left one
        unwatched: a folder renamed while it was walked, or inotify's limit reached as it
        came, said only in watchdog's log). Unlike the daemon's ``Observers.renew`` (the
        new watches first, the old kept when they cannot start) the old are let go first:
        the full sync that follows covers the moment without any, a vault near inotify's
        limit needs one set of watches, not two, and a set with a hole is never kept (a
        note saved later in the unwatched folder went unseen by every kept call). Watches
        that cannot start: no watcher (each call syncs everything)."""
        self.observers.folders_arrived.clear()
        self.observers.stop()
        try:
            self.observers.start()
        except Exception as exc:
            log.debug("door: %s watched no more (%s): each call syncs everything", self.root, exc)
            self.stop()

    def _barrier(self) -> bool:
        """Whether the observer has handled every event of what happened before now."""
        name = f"{self._prefix}{os.getpid()}-{next(_COUNT)}"
        self._arrived.clear()
        self._wanted = name
        try:
            # not O_EXCL: a cookie of this name left by a process killed in its barrier
            # (its pid reused: a container's server has the same pid each run) is
            # reused, its close an event as well, and removed below
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError:
            return False
        try:
            os.close(fd)
            return self._arrived.wait(BARRIER_SECONDS)
        finally:
            self._wanted = ""
            with contextlib.suppress(OSError):
                os.unlink(name)


def _sweep(state: str) -> None:
    """Remove the cookies in ``state`` of processes no longer alive (a server killed in
    its barrier leaves its own: one more file each such kill). A living process's is
    kept, and any name that is no cookie of this form."""
    try:
        names = os.listdir(state)
    except OSError:
        return
    for name in names:
        pid, _, n = name[len(COOKIE) :].partition("-")
        if not (name.startswith(COOKIE) and pid.isdigit() and n.isdigit()):
            continue
        try:
            os.kill(int(pid), 0)
            continue  # alive (or another user's: PermissionError below)
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, ValueError):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(state, name))


__all__ = ["BARRIER_SECONDS", "DoorWatch"]
