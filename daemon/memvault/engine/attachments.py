"""Attachments: every file of the vault that is not a note — images, audio, video, PDFs,
canvases, bases. They are linked, not indexed for search.

The store keeps each one's size and mtime (its manifest). A sync compares what it
sees on disk with the manifest: a path that vanished and a new one with the same
(size, mtime) is a rename (``changes.stat_moves``: a rename keeps both, so nothing
is read); those moves join the notes' moves, so links to the file are re-targeted
the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memvault.core.changes import Seen, stat_moves

if TYPE_CHECKING:
    import sqlite3

    from memvault.index.store import Store


@dataclass(frozen=True, slots=True)
class AttachmentChanges:
    """What a sync saw of the attachments it looked at."""

    seen: Mapping[str, Seen] = field(default_factory=dict)  # new or changed: to record
    gone: tuple[str, ...] = ()  # known, no longer on disk (moved ones included)
    moves: Mapping[str, str] = field(default_factory=dict)  # old -> new

    def __bool__(self) -> bool:
        return bool(self.seen or self.gone)


class Attachments:
    """The attachment manifest: what is on disk against what the store recorded."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def observe(
        self, on_disk: Mapping[str, Seen], scope: Collection[str] | None
    ) -> AttachmentChanges:
        """Compare the attachments found on disk with the manifest: all of them
        (``scope`` None, a full scan), or only those at the paths in ``scope``."""
        known = self.store.attachment_manifest()
        if scope is not None:
            known = {p: s for p, s in known.items() if p in scope}
        gone = tuple(sorted(p for p in known if p not in on_disk))
        changed = {p: s for p, s in on_disk.items() if known.get(p) != s}
        return AttachmentChanges(changed, gone, stat_moves(known, on_disk))

    def record(self, conn: sqlite3.Connection, changes: AttachmentChanges) -> None:
        """Write what was seen into the manifest (inside the caller's transaction)."""
        self.store.put_attachments(conn, changes.seen, changes.gone)


__all__ = ["AttachmentChanges", "Attachments"]
