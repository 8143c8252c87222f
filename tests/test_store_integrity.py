"""SQLite's quick_check on open, once per change memvault did not make (issue 27: it
read both databases whole on every command without a daemon, ~1 s at 100,000
notes): a file a memvault closed, unchanged since, is trusted by a process that is no
daemon; any other change, and every daemon start, is checked, and damage is found."""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from helpers import DAEMON_DIR, new_vault, note, open_vault, write
from memvault.config import VaultConfig
from memvault.engine import Engine
from memvault.errors import IndexCorrupt
from memvault.index import integrity
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


def _filled(tmp_path: Path) -> Path:
    """An index.db of ~200 KB that a memvault closed (so stamped)."""
    store = _store(tmp_path, trusting=True)
    with store.transaction() as conn:
        conn.execute("CREATE TABLE filler(x)")
        conn.executemany("INSERT INTO filler VALUES(?)", [(os.urandom(500),) for _ in range(400)])
    store.close()
    return tmp_path / "index.db"


def test_damage_put_back_under_the_files_own_size_and_mtime_is_found_on_open(
    tmp_path: Path,
) -> None:
    """A copy over the same file that keeps its size and mtime (`cp -p` of a torn
    backup, `rsync -a --inplace`, `touch -r`): the stamp's size and mtime are the
    same, the content is not. The file's ctime, which no program can set, says so."""
    index = _filled(tmp_path)
    st = index.stat()
    with index.open("r+b") as f:
        f.seek(st.st_size // 2)
        f.write(b"\xff" * 4096)
    os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns))  # as `cp -p` leaves it
    assert (index.stat().st_size, index.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    with pytest.raises(IndexCorrupt):
        _store(tmp_path, trusting=True)


def test_damage_a_stamp_still_vouches_for_is_said_plainly_and_the_next_command_rebuilds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Damage the stamp cannot see (a failing disk: the content changed, not the file's
    stamp) is met by a command that trusted it: it said `sqlite3.DatabaseError` with a
    traceback, and so did every command after it (the stamp still matched) until a
    daemon started. Now it is IndexCorrupt, the stamp is gone, and the next command
    checks the file, finds the damage and rebuilds the index from the vault."""
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    for i in range(200):
        body = f"The harbour budget {i} is reviewed. " * 30 + "\n"
        write(root, f"notes/n{i:03d}.md", note(f"Note {i}", "", body))
    with open_vault(root) as v:
        v.sync()
    index = root / ".memvault" / "index.db"
    stamp = root / ".memvault" / "index.db.checked"
    # the pages a search reads and an open does not (the chunks and their keywords), the
    # size kept. Most pages of the file, from its eighth on, held the schema's own pages
    # too once schema 14 added its indexes (pages 33 and 34 of 147; 123-125 of 127
    # before): the open met the damage and rebuilt the index, and no search met it
    with sqlite3.connect(index) as db:
        page = db.execute("PRAGMA page_size").fetchone()[0]
        pages = [
            n
            for (n,) in db.execute(
                "SELECT pageno FROM dbstat WHERE name IN ('chunks', 'chunks_fts_data')"
            )
        ]
    db.close()
    assert len(pages) > 20
    with index.open("r+b") as f:
        for n in pages:
            f.seek((n - 1) * page)
            f.write(b"\xff" * page)
    stamp.write_text(integrity.stamp(index) or "", encoding="ascii")  # as if unchanged
    with pytest.raises(IndexCorrupt, match=r"index\.db: .*rebuilds it"):  # noqa: SIM117
        with open_vault(root, mode="query") as v:  # (the open itself may meet it)
            v.search("harbour budget 7", k=3)
    assert not stamp.exists()
    with open_vault(root, mode="query") as v:
        assert v.engine.store_rebuilt == str(index)
        assert [h.path for h in v.search("harbour budget 7", k=1)] == ["notes/n007.md"]


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_stamp_that_is_no_plain_file_is_not_read_and_the_file_is_checked(
    tmp_path: Path, kind: str
) -> None:
    """A FIFO where the stamp goes made every open wait forever for a writer; a link to
    /dev/zero read without end. Neither is a stamp: the file is checked, the open goes on."""
    _filled(tmp_path)
    stamp = tmp_path / "index.db.checked"
    stamp.unlink()
    if kind == "fifo":
        os.mkfifo(stamp)
    elif kind == "directory":
        stamp.mkdir()
    else:
        stamp.symlink_to("/dev/zero")
    code = (
        "import sys; from pathlib import Path; from memvault.index.store import Store; "
        "p = Path(sys.argv[1]); s = Store(p / 'index.db', p / 'cache.db', trusting=True); "
        "print(s.checked); s.close()"
    )
    env = {**os.environ, "PYTHONPATH": str(DAEMON_DIR)}
    run = subprocess.run(  # a bound on its memory: /dev/zero read whole is a MemoryError
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"


@pytest.mark.parametrize("how", ["renamed", "in place"])
@pytest.mark.parametrize("name", ["index.db", "cache.db"])
def test_a_file_put_in_place_of_the_open_one_is_checked_on_the_next_open(
    tmp_path: Path, checks: list[str], name: str, how: str
) -> None:
    """A backup restored while a command, an MCP server or a kept Vault had the index
    open (``rsync -a`` and ``tar`` write a new file and rename it over; ``cp`` writes
    over the file in place): at its close the stamp was written for that file, which
    this process never read, and every command after it trusted it unchecked; a damaged
    restore was read as good."""
    _filled(tmp_path)
    _store(tmp_path, trusting=True).close()
    target = tmp_path / name
    restored = tmp_path / f"{name}.restored"
    conn = sqlite3.connect(restored)  # another database of the same shape, in its place
    conn.execute("CREATE TABLE filler(x)")
    conn.executemany("INSERT INTO filler VALUES(?)", [(os.urandom(500),) for _ in range(400)])
    conn.commit()
    conn.close()
    with restored.open("r+b") as f:  # torn: a page in the middle overwritten
        f.seek(restored.stat().st_size // 2)
        f.write(b"\xff" * 4096)
    store = _store(tmp_path, trusting=True)
    assert not store.checked
    if how == "renamed":  # rsync -a, tar: a new file renamed over
        os.replace(restored, target)
    else:  # cp, cat >: written over the file in place, its inode kept
        target.write_bytes(restored.read_bytes())
    store.close()
    checks.clear()
    with pytest.raises(IndexCorrupt):
        _store(tmp_path, trusting=True)
    assert checks == (["index.db"] if name == "index.db" else ["cache.db"])


def test_the_files_own_writes_keep_it_stamped_at_close(tmp_path: Path, checks: list[str]) -> None:
    """A writer's own commits (a checkpoint among them: the WAL past 1,000 pages) are
    its own: the close stamps the file, the next command trusts it."""
    _filled(tmp_path)
    store = _store(tmp_path, trusting=True)
    index = tmp_path / "index.db"
    before = index.stat()
    with store.transaction() as conn:  # ~2,000 pages: SQLite checkpoints at its commit
        conn.executemany("INSERT INTO filler VALUES(?)", [(os.urandom(3000),) for _ in range(2000)])
    assert index.stat().st_size > before.st_size  # the checkpoint wrote the file
    for _ in range(3):
        store._cache.put("m", {f"{i:064x}": np.ones(8, dtype=np.float32) for i in range(50)})
    store.close()
    checks.clear()
    store = _store(tmp_path, trusting=True)
    assert checks == [] and not store.checked
    store.close()
