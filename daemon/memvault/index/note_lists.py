"""The notes table's rows written, and lean reads of it for a process that holds no
note rows (the CLI, the Python API and the MCP server without a daemon): a write's name
lookups read a few columns, not every note's whole row (issue 27: a `memvault add` at
100,000 notes spent 2.4 s making 100,000 rows it then dropped), and MEMORY.md's lists
read each section's first notes by the keys kept with the rows (``schema.ORDER_COLUMNS``,
indexed by folder), and its counts, not every note sorted (``engine/memory_stored.py``).
``Store`` inherits these (the SQL of both backends).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from memvault.core.memory_order import CatalogueEntry
from memvault.index.link_keys import LinkKeys
from memvault.index.note_order import ORDER_COLUMNS, ORDER_SET, OWN, OWN_UPDATED, order_values
from memvault.index.rows import NOTE_COLS, NoteRow
from memvault.index.sql import parts

ORDER_NAMES = ", ".join((*ORDER_COLUMNS, "listed"))
ENTRY_COLS = "path, title, summary, frontmatter, mtime_ns"


class NoteLists(LinkKeys):
    """Methods over the notes table (its rows' link keys kept with them: ``link_keys``);
    ``Store`` supplies the connection and the lock."""

    _db: sqlite3.Connection
    _lock: AbstractContextManager[Any]

    def put_note(self, conn: sqlite3.Connection, row: NoteRow) -> None:
        frontmatter = json.dumps(row.frontmatter, ensure_ascii=False, default=str)
        *order, category = order_values(row.path, row.title, frontmatter)
        conn.execute(
            f"INSERT OR REPLACE INTO notes({NOTE_COLS}, {ORDER_NAMES}) "
            f"VALUES({','.join('?' * 21)})",
            (
                row.path,
                row.size,
                row.mtime_ns,
                row.sha256,
                row.kind,
                row.skip_reason,
                row.title,
                row.summary,
                category,
                row.date,
                row.updated,
                json.dumps(list(row.tags)),
                json.dumps(list(row.aliases)),
                frontmatter,
                json.dumps([list(h) for h in row.headings]),
                json.dumps(list(row.warnings)),
                row.lines,
                *order,
            ),
        )
        self.keys_put(conn, [(row.path, row.aliases)], 1)

    def move_row(self, conn: sqlite3.Connection, old: str, new: str) -> None:
        """A note's row under its new path (another row there replaced)."""
        self.drop_note_row(conn, new)
        row = conn.execute("SELECT title, frontmatter FROM notes WHERE path = ?", (old,)).fetchone()
        if row is not None:  # its place in MEMORY.md's orders, by its new path
            conn.execute(
                f"UPDATE notes SET path = ?, {ORDER_SET} WHERE path = ?",
                (new, *order_values(new, row[0], row[1]), old),
            )
            self.keys_move(conn, old, new)

    def drop_note_row(self, conn: sqlite3.Connection, path: str) -> None:
        """A note's row deleted, its link keys with it."""
        conn.execute("DELETE FROM notes WHERE path = ?", (path,))
        self.keys_drop(conn, [path], 1)

    def ordered_notes(
        self,
        folder: str,
        order: str,
        *,
        after: bytes | None = None,
        limit: int | None = None,
        listed: bool = True,
        having: str | None = None,
    ) -> list[tuple[bytes, CatalogueEntry]]:
        """The notes of ``folder`` (``memory_order.in_folder``) in ``order`` (one of
        ``ORDERS_KEPT``), with their keys: past the key ``after``, at most ``limit``;
        ``listed``: only those MEMORY.md may list (not ``keeps_out``); ``having``: only
        those whose frontmatter's JSON holds this text (what a filter asks, a superset)."""
        where, args = _in_folder(folder, listed)
        if having is not None:
            where += " AND frontmatter LIKE ? ESCAPE '\\'"
            args.append(f"%{_like(having)}%")
        # each part of the union limited to the page on PostgreSQL (``PgStore``'s
        # connection), whose plan of it is otherwise every row of each part sorted; SQLite
        # merges the parts as its indexes read them (a part limited costs it a sort)
        each = not isinstance(self._db, sqlite3.Connection)
        query, args = _keyed(order, ENTRY_COLS, where, args, after, limit, each)
        with self._lock:
            rows = self._db.execute(query, args).fetchall()
        return [(bytes(k), _entry(p, t, s, f, m)) for k, p, t, s, f, m in rows]

    def folder_lines_of(self, folder: str, order: str) -> list[tuple[str, str, str]]:
        """Every note of ``folder`` (listed or not) in ``order``: path, title, summary."""
        query, args = _keyed(order, "path, title, summary", *_in_folder(folder, False))
        with self._lock:
            return [(p, t, s) for _, p, t, s in self._db.execute(query, args)]

    def listing_keys(self, paths: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        """What a folder note shows of each of ``paths`` that has a row: its kind and top
        folder (whether it is listed), title and summary (its line) and its keys in each
        order (its place: ``folder_lines_of``). A write whose notes keep these leaves
        every folder note as it was (``Catalogue.changing``)."""
        cols = ", ".join(("path", "kind", "category", "title", "summary", *ORDER_COLUMNS))
        out: dict[str, tuple[Any, ...]] = {}
        with self._lock:
            for part in parts(list(paths)):
                q = f"SELECT {cols} FROM notes WHERE path IN ({','.join('?' * len(part))})"
                for row in self._db.execute(q, part):
                    out[row[0]] = tuple(row[1:])
        return out

    def listed_count(self, folder: str) -> int:
        """How many notes of ``folder`` MEMORY.md may list (not ``keeps_out``)."""
        where, args = _in_folder(folder, True)
        with self._lock:
            (n,) = self._db.execute(f"SELECT COUNT(*) FROM notes WHERE {where}", args).fetchone()
        return int(n)

    def listed_by_folder(self, leaving: Sequence[str] = ()) -> dict[str, int]:
        """Per top-level folder but ``leaving``, how many of its notes MEMORY.md may list."""
        marks = "".join(" AND category != ?" for _ in leaving)
        with self._lock:
            rows = self._db.execute(
                "SELECT category, COUNT(*) FROM notes WHERE kind = 'note' AND listed = 1 "
                f"AND category != ''{marks} GROUP BY category",
                list(leaving),
            ).fetchall()
        return {str(c): int(n) for c, n in rows}

    def kept_out_paths(self) -> list[str]:
        """The notes saying ``memory-index: false`` (``memory_order.keeps_out``)."""
        with self._lock:
            return [
                p
                for (p,) in self._db.execute(
                    "SELECT path FROM notes WHERE kind = 'note' AND listed = 0"
                )
            ]

    def listing_entry(self, path: str) -> CatalogueEntry | None:
        """One index note as MEMORY.md's lists read it; None for no such note."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {ENTRY_COLS} FROM notes WHERE path = ? AND kind = 'note'", (path,)
            ).fetchone()
        return None if row is None else _entry(*row)

    def note_titles(self, folder: str | None = None) -> list[tuple[str, str]]:
        """Every index note's path and title; ``folder``: of the notes whose top folder is
        its first part in any case (as ``casefold`` compares: the caller compares the rest),
        by the folder index, not every note (a name lookup of ``add`` at 100,000 notes read
        100,000 titles for a folder's 12,000)."""
        query = "SELECT path, title FROM notes WHERE kind = 'note'"
        with self._lock:
            if folder is None:
                return [(p, t) for p, t in self._db.execute(query)]
            top = folder.split("/", 1)[0].casefold()
            tops = [
                c
                for (c,) in self._db.execute("SELECT DISTINCT category FROM notes")
                if c.casefold() == top
            ]
            if not tops:
                return []
            marks = ", ".join("?" * len(tops))
            return [(p, t) for p, t in self._db.execute(f"{query} AND category IN ({marks})", tops)]

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


def _entry(path: str, title: str, summary: str, frontmatter: str, mtime_ns: int) -> CatalogueEntry:
    fields = {} if frontmatter == "{}" else json.loads(frontmatter)
    return CatalogueEntry(path, title, summary, fields, mtime_ns)


def _in_folder(folder: str, listed: bool) -> tuple[str, list[Any]]:
    """The notes of ``folder`` as SQL (``memory_order.in_folder``: "" the vault root's):
    by their top folder (indexed with their keys), a deeper folder by its path's start."""
    folder = folder.strip("/")
    where = "kind = 'note' AND category = ?" + (" AND listed = 1" if listed else "")
    args: list[Any] = [folder.split("/", 1)[0]]
    if "/" in folder:
        where += " AND substr(path, 1, ?) = ?"
        args += [len(folder) + 1, folder + "/"]
    return where, args


def _keyed(
    order: str,
    columns: str,
    where: str,
    args: list[Any],
    after: bytes | None = None,
    limit: int | None = None,
    each: bool = False,
) -> tuple[str, list[Any]]:
    """SQL of the notes ``where`` as their key in ``order`` (``k``) and ``columns``, past
    ``after``, in that order, at most ``limit``, and its arguments. A note's key by
    ``updated`` is its key by date where it keeps none of its own
    (``note_order.OWN_UPDATED``): the notes of each kind are read in order, each at a seek
    of an index (the date index holds ``OWN`` before the key: an order by date reads the
    two kinds apart too), and merged: no note of the folder read past the page. ``each``:
    each kind's first ``limit`` read by a query of its own, and those merged (PostgreSQL:
    a union ordered and limited is otherwise an Append of every row and a top-N sort;
    with it, a Merge Append of two index scans)."""
    if order == "updated":
        arms = [("ord_updated", f" AND {OWN_UPDATED}"), ("ord_date", f" AND {OWN} = 0")]
    elif order == "date":
        arms = [("ord_date", f" AND {OWN} = 1"), ("ord_date", f" AND {OWN} = 0")]
    else:
        arms = [(f"ord_{order}", "")]
    cap = "" if limit is None else f" LIMIT {int(limit)}"
    selects: list[str] = []
    out: list[Any] = []
    for column, only in arms:
        past = "" if after is None else f" AND {column} > ?"
        select = f"SELECT {column} AS k, {columns} FROM notes WHERE {where}{only}{past}"
        if len(arms) > 1 and cap and each:  # each kind's first notes, by its index
            select = f"SELECT * FROM ({select} ORDER BY {column}{cap}) AS a{len(selects)}"
        selects.append(select)
        out += [*args] if after is None else [*args, after]
    if len(selects) == 1:
        return f"{selects[0]} ORDER BY k{cap}", out
    return f"SELECT * FROM ({' UNION ALL '.join(selects)}) AS n ORDER BY k{cap}", out


def _like(text: str) -> str:
    """``text`` for a LIKE pattern, its wildcards escaped (ESCAPE '\\')."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


__all__ = ["ENTRY_COLS", "ORDER_NAMES", "NoteLists"]
