"""Habits the index's SQL databases share (index.db, the vector cache; PostgreSQL takes `parts`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

PART = 500  # keys per IN (...) list


def parts(items: list[Any], size: int = PART) -> Iterator[list[Any]]:
    """``items`` in runs of at most ``size`` (one IN (...) list each)."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def select_in(db: sqlite3.Connection, query: str, keys: Iterable[Any]) -> Iterator[Any]:
    """The rows of ``query`` over ``keys``, whose ``{}`` stands for an IN list's
    placeholders, asked in parts of ``PART`` keys."""
    for part in parts(list(keys)):
        yield from db.execute(query.format(",".join("?" * len(part))), part)


def close_optimized(db: sqlite3.Connection) -> sqlite3.Error | None:
    """Close ``db`` after ``PRAGMA optimize``; a database already failing closes quietly,
    the error returned. (A failed optimize left the connection open: its write lock held,
    the next open of the file in the process waited 30 s and said "database is locked".)"""
    failed: sqlite3.Error | None = None
    try:
        db.execute("PRAGMA optimize")
    except sqlite3.Error as exc:
        failed = exc
    try:
        db.close()
    except sqlite3.Error as exc:
        failed = failed or exc
    return failed


def rollback(db: sqlite3.Connection) -> None:
    """The open transaction rolled back, if SQLite has not already done so: an error in
    the middle of one (SQLITE_FULL, an I/O error: a transaction larger than the page
    cache writes to the WAL before its commit) rolls it back whole, and a second
    ROLLBACK's "no transaction is active" took the place of the error that said why."""
    if db.in_transaction:
        db.execute("ROLLBACK")
