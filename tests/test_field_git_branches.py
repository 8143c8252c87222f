"""A vault kept in git, used the way people use git (a field test's findings): branches
switched back and forth under a running daemon, a bisect, a rebase stopping at its
`edit` commits, a worktree of the vault, notes git LFS keeps.

What memvault writes (MEMORY.md, folder notes) is tracked by git: a write git did not
expect turns the next checkout into "Your local changes ... would be overwritten".
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest

from helpers import note, open_vault, write
from memvault.core import text as text_module
from memvault.core.text import LFS_POINTER as POINTER_SAID
from memvault.core.text import NotText, decode
from test_memory_git import commit, git, git_vault, stash_pop_stops, status


def person(i: int) -> str:
    return note(f"Person {i:02}", f"Person {i:02} works here.", updated=f"2024-01-{i % 28 + 1:02}")


def two_branches(tmp_path: Path) -> Path:
    """A vault whose `main` has 12 people and whose `exp` has 28 more, each branch's
    MEMORY.md and people/people.md committed as memvault made them."""
    root = git_vault(tmp_path)
    for i in range(12):
        write(root, f"people/p{i:02}.md", person(i))
    with open_vault(root) as v:
        v.sync()
        commit(root, "main")
        git(root, "checkout", "-q", "-b", "exp")
        for i in range(12, 40):
            write(root, f"people/p{i:02}.md", person(i))
        v.sync()
        commit(root, "exp")
        git(root, "checkout", "-q", "main")
        v.sync()
    assert status(root) == ""
    return root


def test_a_batch_that_saw_part_of_a_checkout_writes_nothing_git_finds_changed(
    tmp_path: Path,
) -> None:
    """Field test: switching branches back and forth with the daemon running, a
    checkout was refused ("Your local changes to the following files would be
    overwritten by checkout: projects/projects.md"): the watcher's batch cut while git
    was still writing held part of the notes the checkout brought, git was done by the
    time that batch's sync wrote, and MEMORY.md and the folder note were written for
    part of the branch's notes. A `git commit -a` then would have committed them so."""
    root = two_branches(tmp_path)
    with open_vault(root) as v:
        v.sync()
        git(root, "checkout", "-q", "exp")
        came = [f"people/p{i:02}.md" for i in range(12, 40)]
        v.sync(paths=came[:8])  # the first batch: git had written only these yet
        assert status(root) == ""
        v.sync(paths=came[8:])  # the rest: the branch's own MEMORY.md is right for all
        assert status(root) == ""
        assert git(root, "checkout", "-q", "main", check=False).returncode == 0


LFS_POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 12345\n"
)


def test_a_note_git_lfs_keeps_is_not_its_pointer_file(tmp_path: Path) -> None:
    """Field test: a note kept in git LFS, on a clone without git-lfs (or before `git lfs
    pull`), is a pointer file; memvault indexed it as the note: people/people.md listed
    `- [[people/big]] - version https://git-lfs.github.com/spec/v1 oid sha256:4d7a...`
    and a search found it. It is a file whose text is elsewhere: skipped, said why."""
    root = git_vault(tmp_path)
    write(root, "people/ann.md", person(1))
    write(root, "people/big.md", LFS_POINTER)
    with open_vault(root) as v:
        v.sync()
        text = (root / "MEMORY.md").read_text(encoding="utf-8")
        assert "people/big" not in text and "git-lfs" not in text
        assert [h.path for h in v.search("oid sha256 spec version")] == ["people/ann.md"]
        (skipped,) = v.status()["skipped_files"]
        assert skipped["path"] == "people/big.md" and "git lfs pull" in skipped["reason"]
        write(root, "people/big.md", person(2))  # `git lfs pull`: the note's text
        v.sync()
        text = (root / "MEMORY.md").read_text(encoding="utf-8")
        assert "- [[people/big]] - Person 02 works here." in text
        assert v.status()["skipped_files"] == []


def _indexed_before_pointers_were_told_apart(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vault of a note and a git LFS pointer, indexed as a memvault before did: the
    pointer as a note (listed in MEMORY.md by its first line)."""
    write(root, "people/ann.md", person(1))
    write(root, "people/big.md", LFS_POINTER)
    with monkeypatch.context() as m:
        m.setattr(text_module, "_LFS_POINTER", re.compile(rb"(?!)"))
        with open_vault(root) as v:
            v.sync()
    assert "[[people/big]] - version https://git-lfs" in (root / "MEMORY.md").read_text("utf-8")


def _told_apart_now(root: Path) -> None:
    with open_vault(root) as v:
        report = v.sync()
        assert report.deleted == ("people/big.md",) or "people/big.md" in report.modified
        assert [h.path for h in v.search("oid sha256 spec version")] == ["people/ann.md"]
        (skipped,) = v.status()["skipped_files"]
        assert skipped["path"] == "people/big.md" and "git lfs pull" in skipped["reason"]
    assert "people/big" not in (root / "MEMORY.md").read_text("utf-8")


def test_a_pointer_an_older_memvault_indexed_as_a_note_is_read_again_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pointer is skipped since core/text told it apart; in an index made before, it
    stayed a note for good (its file unchanged, never read again): MEMORY.md listed
    `[[people/big]] - version https://git-lfs...`, search found it, and status listed no
    skipped file. Schema 13 reads such notes again: skipped, said why."""
    root = tmp_path / "vault"
    _indexed_before_pointers_were_told_apart(root, monkeypatch)
    db = sqlite3.connect(root / ".memvault" / "index.db")
    with db:  # the version of the index that memvault made
        db.execute("UPDATE meta SET value = '12' WHERE key = 'schema_version'")
    db.close()
    _told_apart_now(root)


def test_a_postgres_index_of_a_pointer_as_a_note_reads_it_again(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same on PostgreSQL, version 11 -> 12."""
    import psycopg

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = tmp_path / "vault"
    _indexed_before_pointers_were_told_apart(root, monkeypatch)
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '11' WHERE key = 'schema_version'")
    _told_apart_now(root)


@pytest.mark.parametrize(
    ("text", "pointer"),
    [
        (LFS_POINTER, True),
        (LFS_POINTER.rstrip("\n"), True),
        (LFS_POINTER.replace("oid", "ext-0-foo sha256:" + "0" * 64 + "\noid"), True),
        (LFS_POINTER.replace("git-lfs", "hawser"), True),  # the spec's first name
        ("# Git LFS\n\nA pointer reads:\n\n" + LFS_POINTER, False),  # a note about one
        (LFS_POINTER + "\nMy own words after it.\n", False),
        (LFS_POINTER.replace("\n", "\r\n"), False),  # git-lfs writes LF only
        (LFS_POINTER.replace("4d7a", "XYZW"), False),
    ],
)
def test_a_git_lfs_pointer_is_told_from_a_note_about_one(text: str, pointer: bool) -> None:
    if pointer:
        with pytest.raises(NotText, match="git lfs pull"):
            decode(text.encode())
    else:
        assert decode(text.encode()).text == text
    assert "git lfs pull" in POINTER_SAID


def test_status_says_a_stash_pop_will_stop_in_a_worktree_of_the_vault_too(tmp_path: Path) -> None:
    """Field test: `git worktree add` of the vault (a second checkout, its own index and
    daemon); there, status never said that `git stash pop` would stop over MEMORY.md:
    it looked for the stash's reflog in the worktree's git folder, and git keeps it in
    the repository's common one."""

    main = git_vault(tmp_path)
    write(main, "people/bo.md", person(1))
    with open_vault(main) as v:
        v.sync()
    commit(main, "bo")
    root = tmp_path / "side"
    git(main, "worktree", "add", "-q", "-b", "side", str(root))
    write(root, "people/ana.md", person(2))
    write(root, "people/bo.md", person(3))
    stash_pop_stops(root)
