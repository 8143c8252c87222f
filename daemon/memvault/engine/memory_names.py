"""Which names the memory tool's commands may make, and what a path not there is said
to be: checks on the disk around ``core.memory_tool``'s rules (``engine.memory_tool``
runs them). A note or folder there only in another case (``paths.case_spelling``) is
named in "does not exist" and never made beside it; a new name Obsidian cannot link or
Windows cannot hold (``T.unportable``) is refused naming the name to use, and one a
person gave already is read, edited and written into as any other.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING
from unicodedata import normalize

from memvault.core import memory_tool as T
from memvault.core.memory_names import looks
from memvault.vault.paths import case_spelling, disk_spelling

if TYPE_CHECKING:
    from memvault.vault.files import VaultFS


def _other_case(fs: VaultFS, rel: str) -> str | None:
    """``rel`` as the vault spells it when it is there only in another case
    (``paths.case_spelling``); None when it is there as spelt, or in no case."""
    if not rel or (fs.path(rel)).exists():
        return None
    return case_spelling(str(fs.root), rel)


PLEASE = "The path {path} does not exist. Please provide a valid path."


def missing(fs: VaultFS, path: str, rel: str, said: str) -> T.Refusal:
    """The refusal of a path not there (``said``: the reference's words, ``{path}`` in
    them the path), naming the note or folder there in another case: the agent's next
    command finds it."""
    said = said.replace("{path}", path)
    other = _other_case(fs, rel)
    if other is not None and os.path.lexists(fs.root / other):
        return T.Refusal(said + T.other_case_there(other))
    if rel and not rel.endswith(".md") and os.path.lexists(fs.root / f"{rel}.md"):
        return T.Refusal(f"{said} ({T.shown(rel + '.md')} is there: a note's path ends in .md)")
    spaced = _spaced(fs, rel)
    return T.Refusal(said + (T.spaced_there(spaced) if spaced else ""))


def _spaced(fs: VaultFS, rel: str) -> str | None:
    """``rel`` as the vault names it when its names there hold a space or an invisible
    character at their start or end, or an invisible one inside, that ``rel``'s do not
    (``T.suggested``: a person's ``Plan .md``, `` Space/``, ``Zed<U+FEFF>.md``,
    ``Pl<U+200B>an.md``, which an agent copying the listing gives as ``Plan.md``, a
    model's tokens dropping the U+FEFF); None when there is none.
    Each folder of the path is read once, on the way to a refusal only."""
    parts, found = rel.split("/"), list[str]()
    for i, part in enumerate(parts):
        here = fs.root.joinpath(*found)
        if os.path.lexists(here / part):
            found.append(part)
            continue
        match = _alike(here, part, note=i == len(parts) - 1)
        if match is None:
            return None
        found.append(match)
    spelt = "/".join(found)
    return spelt if spelt != rel else None


def _alike(here: Path, part: str, *, note: bool, folders: bool = False) -> str | None:
    """The first name in ``here`` a person reads as ``part`` (``T.looks``), if any
    (``folders``: of a folder only)."""
    want = looks(part, note=note)
    try:
        names = sorted(
            e.name
            for e in os.scandir(here)
            if not e.name.startswith(".") and (not folders or e.is_dir(follow_symlinks=False))
        )
    except OSError:
        return None
    return next((n for n in names if looks(n, note=note) == want), None)


def refuse_look_alike(
    fs: VaultFS, rel: str, path: str, *, folder: bool = False, source: str | None = None
) -> None:
    """A folder ``rel`` would make (its folders; ``folder``: itself too, a folder
    renamed) beside one a person reads as the same name (``T.looks``: ``Ana Lee/``
    beside ``Ana<U+00A0>Lee/``, ``Plan/`` beside ``Pl<U+200B>an/``) refused, naming it:
    two folders in a listing no one tells apart, the notes of one topic split between
    them (``source``: a rename's, which may take its own name respelt: `` Drafts/`` to
    ``Drafts/``). A note's name is compared by ``NameTwins``."""
    parts = rel.split("/")
    made = parts if folder else parts[:-1]
    for i, part in enumerate(made):
        here = fs.root.joinpath(*parts[:i])
        if os.path.lexists(here / part):
            continue
        other = _alike(here, part, note=False, folders=True)
        mine = "/".join([*parts[:i], other or ""])
        if source is not None and normalize("NFC", mine) == normalize("NFC", source):
            return  # its own name respelt
        if other is not None and normalize("NFC", other) != normalize("NFC", part):
            raise T.Refusal(T.look_alike_refusal(path, "/".join([*parts[:i], other])))
        return  # (its folders past it are new too)


def refuse_other_case(fs: VaultFS, rel: str, path: str, *, source: str | None = None) -> None:
    """A note or folder made at ``rel`` would be a case twin of one there, which a clone
    on a Mac cannot hold and Obsidian's links and MCP's memory_get take for it: refused,
    naming the vault's spelling. ``source``: a rename's, which may take its own name in
    another case (in its folder's spelling)."""
    other = _other_case(fs, rel)
    if other is None:
        return
    folder = posixpath.dirname(rel)
    there = os.path.lexists(fs.root / other)
    if source is not None and normalize("NFC", other) == normalize("NFC", source):
        spelt = _other_case(fs, folder) if folder else None
        if spelt is None:
            return  # its own name in another case
        other, there = f"{spelt}/{posixpath.basename(rel)}", False
    raise T.Refusal(T.other_case_refusal(path, other, there, destination=source is not None))


def refuse_unportable(
    fs: VaultFS, rel: str, path: str, start: str, *, source: str | None = None
) -> None:
    """A note or folder ``rel`` would make, named as Obsidian cannot link or a clone on
    Windows cannot hold (``T.unportable``), refused; one there already (a person's) is
    read, edited and written into as any other (``source``: a rename's, not said to be
    there to edit when it is the name to use)."""
    parts = rel.split("/")
    for i, part in enumerate(parts):
        char = T.unportable(part, note=i == len(parts) - 1)
        if char is None:
            continue
        there = disk_spelling(str(fs.root), "/".join(parts[: i + 1]), fresh=fs.folds)
        if not os.path.lexists(os.path.join(fs.root, there)):
            kept = "/".join([*parts[:i], T.suggested(part, note=i == len(parts) - 1)])
            taken = kept != "/".join(parts[: i + 1]) and _taken(fs, kept, source)
            raise T.Refusal(T.unportable_refusal(start, path, part, char, taken=taken))


def _taken(fs: VaultFS, rel: str, source: str | None) -> bool:
    """Whether a file or folder is at ``rel`` (as spelt, in another Unicode form or case)
    other than ``source``, a rename's (``Foo.md`` to `` foo.md``: the name to use is its
    own, in another case, not a note to view or edit)."""
    there, mine = _there(fs, rel), _there(fs, source) if source else None
    if there is None or mine is None:
        return there is not None
    return not os.path.samestat(os.lstat(fs.root / there), os.lstat(fs.root / mine))


def _there(fs: VaultFS, rel: str) -> str | None:
    """``rel`` as spelt on disk (in another Unicode form or case), None if not there."""
    spelt = disk_spelling(str(fs.root), rel, fresh=fs.folds)
    if os.path.lexists(fs.root / spelt):
        return spelt
    other = case_spelling(str(fs.root), rel)
    return other if other is not None and os.path.lexists(fs.root / other) else None


__all__ = ["PLEASE", "missing", "refuse_look_alike", "refuse_other_case", "refuse_unportable"]
