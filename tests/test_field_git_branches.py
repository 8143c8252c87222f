"""A vault kept in git, used the way people use git (a field test's findings): branches
switched back and forth under a running daemon, a bisect, a rebase stopping at its
`edit` commits, a worktree of the vault, notes git LFS keeps.

What memvault writes (MEMORY.md, folder notes) is tracked by git: a write git did not
expect turns the next checkout into "Your local changes ... would be overwritten".
"""

from __future__ import annotations

from pathlib import Path

from helpers import note, open_vault, write
from test_memory_git import commit, git, git_vault, status


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
