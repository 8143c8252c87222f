"""A clone that pulled the writer's commit and then dropped it here (`git reset --hard
HEAD~1`: a look at yesterday's notes, an undo of a pull), run as the writer while the
real one is stopped (engine/clone_guard.py). HEAD's reflog names that commit, which let
it in as a history rewritten here (an amend, a rebase of its own commits): its sync
deleted from the team's index the note the commit added, which the remote still holds.
A real server (pgserver), real git with a remote, the CLI as a process."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import psycopg

from helpers import make_vault, memvault_env, run_memvault
from pg_helpers import fresh_schema
from pg_helpers import git_out as _git

QUEUES = "decisions/2024-04-02-queues.md"


def _indexed(pg_server: Any, schema: str) -> set[str]:
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        return {str(p) for (p,) in conn.execute(f'SELECT path FROM "{schema}".notes')}


def _pushed(tmp_path: Path, pg_server: Any, name: str) -> tuple[Path, Path, dict[str, str], str]:
    """The writer's clone of a vault, pushed to a bare remote (main, its upstream): the
    clone, the remote, the CLI's settings and the index's schema."""
    schema = fresh_schema(pg_server, name)
    env = memvault_env(
        tmp_path,
        MEMVAULT_INDEX_STORE="postgres",
        MEMVAULT_INDEX_DSN=str(pg_server.get_uri()),
        MEMVAULT_INDEX_SCHEMA=schema,
    )
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    writer = make_vault(tmp_path / "build-01", "team")
    _git(writer, "init", "-q", "-b", "main")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "the vault")
    _git(writer, "remote", "add", "origin", str(remote))
    _git(writer, "push", "-q", "-u", "origin", "main")
    return writer, remote, env, schema


def test_a_clone_that_reset_away_a_pushed_commit_is_refused_until_it_pulls(
    tmp_path: Path, pg_server: Any
) -> None:
    writer, remote, env, schema = _pushed(tmp_path, pg_server, "clone-reset")
    laptop = tmp_path / "laptop" / "team"
    laptop.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(remote), str(laptop)], check=True)

    (writer / QUEUES).write_text("# Queues\n\nA queue table in PostgreSQL.\n", encoding="utf-8")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "queues")
    _git(writer, "push", "-q")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    _git(writer, "add", "-A")  # MEMORY.md as the sync wrote it, pushed too
    _git(writer, "commit", "-qm", "MEMORY.md")
    _git(writer, "push", "-q")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    before = _indexed(pg_server, schema)
    assert QUEUES in before

    _git(laptop, "pull", "-q")
    _git(laptop, "reset", "-q", "--hard", "HEAD~2")  # the pulled commits dropped here
    assert not (laptop / QUEUES).exists()
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 3, got.stdout + got.stderr
    assert "git pull first" in got.stderr and "nothing was written" in got.stderr, got.stderr
    assert "origin/main holds that commit" in got.stderr, got.stderr  # (not "never pushed")
    assert _indexed(pg_server, schema) == before

    _git(laptop, "pull", "-q")
    got = run_memvault("sync", "--vault", str(laptop), env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    assert _indexed(pg_server, schema) == before


def test_a_branch_squash_merged_and_edited_on_main_after_is_not_refused(
    tmp_path: Path, pg_server: Any
) -> None:
    """The writer indexed from its branch's commit and pushed the branch; it was
    squash-merged into main, and that note edited on main after. The writer, on main
    and up to date with it, had that commit checked out (its own): a remote branch
    (origin/queues, stale, merged) still holding it refused it as a clone that dropped
    what the team has, though no pull brings that branch to main ("git pull first", and
    a pull changed nothing). The branch main pulls from does not hold it: it writes."""
    writer, _, env, schema = _pushed(tmp_path, pg_server, "clone-squash-edit")

    _git(writer, "checkout", "-q", "-b", "queues")
    (writer / QUEUES).write_text("# Queues\n\nA queue tabel.\n", encoding="utf-8")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "queues")
    _git(writer, "push", "-q", "-u", "origin", "queues")
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    _git(writer, "checkout", "-q", "-f", "main")
    _git(writer, "merge", "-q", "--squash", "queues")
    _git(writer, "commit", "-qm", "queues (squashed)")
    (writer / QUEUES).write_text("# Queues\n\nA queue table in PostgreSQL.\n", encoding="utf-8")
    _git(writer, "add", "-A")
    _git(writer, "commit", "-qm", "queues: the table named")
    _git(writer, "push", "-q")
    got = run_memvault("sync", "--vault", str(writer), env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    assert QUEUES in _indexed(pg_server, schema)
