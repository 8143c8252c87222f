"""Whether the git repository holding a vault is in the middle of an operation.

While git is mid rebase, merge, cherry-pick or revert, the working tree is git's:
a file memvault rewrote then (MEMORY.md, a folder note) would be one more change
for the person to resolve, and ``git rebase --continue`` would refuse until it is
added. memvault writes no tracked file meanwhile and picks up once git is done.

The vault may be the repository's top folder or any folder inside it, and ``.git``
may be a folder or a file pointing at one (a worktree, a submodule).
"""

from __future__ import annotations

from pathlib import Path

_MARKERS = (
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase (or git am)"),
    ("MERGE_HEAD", "a merge"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
    # git is writing the index and the tree this moment (a checkout, a stash, a pop):
    # a file memvault wrote now could make git refuse to go on
    ("index.lock", "writing its index"),
)


def git_dir(root: Path) -> Path | None:
    """The git directory of the repository ``root`` is in (None outside git)."""
    here = Path(root).resolve()
    for folder in (here, *here.parents):
        dot = folder / ".git"
        try:
            if dot.is_dir():
                return dot
            if dot.is_file():
                text = dot.read_text(encoding="utf-8", errors="replace").strip()
                if text.startswith("gitdir:"):
                    target = Path(text[len("gitdir:") :].strip())
                    return target if target.is_absolute() else (folder / target).resolve()
                return None
        except OSError:
            return None
    return None


def git_busy(root: Path) -> str | None:
    """What git is in the middle of in the vault's repository ("a rebase"), or None."""
    gdir = git_dir(root)
    if gdir is None:
        return None
    for name, what in _MARKERS:
        try:
            if (gdir / name).exists():
                return what
        except OSError:
            continue
    return None


__all__ = ["git_busy", "git_dir"]
