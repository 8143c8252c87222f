"""The daemon says what the upgrade of an older index did, on its log.

A person who upgrades memvault and starts the daemon again (`memvault up`, `daemon run`,
`daemon start`, whose log is .memvault/daemon.log) had the index upgraded at the
daemon's open, before its log was set up: the upgrade's lines ("index schema 15 -> 16:
...") went nowhere, the log said nothing of it. The log is set up before the open now.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from helpers import DaemonProcess, make_vault, open_vault
from keyword_helpers import as_schema_15
from memvault.index.schema import SCHEMA_VERSION


@pytest.mark.parametrize("how", ["run", "run --log-file", "up"])
def test_the_daemon_logs_the_upgrade_of_an_older_index(tmp_path: Path, how: str) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    index = root / ".memvault" / "index.db"
    as_schema_15(index)
    args = ("up", str(root)) if how == "up" else ("daemon", *how.split(), "--vault", str(root))
    daemon = DaemonProcess(tmp_path, root, *args)
    try:
        daemon.ready(answering=True)
    finally:
        assert daemon.stop() == 0
    with closing(sqlite3.connect(index)) as db:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version == (str(SCHEMA_VERSION),)  # upgraded once, at the daemon's open
    log = (root / ".memvault" / "daemon.log") if "--log-file" in how else None
    said = log.read_text("utf-8") if log is not None else daemon.stderr
    assert "index schema 15 -> 16:" in said and "keys by updated kept once" in said, said


def test_a_postgres_writer_logs_the_upgrade_of_its_schema(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A team's writer upgraded over an index an older writer left (schema 13): the
    SQLite steps say what they do; the PostgreSQL upgrade said nothing, on any log."""
    from keyword_helpers import pg_as_schema_13
    from memvault.index.pg_schema import PG_SCHEMA_VERSION

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    pg_as_schema_13(pg_dsn, schema)
    daemon = DaemonProcess(
        tmp_path,
        root,
        MEMVAULT_INDEX_STORE="postgres",
        MEMVAULT_INDEX_DSN=pg_dsn,
        MEMVAULT_INDEX_SCHEMA=schema,
    )
    try:
        daemon.ready(answering=True)
    finally:
        assert daemon.stop() == 0
    assert f"index schema '{schema}' 13 -> {PG_SCHEMA_VERSION}: upgraded" in daemon.stderr
