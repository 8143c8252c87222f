"""Each note's place in MEMORY.md's orders, kept with its row (schema 14; PostgreSQL 13):
its keys by date, updated and title (``memory_order.stored_keys``), whether MEMORY.md
may list it (``listed``: not ``keeps_out``), and its top folder (``category``), indexed
together, so a section's first notes are read in order and its notes counted by folder
(``note_lists``). Written with the row (``NoteLists.put_note``, ``move_row``); computed
for every row by the upgrade (``order_columns``, ``fill_order``: both backends).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from memvault.core.memory_order import CatalogueEntry, keeps_out, stored_keys

# version 14 (PostgreSQL 13): a note's keys in MEMORY.md's orders (memory_order.ORDERS_KEPT),
# whether MEMORY.md lists it, and the indexes a section's first notes are read by
ORDER_COLUMNS = ("ord_date", "ord_updated", "ord_title")
ORDER_INDEXES = (
    *(
        f"CREATE INDEX IF NOT EXISTS notes_{c} ON notes(category, listed, {c}) WHERE kind = 'note'"
        for c in ORDER_COLUMNS
    ),
    "CREATE INDEX IF NOT EXISTS notes_kept_out ON notes(path) WHERE kind = 'note' AND listed = 0",
    # the notes counted by folder (the root's section): a narrow index, read whole
    "CREATE INDEX IF NOT EXISTS notes_folders ON notes(category, listed) WHERE kind = 'note'",
)


def order_values(path: str, title: str, frontmatter: str) -> tuple[Any, ...]:
    """A row's ``ORDER_COLUMNS``, its ``listed`` and its category, from its path, title and
    frontmatter as stored (JSON: the fields as every reader of the row has them)."""
    fields = {} if frontmatter == "{}" else json.loads(frontmatter)
    listed = not keeps_out(CatalogueEntry(path, title, "", fields))
    category = path.split("/", 1)[0] if "/" in path else ""
    return (*stored_keys(path, title, fields), int(listed), category)


ORDER_SET = ", ".join(f"{c} = ?" for c in (*ORDER_COLUMNS, "listed", "category"))


def order_columns(conn: sqlite3.Connection) -> int:
    """Schema 13 -> 14 (and a new index): ``ORDER_COLUMNS`` and ``listed`` added (when
    missing), computed for every row (``fill_order``), and indexed. Returns how many rows."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(notes)")}
    for column in ORDER_COLUMNS:
        if column not in have:
            conn.execute(f"ALTER TABLE notes ADD COLUMN {column} BLOB NOT NULL DEFAULT x''")
    if "listed" not in have:
        conn.execute("ALTER TABLE notes ADD COLUMN listed INTEGER NOT NULL DEFAULT 1")
    return fill_order(conn, "?")


def fill_order(conn: Any, mark: str) -> int:
    """Every row's ``order_values`` written, and ``ORDER_INDEXES`` made (either backend's
    connection: ``mark``, its placeholder). Returns how many rows."""
    rows = conn.execute("SELECT path, title, frontmatter FROM notes").fetchall()
    values = [(*order_values(p, t, f), p) for p, t, f in rows]
    update = f"UPDATE notes SET {ORDER_SET} WHERE path = ?".replace("?", mark)
    for start in range(0, len(values), 1000):
        if mark == "?":
            conn.executemany(update, values[start : start + 1000])
        else:
            with conn.cursor() as cur:
                cur.executemany(update, values[start : start + 1000])
    for statement in ORDER_INDEXES:
        conn.execute(statement)
    return len(values)


__all__ = [
    "ORDER_COLUMNS",
    "ORDER_INDEXES",
    "ORDER_SET",
    "fill_order",
    "order_columns",
    "order_values",
]
