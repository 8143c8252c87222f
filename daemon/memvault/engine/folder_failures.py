"""The folder notes memvault could not write for a reason of the disk's, not a person's
(``Linker._update_folder_notes``): the disk full, EACCES on the file or its folder (a
person's ``chattr +i``, another user's folder), EIO, a folder where the note goes.

A person's concurrent edit, git's conflict markers, a file that is not text are the
person's: their next save changes the file, which makes its folder note due again. A
failure of the disk's changes nothing memvault looks at, so its folder was dropped from
the due list and the folder note stayed stale for good once the cause was fixed (review
55). Each failed folder stays due, is retried at the next update (the next sync, the
daemon's catch-up, backing off to a minute: ``RETRY_FIRST``), and is a problem of kind ``memory``
in ``status`` until a write of it succeeds.
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
        self._at = 0.0  # time.monotonic() of the last failure
        self._delay = 0.0  # how long the daemon's catch-up waits after it

    def failed(self, folder: str, path: str, exc: OSError | NoteExists) -> None:
        """``path``, ``folder``'s note, could not be written: said once a reason.
        ``NoteExists``: a folder (or a file that is no note) is where it goes."""
        cause = getattr(exc, "strerror", None) or "a folder or another file is where it goes"
        why = f"left as it was, not brought up to date: {cause}"
        if self._failed.get(folder) != (path, why):
            log.warning("%s %s; retried at the next sync", path, why)
        self._delay = min(self._delay * 2, RETRY_MOST) if self._failed else RETRY_FIRST
        self._failed[folder] = (path, why)
        self._at = time.monotonic()

    def done(self, folder: str) -> None:
        """``folder``'s note was written (or found in line)."""
        self._failed.pop(folder, None)

    def folders(self) -> set[str]:
        return set(self._failed)

    def problems(self) -> list[tuple[str, str, str]]:
        """As ``status`` keeps them (meta ``memory_problems``): (path, why, "memory")."""
        return [(path, why, "memory") for path, why in sorted(self._failed.values())]

    def said(self) -> tuple[str, ...]:
        """Each failure as a sync's report says it (``SyncReport.problems``)."""
        return tuple(f"{path} {why}" for path, why, _ in self.problems())

    def wait(self) -> bool:
        """Whether the daemon's catch-up waits: a folder note failed within the delay
        (``RETRY_FIRST``, doubled at each failure since none was left, ``RETRY_MOST`` at
        most; none failed: nothing to wait for)."""
        return bool(self._failed) and time.monotonic() - self._at < self._delay


__all__ = ["RETRY_FIRST", "RETRY_MOST", "FolderFailures"]
