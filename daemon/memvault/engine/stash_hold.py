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
        newest stash seen applied already (its pop conflicted, its entry kept) is kept in
        the index meta with the HEAD it was seen at: no pop to come, after a switch of
        branch or a pull that merges too, which clear git's record of the conflict. Not
        at that HEAD still: `git reset --hard` took the pop back (and git's record), and
        a sync finding so lets it go (it counted, and MEMORY.md written then stopped
        the next pop: "Your local changes ... would be overwritten")."""
        kept, head = _kept(self.store.meta(STASH_APPLIED))
        seen = newest_stash(
            self.root, rels, stops=False, applied=applied_kept(self.root, self.store)
        )
        if seen.applied and kept != seen.commit:
            self.store.set_meta(STASH_APPLIED, f"{seen.commit} {head_commit(self.root) or ''}")
        elif kept and kept == seen.commit and seen.waits and head:  # git's record gone
            self.store.set_meta(STASH_APPLIED, "")  # (asked only where it holds)
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


def applied_kept(root: Path, store: Store) -> tuple[str, ...]:
    """The stash the index meta keeps as applied (``STASH_APPLIED``: "<stash> <HEAD it
    was seen applied at>"), once HEAD moved from there; before, git's record of the
    conflict says (``git_stash.newest_stash``). One git process, only while the one
    kept is the newest stash."""
    kept, head = _kept(store.meta(STASH_APPLIED))
    if not kept or kept != newest_stash_commit(root):
        return ()
    if head and head_commit(root) == head:
        return ()
    return (kept,)


def _kept(value: str | None) -> tuple[str, str]:
    """The stash and the HEAD of ``STASH_APPLIED``'s value (no HEAD: kept before one was
    noted, or no commit yet)."""
    kept, _, head = (value or "").partition(" ")
    return kept, head.strip()


__all__ = ["STASH_FILES", "StashHold", "applied_kept"]
