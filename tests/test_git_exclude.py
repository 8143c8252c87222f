"""memvault's temp files are kept out of git (vault/git_exclude.py).

The soak (bench/soak.py --clone) found memvault's temp files in the history: a person's
``git add -A`` while a relink swapped notes through them committed them, and the
other clone pulled them. Real git, a real vault opened to write.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from helpers import note, open_vault, write
from memvault.vault import swap
from memvault.vault.git_exclude import COMMENT, PATTERN, keep_temps_out
from memvault.vault.template import init_vault
from test_memory_git import commit, git_vault
from test_memory_git import git as run_git


def git(root: Path, *argv: str) -> str:
    return run_git(root, *argv).stdout


def repo_vault(tmp_path: Path) -> Path:
    root = git_vault(tmp_path)
    write(root, "people/ann.md", note("Ann", "Ann leads the data team."))
    return root


def temp_files_of(root: Path) -> list[str]:
    """Temp files as a write leaves them for a moment (vault/swap.py's names)."""
    made = ["people/.ann.md.memvault-tmp-3f7966d4", ".MEMORY.md.memvault-tmp-0a1b2c3d"]
    for rel in made:
        (root / rel).write_text("a version in flight\n", encoding="utf-8")
    return made


def test_git_add_all_leaves_memvaults_temp_files_out(tmp_path: Path) -> None:
    root = repo_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    made = temp_files_of(root)
    git(root, "add", "-A")
    staged = git(root, "diff", "--cached", "--name-only", "-z").split("\0")
    assert "people/ann.md" in staged  # the person's note is committed as ever
    assert not set(made) & set(staged), staged
    untracked = git(root, "status", "--porcelain", "--untracked-files=all", "--ignored")
    assert all(f"!! {rel}" in untracked for rel in made), untracked


def test_the_line_is_added_once_after_the_persons_own(tmp_path: Path) -> None:
    root = repo_vault(tmp_path)
    exclude = root / ".git" / "info" / "exclude"
    mine = "# mine\n*.log"  # no line break at the end: kept as written, then ours
    exclude.write_text(mine, encoding="utf-8")
    with open_vault(root) as v:
        v.sync()
    text = exclude.read_text(encoding="utf-8")
    assert text.startswith(mine + "\n") and text.endswith(f"\n{PATTERN}\n")
    stamp = exclude.stat()
    assert keep_temps_out(root) is False  # there already: nothing written
    with open_vault(root) as v:
        v.sync()
    assert exclude.read_text(encoding="utf-8") == text
    assert (exclude.stat().st_ino, exclude.stat().st_mtime_ns) == (stamp.st_ino, stamp.st_mtime_ns)
    assert [p.name for p in exclude.parent.iterdir()] == ["exclude"]  # no temp file left


def test_a_worktree_shares_the_repositorys_exclude(tmp_path: Path) -> None:
    main = repo_vault(tmp_path)
    commit(main, "vault")
    other = tmp_path / "other"
    git(main, "worktree", "add", "-q", str(other))
    with open_vault(other) as v:
        v.sync()
    assert PATTERN in (main / ".git" / "info" / "exclude").read_text(encoding="utf-8").splitlines()
    made = temp_files_of(other)
    assert not set(made) & set(git(other, "status", "--porcelain", "-uall").split())


def test_a_vault_outside_git_gets_no_git_folder(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    with open_vault(root) as v:
        v.sync()
    assert keep_temps_out(root) is False
    assert not (root / ".git").exists()


def test_a_symlinked_exclude_is_written_through_its_link_with_its_mode(tmp_path: Path) -> None:
    """A dotfiles manager links ``.git/info/exclude`` to a file of its own: the line goes
    into that file, the link stays a link, and the file keeps its mode."""
    root = repo_vault(tmp_path)
    shared = tmp_path / "dotfiles" / "git-exclude"
    shared.parent.mkdir()
    shared.write_text("# mine\n*.swp\n", encoding="utf-8")
    shared.chmod(0o600)
    link = root / ".git" / "info" / "exclude"
    link.unlink()
    link.symlink_to(shared)
    assert keep_temps_out(root) is True
    assert link.is_symlink() and link.resolve() == shared.resolve()
    assert shared.read_text(encoding="utf-8") == f"# mine\n*.swp\n{COMMENT}\n{PATTERN}\n"
    assert stat.S_IMODE(shared.stat().st_mode) == 0o600
    assert sorted(p.name for p in shared.parent.iterdir()) == ["git-exclude"]  # no temp file


def test_a_read_only_exclude_is_left_as_the_person_made_it(tmp_path: Path) -> None:
    root = repo_vault(tmp_path)
    exclude = root / ".git" / "info" / "exclude"
    exclude.write_text("# mine, kept as is\n", encoding="utf-8")
    exclude.chmod(0o444)  # (the mode says so, for root too)
    with open_vault(root) as v:
        v.sync()  # the vault opens and writes as ever
    assert exclude.read_text(encoding="utf-8") == "# mine, kept as is\n"
    assert stat.S_IMODE(exclude.stat().st_mode) == 0o444


def test_a_repository_made_while_memvault_runs_gets_the_line_at_the_next_relink(
    tmp_path: Path,
) -> None:
    """``git init`` (the Obsidian git plugin's "initialize a new repo") while a daemon
    runs: its relinks hold hundreds of temp files, so the line is added there too, not
    only when the vault is next opened."""
    root = tmp_path / "vault"
    init_vault(root)
    write(root, "target.md", note("Target", "What we aim at."))
    write(root, "notes/a.md", "See [[target]].\n")
    with open_vault(root) as v:
        v.sync()
        run_git(root, "init", "-q", "-b", "main")
        exclude = root / ".git" / "info" / "exclude"
        assert PATTERN not in exclude.read_text(encoding="utf-8").splitlines()
        os.rename(root / "target.md", root / "goal.md")
        assert v.sync().relinked == ("notes/a.md",)
    assert (root / "notes" / "a.md").read_text(encoding="utf-8") == "See [[goal]].\n"
    assert PATTERN in exclude.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("broken", ["gitdir", "commondir"])
def test_a_broken_git_file_is_no_repository_and_stops_no_write(tmp_path: Path, broken: str) -> None:
    """A ``.git`` file whose ``gitdir:``, or a worktree's ``commondir``, holds a NUL
    byte (a disk error, a careless tool): every open of the vault failed ("embedded
    null byte")."""
    root = tmp_path / "vault"
    init_vault(root)
    if broken == "gitdir":
        (root / ".git").write_bytes(b"gitdir: ../x\0y\n")
    else:
        (tmp_path / "gd").mkdir()
        (tmp_path / "gd" / "commondir").write_bytes(b"x\0y\n")
        (root / ".git").write_text("gitdir: ../gd\n", encoding="utf-8")
    keep_temps_out(root)  # raises nothing
    with open_vault(root) as v:
        v.sync()
        assert v.add("people", "Bo", summary="Bo runs the lab.").created
    assert (root / "people" / "bo.md").is_file()


def test_a_save_of_the_persons_as_the_line_goes_in_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's editor saves ``info/exclude`` the moment memvault puts its version
    in place (after memvault read it): the person's line stays, and memvault's is added
    to it. A read, a compare and an ``os.replace`` lost it: vault/swap.py's exchange,
    checked after, puts it back."""
    root = repo_vault(tmp_path)
    exclude = root / ".git" / "info" / "exclude"
    exclude.write_text("# mine\n", encoding="utf-8")
    real_exchange, real_replace = swap.exchange, os.replace
    saved: list[bool] = []

    def save_first() -> None:
        if not saved:
            saved.append(True)
            exclude.write_text("# mine\n*.log\n", encoding="utf-8")  # their editor, now

    def exchange(a: Path, b: Path) -> bool:
        save_first()
        return real_exchange(a, b)

    def replace(a: str | Path, b: str | Path) -> None:
        save_first()
        real_replace(a, b)

    monkeypatch.setattr(swap, "exchange", exchange)
    monkeypatch.setattr(os, "replace", replace)
    assert keep_temps_out(root) is True
    assert saved
    assert exclude.read_text(encoding="utf-8") == f"# mine\n*.log\n{COMMENT}\n{PATTERN}\n"
