"""Files git keeps under names that differ only in case (``people/Ana.md`` and
``people/ana.md``, both made on Linux), in a vault on a disk that takes them for one
name (macOS, Windows, exFAT). git checks out one of them into that one file, says so
only on a clone ("the following paths have collided"), never on a pull, and then
lists the other as modified: the other note's words are in git only, and a ``git
commit -a`` would record this file's text under its name. ``status`` says so."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from memvault.vault.gitstate import run_git
from memvault.vault.paths import folder_names


def case_collisions(root: Path) -> list[tuple[str, ...]]:
    """The groups of files git tracks in the vault (paths from ``root``, sorted) whose
    names differ only in case or Unicode form, and which this disk takes for one file;
    none outside git. Ask it only of a disk that folds case: on ext4 the two are two
    files, both there. A group whose every name is listed, as spelt, is held apart
    (``Straße.md`` and ``STRASSE.md``; exFAT's composed and decomposed ``Café.md``):
    no twins, whatever case folding says."""
    done = run_git(root, "ls-files", "-z", "--", ".")
    if done is None or done.returncode != 0:
        return []
    groups: dict[str, list[str]] = {}
    for raw in done.stdout.split(b"\0"):
        if raw:
            path = os.fsdecode(raw)
            groups.setdefault(unicodedata.normalize("NFC", path).casefold(), []).append(path)
    listed: dict[str, set[str]] = {}
    return sorted(
        tuple(sorted(g))
        for g in groups.values()
        if len(g) > 1 and not all(_listed(str(root), p, listed) for p in g)
    )


def _listed(root: str, rel: str, listed: dict[str, set[str]]) -> bool:
    """Whether each name of ``rel`` is listed in its folder exactly so (each folder
    listed once, in ``listed``)."""
    here = root
    for part in rel.split("/"):
        names = folder_names(listed, here)
        if names is None or part not in names:
            return False
        here = os.path.join(here, part)
    return True


def collision_said(group: tuple[str, ...], there: str | None) -> str:
    """The problem ``status`` lists for one ``case_collisions`` group; ``there``: the
    name the disk has for their one file (None: none)."""
    others = [p for p in group if p != there]
    held = f"the one file here is {there}; " if there else ""
    return (
        f"git keeps {len(group)} files whose names differ only in case ({', '.join(group)}), "
        f"which this disk takes for one name: {held}the words of {', '.join(others)} are in "
        f"git only (`git show HEAD:{others[0]}`), and `git status` lists "
        f"{'them' if len(others) > 1 else 'it'} as modified (a `git commit -a` would record "
        "the one file's text under every name): on a machine whose disk keeps case apart "
        "(Linux), `git mv` all but one to names of their own and commit, then pull here"
    )


__all__ = ["case_collisions", "collision_said"]
