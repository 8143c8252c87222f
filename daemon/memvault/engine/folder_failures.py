"""The folder notes memvault could not write for a reason of the disk's, not a person's
(``Linker._update_folder_notes``): the disk full, EACCES on the file or its folder (a
person's ``chattr +i``, another user's folder), EIO, a folder where the note goes.

A person's concurrent edit, git's conflict markers, a file that is not text are the
person's: their next save changes the file, which makes its folder note due again. A
failure of the disk's changes nothing memvault looks at, so its folder was dropped from
the due list and the folder note stayed stale for good once the cause was fixed (review
55), and the disk full or a folder in its place failed the whole sync. Each failed
folder stays due and is retried at the next update: meta ``memory_synced`` is left
cleared, so the next sync updates even when no note changed (a CLI read's, the
daemon's catch-up, which backs off from ``RETRY_FIRST`` to ``RETRY_MOST``), and meta
``folder_notes`` is not saved, so the next process takes every folder note as due. It
is a problem of kind ``memory`` in ``status`` until a write of it succeeds.
"""

from __future__ import annotations

import logging
import time

from memvault.errors import NoteExists

log = logging.getLogger("memvault")

# the daemon's catch-up retries a failed folder note 2 s after it failed, then twice as
# long after each failure, up to a minute: a cause fixed at once (room made, a chmod) is
# caught up soon, and a note a person froze (chattr +i) or a disk left full is not
# rendered again every 2 s tick
RETRY_FIRST = 2.0
RETRY_MOST = 60.0


class FolderFailures:
    """The folder notes whose last write failed: folder -> (path, why)."""

    def __init__(self) -> None:
        self._failed: dict[str, tuple[str, str]] = {}
        self._said: dict[str, tuple[str, str]] = {}  # what the log said of each, once
        self._at = 0.0  # time.monotonic() of the last failure
        self._delay = 0.0  # how long the daemon's catch-up waits after it (0: none failed)

    def failed(self, folder: str, path: str, exc: OSError | NoteExists) -> None:
        """``path``, ``folder``'s note, could not be written: said once a reason.
        ``NoteExists``: a folder (or a file that is no note) is where it goes."""
        cause = getattr(exc, "strerror", None) or "a folder or another file is where it goes"
        why = f"left as it was, not brought up to date: {cause}"
        if self._said.get(folder) != (path, why):
            log.warning("%s %s; retried at the next sync", path, why)
        self._said[folder] = (path, why)
        self._delay = min(self._delay * 2, RETRY_MOST) if self._delay else RETRY_FIRST
        self._failed[folder] = (path, why)
        self._at = time.monotonic()

    def done(self, folder: str) -> None:
        """``folder``'s note is looked at again (an update: ``failed`` again, if it fails
        again; skipped, a person's note now or mid-reconcile, it is no failure now)."""
        self._failed.pop(folder, None)

    def folders(self) -> set[str]:
        return set(self._failed)

    def left(self) -> set[str]:
        """After an update: the folders whose note failed (one skipped, a person's note
        now or mid-reconcile, is no failure now). None left, the next failure is
        retried after ``RETRY_FIRST`` again."""
        if not self._failed:
            self._delay = 0.0
        self._said = {f: said for f, said in self._said.items() if f in self._failed}
        return set(self._failed)

    def problems(self) -> list[tuple[str, str, str]]:
        """As ``status`` keeps them (meta ``memory_problems``): (path, why, "memory")."""
        return [(path, why, "memory") for path, why in sorted(self._failed.values())]

    def said(self) -> tuple[str, ...]:
        """Each failure as a sync's report says it (``SyncReport.problems``)."""
        return tuple(f"{path} {why}" for path, why, _ in self.problems())

    def wait(self) -> bool:
        """Whether the daemon's catch-up waits: a folder note failed within the delay
        (``RETRY_FIRST``, doubled at each failure until none is left, ``RETRY_MOST`` at
        most; none failed: nothing to wait for)."""
        return bool(self._failed) and time.monotonic() - self._at < self._delay


__all__ = ["RETRY_FIRST", "RETRY_MOST", "FolderFailures"]
