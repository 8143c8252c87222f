"""A vault whose index this user cannot write (another user's ``index.db`` of mode 0444,
its ``cache.db``, a ``.memvault/`` folder closed to us): a read answers from the index as
it is and says so once, a write is refused whole by one line naming the file and the fix
(exit 7), nothing written. Before, a search there ended in a traceback ("attempt to write
a readonly database", its sync's or the model's first write) and `log` wrote the note and
left it unindexed. As a user of a user namespace: root writes a 0444 file."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import run_namespaced
from memvault.interfaces.cli import app
from memvault.vault.template import init_vault

FIXTURE = Path(__file__).parent / "fixtures" / "obsidian-vault"
AS_A_USER = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
OTHER_UID = 12345  # the index's owner: no user of the namespace (seen there as 65534)

_COMMANDS = textwrap.dedent(
    """
    import json, os, subprocess, sys
    root, home, commands = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash", HOME=home)
    out = []
    for args in commands:
        run = subprocess.run(
            [sys.executable, "-m", "memvault", *args, "--vault", root],
            env=env, capture_output=True, text=True, timeout=60,
        )
        out.append([run.returncode, run.stdout, run.stderr])
    print(json.dumps(out))
    """
)


def files(root: Path) -> dict[str, bytes]:
    """Every file of the vault but memvault's own (its -shm, its stamps), by content."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memvault" not in p.parts
    }


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An indexed vault, open to all; then a note edited by its owner, not synced."""
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    init_vault(root)
    assert CliRunner().invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    with (root / "Functions.md").open("a", encoding="utf-8") as fh:
        fh.write("\nEdited since the last sync.\n")
    (tmp_path / "home").mkdir()
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o777 if path.is_dir() else 0o666)
    return root


def as_a_user(root: Path, *commands: list[str]) -> list[tuple[int, str, str]]:
    home = root.parent / "home"
    out = run_namespaced(AS_A_USER, _COMMANDS, str(root), str(home), json.dumps(commands))
    return [tuple(each) for each in out]  # type: ignore[misc]


def another_users(path: Path) -> None:
    os.chown(path, OTHER_UID, OTHER_UID)
    path.chmod(0o444)


READS = [["search", "hasTag"], ["context", "what does hasTag do"], ["get", "Functions.md"]]


@pytest.mark.parametrize("name", ["index.db", "cache.db"])
def test_reads_of_an_index_this_user_cannot_write_answer_from_it_as_it_is(
    vault: Path, name: str
) -> None:
    db = vault / ".memvault" / name
    another_users(db)
    before, notes = db.read_bytes(), files(vault)
    (search, context, get, status) = as_a_user(vault, *READS, ["status"])
    for code, out, err in (search, context, get, status):
        assert code == 0 and "Traceback" not in err, (code, out, err)
    assert "Functions.md" in search[1]  # the index as it is
    assert "Edited since the last sync." in get[1]  # the note as it is now
    said = f"{db} cannot be written by this user (mode 444, owner uid 65534)"
    assert search[2].count(said) == 1 and "chown" in search[2], search[2]
    assert "index is behind the files: 1 notes changed" in status[1], status
    assert db.read_bytes() == before
    assert files(vault) == notes


@pytest.mark.parametrize("name", ["index.db", "cache.db"])
def test_a_write_into_an_index_this_user_cannot_write_is_refused_whole(
    vault: Path, name: str
) -> None:
    db = vault / ".memvault" / name
    another_users(db)
    before, notes = db.read_bytes(), files(vault)
    log, add = as_a_user(
        vault, ["log", "a line for today"], ["add", "people", "Ana Perez", "--body", "Hi."]
    )
    for code, out, err in (log, add):
        assert code == 7 and "Traceback" not in err, (code, out, err)
        assert f"error: {db} cannot be written by this user" in err, err
        assert "nothing was written" in err and len(err.strip().splitlines()) == 1, err
    assert db.read_bytes() == before
    assert files(vault) == notes  # no note written and left out of the index


def test_a_state_folder_closed_to_this_user_is_one_line_naming_it_and_the_fix(
    vault: Path,
) -> None:
    """Its files writable, ``.memvault/`` not: SQLite cannot read a WAL index without
    its -shm beside it, so a read is refused too, in one line, not a traceback."""
    state = vault / ".memvault"
    notes = files(vault)
    state.chmod(0o555)
    try:
        (search, status, log) = as_a_user(vault, READS[0], ["status"], ["log", "a line"])
    finally:
        state.chmod(0o777)
    for code, out, err in (search, status, log):
        assert code == 7 and "Traceback" not in err, (code, out, err)
        assert f"chmod u+wx {state}" in err and len(err.strip().splitlines()) == 1, err
    assert "nothing was written" in log[2]
    assert files(vault) == notes


def test_a_reader_without_the_writers_lock_writes_no_meta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock file cannot be opened (a folder in its place): the search reads the index
    as it is, as a reader, and the model's first load wrote its dimension into it all
    the same (``Embedding.embedder`` asked the store, not the engine, whether it reads)."""
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    init_vault(root)
    assert CliRunner().invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    index = root / ".memvault" / "index.db"
    with sqlite3.connect(index) as db:  # an index whose dimension no model load recorded
        db.execute("DELETE FROM meta WHERE key = 'dim'")
    db.close()
    lock = root / ".memvault" / "lock"
    lock.unlink()
    lock.mkdir()
    result = CliRunner().invoke(app, ["search", "hasTag", "--vault", str(root)])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'dim'").fetchall() == []
    db.close()


_DOOR = textwrap.dedent(
    """
    import json, os, sys
    os.environ["MEMVAULT_INDEX_MODEL"] = "hash"
    from memvault.door import VaultDoor
    from memvault.errors import StorageError
    door = VaultDoor(sys.argv[1], {})
    status = door.run(lambda v: v.status(), "peek")
    hits = door.run(lambda v: [h.path for h in v.search("hasTag")], "query")
    try:
        door.run(lambda v: v.log("a line for today"), "write")
        refused = None
    except StorageError as exc:
        refused = str(exc)
    door.close()
    print(json.dumps({"chunks": status["index"]["chunks"], "hits": hits, "refused": refused}))
    """
)


def test_the_door_of_an_index_this_user_cannot_write_peeks_reads_and_refuses_writes(
    vault: Path,
) -> None:
    """The MCP server's and the memory tool's way in (memvault/door.py): a peek opens
    with the writer's lock when it is free, and met the index's refusal; it reads the
    index as it is, as a query does, and a write is refused, nothing written."""
    db = vault / ".memvault" / "index.db"
    another_users(db)
    before, notes = db.read_bytes(), files(vault)
    out = run_namespaced(AS_A_USER, _DOOR, str(vault), home=vault.parent / "home")
    assert out["chunks"] > 0 and "Functions.md" in out["hits"], out
    assert out["refused"] is not None and "cannot be written by this user" in out["refused"]
    assert db.read_bytes() == before
    assert files(vault) == notes
