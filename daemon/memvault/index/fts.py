"""The keyword table of index.db (FTS5): its tokenizer, and the view and triggers that
give it each chunk's columns as ``core/cjk.keyword_form`` gives them (``register``: the
SQL function they call). The versions that shaped it, and their upgrades: index/schema.py.
"""

from __future__ import annotations

import sqlite3

from memvault.core.cjk import keyword_form

# marks (M*) inside a token, not between two (version 9): Hindi's vowel signs, Thai's
FTS_TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2 categories ''L* N* Co M*'''"
# a keyword table with its own content: the shape before version 6, and PostgreSQL's
# tokenizer (pg_keywords: an in-memory table only to read FTS5's tokens)
FTS_TABLE = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, title, headings, about, {FTS_TOKENIZE}
)"""

# a chunk's heading path (a JSON list) as its keyword column holds it: the names, a
# space between (" ".join). Not json_each: a table-valued function in the view makes
# FTS5's 'rebuild' and 'integrity-check' fail (SQLite 3.40: "SQL logic error")
HEADINGS_SQL = (
    "coalesce((WITH RECURSIVE k(i, s) AS (SELECT 0, NULL UNION ALL SELECT i + 1, "
    "coalesce(s || ' ', '') || json_extract({0}.heading, '$[' || i || ']') FROM k "
    "WHERE i < json_array_length({0}.heading)) SELECT s FROM k ORDER BY i DESC LIMIT 1), '')"
)

# version 5: the keyword table reads its columns from chunks (external content). A new
# chunk's keyword row is written by Store.insert_chunks (the only insert into chunks:
# an insert trigger, the heading path joined in SQL, cost ~70 us a chunk); the triggers
# keep it true on every other path that writes chunks (move, rename, delete, the sha
# update of a requeue): a keyword row is rewritten only when a column it indexes
# changed, and FTS5 is given the exact old values to take out
# version 8: each column as the keyword table is given it (``core/cjk.keyword_form``: a
# Chinese or Japanese character is a token of its own), through this SQL function; every
# connection of the store registers it (``register``), and nothing else writes chunks
KEYWORDS_FN = "memvault_keywords"


# a text of ASCII only is given as it is (``keyword_form`` changes none), without the
# call: as many characters as bytes (a NUL stops ``length``: then it is called). A
# call a column cost a delete ~10 us a chunk; a GLOB for a character past U+007F, as
# much; this, none measurable (bench/RESULTS.md)
ASCII_SQL = "length({0}) = length(CAST({0} AS BLOB))"


def _row(t: str) -> str:
    """A keyword row's four columns from the chunk row ``t`` (chunks, old, new)."""
    text, title, about = (
        f"CASE WHEN {ASCII_SQL.format(col)} THEN {col} ELSE {KEYWORDS_FN}({col}) END"
        for col in (f"{t}.text", f"{t}.title", f"{t}.about")
    )
    # the heading path's JSON: ASCII and no \u escape, so are its names
    heading, joined = f"{t}.heading", HEADINGS_SQL.format(t)
    headings = (
        f"CASE WHEN {ASCII_SQL.format(heading)} AND instr({heading}, '\\u') = 0 "
        f"THEN {joined} ELSE {KEYWORDS_FN}({joined}) END"
    )
    return f"{text}, {title}, {headings}, {about}"


FTS_EXTERNAL = (
    f"""CREATE VIEW IF NOT EXISTS chunks_fts_source(label, text, title, headings, about) AS
    SELECT label, {_row("chunks")} FROM chunks""",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, title, headings, about, content = 'chunks_fts_source', content_rowid = 'label',
    {FTS_TOKENIZE}
)""",
    f"""CREATE TRIGGER IF NOT EXISTS chunks_fts_removed AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, title, headings, about)
    VALUES('delete', old.label, {_row("old")});
END""",
    f"""CREATE TRIGGER IF NOT EXISTS chunks_fts_changed AFTER UPDATE OF text, title, heading, about
ON chunks WHEN old.text IS NOT new.text OR old.title IS NOT new.title
    OR old.heading IS NOT new.heading OR old.about IS NOT new.about BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, title, headings, about)
    VALUES('delete', old.label, {_row("old")});
    INSERT INTO chunks_fts(rowid, text, title, headings, about)
    VALUES(new.label, {_row("new")});
END""",
)


def keywords(value: str | None) -> str | None:
    """A keyword column's value as the keyword table is given it (``KEYWORDS_FN``)."""
    return value if value is None else keyword_form(value)


def register(conn: sqlite3.Connection) -> None:
    """``KEYWORDS_FN`` on ``conn``: the view and the triggers of the keyword table call it."""
    conn.create_function(KEYWORDS_FN, 1, keywords, deterministic=True)


__all__ = [
    "ASCII_SQL",
    "FTS_EXTERNAL",
    "FTS_TABLE",
    "FTS_TOKENIZE",
    "HEADINGS_SQL",
    "KEYWORDS_FN",
    "keywords",
    "register",
]
