"""Every file's link keys, indexed (SQLite schema 19, PostgreSQL 18): what a process with no
link index in memory (a `memvault add`, `log`, a memory tool's write with no daemon)
resolves a note's few links by (``engine/stored_links.py``), instead of a map of every
note's and attachment's path and alias built for them (0.28 s at 100,000 notes, issue 27).

One row a key: a note's or attachment's path (``PATH``) and its last name (``NAME``) as
Obsidian compares them (``wikilinks.key``: NFC, JavaScript's lower case, final sigma;
SQLite's NOCASE and PostgreSQL's ``lower`` give neither for every name), and each of a
note's aliases (``ALIAS``, trimmed as JavaScript trims, then keyed): exactly the keys
``LinkIndex`` files each one under. ``note`` tells a notes row's (1) from an attachment's
(0). Kept in the transaction of every write, rename and delete of a row of ``notes`` or
``attachments`` (``NoteLists.put_note``, ``move_row``, ``drop_note_row``,
``put_attachments``); filled from every row by the upgrade (``fill_link_keys``).
``Store`` inherits the methods (the SQL of both backends).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from memvault.core.text import js_trim
from memvault.core.wikilinks import key
from memvault.index.sql import parts, select_in

PATH, NAME, ALIAS = 0, 1, 2  # the kinds of key

LINK_KEYS_TABLE = """CREATE TABLE IF NOT EXISTS link_keys(
    key TEXT NOT NULL,      -- wikilinks.key of the path, of its last name, or of an alias
    kind INTEGER NOT NULL,  -- 0 path, 1 last name, 2 alias
    path TEXT NOT NULL,     -- the file's path as stored
    note INTEGER NOT NULL   -- 1: a row of notes, 0: of attachments
)"""
LINK_KEYS_INDEXES = (
    "CREATE INDEX IF NOT EXISTS link_keys_key ON link_keys(key)",
    "CREATE INDEX IF NOT EXISTS link_keys_path ON link_keys(path)",
)
_INSERT = "INSERT INTO link_keys(key, kind, path, note) VALUES(?, ?, ?, ?)"


def key_rows(path: str, aliases: Iterable[str], note: int) -> list[tuple[str, int, str, int]]:
    """The rows of ``path``'s keys (``LinkIndex``'s: its path, its last name, its aliases)."""
    rows = [(key(path), PATH, path, note), (key(path.rpartition("/")[2]), NAME, path, note)]
    for k in dict.fromkeys(key(js_trim(a)) for a in aliases):
        rows.append((k, ALIAS, path, note))
    return rows


def fill_link_keys(conn: Any, mark: str) -> int:
    """Every row of ``notes`` and ``attachments`` keyed, the table emptied first and its
    indexes made, in the caller's transaction (either backend: ``mark``, its placeholder).
    Returns how many files."""
    conn.execute(LINK_KEYS_TABLE)
    conn.execute("DELETE FROM link_keys")
    rows: list[tuple[str, int, str, int]] = []
    files = 0
    for path, aliases in conn.execute("SELECT path, aliases FROM notes").fetchall():
        rows += key_rows(path, json.loads(aliases) if aliases != "[]" else (), 1)
        files += 1
    for (path,) in conn.execute("SELECT path FROM attachments").fetchall():
        rows += key_rows(path, (), 0)
        files += 1
    insert = _INSERT.replace("?", mark)
    for part in parts(rows, 5000):
        if mark == "?":
            conn.executemany(insert, part)
        else:
            with conn.cursor() as cur:
                cur.executemany(insert, part)
    for statement in LINK_KEYS_INDEXES:
        conn.execute(statement)
    return files


class LinkKeys:
    """Methods over ``link_keys``; ``Store`` supplies the connection and the lock."""

    _db: sqlite3.Connection
    _lock: AbstractContextManager[Any]

    def keys_put(
        self, conn: sqlite3.Connection, files: Iterable[tuple[str, Sequence[str]]], note: int
    ) -> None:
        """These files' keys (path, aliases), written anew."""
        files = list(files)
        self.keys_drop(conn, [p for p, _ in files], note)
        rows = [r for path, aliases in files for r in key_rows(path, aliases, note)]
        if rows:
            conn.executemany(_INSERT, rows)

    def keys_drop(self, conn: sqlite3.Connection, paths: Iterable[str], note: int) -> None:
        """These files' keys gone (their rows deleted)."""
        conn.executemany(
            "DELETE FROM link_keys WHERE path = ? AND note = ?", [(p, note) for p in paths]
        )

    def keys_move(self, conn: sqlite3.Connection, old: str, new: str) -> None:
        """A note's keys under its new path, its aliases' with them (its row moved; one at
        ``new`` replaced, its keys gone)."""
        aliases = [
            k
            for (k,) in conn.execute(
                "SELECT key FROM link_keys WHERE path = ? AND note = 1 AND kind = ?",
                (old, ALIAS),
            ).fetchall()
        ]
        self.keys_drop(conn, [old, new], 1)
        rows = key_rows(new, (), 1) + [(k, ALIAS, new, 1) for k in aliases]
        conn.executemany(_INSERT, rows)

    def keyed(self, keys: Iterable[str]) -> list[tuple[str, int, str]]:
        """The (key, kind, path) of every file filed under one of ``keys`` (indexed)."""
        q = "SELECT key, kind, path FROM link_keys WHERE key IN ({})"
        with self._lock:
            return [(k, int(kind), p) for k, kind, p in select_in(self._db, q, sorted(set(keys)))]

    def aliases_held(self, paths: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """The aliases of the notes at ``paths`` as their rows hold them (those that have
        any): an alias key is no alias to give ``LinkIndex``, which keys it again, and
        ``wikilinks.key`` is not always its own key (Ϊ́: lower case after NFC gives ϊ and
        an acute, which NFC makes ΐ)."""
        q = "SELECT path, aliases FROM notes WHERE path IN ({})"
        with self._lock:
            rows = list(select_in(self._db, q, sorted(set(paths))))
        return {path: tuple(json.loads(a)) for path, a in rows if a != "[]"}


__all__ = [
    "ALIAS",
    "LINK_KEYS_INDEXES",
    "LINK_KEYS_TABLE",
    "NAME",
    "PATH",
    "LinkKeys",
    "fill_link_keys",
    "key_rows",
]
