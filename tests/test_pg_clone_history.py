"""The clone guard (engine/clone_guard.py) and a history rewritten by its own writer, or
a shallow clone: a real server (pgserver), real git, the CLI as a process."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import make_vault, memvault_env, run_memvault
from pg_helpers import fresh_schema
from pg_helpers import git_out as _git


def _team(tmp_path: Path, pg_server: Any, name: str) -> tuple[Path, dict[str, str]]:
    settings = {
        "MEMVAULT_INDEX_STORE": "postgres",
        "MEMVAULT_INDEX_DSN": str(pg_server.get_uri()),
        "MEMVAULT_INDEX_SCHEMA": fresh_schema(pg_server, name),
    }
    writer = make_vault(tmp_path / "build-01", "team")
    _git(writer, "init", "-q")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "the vault")
    return writer, memvault_env(tmp_path, **settings)


def test_the_writer_that_amended_its_own_commit_is_not_refused(
    tmp_path: Path, pg_server: Any
) -> None:
    """The index was written from this clone's commit; `git commit --amend` (or a rebase)
    here rewrote it: the clone still has every note the index was written from (its own
    files), so it is no clone behind; it was refused as "diverged" by its own record."""
    writer, env = _team(tmp_path, pg_server, "amend")
    note = writer / "decisions" / "2024-04-02-queues.md"
    note.write_text("# Queues\n\nA queue table in PostgreSQL.\n", encoding="utf-8")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "queues")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0

    note.write_text("# Queues\n\nA queue table in PostgreSQL, not a broker.\n")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-q", "--amend", "-m", "queues, amended")
    got = run_memvault("sync", "--vault", str(writer), env=env)
    assert got.returncode == 0, got.stdout + got.stderr


def test_a_shallow_clone_is_told_to_unshallow_not_to_pull(tmp_path: Path, pg_server: Any) -> None:
    """`git clone --depth 1` holds only its newest commit: the commit the index was
    written from, an older one, is missing from it, and `git pull` never brings it (the
    message said git pull first, forever)."""
    writer, env = _team(tmp_path, pg_server, "shallow")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    (writer / "decisions" / "2024-04-02-queues.md").write_text("# Queues\n\nA table.\n")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "queues")  # the index stays at the commit before
    laptop = tmp_path / "laptop" / "team"
    laptop.parent.mkdir()
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{writer}", str(laptop)], check=True
    )
    _git(laptop, "pull", "-q")
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 3, got.stdout + got.stderr
    assert "shallow" in got.stderr and "git fetch --unshallow" in got.stderr, got.stderr

    _git(laptop, "fetch", "-q", "--unshallow")
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 0, got.stdout + got.stderr


def test_a_clone_with_the_writers_commit_squash_merged_is_not_refused(
    tmp_path: Path, pg_server: Any
) -> None:
    """The writer indexed from its branch's commit, pushed it; the branch was squash-merged
    into main; a clone that fetched both and is on main has every change of that commit
    (under another one): it was refused as "diverged", and `git pull` never helped."""
    writer, env = _team(tmp_path, pg_server, "squash")
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(writer), str(hub)], check=True)
    _git(writer, "remote", "add", "hub", str(hub))
    _git(writer, "checkout", "-q", "-b", "queues")
    (writer / "decisions" / "2024-04-02-queues.md").write_text("# Queues\n\nA table.\n")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "queues")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    _git(writer, "push", "-q", "hub", "queues")

    laptop = tmp_path / "laptop" / "team"
    laptop.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(hub), str(laptop)], check=True)
    main = _git(laptop, "rev-parse", "--abbrev-ref", "HEAD").strip()
    _git(laptop, "merge", "-q", "--squash", "origin/queues")
    _git(laptop, "commit", "-qm", "queues (squashed)")
    _git(laptop, "push", "-q", "origin", main)
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 0, got.stdout + got.stderr

    # a commit of the writer's that is not here under another one still refuses
    _git(writer, "fetch", "-q", "hub")
    _git(writer, "checkout", "-q", "queues")
    (writer / "decisions" / "2024-04-03-retries.md").write_text("# Retries\n\nThree.\n")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "retries")
    _git(writer, "push", "-q", "hub", "queues")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    _git(laptop, "fetch", "-q")
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 3 and "diverged" in got.stderr, got.stdout + got.stderr


def test_a_writer_daemon_keeps_the_commit_it_is_at_before_it_stops(
    tmp_path: Path, pg_server: Any
) -> None:
    """A commit changes no note, so no sync recorded it: a writer daemon killed after a
    commit (a laptop's battery) left the index's record a commit behind its files, and a
    clone at that older commit was let in as the next writer and rolled the index back.
    The daemon looks at git's HEAD each tick and records the commit within seconds."""
    from helpers import DaemonProcess

    writer, env = _team(tmp_path, pg_server, "head-moved")
    settings = {
        k: env[k] for k in ("MEMVAULT_INDEX_STORE", "MEMVAULT_INDEX_DSN", "MEMVAULT_INDEX_SCHEMA")
    }
    daemon = DaemonProcess(tmp_path, writer, **settings)
    try:
        daemon.ready(answering=True)
        before = _git(writer, "rev-parse", "HEAD").strip()
        assert _recorded(pg_server, settings) == before  # at its open
        _git(writer, "commit", "-q", "--allow-empty", "-m", "notes indexed before")
        head = _git(writer, "rev-parse", "HEAD").strip()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and _recorded(pg_server, settings) != head:
            time.sleep(0.2)
        assert _recorded(pg_server, settings) == head, daemon.stderr[-2000:]
    finally:
        daemon.proc.kill()  # no close: what it recorded while it ran is what stays
        daemon.proc.wait(30)
        daemon.stop()


def _recorded(pg_server: Any, settings: dict[str, str]) -> str | None:
    import json

    import psycopg

    schema = settings["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        row = conn.execute(
            f"SELECT value FROM \"{schema}\".meta WHERE key = 'vault_commit'"
        ).fetchone()
    return None if row is None else str(json.loads(row[0])["commit"])


def test_a_move_of_head_whose_mark_failed_is_marked_at_the_next_tick(tmp_path: Path) -> None:
    """The tick that saw git's HEAD move and failed to mark it (PostgreSQL's server down
    or restarting: the daemon logs it and looks again next tick) took the move as
    marked: the index's record stayed behind the commit its files are at."""
    from memvault.engine.clone_guard import _when_moved

    git = tmp_path / "vault" / ".git"
    (git / "logs").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "logs" / "HEAD").write_text("")

    class Store:
        down = True
        marks = 0

        def mark_files(self) -> None:
            if self.down:
                raise ConnectionError("the server is restarting")
            self.marks += 1

    store = Store()
    look = _when_moved(store, tmp_path / "vault")
    (git / "logs" / "HEAD").write_text("a commit\n")
    with pytest.raises(ConnectionError):
        look()
    store.down = False
    look()
    assert store.marks == 1


def test_a_commit_the_writer_rebased_before_pushing_does_not_refuse_the_clones(
    tmp_path: Path, pg_server: Any
) -> None:
    """Field test: the writer indexed from a commit of its own, stopped, then `git pull
    --rebase` rewrote that commit and pushed the new one. No clone can ever fetch the
    commit the index names, so every clone was refused ("lacks that commit (not pulled
    yet)") however often it pulled, until someone deleted the meta row by hand. The index
    now keeps also what the writer had pushed; a clone holding all of that writes, and
    what the writer never pushed is that machine's, as notes it never committed are."""
    writer, env = _team(tmp_path, pg_server, "rebased")
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(writer), str(hub)], check=True)
    _git(writer, "remote", "add", "origin", str(hub))
    main = _git(writer, "rev-parse", "--abbrev-ref", "HEAD").strip()
    _git(writer, "fetch", "-q", "origin")
    _git(writer, "branch", "-q", "-u", f"origin/{main}")
    laptop = tmp_path / "laptop" / "team"
    laptop.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(hub), str(laptop)], check=True)

    (writer / "decisions" / "2024-04-02-queues.md").write_text("# Queues\n\nA table.\n")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "queues")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    (laptop / "decisions" / "2024-04-03-retries.md").write_text("# Retries\n\nThree.\n")
    _git(laptop, "add", "-A")
    _git(laptop, "commit", "-qm", "retries")
    _git(laptop, "push", "-q")
    _git(writer, "pull", "-q", "--rebase", "--autostash")  # the writer's commit is another one now
    _git(writer, "push", "-q")
    _git(laptop, "pull", "-q")
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "never pushed" in got.stderr, got.stderr  # said, as it happens

    # a commit the writer pushed, which this clone has not pulled yet, still refuses
    (writer / "decisions" / "2024-04-04-backoff.md").write_text("# Backoff\n\nDoubling.\n")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "backoff")
    _git(writer, "push", "-q")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 3 and "lacks that commit" in got.stderr, got.stdout + got.stderr
