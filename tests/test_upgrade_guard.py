"""A reader does not upgrade an older index under another process's writer lock.

The holder may be a memvault of the older version (a daemon started before
``pip install -U``): its open connection keeps writing its old SQL, which on schema
6's keyword table (FTS5 reading from ``chunks``, triggers deleting its rows) corrupts
the keyword index without an error (FTS5's integrity-check: "malformed"). A reader
(``Vault.open(read_only=True)``, ``links check`` beside a daemon) takes the writer
lock for the upgrade, or refuses with ``LockHeld`` and changes nothing.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import open_vault, write
from memvault.errors import LockHeld
from memvault.index.schema import SCHEMA_VERSION, register
from memvault.vault.lock import WriterLock

HOLD = (
    "import sys\n"
    "from pathlib import Path\n"
    "from memvault.vault.lock import WriterLock\n"
    "lock = WriterLock(Path(sys.argv[1]))\n"
    "lock.acquire()\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
)


def _version(root: Path) -> str:
    with sqlite3.connect(root / ".memvault" / "index.db") as db:
        return db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]


def _older(root: Path) -> None:
    """The index as the last release left it (schema 5: the step to 6 is still to run)."""
    with sqlite3.connect(root / ".memvault" / "index.db") as db:
        db.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    db.close()


def _hold(root: Path) -> subprocess.Popen[str]:
    """Another process holding the vault's writer lock (until its stdin closes)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root / ".memvault" / "lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    write(root, "people/ana.md", "# Ana\n\nAna runs the night shift at the ledger office.\n")
    write(root, "projects/ledger.md", "# Ledger\n\nThe ledger project, with [[people/ana]].\n")
    with open_vault(root) as v:
        v.sync()
    _older(root)
    return root


def test_a_reader_refuses_to_upgrade_while_another_process_writes(vault: Path) -> None:
    holder = _hold(vault)
    try:
        with pytest.raises(LockHeld) as err:
            open_vault(vault, read_only=True)
        assert "older memvault" in str(err.value) and str(holder.pid) in str(err.value)
        assert _version(vault) == "5"  # nothing changed
    finally:
        holder.communicate("", timeout=30)
    # the writer gone: the reader upgrades, under the lock, and lets it go
    with open_vault(vault, read_only=True) as v:
        assert [h.path for h in v.search("night shift ledger", k=2)]
    assert _version(vault) == str(SCHEMA_VERSION)
    lock = WriterLock(vault / ".memvault" / "lock")
    lock.acquire()
    lock.release()
    with sqlite3.connect(vault / ".memvault" / "index.db") as db:
        register(db)  # the keyword table's view calls it (schema 8)
        assert (
            db.execute(
                "INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)"
            ).fetchall()
            == []
        )
    db.close()


def test_a_reader_of_an_index_of_this_version_needs_no_lock(vault: Path) -> None:
    with open_vault(vault) as v:  # the writer upgrades it
        v.sync()
    holder = _hold(vault)
    try:
        with open_vault(vault, read_only=True) as v:
            assert v.search("night shift", k=1)[0].path == "people/ana.md"
    finally:
        holder.communicate("", timeout=30)
