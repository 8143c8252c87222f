"""MEMORY.md and the folder notes held for ``git stash pop`` (``vault/git_stash``), as
the Linker's updates see it: what waits for the pop, the newest stash seen applied kept
in the index meta, and whether the daemon's catch-up has anything to queue meanwhile."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.vault.git_stash import (
    STASH_APPLIED,
    STASH_WAIT_SECONDS,
    StashSeen,
    newest_stash,
    newest_stash_commit,
    stash_made,
)
from memvault.vault.gitstate import git_stamp, head_commit

if TYPE_CHECKING:
    from memvault.index.store import Store

# what `git stash`, its pop and drop, and a `git checkout -- MEMORY.md` rewrite
STASH_FILES = ("index", "logs/refs/stash")


class StashHold:
    """What of memvault's files the newest stash holds, for one vault and its index."""

    def __init__(self, root: Path, store: Store) -> None:
        self.root = root
        self.store = store
        # git's index and stash when an update left MEMORY.md for `git stash pop`, and
        # until when: the daemon's catch-up does not queue it again meanwhile
        self._held: tuple[int, ...] | None = None
        self._holding = False

    def waits(self, rels: Sequence[str]) -> tuple[str, ...]:
        """Which of ``rels`` wait for ``git stash pop`` (``git_stash.newest_stash``). The
        newest stash seen applied already (its pop conflicted, or it was applied cleanly,
        its entry kept) is kept in the index meta with the HEAD it was seen at: no pop to
        come, after a switch of branch or a pull that merges too, which clear git's
        record of the conflict, or once memvault listed a note in the MEMORY.md a clean
        apply left. At that HEAD still, until no path the stash changes holds a change:
        `git reset --hard` took the pop back (and git's record), and a sync finding so
        lets it go (it counted, and MEMORY.md written then stopped the next pop: "Your
        local changes ... would be overwritten")."""
        kept, _ = _kept(self.store.meta(STASH_APPLIED))
        seen = seen_stash(self.root, self.store, rels, stops=False)
        if seen.applied and kept != seen.commit:
            self.store.set_meta(STASH_APPLIED, f"{seen.commit} {head_commit(self.root) or ''}")
        elif seen.undone:  # taken back, at the HEAD it was seen applied at
            self.store.set_meta(STASH_APPLIED, "")
        return seen.waits

    def hold(self, holding: bool) -> None:
        """The last update left MEMORY.md for the pop (``holding``), or wrote it."""
        self._holding = holding
        self._held = git_stamp(self.root, STASH_FILES) if holding else None

    def quiet(self) -> bool:
        """Whether the last update left MEMORY.md for ``git stash pop`` and git's index
        and stash are as they were then, within the wait: nothing for the daemon's
        catch-up to queue (a pop writes MEMORY.md, which the watcher sees)."""
        if not self._holding:
            return False
        made = stash_made(self.root)  # counted from the stash, as newest_stash does
        if (
            made is not None
            and time.time() - made < STASH_WAIT_SECONDS
            and self._held == git_stamp(self.root, STASH_FILES)
        ):
            return True
        self.hold(False)
        return False


def seen_stash(root: Path, store: Store, rels: Sequence[str], *, stops: bool = True) -> StashSeen:
    """The newest stash as it concerns ``rels`` (``git_stash.newest_stash``), the one the
    index meta keeps as applied (``STASH_APPLIED``: "<stash> <HEAD it was seen applied
    at>") counted so: once HEAD moved from there, whatever git's files say; at that HEAD
    still, unless taken back (``unless_undone``). One git process more, only while the
    one kept is the newest stash."""
    kept, head = _kept(store.meta(STASH_APPLIED))
    if not kept or kept != newest_stash_commit(root):
        return newest_stash(root, rels, stops=stops)
    if head and head_commit(root) == head:
        return newest_stash(root, rels, stops=stops, unless_undone=(kept,))
    return newest_stash(root, rels, stops=stops, applied=(kept,))


def _kept(value: str | None) -> tuple[str, str]:
    """The stash and the HEAD of ``STASH_APPLIED``'s value (no HEAD: kept before one was
    noted, or no commit yet)."""
    kept, _, head = (value or "").partition(" ")
    return kept, head.strip()


__all__ = ["STASH_FILES", "StashHold", "seen_stash"]
