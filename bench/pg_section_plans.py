"""PostgreSQL's plan of a section's first page (32 notes by updated, then by date) of one
folder of 10,000 notes, a third (then all) with an ``updated`` of their own: the notes
table's order columns and the indexes as ``note_order`` makes them, ``ANALYZE``d, the
SQL as ``NoteLists.ordered_notes`` asks it on PostgreSQL (a code without
``note_lists._keyed``: its one index, ``ORDER BY`` the column). Prints each plan's scans
and its execution time. Starts its own server (pgserver, as the tests do).

    PYTHONPATH=<code>/daemon python bench/pg_section_plans.py
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import psycopg

from memvault.index import note_lists
from memvault.index.note_order import ORDER_INDEXES
from pg_helpers import start_server, stop_server

COLUMNS = (
    "path TEXT PRIMARY KEY, kind TEXT, category TEXT, listed INTEGER, title TEXT, "
    "summary TEXT, frontmatter TEXT, mtime_ns BIGINT, ord_date BYTEA NOT NULL, "
    "ord_updated BYTEA NOT NULL, ord_title BYTEA NOT NULL"
)


def query(order: str) -> tuple[str, list[Any]]:
    where, args = note_lists._in_folder("topics", True)
    keyed = getattr(note_lists, "_keyed", None)
    if keyed is None:  # main: one index a column
        cols = note_lists.ENTRY_COLS
        q = f"SELECT ord_{order} AS k, {cols} FROM notes WHERE {where} ORDER BY ord_{order}"
        return q + " LIMIT 32", args
    if "each" in keyed.__code__.co_varnames:  # limited parts: PostgreSQL's form
        return keyed(order, note_lists.ENTRY_COLS, where, args, None, 32, True)  # type: ignore[no-any-return]
    q, a = keyed(order, note_lists.ENTRY_COLS, where, args, None)
    return q + " LIMIT 32", a


def main() -> None:
    server = start_server()
    kept_once = "length(ord_updated) > 0" in " ".join(ORDER_INDEXES)
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            for share in (3, 1):
                conn.execute("DROP TABLE IF EXISTS notes")
                conn.execute(f"CREATE TABLE notes({COLUMNS})")
                rng = random.Random(1)
                rows = []
                for i in range(10000):
                    path = f"topics/n{i:05}.md"
                    date = f"2025-{rng.randrange(1, 13):02}-{rng.randrange(1, 29):02}/{path}"
                    own = f"2026-{rng.randrange(1, 13):02}/{path}".encode()
                    same = b"" if kept_once else date.encode()
                    updated = own if i % share == 0 else same
                    rows.append(
                        (path, "note", "topics", 1, "t", "s", "{}", 0, date.encode(), updated, b"t")
                    )
                with conn.cursor() as cur:
                    cur.executemany(f"INSERT INTO notes VALUES({', '.join(['%s'] * 11)})", rows)
                for statement in ORDER_INDEXES:
                    conn.execute(statement)
                conn.execute("ANALYZE notes")
                for order in ("updated", "date"):
                    q, args = query(order)
                    plan = [
                        r[0] for r in conn.execute("EXPLAIN ANALYZE " + q.replace("?", "%s"), args)
                    ]
                    print(f"--- 10,000 notes, 1/{share} with their own updated, by {order}")
                    print(
                        "\n".join(
                            line
                            for line in plan
                            if "Scan" in line or "Append" in line or "Sort" in line
                        )
                    )
                    print(next(line for line in plan if line.startswith("Execution")))
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
