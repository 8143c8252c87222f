"""A stash belongs to the worktree that made it: the stash list is the repository's,
shared by every worktree (`git worktree add`), and memvault waits for the pop only where
it was made (vault/git_stash.newest_stash; a field test's finding)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import eventually, note, open_vault, write
from memvault.interfaces.cli import app
from memvault.vault.git_stash import stash_stops, stash_waits
from test_memory_git import commit, git, git_vault

MINE = "My words, stashed.\n"


def _two_worktrees(tmp_path: Path) -> tuple[Path, Path]:
    """The vault's repository (main, its first worktree) and a second worktree on a
    branch of its own with a commit of its own."""
    a = git_vault(tmp_path, "a")
    write(a, "people/bo.md", note("Bo", "Billing."))
    with open_vault(a) as v:
        v.sync()
    commit(a, "bo")
    b = tmp_path / "b"
    git(a, "worktree", "add", "-q", "-b", "side", str(b))
    write(b, "people/cy.md", note("Cy", "Cy is on side."))
    with open_vault(b) as v:
        v.sync()
    commit(b, "cy")
    # git's reflogs count whole seconds: B's HEAD moved before the second of A's stash
    then = int(time.time()) + 1
    eventually(lambda: time.time() >= then, what="the next second")
    return a, b


def _stash_memory_md(root: Path) -> None:
    mem = root / "MEMORY.md"
    mem.write_text(mem.read_text(encoding="utf-8") + MINE, encoding="utf-8")
    git(root, "stash", "-q")


def _status(root: Path) -> dict[str, object]:
    said = CliRunner().invoke(app, ["status", "--json", "--vault", str(root)])
    out: dict[str, object] = json.loads(said.stdout)
    return out


def test_a_stash_made_in_another_worktree_holds_nothing_here(tmp_path: Path) -> None:
    """Field test: a stash made in worktree A held MEMORY.md in worktree B 10 minutes,
    though B had nothing stashed; status in B said `git stash pop` would stop over its
    MEMORY.md, telling B to pop A's words. A stash's first parent is the HEAD of the
    worktree that made it, and each worktree's HEAD has its own reflog: B's was not at
    that commit then."""
    a, b = _two_worktrees(tmp_path)
    _stash_memory_md(a)
    assert stash_waits(a, ["MEMORY.md"]) == ["MEMORY.md"]  # A's own: waits for its pop
    assert stash_waits(b, ["MEMORY.md"]) == []  # before: ['MEMORY.md']
    write(b, "people/di.md", note("Di", "Di is new."))
    with open_vault(b) as v:
        v.sync()
    assert "[[people/di]]" in (b / "MEMORY.md").read_text(encoding="utf-8")  # before: waited
    said = _status(b)
    assert said["git_stash_waits"] == [] and said["git_stash_stops"] == []  # before: stops
    write(a, "people/ed.md", note("Ed", "Ed is new."))
    with open_vault(a) as v:
        v.sync()
    assert "[[people/ed]]" not in (a / "MEMORY.md").read_text(encoding="utf-8")  # waits
    assert _status(a)["git_stash_waits"] == ["MEMORY.md"]
    git(a, "stash", "pop", "-q")  # goes through: MEMORY.md left for it
    assert MINE in (a / "MEMORY.md").read_text(encoding="utf-8")


def test_a_stash_made_here_waits_though_head_moved_since(tmp_path: Path) -> None:
    """The worktree that made the stash, its HEAD moved on since (a switch to another
    branch to pop it there, a commit): the stash is still its own (HEAD's reflog says
    where HEAD was when it was made), and still no other worktree's."""
    a, b = _two_worktrees(tmp_path)
    _stash_memory_md(b)
    git(b, "switch", "-q", "-c", "elsewhere")  # to pop it on another branch
    write(b, "notes.txt", "a file of the project\n")
    git(b, "add", "notes.txt")
    git(b, "commit", "-q", "-m", "HEAD moves on")
    assert stash_waits(b, ["MEMORY.md"]) == ["MEMORY.md"]
    assert stash_waits(a, ["MEMORY.md"]) == []
    with open_vault(b) as v:
        v.sync()
    assert MINE not in (b / "MEMORY.md").read_text(encoding="utf-8")
    assert stash_stops(a, ["MEMORY.md"]) == []
    git(b, "stash", "pop", "-q")
    assert MINE in (b / "MEMORY.md").read_text(encoding="utf-8")


def test_status_reads_the_newest_stash_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`status` within 10 minutes of a stash asked git what it changes twice (`git stash
    show`, once for what its pop stops over, once for what waits for it) and hashed the
    files twice (`git hash-object`): one reading of the newest stash answers both. The
    real git, behind a wrapper on PATH that writes down each command it runs."""
    a, _ = _two_worktrees(tmp_path)
    _stash_memory_md(a)
    real = shutil.which("git")
    assert real is not None
    bin_dir, calls = tmp_path / "bin", tmp_path / "git-calls.txt"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{calls}"\nexec "{real}" "$@"\n', "utf-8")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    said = _status(a)
    assert said["git_stash_waits"] == ["MEMORY.md"]
    ran = calls.read_text(encoding="utf-8").splitlines()
    assert sum(" hash-object " in f" {c} " for c in ran) == 1, ran  # before: 2
    stash_read = [c for c in ran if " stash show " in f" {c} " or " log " in f" {c} "]
    assert len(stash_read) == 1, ran  # before: 2 (`git stash show`)


def test_a_staged_change_kept_by_the_stash_is_no_stop_for_its_pop(tmp_path: Path) -> None:
    """`git stash --keep-index`: MEMORY.md's staged line stays, in the file and in git's
    index, its unstaged one goes to the stash. The pop merges the stash over the staged
    line and goes through; status said it would stop over MEMORY.md (changed since
    HEAD), with `git checkout -- MEMORY.md && git stash pop` to do, while saying too
    that MEMORY.md waited for that pop. A pop stops over a change git's index has not."""
    root = git_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    commit(root, "vault")
    mem = root / "MEMORY.md"
    base = mem.read_text(encoding="utf-8")
    mem.write_text(base + "Staged words.\n", encoding="utf-8")
    git(root, "add", "MEMORY.md")
    mem.write_text(base + "Staged words.\n" + MINE, encoding="utf-8")
    git(root, "stash", "-q", "--keep-index")
    assert mem.read_text(encoding="utf-8") == base + "Staged words.\n"
    said = _status(root)
    assert said["git_stash_waits"] == ["MEMORY.md"]
    assert said["git_stash_stops"] == [], said["git_stash_stops"]  # before: ['MEMORY.md']
    assert git(root, "stash", "pop", check=False).returncode == 0  # it goes through
    assert mem.read_text(encoding="utf-8") == base + "Staged words.\n" + MINE
    # a change git's index has not (memvault's listing, a person's edit) stops it
    mem.write_text(base + "Staged words.\n", encoding="utf-8")
    git(root, "add", "MEMORY.md")
    mem.write_text(base + "Staged words.\n" + MINE, encoding="utf-8")
    git(root, "stash", "-q", "--keep-index")
    mem.write_text(base + "Staged words.\nAn edit since.\n", encoding="utf-8")
    assert stash_stops(root, ["MEMORY.md"]) == ["MEMORY.md"]
    assert git(root, "stash", "pop", check=False).returncode != 0  # as said
