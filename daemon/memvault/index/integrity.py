"""SQLite's ``quick_check`` on open, once per change of the file memvault did not make.

Damage to index.db or cache.db (even a page an open never reads) is found on open by
``PRAGMA quick_check``, which reads the whole file: 0.7 s for index.db and 0.3 s for
cache.db at 100,000 notes, paid by every command run without a daemon (issue 27).
A file memvault itself closed, unchanged since, need not be read again: at its close
(the last connection's: SQLite has folded the WAL back in and removed it) each open
writes the file's stamp (device, inode, size, mtime in ns) beside it, ``NAME.checked``;
an open that may trust it (``trusting``: a process that is no daemon) and finds the
file's stamp the same skips the check. Anything else that writes the file (a copy
over it, a truncation, another program, a kill mid-write: no stamp written) changes
its stamp and the next open checks it. What the stamp cannot see is damage that
leaves the file's size and mtime alone (a failing disk): a daemon checks at every
start, whatever the stamp says.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path


def stamp(path: Path) -> str | None:
    """The file at ``path`` as its stamp; None when there is none, or its WAL holds
    pages (the file alone is not the database then)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    try:
        if os.stat(f"{path}-wal").st_size:
            return None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    return f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns}\n"


def _stamp_file(path: Path) -> Path:
    return path.with_name(f"{path.name}.checked")


def unchanged(path: Path) -> bool:
    """Whether ``path`` is as a memvault closed it last (its stamp the one written)."""
    now = stamp(path) if path.name != ":memory:" else None
    if now is None:
        return False
    try:
        return _stamp_file(path).read_text(encoding="ascii") == now
    except (OSError, UnicodeDecodeError):
        return False


def check(conn: sqlite3.Connection) -> None:
    """SQLite's ``quick_check``: a failure is a ``DatabaseError`` (the open's caller says
    damage: ``opening_error``)."""
    row = conn.execute("PRAGMA quick_check").fetchone()
    if row is None or row[0] != "ok":
        raise sqlite3.DatabaseError(f"integrity check failed: {row[0] if row else 'no answer'}")


def record(path: Path) -> None:
    """After the close of ``path``: its stamp written (atomically), when the file alone
    is the database and the stamp differs from the one there (nothing written else)."""
    if path.name == ":memory:" or (now := stamp(path)) is None:
        return
    target = _stamp_file(path)
    with contextlib.suppress(OSError):
        if target.read_text(encoding="ascii") == now:
            return
    temp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        temp.write_text(now, encoding="ascii")
        os.replace(temp, target)
    except OSError:  # a read-only folder: the next open checks, as before
        with contextlib.suppress(OSError):
            temp.unlink()


def forget(path: Path) -> None:
    """``path`` is being deleted (damaged): its stamp goes with it."""
    with contextlib.suppress(OSError):
        _stamp_file(path).unlink()
