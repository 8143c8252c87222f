"""Each note's place in MEMORY.md's orders, kept with its row (schema 14; PostgreSQL 13):
its keys by date, updated and title (``memory_order.stored_keys``), whether MEMORY.md
may list it (``listed``: not ``keeps_out``), and its top folder (``category``), indexed
together, so a section's first notes are read in order and its notes counted by folder
(``note_lists``). Written with the row (``NoteLists.put_note``, ``move_row``); computed
for every row by the upgrade (``order_columns``, ``fill_order``: both backends). A key by
``updated`` equal to the key by date (no ``updated`` of the note's own) is kept empty and
out of its index, and the date index holds whether a note has one (``OWN``) before the
key: each kind is read in order at a seek (schema 16, PostgreSQL 15: ``updated_apart``).

The keys depend on the key algorithm and on Python's Unicode tables
(``memory_order.keys_made``: 3.11 and 3.13 sort a Cyrillic modifier letter apart), so
``fill_order`` records what they were made under (meta ``KEYS_MADE``), and a writer
whose own differs (another Python, a later algorithm, an index of before the record)
computes them all again at its open, holding the writer's lock (``rekey``): only the
lock's holder writes keys, so an index's keys are never of two Pythons at once. A
process that finds them another's all the same (a reader; a PostgreSQL writer whose
lock another machine's writer held meanwhile) sorts every row (``keys_ours``).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from typing import Any

from memvault.core.memory_order import (
    KEYS_ALGORITHM,
    CatalogueEntry,
    keeps_out,
    keys_made,
    stored_keys,
)
from memvault.index.link_keys import fill_link_keys

log = logging.getLogger("memvault")

KEYS_MADE = "order_keys"  # meta: memory_order.keys_made of the process that computed them

# version 14 (PostgreSQL 13): a note's keys in MEMORY.md's orders (memory_order.ORDERS_KEPT),
# whether MEMORY.md lists it, and the indexes a section's first notes are read by
ORDER_COLUMNS = ("ord_date", "ord_updated", "ord_title")
# version 16 (PostgreSQL 15): ``ord_updated`` is empty where it equals ``ord_date`` (a note
# with no ``updated`` of its own: every note of a vault that never writes one), and only the
# others are in its index (``OWN_UPDATED``); a section by ``updated`` merges the two
# (note_lists). Such a key was kept and indexed twice: 7 % of a short-note index.db
OWN_UPDATED = "length(ord_updated) > 0"  # (both engines: length of a BLOB or a bytea)
# 1 for such a note, 0 for the others: the date index holds it before the key, so the notes
# with no key by updated of their own are read by date at a seek, not found by reading
# every note of the folder (a vault whose every note has an ``updated``: 8 ms a page at
# 4,748 notes, the whole folder each time). An integer on both engines; an entry of the
# index holds it in its header alone (SQLite: 0 and 1 take no byte of the record's body)
OWN = f"(CASE WHEN {OWN_UPDATED} THEN 1 ELSE 0 END)"
ORDER_INDEXES = (
    "CREATE INDEX IF NOT EXISTS notes_ord_date ON notes(category, listed, "
    f"{OWN}, ord_date) WHERE kind = 'note'",
    "CREATE INDEX IF NOT EXISTS notes_ord_updated ON notes(category, listed, ord_updated) "
    f"WHERE kind = 'note' AND {OWN_UPDATED}",
    "CREATE INDEX IF NOT EXISTS notes_ord_title ON notes(category, listed, ord_title) "
    "WHERE kind = 'note'",
    "CREATE INDEX IF NOT EXISTS notes_kept_out ON notes(path) WHERE kind = 'note' AND listed = 0",
    # the notes counted by folder (the root's section): a narrow index, read whole
    "CREATE INDEX IF NOT EXISTS notes_folders ON notes(category, listed) WHERE kind = 'note'",
)


def order_values(path: str, title: str, frontmatter: str) -> tuple[Any, ...]:
    """A row's ``ORDER_COLUMNS``, its ``listed`` and its category, from its path, title and
    frontmatter as stored (JSON: the fields as every reader of the row has them); its
    key by ``updated`` empty where it is its key by date (``OWN_UPDATED``)."""
    fields = {} if frontmatter == "{}" else json.loads(frontmatter)
    listed = not keeps_out(CatalogueEntry(path, title, "", fields))
    category = path.split("/", 1)[0] if "/" in path else ""
    date, updated, title_key = stored_keys(path, title, fields)
    return (date, b"" if updated == date else updated, title_key, int(listed), category)


KEPT = ", ".join((*ORDER_COLUMNS, "listed", "category"))  # order_values' columns
ORDER_SET = ", ".join(f"{c} = ?" for c in (*ORDER_COLUMNS, "listed", "category"))


def order_columns(conn: sqlite3.Connection) -> int:
    """Schema 13 -> 14 (and a new index): ``ORDER_COLUMNS`` and ``listed`` added (when
    missing), computed for every row (``fill_order``), and indexed. Returns how many rows
    (every one: none had its keys)."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(notes)")}
    for column in ORDER_COLUMNS:
        if column not in have:
            conn.execute(f"ALTER TABLE notes ADD COLUMN {column} BLOB NOT NULL DEFAULT x''")
    if "listed" not in have:
        conn.execute("ALTER TABLE notes ADD COLUMN listed INTEGER NOT NULL DEFAULT 1")
    return fill_order(conn, "?")


def fill_order(conn: Any, mark: str, *, every: bool = True) -> int:
    """Every row's ``order_values`` computed and written where they differ,
    ``ORDER_INDEXES`` made, and what the keys were made under recorded (``KEYS_MADE``),
    in the caller's transaction (either backend's connection: ``mark``, its
    placeholder). ``every=False``: only the rows whose path, title or frontmatter is
    not ASCII (the keys of another Unicode version alone: ASCII is read without the
    tables). Returns how many rows were written."""
    rows = conn.execute(f"SELECT path, title, frontmatter, {KEPT} FROM notes").fetchall()
    # written only where they change: all of them at the upgrade (empty), those of the
    # notes whose path, title or fields hold a character the two Pythons read apart at
    # a rekey (100,000 notes: 9.4 s writing every row, its five indexes kept)
    values = [
        (*new, p)
        for p, t, f, *kept in rows
        if (every or not (p.isascii() and t.isascii() and f.isascii()))
        and (new := order_values(p, t, f)) != tuple(kept)
    ]
    update = f"UPDATE notes SET {ORDER_SET} WHERE path = ?".replace("?", mark)
    for start in range(0, len(values), 1000):
        if mark == "?":
            conn.executemany(update, values[start : start + 1000])
        else:
            with conn.cursor() as cur:
                cur.executemany(update, values[start : start + 1000])
    for statement in ORDER_INDEXES:
        conn.execute(statement)
    conn.execute(
        f"INSERT INTO meta(key, value) VALUES({mark}, {mark}) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (KEYS_MADE, keys_made()),
    )
    return len(values)


def updated_apart(conn: Any, mark: str) -> int:
    """Schema 15 -> 16 (PostgreSQL 14 -> 15): ``ord_updated`` emptied where it equals
    ``ord_date``, and its index made again over the others (``OWN_UPDATED``), the date
    index with ``OWN`` before the key, in the caller's transaction (either backend:
    ``mark``). Nothing is read from the vault and no key computed. Returns how many rows
    were emptied."""
    emptied = conn.execute(
        f"UPDATE notes SET ord_updated = {mark} WHERE ord_updated = ord_date", (b"",)
    ).rowcount
    conn.execute("DROP INDEX IF EXISTS notes_ord_updated")
    conn.execute("DROP INDEX IF EXISTS notes_ord_date")
    for statement in ORDER_INDEXES:
        conn.execute(statement)
    return int(emptied)


def _recorded(conn: Any, mark: str) -> str | None:
    """What the index records its keys as made under (``KEYS_MADE``); None: nothing."""
    row = conn.execute(f"SELECT value FROM meta WHERE key = {mark}", (KEYS_MADE,)).fetchone()
    return None if row is None else str(row[0])


def keys_ours(conn: Any, mark: str) -> bool:
    """Whether the index's keys are recorded as made as this process makes them."""
    return _recorded(conn, mark) == keys_made()


def rekey(conn: Any, mark: str) -> int | None:
    """The keys computed again (``fill_order``), in the caller's transaction, when the
    index records them as made otherwise than this process makes them (or records
    nothing: an index of before the record). Returns how many rows' keys changed; None
    when the keys are this process's (one meta read)."""
    made = _recorded(conn, mark)
    if made == keys_made():
        return None
    # the same algorithm, other Unicode tables: what reads otherwise is a character one
    # of them has not assigned (casefold and NFKD of an assigned one never change:
    # Unicode's stability policies), never ASCII: a name's letter, a date's digit
    # (``\d``: Kawi's, Unicode 15.0), a ``memory-index`` value
    same = made is not None and made.split(" ", 1)[0] == str(KEYS_ALGORITHM)
    counted = fill_order(conn, mark, every=not same)
    fill_link_keys(conn, mark)  # ``wikilinks.key`` (NFC, lower case) reads the tables too
    log.info(
        "MEMORY.md's order keys computed again (%d notes' changed): made under %s, now %s",
        counted,
        "an unrecorded version" if made is None else made,
        keys_made(),
    )
    return counted


__all__ = [
    "KEYS_MADE",
    "ORDER_COLUMNS",
    "ORDER_INDEXES",
    "ORDER_SET",
    "OWN",
    "OWN_UPDATED",
    "fill_order",
    "keys_ours",
    "order_columns",
    "order_values",
    "rekey",
    "updated_apart",
]
