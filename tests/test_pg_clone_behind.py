"""A clone of the vault a `git pull` behind the team's index, run as its writer while the
real writer is stopped (docs/TEAM.md, engine/clone_guard.py). A real server (pgserver),
real git, the CLI and the daemon as processes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import psycopg

from helpers import DaemonProcess, make_vault, memvault_env, run_memvault
from pg_helpers import fresh_schema
from pg_helpers import git_out as _git


def _indexed(pg_server: Any, schema: str) -> dict[str, str]:
    """The notes the shared index holds: path -> sha256 of the text indexed."""
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        rows = conn.execute(f'SELECT path, sha256 FROM "{schema}".notes').fetchall()
    return {str(p): str(s) for p, s in rows}


def test_a_clone_a_pull_behind_run_as_the_writer_rolls_the_index_back_no_more(
    tmp_path: Path, pg_server: Any
) -> None:
    """A field test: the writer daemon stopped, a colleague whose clone was a `git pull`
    behind ran the writer there; its reconcile deleted from the shared index the note it
    did not have yet and put back its older copy of the one changed (the guard before
    refused only when most notes were missing). It is refused, exit 3, nothing written,
    saying git pull; fetched but not merged too. Once pulled it writes, and a deletion
    and a rename made in that clone (not committed) are followed, not refused."""
    schema = fresh_schema(pg_server, "clone-behind")
    settings = {
        "MEMVAULT_INDEX_STORE": "postgres",
        "MEMVAULT_INDEX_DSN": str(pg_server.get_uri()),
        "MEMVAULT_INDEX_SCHEMA": schema,
        "MEMVAULT_DAEMON_RECONCILE_SECONDS": "3600",
    }
    env = memvault_env(tmp_path, **settings)
    writer = make_vault(tmp_path / "build-01", "team")
    _git(writer, "init", "-q")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "the vault")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    laptop = tmp_path / "laptop" / "team"
    laptop.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(writer), str(laptop)], check=True)

    # the writer goes on: a new note, a note changed, committed and indexed
    (writer / "decisions" / "2024-04-02-queues.md").write_text(
        "# Queues\n\nWe chose a queue table in PostgreSQL over a broker.\n", encoding="utf-8"
    )
    person = writer / "people" / "sarah-chen.md"
    person.write_text(person.read_text(encoding="utf-8") + "\nNow leads the queue work.\n")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "queues")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    before = _indexed(pg_server, schema)
    assert "decisions/2024-04-02-queues.md" in before

    # the laptop, a pull behind, as the writer: the CLI's sync, then a daemon
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 3, got.stdout + got.stderr
    assert "git pull first" in got.stderr and "not pulled yet" in got.stderr, got.stderr
    assert "nothing was written" in got.stderr
    assert _indexed(pg_server, schema) == before
    daemon = DaemonProcess(tmp_path, laptop, **settings)
    try:
        assert daemon.proc.wait(60) == 3, daemon.stderr[-3000:]
    finally:
        daemon.stop()
    assert "git pull first" in daemon.stderr
    assert _indexed(pg_server, schema) == before

    _git(laptop, "fetch", "-q")  # fetched, not merged: still behind
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 3 and "fetched, not merged" in got.stderr, got.stderr
    assert _indexed(pg_server, schema) == before

    _git(laptop, "merge", "-q", "--ff-only")
    (laptop / "logs" / "2024-03-15.md").unlink()  # a deletion and a rename made here
    (laptop / "people" / "sarah-chen.md").rename(laptop / "people" / "sarah.md")
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    after = _indexed(pg_server, schema)
    assert "decisions/2024-04-02-queues.md" in after
    assert after["people/sarah.md"] == before["people/sarah-chen.md"]  # the new text's
    assert "people/sarah-chen.md" not in after and "logs/2024-03-15.md" not in after

    # the first writer, now behind the laptop's commit? No: the laptop committed nothing,
    # and the same commit is no clone behind (its files differ: the sync follows them)
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
