"""Lean reads of the notes table for a process that holds no note rows (the CLI, the
Python API and the MCP server without a daemon): a write's MEMORY.md lists and its
name lookups read these columns alone, not every note's whole row (issue 27: a
`memvault add` at 100,000 notes spent 2.4 s making 100,000 rows it then dropped).
``Store`` inherits these (the SQL of both backends).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager
from typing import Any

from memvault.core.memory_order import CatalogueEntry


class NoteLists:
    """Methods over the notes table; ``Store`` supplies the connection and the lock."""

    _db: sqlite3.Connection
    _lock: AbstractContextManager[Any]

    def listing_entries(self) -> list[CatalogueEntry]:
        """Every index note as MEMORY.md's lists read it (path, title, summary,
        frontmatter, mtime): what ``memory_listing`` takes of a catalogue row."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path, title, summary, frontmatter, mtime_ns FROM notes WHERE kind = 'note'"
            ).fetchall()
        return [
            CatalogueEntry(p, t, s, {} if f == "{}" else json.loads(f), m) for p, t, s, f, m in rows
        ]

    def note_titles(self) -> list[tuple[str, str]]:
        """Every index note's path and title."""
        with self._lock:
            return [
                (p, t)
                for p, t in self._db.execute("SELECT path, title FROM notes WHERE kind = 'note'")
            ]

    def notes_past(self, count: int) -> bool:
        """Whether the index holds more than ``count`` notes (counted no further)."""
        with self._lock:
            (n,) = self._db.execute(
                "SELECT COUNT(*) FROM (SELECT 1 FROM notes WHERE kind = 'note' LIMIT ?) AS n",
                (count + 1,),
            ).fetchone()
        return int(n) > count

    def note_paths(self) -> list[str]:
        """Every index note's path."""
        with self._lock:
            return [p for (p,) in self._db.execute("SELECT path FROM notes WHERE kind = 'note'")]


__all__ = ["NoteLists"]
