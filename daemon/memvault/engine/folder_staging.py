"""A folder note memvault makes, added to git's index (``gitstate.stage_made``): at once,
or, while the person has changes of their own staged (a commit being put together),
once they are committed: their `git commit` of one note took the folder note along
(listing notes they had not added). The daemon's tick tries again when git's index or
HEAD changed (``MadeStaging.retry``), so the other clone's `git pull --autostash` goes
through as before."""

from __future__ import annotations

import threading
from pathlib import Path

from memvault.vault.gitstate import LATER, STAGED, git_busy, git_stamp, stage_made


class MadeStaging:
    """The folder notes made and not yet staged, for one vault (thread-safe: the
    Linker's updates and the daemon's tick both call it)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._later: set[str] = set()
        self._tried: tuple[int, ...] | None = None  # git's files when last tried
        self._lock = threading.Lock()

    def made(self, rel: str) -> bool:
        """``rel`` just made: staged now (True), or kept to stage later."""
        with self._lock:
            got = stage_made(self.root, rel)
            if got == LATER:
                self._later.add(rel)
                self._tried = git_stamp(self.root)
            return got == STAGED

    def retry(self) -> list[str]:
        """Stage the folder notes kept for later, once git's index or HEAD changed since
        the last try and the person has nothing of theirs staged: what it staged. A
        note gone, tracked meanwhile (the person's `git add`) or ignored is let go."""
        if not self._later or git_busy(self.root) is not None:
            return []  # (mid rebase or merge: kept for after)
        with self._lock:
            stamp = git_stamp(self.root)
            if stamp == self._tried:
                return []
            self._tried = stamp
            staged = []
            for rel in sorted(self._later):
                got = stage_made(self.root, rel) if (self.root / rel).is_file() else ""
                if got == LATER:
                    break  # theirs still staged: all wait
                self._later.discard(rel)
                if got == STAGED:
                    staged.append(rel)
            if staged:
                self._tried = git_stamp(self.root)  # (our own `git add`)
            return staged


__all__ = ["MadeStaging"]
