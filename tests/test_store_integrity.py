"""SQLite's quick_check on open, once per change memvault did not make (issue 27: it
read both databases whole on every command without a daemon, ~1 s at 100,000
notes): a file a memvault closed, unchanged since, is trusted by a process that is no
daemon; any other change, and every daemon start, is checked, and damage is found."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import new_vault, note, open_vault, write
from memvault.config import VaultConfig
from memvault.engine import Engine
from memvault.errors import IndexCorrupt
from memvault.index.store import Store


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The database files each ``PRAGMA quick_check`` ran on (every connection traced)."""
    seen: list[str] = []
    connect = sqlite3.connect

    def traced(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        conn = connect(path, *args, **kwargs)
        name = Path(str(path)).name
        conn.set_trace_callback(lambda sql: seen.append(name) if "quick_check" in sql else None)
        return conn

    monkeypatch.setattr(sqlite3, "connect", traced)
    yield seen


def _store(tmp_path: Path, *, trusting: bool) -> Store:
    return Store(tmp_path / "index.db", tmp_path / "cache.db", trusting=trusting)


def test_a_file_memvault_closed_is_checked_again_only_once_something_else_changed_it(
    tmp_path: Path, checks: list[str]
) -> None:
    _store(tmp_path, trusting=True).close()  # made: checked (no stamp yet)
    assert checks == ["index.db", "cache.db"]
    checks.clear()
    store = _store(tmp_path, trusting=True)
    assert checks == [] and not store.checked
    with store.transaction() as conn:  # memvault's own write keeps it trusted
        conn.execute("INSERT INTO meta(key, value) VALUES('x', '1')")
    store.close()
    _store(tmp_path, trusting=True).close()
    assert checks == []
    index = tmp_path / "index.db"
    st = index.stat()
    os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # touched by another
    store = _store(tmp_path, trusting=True)
    assert checks == ["index.db"] and store.checked
    store.close()
    checks.clear()
    _store(tmp_path, trusting=False).close()  # a daemon: always
    assert checks == ["index.db", "cache.db"]


def test_damage_written_after_memvault_closed_the_file_is_found_on_open(tmp_path: Path) -> None:
    store = _store(tmp_path, trusting=True)
    with store.transaction() as conn:
        conn.execute("CREATE TABLE filler(x)")
        conn.executemany("INSERT INTO filler VALUES(?)", [(os.urandom(500),) for _ in range(400)])
    store.close()
    index = tmp_path / "index.db"
    with index.open("r+b") as f:  # a page in the middle overwritten: size unchanged
        f.seek(index.stat().st_size // 2)
        f.write(b"\xff" * 4096)
    with pytest.raises(IndexCorrupt):
        _store(tmp_path, trusting=True)


def test_a_command_without_a_daemon_trusts_what_the_last_one_closed_and_a_daemon_checks(
    tmp_path: Path, checks: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    write(root, "people/ana.md", note("Ana", "Ana runs the harbour", "The ferry budget.\n"))
    with open_vault(root) as v:
        v.sync()
    checks.clear()
    with open_vault(root) as v:
        assert [h.path for h in v.search("ferry budget", k=1)] == ["people/ana.md"]
        assert checks == []
        assert not v.engine.store.checked
    engine = Engine(VaultConfig.load(root), daemon=True)
    engine.close()
    assert checks == ["index.db", "cache.db"]
