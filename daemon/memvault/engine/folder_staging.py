"""A folder note memvault makes, added to git's index (``gitstate.stage_made``): at once,
or, while the person has changes of their own staged (a commit being put together),
once they are committed: their `git commit` of one note took the folder note along
(listing notes they had not added). The daemon's tick tries again when git's index or
HEAD changed (``MadeStaging.retry``), so the other clone's `git pull --autostash` goes
through as before. The notes kept for later are kept in the index meta too: made by
`memvault sync`, or by a daemon stopped before the commit, the next process's update
adds them (remembered by one process, they stayed untracked for good)."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.core import memory_md
from memvault.vault.gitstate import LATER, STAGED, WAIT, git_busy, git_stamp, stage_made

if TYPE_CHECKING:
    from memvault.core.memory_order import SectionRule
    from memvault.index.store import Store

# the index meta's key for the folder notes kept to `git add` later (a JSON list)
TO_STAGE = "folder_notes_to_stage"


class MadeStaging:
    """The folder notes made and not yet staged, for one vault (thread-safe: the
    Linker's updates and the daemon's tick both call it). The folder notes of
    ``sections`` (``ours``), one staged (memvault's own `git add`), are no change of the
    person's staged."""

    def __init__(self, root: Path, store: Store, sections: Sequence[SectionRule] = ()) -> None:
        self.root = root
        self.store = store
        made = (memory_md.folder_note_path(r.folder) for r in sections)
        self.ours = tuple(sorted(p for p in made if p))
        self._later: set[str] = set(_kept(store.meta(TO_STAGE)))
        self._tried: tuple[int, ...] | None = None  # git's files when last tried
        self._lock = threading.Lock()

    def made(self, rel: str) -> bool:
        """``rel`` just made: staged now (True), or kept to stage later."""
        with self._lock:
            got = stage_made(self.root, rel, self.ours)
            if got in (LATER, WAIT):
                self._keep(self._later | {rel})
                # (git busy: tried again once it is done, git's files changed or not)
                self._tried = git_stamp(self.root) if got == LATER else None
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
            staged, later = [], set(self._later)
            for rel in sorted(self._later):
                got = stage_made(self.root, rel, self.ours) if (self.root / rel).is_file() else ""
                if got in (LATER, WAIT):  # theirs still staged, or git busy: all wait
                    self._tried = stamp if got == LATER else None
                    break
                later.discard(rel)
                if got == STAGED:
                    staged.append(rel)
            self._keep(later)
            if staged and self._tried is not None:
                self._tried = git_stamp(self.root)  # (our own `git add`)
            return staged

    def _keep(self, later: set[str]) -> None:
        """The notes to stage later, in the index meta too (written when they change)."""
        if later != self._later:
            self._later = later
            self.store.set_meta(TO_STAGE, json.dumps(sorted(later)) if later else "")


def kept_to_stage(store: Store) -> list[str]:
    """The folder notes the index meta keeps to `git add` once the person's staged
    changes are committed (status: a pull that brings another clone's is refused)."""
    return _kept(store.meta(TO_STAGE))


def _kept(value: str | None) -> list[str]:
    """The folder notes the index meta keeps to stage later (none for what is unreadable)."""
    try:
        kept = json.loads(value) if value else []
    except ValueError:
        return []
    return [r for r in kept if isinstance(r, str)] if isinstance(kept, list) else []


__all__ = ["TO_STAGE", "MadeStaging", "kept_to_stage"]
