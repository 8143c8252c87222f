"""How index.db and cache.db are opened: as SQLite's WAL databases, or, when this user
cannot write one (another user's file, a read-only mount, a ``.memvault/`` closed to
us: ``os.access``, the kernel's rule for this user), so that a read leaves nothing
behind.

SQLite reads a WAL database through its ``-shm`` (and opens its ``-wal``), and makes
both beside the file when they are not there and the folder lets it, ``mode=ro`` or
not: a search by another user of a shared vault left an empty ``index.db-wal`` and a
32 KB ``index.db-shm`` of its own, and the owner's memvault, which could not write that
``-shm``, failed every write after it ("attempt to write a readonly database", its
notes written and left unindexed) and every search with a traceback. A folder closed
to us, or a read-only mount, refused the read whole (no ``-shm`` could be made).

So a database this user cannot write is opened

* ``mode=ro`` when its ``-wal`` and ``-shm`` are both there: a writer has it open (the
  owner's daemon), and the read goes through their ``-shm`` (read only when it is not
  ours to write: SQLite 3.22), seeing what they commit; nothing is made;
* ``immutable=1`` else: no writer has it open (the last one's close folded the WAL
  back and removed both), and SQLite reads the file alone, with no lock and no
  ``-shm``. A WAL a crashed writer left without its ``-shm`` is not read (the file as
  of its last checkpoint: a consistent index, older). A writer that opens it while the
  read runs makes a -wal and checkpoints into the file: SQLite, which keeps the pages
  of a file it trusts never to change, answered from old pages mixed with new ones
  (wrong hits, or "malformed"), so a use of the connection after the file or its -wal
  changed is refused (``integrity.Guard.frozen``: ``StorageError``, run it again; the
  next open reads through the writer's -shm); damage met on such a file, or found at
  the open of a file that is not this user's (``vector_cache.opening_error``), is no
  ``IndexCorrupt``: nothing of another user's is deleted (its stamp neither), nor made
  again as this user's.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memvault.index import integrity


def writable(path: Path) -> bool:
    """Whether this user may write ``path`` (a database) and its ``-wal`` and ``-shm``
    beside it (made there, or there already); a database not there yet is made as
    usual."""
    if path.name == ":memory:" or not path.exists():
        return True
    beside = (Path(f"{path}{end}") for end in ("-wal", "-shm"))  # another user's left there
    return (
        os.access(path, os.W_OK)
        and os.access(path.parent, os.W_OK | os.X_OK)
        and all(os.access(p, os.W_OK) for p in beside if p.exists())
    )


def connect(path: Path, guard: integrity.Guard) -> sqlite3.Connection:
    """A connection to ``path`` (the module docstring says how), used under ``guard``
    (told of an ``immutable=1`` open: a use after the file changed is refused)."""
    where, uri = str(path), False
    if not writable(path):
        live = Path(f"{path}-wal").exists() and Path(f"{path}-shm").exists()
        if not live:
            guard.frozen()  # (before the open: a change from here on is seen)
        where = f"{path.absolute().as_uri()}?{'mode=ro' if live else 'immutable=1'}"
        uri = True
    return sqlite3.connect(
        where, check_same_thread=False, isolation_level=None, timeout=30, uri=uri
    )


__all__ = ["connect", "writable"]
