"""A search with no daemon on a clone (the CLI, a ``Vault`` opened to query) while the
team's writer runs on another machine: the clone's own notes, new or edited here and not
yet on the writer's machine, are missing from the team's index, and the search said
nothing (only a reader daemon's watcher, or a search while no writer ran, named them).
It names them now, as git lists them against the commit the index was written from
(docs/TEAM.md). A real server (pgserver), real git clones with a remote, the CLI as a
process, the Python API."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import psycopg
import pytest

from helpers import memvault_env, note, open_vault, run_memvault, write
from pg_helpers import git_out, team_clones, team_settings

ANA = "people/ana-quill.md"  # new on the clone
SARAH = "people/sarah-chen.md"  # edited on the clone
DECISION = "decisions/2024-03-12-why-postgresql.md"  # edited on the writer's machine


@pytest.fixture
def clones(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, dict[str, str]]:
    settings = team_settings(pg_dsn, monkeypatch)
    a, b = team_clones(tmp_path)
    return a, b, memvault_env(tmp_path, **settings)


def _cli_search(b: Path, env: dict[str, str]) -> tuple[list[str], str]:
    done = run_memvault("search", "quill harpsichord tuning", "--json", "--vault", str(b), env=env)
    assert done.returncode == 0, done.stderr
    return [h["path"] for h in json.loads(done.stdout)["hits"]], " ".join(done.stderr.split())


def test_a_clones_own_notes_are_named_by_a_search_with_no_daemon_while_a_writer_runs(
    clones: tuple[Path, Path, dict[str, str]],
) -> None:
    a, b, env = clones
    # the writer's machine moves on: a commit of its own, not pulled by the clone yet
    decision = (a / DECISION).read_text(encoding="utf-8")
    write(a, DECISION, decision + "\nRevisited: PostgreSQL stays.\n")
    git_out(a, "commit", "-qam", "revisited")
    write(b, ANA, note("Ana Quill", body="Ana owns the quill harpsichord tuning."))
    sarah = (b / SARAH).read_text(encoding="utf-8")
    write(b, SARAH, sarah + "\nSarah tunes the quill harpsichord on Fridays.\n")
    with open_vault(a) as writer:  # the writer runs (holds the team's lock) meanwhile
        writer.sync()
        hits, said = _cli_search(b, env)
        assert ANA not in hits
        assert f"lacks 1 note of this copy ({ANA})" in said, said
        assert f"1 note changed here (it holds an older copy) ({SARAH})" in said, said
        assert "its writer (" in said and "pull there" in said, said
        assert DECISION not in said, said  # the writer's change, not this clone's
        with open_vault(b, mode="query") as v:  # the Python API, no daemon
            assert v.daemon is None
            v.search("quill harpsichord", k=5)
            assert v.stale is not None and ANA in v.stale and SARAH in v.stale, v.stale
            assert DECISION not in v.stale
        # the writer's machine gets the clone's notes (git: push here, pull there)
        shutil.copyfile(b / ANA, a / ANA)
        shutil.copyfile(b / SARAH, a / SARAH)
        writer.sync([ANA, SARAH])
        hits, said = _cli_search(b, env)
        assert ANA in hits
        assert "lacks" not in said, said  # the index holds them as here: nothing said


def test_a_note_committed_here_and_not_pushed_is_named_and_ignored_ones_are_not(
    clones: tuple[Path, Path, dict[str, str]],
) -> None:
    a, b, env = clones
    write(b, ANA, note("Ana Quill", body="Ana owns the quill harpsichord tuning."))
    git_out(b, "add", ANA)
    git_out(b, "commit", "-qm", "ana")  # committed here, never pushed
    write(b, "templates/quill.md", "# Quill harpsichord tuning template\n")  # memvault's own
    with open_vault(a) as writer:
        writer.sync()
        _, said = _cli_search(b, env)
    assert f"lacks 1 note of this copy ({ANA})" in said, said
    assert "templates/" not in said, said


def test_a_writers_commit_that_is_no_commit_id_is_not_handed_to_git(
    clones: tuple[Path, Path, dict[str, str]], pg_dsn: str
) -> None:
    """The shared index's meta ``vault_commit`` names the writer's commit, and git is
    asked from it; a row holding a ref (``HEAD``: a hand-edited or foreign row) made git
    take the clone's own HEAD for the writer's, and the clone's commit never pushed went
    unnamed. Only a commit id is taken (else the upstream, as for a clone lacking it)."""
    a, b, env = clones
    write(b, ANA, note("Ana Quill", body="Ana owns the quill harpsichord tuning."))
    git_out(b, "add", ANA)
    git_out(b, "commit", "-qm", "ana")  # committed here, never pushed
    with open_vault(a) as writer:
        writer.sync()
        schema = env["MEMVAULT_INDEX_SCHEMA"]
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(
                f"UPDATE \"{schema}\".meta SET value = %s WHERE key = 'vault_commit'",
                (json.dumps({"commit": "HEAD", "host": "build-01", "at": 0}),),
            )
        _, said = _cli_search(b, env)
    assert f"lacks 1 note of this copy ({ANA})" in said, said


def test_a_git_that_does_not_answer_holds_the_search_no_longer_than_its_bound(
    clones: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    """Git's look at a clone's changes walks every file (a slow network disk, a huge
    folder git does not ignore): a git that did not answer held a search with no daemon
    30 s a call, and the answer said nothing of what it had not checked. Git is given
    ``unkept.LOOK_WITHIN`` in all now, then killed, and the answer says this copy's notes
    were not checked. A git on PATH that hangs listing untracked files (real git else)."""
    a, b, env = clones
    write(b, ANA, note("Ana Quill", body="Ana owns the quill harpsichord tuning."))
    real = shutil.which("git")
    fake = tmp_path / "slow-git"
    fake.mkdir()
    (fake / "git").write_text(
        f'#!/bin/sh\ncase " $* " in *" --others "*) exec sleep 300 ;; esac\nexec {real} "$@"\n',
        encoding="utf-8",
    )
    (fake / "git").chmod(0o755)
    env = {**env, "PATH": f"{fake}{os.pathsep}{env.get('PATH', os.environ['PATH'])}"}
    with open_vault(a) as writer:
        writer.sync()
        _, said = _cli_search(b, env)
    assert "git did not list this copy's changes within" in said, said


def test_a_search_on_the_writers_own_copy_gives_no_push_and_pull_advice(
    clones: tuple[Path, Path, dict[str, str]],
) -> None:
    """The team's writer runs on this very copy (a ``memvault sync`` holding its lock, a
    ``Vault`` here): a search with no daemon in the same folder must not tell its person
    to "commit and push here, pull there" of a note new here: the writer here indexes it.
    (rev58team: it did, where main said nothing.)"""
    a, _b, env = clones
    write(a, ANA, note("Ana Quill", body="Ana owns the quill harpsichord tuning."))
    with open_vault(a):  # the writer, holding this copy's lock and the team's
        _hits, said = _cli_search(a, env)
    assert "pull there" not in said, said
    assert "lacks" not in said, said
