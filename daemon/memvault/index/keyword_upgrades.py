"""The keyword table's upgrades (SQLite): what a schema version changed in how a chunk's
keywords are given, brought to the rows an older memvault keyed (``schema.upgrade``; the
versions are told in ``schema``'s docstring). Each either builds the FTS5 table again from
the rows (a new tokenizer: FTS5 cannot change a table's) or takes out the keyword rows of
the chunks whose form changed, with the values they were given, and puts them in again.
Nothing is read from the vault, nothing embedded."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from functools import partial

from memvault.core.cjk import CYRILLIC_CHARS, SHARP_S_CHARS, han_changed, keyed, keyword_form
from memvault.index.fts import FTS_EXTERNAL, HEADINGS_SQL, KEYWORDS_FN, keywords
from memvault.index.sql import parts


def sharp_s_keywords(conn: sqlite3.Connection) -> bool:
    """Schema 10 -> 11: when a chunk holds ß or ẞ, the keyword table built again from
    the rows (``marks_keywords``), which gives them as ``keyword_form`` does now (ß as
    ss). Returns whether one did."""
    held = " OR ".join(
        f"instr(text || ' ' || title || ' ' || heading || ' ' || about, '{ch}') > 0"
        for ch in SHARP_S_CHARS
    )
    if conn.execute(f"SELECT 1 FROM chunks WHERE {held} LIMIT 1").fetchone() is None:
        return False
    marks_keywords(conn)
    return True


def cjk_keywords(conn: sqlite3.Connection) -> int:
    """Schema 6 or 7 -> 8: the keyword table's view and triggers made again (calling
    ``KEYWORDS_FN``), the keyword rows of the chunks so given (``cjk.keyed``: a CJK
    character, a full-width letter) put in again as it gives them (the old rows taken
    out with the values they were given), a page of rows at a time, and their notes made
    stale. Returns how many chunks."""
    for name in (
        "TRIGGER IF EXISTS chunks_fts_removed",
        "TRIGGER IF EXISTS chunks_fts_changed",
        "VIEW IF EXISTS chunks_fts_source",
    ):
        conn.execute(f"DROP {name}")
    for statement in FTS_EXTERNAL:
        conn.execute(statement)
    # on this connection only: no schema object names it (a GLOB of the characters'
    # ranges scanned 496,557 chunks in 47 s; this, with ASCII at once, 1.27 s in all)
    conn.create_function("memvault_keyed", 1, keyed, deterministic=True)
    labels = [
        r[0]
        for r in conn.execute(
            "SELECT label FROM chunks "
            "WHERE memvault_keyed(text || ' ' || title || ' ' || heading || ' ' || about)"
        )
    ]
    # their long paragraphs are cut at CJK full stops now (core/chunks): read again by
    # the next sync, a chunk whose text is the same keeps its label and vector
    return _keyed_again(conn, labels, lambda value: value, stale=True)


def _keyed_again(
    conn: sqlite3.Connection,
    labels: list[int],
    given: Callable[[str], str],
    *,
    stale: bool,
) -> int:
    """The keyword rows of the chunks ``labels`` whose columns ``keywords`` gives
    otherwise than ``given`` (what the older schema gave) taken out with the values they
    were given and put in again as ``keywords`` gives them, a page at a time; ``stale``:
    their notes read again by the next sync. Returns how many rows."""
    done = 0
    for part in parts(labels):
        rows = [
            (label, old, new)
            for label, *columns in conn.execute(
                f"SELECT label, text, title, {HEADINGS_SQL.format('chunks')}, about FROM chunks "
                f"WHERE label IN ({', '.join('?' * len(part))})",
                part,
            )
            if (old := [given(c) for c in columns]) != (new := [keywords(c) for c in columns])
        ]
        conn.executemany(
            "INSERT INTO chunks_fts(chunks_fts, rowid, text, title, headings, about) "
            "VALUES('delete', ?, ?, ?, ?, ?)",
            [(label, *old) for label, old, _ in rows],
        )
        conn.executemany(
            "INSERT INTO chunks_fts(rowid, text, title, headings, about) VALUES(?, ?, ?, ?, ?)",
            [(label, *new) for label, _, new in rows],
        )
        if stale:
            conn.executemany(
                "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE kind = 'note' AND path IN "
                "(SELECT path FROM chunks WHERE label = ?)",
                [(label,) for label, _, _ in rows],
            )
        done += len(rows)
    return done


def stemmed_keywords(conn: sqlite3.Connection) -> int:
    """Schema 14 -> 15: the keyword rows of the chunks holding a word of Cyrillic letters
    (``cjk.stemmed``: Москве with москв) or a traditional Chinese character
    (``cjk.simplified``) given again as ``keyword_form`` gives them now, taken out
    with the values schema 14 gave (``stems=False``); other rows are not
    touched, nothing is read again or embedded. Returns how many rows."""
    changed = re.compile(f"[{CYRILLIC_CHARS}{han_changed()}]")
    conn.create_function(
        "memvault_cyrillic", 1, lambda t: not t.isascii() and bool(changed.search(t))
    )
    labels = [
        r[0]
        for r in conn.execute(
            "SELECT label FROM chunks "
            "WHERE memvault_cyrillic(text || ' ' || title || ' ' || heading || ' ' || about)"
        )
    ]
    return _keyed_again(conn, labels, partial(keyword_form, stems=False), stale=False)


def marks_keywords(conn: sqlite3.Connection) -> None:
    """Schema 8 -> 9: the keyword table made again with today's tokenizer (marks inside
    a token) and built from the rows through the view (FTS5's ``rebuild``), which gives
    every column as ``keyword_form`` does now."""
    conn.execute("DROP TABLE IF EXISTS chunks_fts")
    for statement in FTS_EXTERNAL:
        conn.execute(statement)
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')")


def old_tokenizer(conn: sqlite3.Connection) -> bool:
    """Whether the keyword table is one an older memvault made (marks between tokens)."""
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'chunks_fts'"
    ).fetchone()
    return row is not None and "categories" not in row[0]


def old_keyword_view(conn: sqlite3.Connection) -> bool:
    """Whether the keyword table's view is one an older memvault made (without
    ``KEYWORDS_FN``)."""
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'chunks_fts_source'"
    ).fetchone()
    return row is not None and KEYWORDS_FN not in row[0]


__all__ = [
    "cjk_keywords",
    "marks_keywords",
    "old_keyword_view",
    "old_tokenizer",
    "sharp_s_keywords",
    "stemmed_keywords",
]
