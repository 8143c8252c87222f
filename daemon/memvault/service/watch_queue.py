"""From file-system events to batches: vault paths, coalesced and debounced.

Pure of watchdog and threads' policy: ``PathMapper`` turns an event's absolute
path into the vault-relative posix path the engine syncs (or drops it);
``ChangeQueue`` coalesces paths per batch, bounds itself (past ``limit`` paths
they fold into their folders, each standing for everything under it — a folder
of 500 notes renamed, its 6,000 linking notes rewritten, a pull of thousands of
files: one batch of a few folders; only past ``limit`` folders, or at the vault's
top level, one full reconcile stands for them all) and says when a batch is due — after
``quiet`` seconds without a change, or ``max_wait`` after the oldest one under
a continuous stream. A full reconcile asked for while one is running waits for
it; the paths changed meanwhile are kept apart (``take(paths_only=True)``), so
a save is not held back by a reconcile in flight nor by the one queued behind
it. The clock is injected, so the tests drive time.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from memvault.vault.paths import is_note
from memvault.vault.sync_copies import original_of

log = logging.getLogger("memvault.service.watcher")

MAX_WAIT_SECONDS = 2.0
DEFAULT_LIMIT = 4096
MAX_MOVES = 1024  # renames kept for one batch; past it none (a partial chain misleads)
_UNTIDY = re.compile(r"(?:^|/)\.{1,2}(?:/|$)|//|^$|/$")  # what relpath would tidy


@dataclass(frozen=True, slots=True)
class Batch:
    """What the worker hands to sync: some paths, or ``None`` for a full reconcile."""

    paths: frozenset[str] | None
    reason: str
    oldest: float  # monotonic time of the oldest change it covers
    moves: tuple[tuple[str, str], ...] = ()  # renames the file system reported, in order


class ChangeQueue:
    """Pending vault-relative paths, coalesced, bounded, with debounce deadlines.

    Thread-safe; ``put`` and ``request_full`` only take a lock and notify, so
    the observer thread never waits on disk or on a sync.
    """

    def __init__(
        self,
        quiet_ms: int,
        max_wait: float = MAX_WAIT_SECONDS,
        limit: int = DEFAULT_LIMIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._quiet = quiet_ms / 1000  # seconds, as the clock counts
        self.max_wait = max_wait
        self.limit = limit
        self.clock = clock
        self.cond = threading.Condition()
        self._paths: dict[str, float] = {}
        self._first: float | None = None  # oldest change not yet taken
        self._last: float | None = None  # newest change (for the quiet period)
        self._full: str | None = None  # reason, when a full reconcile is wanted
        self._full_now = False  # due at once (not debounced)
        self._not_before = 0.0  # retry back-off after a failed sync
        self._swamped = False  # overflowed: paths are no longer kept until the full is taken
        self._folded = False  # past the limit: a path is queued as its folder
        self.overflows = 0  # times the paths overflowed the limit (folded, or a full reconcile)
        self._moves: list[tuple[str, str]] = []  # renames reported since the last take
        self._moves_lost = False  # past MAX_MOVES: none kept until the next take

    def put(
        self,
        paths: Iterable[str],
        since: float | None = None,
        moves: Iterable[tuple[str, str]] = (),
        earlier: bool = False,
    ) -> None:
        """Queue paths that changed now (or, for a batch put back after a failed
        sync, at ``since``: the lag keeps counting from the first change); ``moves``:
        renames the file system reported, (old, new), handed on with the batch
        (``earlier``: renames from before the ones queued, put back by a sync)."""
        now = self.clock()
        when = now if since is None else min(since, now)
        with self.cond:
            moves = list(moves)  # past MAX_MOVES none: a partial chain misleads
            if len(self._moves) + len(moves) > MAX_MOVES:
                self._moves_lost = True
            if not self._moves_lost:
                self._moves = moves + self._moves if earlier else self._moves + moves
            for path in paths:
                if not self._swamped:
                    self._add(path, when)
                self._first = when if self._first is None else min(self._first, when)
                self._last = now
            self.cond.notify_all()

    def _add(self, path: str, when: float) -> None:
        if self._folded:
            path = _folder(path) or path  # a file at the top stays itself
            if self._covered(path):
                return
        elif path in self._paths:
            return
        if len(self._paths) >= self.limit:
            self._fold()
            if not self._swamped:
                self._add(path, when)
            return
        self._paths[path] = when

    def _covered(self, path: str) -> bool:
        """Whether ``path`` or a folder above it is queued already."""
        while path:
            if path in self._paths:
                return True
            path = _folder(path)
        return False

    def _fold(self) -> None:
        """Too many paths to remember one by one: each stands as its folder from now on
        (the sync of a folder reconciles what is under it by size and mtime), a level
        further up while they are still too many; when they cannot fold further (the
        files at the top of the vault), one full reconcile."""
        if not self._folded:
            self.overflows += 1
            log.info(
                "change queue: more than %d paths changed at once; queued by folder", self.limit
            )
        self._folded = True
        while len(self._paths) >= self.limit:
            folded: dict[str, float] = {}
            for path, when in self._paths.items():
                folder = _folder(path) or path
                folded[folder] = min(when, folded.get(folder, when))
            if len(folded) == len(self._paths):  # nothing folded: too many at the top
                self._overflow()
                return
            self._paths = {}
            for folder in sorted(folded, key=lambda p: p.count("/")):  # the upper first
                if not self._covered(folder):
                    self._paths[folder] = folded[folder]

    def _overflow(self) -> None:
        # Too many folders, or a change at the top: one full reconcile covers them all.
        self.overflows += 0 if self._folded else 1
        self._paths.clear()
        self._swamped = True
        self._full = self._full or f"more than {self.limit} paths changed at once"
        log.info("change queue overflow: %s; a full reconcile follows", self._full)

    def request_full(
        self, reason: str, *, debounce: bool = False, since: float | None = None
    ) -> None:
        """Ask for a full reconcile: at once, or after the quiet period (``debounce``).
        ``since``: when the changes it stands for began (a retry keeps its lag)."""
        now = self.clock()
        with self.cond:
            self._full = self._full or reason  # the paths stay: see take(paths_only)
            if since is not None:
                self._first = since if self._first is None else min(self._first, since)
            if debounce:
                self._first = now if self._first is None else self._first
                self._last = now
            else:
                self._full_now = True
            self.cond.notify_all()

    def retry_after(self, seconds: float) -> None:
        with self.cond:
            self._not_before = self.clock() + seconds

    def retry_in(self) -> float | None:
        """Seconds until a failed sync's back-off ends (None: none waits)."""
        with self.cond:
            left = self._not_before - self.clock()
        return round(left, 1) if left > 0 else None

    def __len__(self) -> int:
        with self.cond:
            return len(self._paths)

    @property
    def oldest(self) -> float | None:
        with self.cond:
            return self._first

    def due_in(self, paths_only: bool = False) -> float | None:
        """Seconds until a batch is due (0: now), or None when nothing is pending
        (``paths_only``: a batch of paths, while a full reconcile cannot start)."""
        with self.cond:
            now = self.clock()
            return self._paths_due_in(now) if paths_only else self._due_in(now)

    def _paths_due_in(self, now: float) -> float | None:
        if not self._paths or self._last is None:
            return None
        wait = min(self._last + self._quiet, min(self._paths.values()) + self.max_wait) - now
        return max(wait, self._not_before - now, 0.0)

    def _due_in(self, now: float) -> float | None:
        if self._full is None and not self._paths:
            return None
        if self._full_now:
            wait = 0.0
        else:
            assert self._first is not None and self._last is not None
            wait = min(self._last + self._quiet, self._first + self.max_wait) - now
        return max(wait, self._not_before - now, 0.0)

    def take(self, paths_only: bool = False) -> Batch | None:
        """The due batch, removed from the queue; None when nothing is due yet. A full
        reconcile covers the paths queued with it; ``paths_only`` (one is running) leaves
        a full reconcile queued and takes the paths changed meanwhile."""
        with self.cond:
            now = self.clock()
            if paths_only:
                if self._paths_due_in(now) != 0.0:
                    return None
                reason = "changes, by folder" if self._folded else "changes"
                oldest = min(self._paths.values())
                batch = Batch(frozenset(self._paths), reason, oldest, self._take_moves())
                self._paths.clear()
                self._folded = False
                if self._full is None:
                    self._first = self._last = None
                return batch
            if self._due_in(now) != 0.0:
                return None
            oldest = self._first if self._first is not None else now
            if self._full is not None:
                batch = Batch(None, self._full, oldest, self._take_moves())
            else:
                reason = "changes, by folder" if self._folded else "changes"
                batch = Batch(frozenset(self._paths), reason, oldest, self._take_moves())
            self._paths.clear()
            self._full, self._full_now, self._swamped, self._folded = None, False, False, False
            self._first = self._last = None
            return batch

    def _take_moves(self) -> tuple[tuple[str, str], ...]:
        moves = () if self._moves_lost else tuple(self._moves)
        self._moves, self._moves_lost = [], False
        return moves

    def wait(self, timeout: float) -> None:
        with self.cond:
            self.cond.wait(timeout)

    def wake(self) -> None:
        with self.cond:
            self.cond.notify_all()


def _folder(path: str) -> str:
    """The folder a vault path is in ('' at the top)."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _twin(path: str, nfc: str) -> bool:
    """Whether another file than ``path`` (an event's, not NFC) is at ``nfc``, its NFC
    spelling (a disk that ignores the form, a Mac's, opens ``path`` by either), or
    another folder than its own at its folder's NFC spelling (ext4 holds `Décisions/`
    in both forms: a new note of the NFD one is not found by its key, and the batch
    that named it asked for a full reconcile)."""
    try:
        if os.path.lexists(nfc):
            return not (os.path.lexists(path) and os.path.samefile(path, nfc))
        here, there = os.path.dirname(path), os.path.dirname(nfc)
        return here != there and os.path.isdir(there) and not os.path.samefile(here, there)
    except OSError:
        return True  # gone meanwhile: the folder's scan says what is there


class PathMapper:
    """Absolute event paths -> vault-relative posix paths the engine can sync."""

    def __init__(self, root: Path, is_ignored: Callable[[str], bool]) -> None:
        self.root = os.path.realpath(root)
        self._prefix = self.root.rstrip(os.sep) + os.sep
        self.is_ignored = is_ignored

    def __call__(self, raw: str | bytes) -> str | None:
        """The path to sync for ``raw``; '' means "reconcile everything" (also for a sync
        tool's conflict copy, never synced itself: the scan reports it); None: nothing."""
        path = os.fsdecode(raw)
        if not path:
            return None
        if not path.startswith(self._prefix):
            return None  # outside the vault, or the vault folder itself
        if path[path.rfind(os.sep) + 1 :].startswith("."):
            return None  # a dot-name (our temp files among them): never a note (is_ignored)
        rel = path[len(self._prefix) :]
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        if _UNTIDY.search(rel):  # (an observer's paths are joined tidily: never, so far)
            rel = os.path.relpath(path, self.root).replace(os.sep, "/")
            if rel == "." or rel.startswith("../"):
                return None
        nfc = unicodedata.normalize("NFC", rel)
        if is_note(nfc) and original_of(nfc) and "/." not in f"/{nfc}":
            return ""  # a sync tool's conflict copy came or went: a full scan lists it
        if self.is_ignored(nfc):
            return None
        if nfc != rel and _twin(path, os.path.join(self.root, nfc)):
            # Not NFC on disk, with a file of its NFC name beside it (or its folder's
            # NFC name another folder): one name in two forms, which a scan of the
            # folder sorts out (``name_forms``, both folders walked; at the top, all)
            return nfc.rsplit("/", 1)[0] if "/" in nfc else ""
        # A name a Mac wrote (NFD) is synced by its NFC name, as any other: the engine
        # finds the disk's spelling (``VaultFS.stat``). Its folder was scanned instead,
        # and at the top of the vault everything: each save of a Mac's `Café.md` there
        # re-scanned the whole vault.
        return nfc
