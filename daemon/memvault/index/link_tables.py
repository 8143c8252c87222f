"""The store's link state: the links table, the attachment manifest, the relink
journal and the lines the daemon wrote into MEMORY.md (``Store`` inherits these).

Kept apart from ``store.py`` (notes, chunks, FTS5, the embedding cache) so each
file stays one subject; the tables themselves are created with the rest of the
schema there.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from memvault.core.changes import Seen
from memvault.core.wikilinks import link_name
from memvault.index.link_keys import LinkKeys
from memvault.index.rows import LinkRow
from memvault.index.sql import parts

_LINK_COLS = "source, line, target, anchor, kind, embed, verdict, resolved, candidates"
# the lines of a source whose rows are deleted one line at a time; past it, all at once
_LINES_ONE_BY_ONE = 16


def _link_rows(rows: Iterable[tuple[Any, ...]]) -> list[LinkRow]:
    """``LinkRow``s of rows selected as ``_LINK_COLS``."""
    return [
        LinkRow(s, ln, t, a, k, bool(e), v, r, tuple(json.loads(c)))
        for s, ln, t, a, k, e, v, r, c in rows
    ]


class LinkTables(LinkKeys):
    """Methods over the link tables; ``Store`` supplies the connection and the lock."""

    _db: sqlite3.Connection
    _lock: AbstractContextManager[Any]  # the store's lock (integrity.Guard; PostgreSQL's calls)
    _OWNED_ORDER = "rowid"  # the column memory_owned's lines are ordered by, oldest first

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    # -- links ---------------------------------------------------------------------

    def put_links(self, conn: sqlite3.Connection, source: str, links: Iterable[LinkRow]) -> None:
        """The link rows of ``source`` made ``links``, writing only the lines whose links
        change: such a line's rows are deleted and inserted again in order (so a line's
        links keep the order they are given), every other line's rows are left alone (a
        relink that changes one link of ten writes one line, not the note's twenty rows
        and their three indexes' entries)."""
        have: dict[int, list[tuple[Any, ...]]] = {}
        for row in conn.execute(
            "SELECT line, target, anchor, kind, embed, verdict, resolved, candidates, name "
            "FROM links WHERE source = ?",
            (source,),
        ):
            have.setdefault(int(row[0]), []).append(tuple(row))
        want: dict[int, list[tuple[Any, ...]]] = {}
        for r in links:
            want.setdefault(r.line, []).append(
                (
                    r.line,
                    r.target,
                    r.anchor,
                    r.kind,
                    int(r.embed),
                    r.verdict,
                    r.resolved,
                    json.dumps(list(r.candidates)),
                    link_name(r.target),
                )
            )
        # a line is unchanged when it reads back as the same rows in the same order (a
        # line read back in another order is written again: its links keep their order)
        changed = [line for line in have.keys() | want.keys() if have.get(line) != want.get(line)]
        gone = [(source, line) for line in changed if line in have]
        if len(gone) > _LINES_ONE_BY_ONE:  # (a line added above them all: every line moved)
            # each line's DELETE reads the source's rows again (no index on a line): past
            # a few lines, the source's rows go in one statement and all are put again
            conn.execute("DELETE FROM links WHERE source = ?", (source,))
            changed = list(want)
        elif gone:
            conn.executemany("DELETE FROM links WHERE source = ? AND line = ?", gone)
        rows = [(source, *row) for line in sorted(changed) for row in want.get(line, ())]
        if rows:
            conn.executemany(
                "INSERT INTO links(source, line, target, anchor, kind, embed, verdict, resolved, "
                "candidates, name) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def unresolved_targets(self, sources: Iterable[str]) -> list[tuple[str, str]]:
        """(source, target) of the links of ``sources`` not resolved by path or name
        (unresolved, an alias, ambiguous): those an alias given or taken away can change."""
        out: list[tuple[str, str]] = []
        with self._lock:
            for part in parts(list(sources)):
                q = (
                    "SELECT DISTINCT source, target FROM links WHERE verdict <> 'resolved' "
                    f"AND source IN ({','.join('?' * len(part))})"
                )
                out += [(s, t) for s, t in self._db.execute(q, part)]
        return out

    def set_link_verdicts(
        self,
        conn: sqlite3.Connection,
        rows: Iterable[tuple[str, str, str, str | None, tuple[str, ...]]],
    ) -> None:
        """``(source, target, verdict, resolved, candidates)``: every link of ``source``
        to ``target`` resolved anew (a link's verdict depends on these two alone)."""
        conn.executemany(
            "UPDATE links SET verdict = ?, resolved = ?, candidates = ? WHERE source = ? AND target = ?",
            [(v, r, json.dumps(list(c)), s, t) for s, t, v, r, c in rows],
        )

    def links(self, source: str | None = None) -> list[LinkRow]:
        q = f"SELECT {_LINK_COLS} FROM links"
        args: tuple[Any, ...] = ()
        if source is not None:
            q += " WHERE source = ?"
            args = (source,)
        with self._lock:
            rows = self._db.execute(q + " ORDER BY source, line", args).fetchall()
        return _link_rows(rows)

    def links_by_page(self, sources: int = 2000) -> Iterator[list[LinkRow]]:
        """Every link, as ``links()`` orders them, the links of ``sources`` notes at a
        time: judging the links of 100,000 notes (900,000 links) held them all at once
        (~300 MB for the length of a ``status``)."""
        after = ""
        while True:
            with self._lock:
                names = [
                    r[0]
                    for r in self._db.execute(
                        "SELECT DISTINCT source FROM links WHERE source > ? ORDER BY source "
                        f"LIMIT {int(sources)}",
                        (after,),
                    )
                ]
            if not names:
                return
            q = f"SELECT {_LINK_COLS} FROM links WHERE source >= ? AND source <= ? ORDER BY source, line"
            with self._lock:
                rows = self._db.execute(q, (names[0], names[-1])).fetchall()
            yield _link_rows(rows)
            after = names[-1]

    def links_to_judge(self, names: Iterable[str]) -> list[LinkRow]:
        """The stored links whose verdict the disk may have made a problem of, as
        ``links()`` orders them: not ``resolved`` when stored (an alias only leads a link
        that no file name does: ``alias``), with an anchor (the target's headings decide
        it), or of one of ``names`` (``wikilinks.link_name``s of files that came or went
        since)."""
        kept = "verdict = 'resolved' AND anchor IS NULL"
        rows: list[tuple[Any, ...]] = []
        with self._lock:  # each row once: a line may hold one link twice
            for i, part in enumerate(list(parts(sorted(set(names)))) or [[]]):
                named = f"name IN ({','.join('?' * len(part))})" if part else "1 = 0"
                where = f"NOT ({kept}) OR {named}" if i == 0 else f"{kept} AND {named}"
                q = f"SELECT {_LINK_COLS} FROM links WHERE {where} ORDER BY source, line"
                rows += self._db.execute(q, part).fetchall()
        rows.sort(key=lambda r: (r[0], r[1]))
        return _link_rows(rows)

    def sources_linking(self, targets: Iterable[str], names: Iterable[str]) -> set[str]:
        """Notes with a link resolved to one of ``targets`` or of one of ``names``
        (``wikilinks.link_name``s)."""
        out: set[str] = set()
        with self._lock:
            for part in parts(list(targets)):
                q = f"SELECT DISTINCT source FROM links WHERE resolved IN ({','.join('?' * len(part))})"
                out |= {r[0] for r in self._db.execute(q, part)}
            for part in parts(sorted(set(names))):
                q = f"SELECT DISTINCT source FROM links WHERE name IN ({','.join('?' * len(part))})"
                out |= {r[0] for r in self._db.execute(q, part)}
        return out

    def links_named(self, names: Iterable[str]) -> list[tuple[str, str, str, str | None, str]]:
        """(source, target, verdict, resolved, candidates as stored) of every distinct
        link of one of ``names`` (``wikilinks.link_name``s): those a file of that name
        coming or going can lead elsewhere."""
        out: list[tuple[str, str, str, str | None, str]] = []
        with self._lock:
            for part in parts(sorted(set(names))):
                q = (
                    "SELECT DISTINCT source, target, verdict, resolved, candidates FROM links "
                    f"WHERE name IN ({','.join('?' * len(part))})"
                )
                out += [(s, t, v, r, c) for s, t, v, r, c in self._db.execute(q, part)]
        return out

    # -- attachments ---------------------------------------------------------------

    def attachment_manifest(self) -> dict[str, Seen]:
        """Every attachment the index knows, with the size and mtime it had."""
        with self._lock:
            rows = self._db.execute("SELECT path, size, mtime_ns FROM attachments").fetchall()
        return {p: Seen(s, m) for p, s, m in rows}

    def attachment_paths(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT path FROM attachments ORDER BY path")]

    def put_attachments(
        self, conn: sqlite3.Connection, seen: Mapping[str, Seen], gone: Iterable[str]
    ) -> None:
        conn.executemany("DELETE FROM attachments WHERE path = ?", [(p,) for p in gone])
        conn.executemany(  # (an upsert both backends speak; their link keys kept with them)
            "INSERT INTO attachments(path, size, mtime_ns) VALUES(?, ?, ?) ON CONFLICT(path) "
            "DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns",
            [(p, s.size, s.mtime_ns) for p, s in seen.items()],
        )
        self.keys_drop(conn, gone, 0)
        self.keys_put(conn, [(p, ()) for p in seen], 0)

    # -- the relink journal ----------------------------------------------------------

    def pending_relink(self) -> dict[str, str]:
        """Moves whose links a relink has not finished re-targeting (old -> new)."""
        with self._lock:
            return dict(self._db.execute("SELECT old, new FROM relink_pending").fetchall())

    def journal_relink(self, conn: sqlite3.Connection, moves: Mapping[str, str]) -> None:
        """Journal ``moves``; a move journalled before whose file moves again now leads
        where it is now (its links are re-targeted there, not to a path gone)."""
        conn.executemany(
            "UPDATE relink_pending SET new = ? WHERE new = ?",
            [(new, old) for old, new in moves.items()],
        )
        conn.executemany(
            "INSERT OR REPLACE INTO relink_pending(old, new) VALUES(?, ?)", list(moves.items())
        )

    def clear_relink(self, moves: Mapping[str, str] | None = None) -> None:
        """Drop the journal (all of it, or just ``moves``: another sync's stay)."""
        with self.transaction() as conn:
            if moves is None:
                conn.execute("DELETE FROM relink_pending")
            else:
                conn.executemany(
                    "DELETE FROM relink_pending WHERE old = ? AND new = ?", list(moves.items())
                )

    # -- MEMORY.md ownership -------------------------------------------------------------

    def owned_lines(self) -> dict[str, tuple[str, ...]]:
        """Lines the daemon wrote into MEMORY.md, per section, oldest first."""
        out: dict[str, list[str]] = {}
        with self._lock:
            for section, line in self._db.execute(
                f"SELECT section, line FROM memory_owned ORDER BY {self._OWNED_ORDER}"
            ):
                out.setdefault(section, []).append(line)
        return {k: tuple(v) for k, v in out.items()}

    def add_owned_lines(self, owned: Mapping[str, Sequence[str]], keep: int = 500) -> None:
        """Remember lines the daemon wrote; the newest ``keep`` per section are kept.

        A history, not just the last write: an editor that saves a stale buffer
        brings back an older line of ours, which must still count as ours.
        """
        with self.transaction() as conn:
            for section, lines in owned.items():
                conn.executemany(
                    "DELETE FROM memory_owned WHERE section = ? AND line = ?",
                    [(section, line) for line in lines],
                )
                conn.executemany(
                    "INSERT INTO memory_owned(section, line) VALUES(?, ?)",
                    [(section, line) for line in lines],
                )
                key = self._OWNED_ORDER
                conn.execute(
                    f"DELETE FROM memory_owned WHERE section = ? AND {key} NOT IN "
                    f"(SELECT {key} FROM memory_owned WHERE section = ? ORDER BY {key} DESC LIMIT ?)",
                    (section, section, keep),
                )
