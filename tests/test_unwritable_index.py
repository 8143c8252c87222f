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
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import open_vault, run_namespaced
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


def state_files(root: Path) -> list[str]:
    """``.memvault/``'s files by name: a read that leaves an empty ``-wal`` and a
    ``-shm`` of its own beside another user's database is seen. (A database this user
    can write is written as it is read, and stamped: ``index.db.checked`` made again.)"""
    return sorted(p.name for p in (root / ".memvault").iterdir())


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
    Path(f"{db}.checked").unlink()  # its stamp is its owner's to make, not this user's
    before, notes, state = db.read_bytes(), files(vault), state_files(vault)
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
    # no index.db-wal, no index.db-shm of this user's left beside the owner's file: the
    # owner's memvault could not write that -shm, and failed each write and search after
    assert state_files(vault) == state


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


def test_a_state_folder_closed_to_this_user_is_read_and_a_write_refused_in_one_line(
    vault: Path,
) -> None:
    """Its files writable, ``.memvault/`` not: SQLite makes a WAL index's -shm beside it
    to read it, so a read was refused too (exit 7). No writer has it open (no -wal
    there): it is read as an immutable file, with no -shm (index/sqlite_open.py); a
    write is refused in one line naming the folder and the fix, not a traceback."""
    state = vault / ".memvault"
    notes, kept = files(vault), state_files(vault)
    state.chmod(0o555)
    try:
        (search, status, log) = as_a_user(vault, READS[0], ["status"], ["log", "a line"])
    finally:
        state.chmod(0o777)
    for code, out, err in (search, status):
        assert code == 0 and "Traceback" not in err, (code, out, err)
    assert "Functions.md" in search[1]
    said = f"{state} cannot be written by this user (mode 555)"
    assert search[2].count(said) == 1 and f"chmod u+wx {state}" in search[2], search[2]
    code, out, err = log
    assert code == 7 and "Traceback" not in err, (code, out, err)
    assert f"chmod u+wx {state}" in err and len(err.strip().splitlines()) == 1, err
    assert "nothing was written" in err
    assert files(vault) == notes
    assert state_files(vault) == kept


_READ_ONLY_MOUNT = textwrap.dedent(
    """
    import json, os, subprocess, sys
    root, home = sys.argv[1], sys.argv[2]
    state = os.path.join(root, ".memvault")
    subprocess.run(["mount", "--bind", state, state], check=True)
    subprocess.run(["mount", "-o", "remount,bind,ro", state], check=True)
    env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash", HOME=home)
    out = []
    for args in (["search", "hasTag"], ["context", "what does hasTag do"], ["log", "a line"]):
        run = subprocess.run(
            [sys.executable, "-m", "memvault", *args, "--vault", root],
            env=env, capture_output=True, text=True, timeout=60,
        )
        out.append([run.returncode, run.stdout, run.stderr])
    print(json.dumps(out))
    """
)


def test_an_index_on_a_read_only_mount_is_read_and_a_write_refused(vault: Path) -> None:
    """``.memvault/`` bind-mounted read-only (a container's volume, a backup mounted to
    look at): no -shm can be made there, and a read was refused, exit 7, its advice a
    chmod that cannot help. It is read as it is (no writer can have it open)."""
    notes, kept = files(vault), state_files(vault)
    namespace = ["unshare", "--user", "--map-root-user", "--mount"]
    home = str(vault.parent / "home")
    (search, context, log) = run_namespaced(namespace, _READ_ONLY_MOUNT, str(vault), home)
    for code, out, err in (search, context):
        assert code == 0 and "Traceback" not in err, (code, out, err)
        assert "this answer is from the index as it is" in err, err
    assert "Functions.md" in search[1] and "hasTag" in context[1]
    code, out, err = log
    assert code == 7 and "nothing was written" in err and "Traceback" not in err, err
    assert files(vault) == notes
    assert state_files(vault) == kept


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


def test_a_damaged_index_of_another_user_is_left_to_its_owner(vault: Path) -> None:
    """Damage found at the open of another user's index.db (its folder open to us):
    the read deleted it and made a new one, this user's, which its owner's memvault
    could not write. Now: exit 7 naming the file, nothing deleted or made."""
    db = vault / ".memvault" / "index.db"
    with db.open("r+b") as fh:  # pages past the first, torn: quick_check finds it
        fh.seek(4096)
        fh.write(b"\xa5" * 8192)
    another_users(db)
    before, kept = db.read_bytes(), state_files(vault)
    (search,) = as_a_user(vault, READS[0])
    code, out, err = search
    assert code == 7 and "Traceback" not in err, (code, out, err)
    assert f"cannot open {db}" in err and "its owner's next memvault" in err, err
    assert "nothing was deleted" in err
    assert db.read_bytes() == before and db.stat().st_uid == OTHER_UID
    assert state_files(vault) == kept


def test_another_users_wal_and_shm_beside_our_index_refuse_a_write_in_one_line(
    vault: Path,
) -> None:
    """An empty ``index.db-wal`` and a ``-shm`` another user's read left beside our
    index (an older memvault's, as that user): SQLite could not write through them, so
    `log` wrote its line and left it unindexed, and each search after it was a
    traceback ("attempt to write a readonly database"). A write is refused before
    anything is written, naming the file and the fix; a read answers from the index."""
    state = vault / ".memvault"
    wal, shm = state / "index.db-wal", state / "index.db-shm"
    wal.write_bytes(b"")
    shm.write_bytes(bytes(32768))
    for path in (wal, shm):
        another_users(path)
    notes, kept = files(vault), state_files(vault)
    (log, search) = as_a_user(vault, ["log", "a line for today"], READS[0])
    code, out, err = log
    assert code == 7 and "Traceback" not in err, (code, out, err)
    assert f"error: {wal} cannot be written by this user" in err and "chown" in err, err
    assert "nothing was written" in err and len(err.strip().splitlines()) == 1, err
    code, out, err = search
    assert code == 0 and "Traceback" not in err, (code, out, err)
    assert "Functions.md" in out and err.count(f"{wal} cannot be written") == 1, err
    assert files(vault) == notes
    assert state_files(vault) == kept


def test_a_write_beside_a_read_only_cache_is_refused_whole_then_done_once_fixed(
    vault: Path,
) -> None:
    """cache.db alone read-only to its owner (index.db and the folder writable): a note
    is the person's words, but a write is refused all the same, before anything is
    written, naming cache.db and the fix; done as asked once fixed. Taking it would
    leave an index whose new notes no search by meaning finds, and every embedding
    path (the daemon's lane, `memvault sync`, a query's catch-up) failing on it."""
    cache = vault / ".memvault" / "cache.db"
    cache.chmod(0o444)
    notes = files(vault)
    add = ["add", "people", "Ana Perez", "--body", "Leads payments."]
    (refused,) = as_a_user(vault, add)
    code, out, err = refused
    assert code == 7 and "Traceback" not in err, (code, out, err)
    said = f"error: {cache} cannot be written by this user (mode 444): make it writable"
    assert said in err and f"(chmod u+w {cache})" in err, err
    assert "nothing was written" in err and len(err.strip().splitlines()) == 1, err
    assert files(vault) == notes
    cache.chmod(0o666)
    (done, found) = as_a_user(vault, add, ["search", "payments"])
    assert done[0] == 0 and found[0] == 0, (done, found)
    assert "people/ana-perez" in found[1]


_HELD_READ = textwrap.dedent(
    """
    import json, sys
    from memvault.api import Vault
    from memvault.index.embedder import HashEmbedder
    with Vault.open(sys.argv[1], mode="query", embedder=HashEmbedder()) as vault:
        print(json.dumps([h.path for h in vault.search("hasTag")]), flush=True)
        sys.stdin.readline()  # its owner's memvault writes the index meanwhile
        try:
            said = {"hits": [h.path for h in vault.search("Zanzibar harbour")]}
        except Exception as exc:
            said = {"error": type(exc).__name__, "said": str(exc)}
    print(json.dumps(said), flush=True)
    """
)


def test_an_index_its_owner_writes_under_a_held_read_is_refused_not_read_torn(
    vault: Path,
) -> None:
    """Another user's index.db with no writer open (no -wal): read as an immutable file
    (index/sqlite_open.py), whose pages SQLite keeps, trusting they never change. Its
    owner's memvault wrote it while a read held it open (a program's Vault kept open):
    the read answered from its old pages mixed with the new ones (a torn b-tree: wrong
    hits, or "malformed", said as damage to rebuild, the owner's stamp deleted). Now
    the read that finds the file changed under it is refused (exit 7: run it again);
    nothing of the owner's touched, and the next read sees the owner's notes."""
    db = vault / ".memvault" / "index.db"
    for path in (db, db.parent / "cache.db"):
        os.chown(path, OTHER_UID, OTHER_UID)
        path.chmod(0o644)  # its owner writes it: this user cannot
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[1] / "daemon"))
    env["HOME"] = str(vault.parent / "home")
    reader = subprocess.Popen(
        [*AS_A_USER, sys.executable, "-c", _HELD_READ, str(vault)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout is not None and reader.stdin is not None
        assert "Functions.md" in json.loads(reader.stdout.readline())
        assert not Path(f"{db}-wal").exists()  # no writer: read as a file no one writes
        for i in range(40):  # the owner's memvault (root: writes a file of mode 644)
            body = f"Zanzibar harbour {i}. " + "A long line of words. " * 40
            (vault / f"zanzibar-{i}.md").write_text(f"# Zanzibar {i}\n\n{body}\n", "utf-8")
        assert CliRunner().invoke(app, ["sync", "--vault", str(vault)]).exit_code == 0
        stamp = Path(f"{db}.checked").read_bytes()
        out, err = reader.communicate("\n", timeout=60)
    finally:
        if reader.poll() is None:
            reader.kill()
    said = json.loads(out.strip().splitlines()[-1])
    assert said.get("error") == "StorageError", (said, err)
    assert f"{db} changed under this read" in said["said"] and "again" in said["said"], said
    assert Path(f"{db}.checked").read_bytes() == stamp  # the owner's, as it wrote it
    (search,) = as_a_user(vault, ["search", "Zanzibar harbour"])
    assert search[0] == 0 and "zanzibar-" in search[1], search


_SEARCH = textwrap.dedent(
    """
    import json, sys
    from memvault.api import Vault
    from memvault.index.embedder import HashEmbedder
    with Vault.open(sys.argv[1], mode="query", embedder=HashEmbedder()) as vault:
        hits = [h.path for h in vault.search("Zanzibar harbour")]
    print(json.dumps(hits))
    """
)


def test_a_read_goes_through_the_live_writers_shm_it_cannot_write(vault: Path) -> None:
    """Another user's index open in its owner's memvault: its -wal holds a commit not
    yet folded back, and its -shm (mode 644) is not ours to write. The read opens it
    ``mode=ro`` through them (SQLite reads a -shm it cannot write: 3.22), sees the
    commit, and leaves nothing: it touched ``lock.wanted`` (the owner held the lock), a
    file of this user's there after it, which the owner's memvault could not touch
    again to ask its own holder (an MCP server keeping the vault) to let go. The
    owner's next write goes on after it."""
    db = vault / ".memvault" / "index.db"
    for path in (db, db.parent / "cache.db"):
        os.chown(path, OTHER_UID, OTHER_UID)
        path.chmod(0o644)
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    home = vault.parent / "home"
    with open_vault(vault) as owner:  # root: the owner, its connection open throughout
        (vault / "zanzibar.md").write_text("# Zanzibar\n\nZanzibar harbour.\n", "utf-8")
        owner.sync()
        assert wal.stat().st_size > 0 and shm.exists()  # the commit in the WAL alone
        for path in (wal, shm):
            os.chown(path, OTHER_UID, OTHER_UID)
            path.chmod(0o644)
        kept = state_files(vault)
        hits = run_namespaced(AS_A_USER, _SEARCH, str(vault), home=home)
        assert "zanzibar.md" in hits, hits
        assert state_files(vault) == kept
        (vault / "zanzibar-2.md").write_text("# Zanzibar 2\n\nZanzibar harbour.\n", "utf-8")
        owner.sync()
        assert {"zanzibar.md", "zanzibar-2.md"} <= {h.path for h in owner.search("Zanzibar")}
    hits = run_namespaced(AS_A_USER, _SEARCH, str(vault), home=home)
    assert "zanzibar-2.md" in hits, hits


def test_a_wal_deleted_while_it_is_looked_at_is_not_called_unwritable(tmp_path: Path) -> None:
    """Two memory tools on one folder in one process (or a CLI write beside an agent):
    one's close checkpoints and deletes ``index.db-wal`` between the other's
    ``exists()`` and ``os.access`` of it, and the other's write was refused, "…/index.db-wal
    cannot be written by this user (No such file or directory); nothing was written"
    (seen once in six runs of test_memory_tool.py). A -wal made and deleted as fast as
    a thread can, looked at 20,000 times: never said unwritable (before: 5-7 times)."""
    import threading

    from memvault.vault.state_dir import unwritable

    state = tmp_path / ".memvault"
    state.mkdir()
    (state / "index.db").write_bytes(b"")
    wal = state / "index.db-wal"
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            wal.write_bytes(b"x")
            wal.unlink(missing_ok=True)

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        said = [p for _ in range(20_000) if (p := unwritable(state)) is not None]
    finally:
        stop.set()
        thread.join()
    assert said == []
