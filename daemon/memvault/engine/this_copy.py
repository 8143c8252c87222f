"""A reader of a team's index whose files are not the ones the index was read from
(docs/TEAM.md, "A reader's files"): the writer indexed a note this copy has not pulled
yet, or this copy's file was edited here or is a pull behind.

A field test: such a reader's search listed a note it did not have, and its context
cited the writer's lines as if they were in its files, while `get` of it said `no note
at ...`. The shared index is the team's memory: its hits stay, each saying how this
copy stands (``Hit.this_copy``, ``Source.this_copy``, and in a context the citation's
words, ``core.context.COPY_SAYS``). Only a reader of a PostgreSQL index looks: a writer
indexes its own files, and the local index is this copy's. A look reads the files of
the hits alone (a page of them) and compares their bytes with what the index read, its
line ends aside (a Windows copy's CRLF, git's ``core.autocrlf``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from memvault.core.text import NotText, sha256_bytes
from memvault.core.wikilinks import key
from memvault.errors import MemvaultError, NoteNotFound, UnsafePath
from memvault.index.rows import NoteRow
from memvault.vault.files import VaultFS
from memvault.vault.paths import case_spelling, normalize_rel

MISSING = "missing"  # this copy of the vault has no file at the note's path
DIFFERS = "differs"  # its file is not the bytes the index read


def shared_reader(config: Any, store: Any) -> bool:
    """Whether this process reads a team's index it does not write (docs/TEAM.md)."""
    return config.index.store == "postgres" and bool(getattr(store, "read_only", False))


def states(
    fs: VaultFS,
    rows: Mapping[str, NoteRow],
    paths: Iterable[str],
    indexed: Callable[[str], bool] = lambda path: False,
) -> dict[str, str]:
    """``MISSING`` or ``DIFFERS`` for each of ``paths`` that this copy lacks or holds
    otherwise than the index read it (its ``rows``); the others are left out (a file
    unreadable here too: nothing can be said of it)."""
    out: dict[str, str] = {}
    for path in dict.fromkeys(paths):
        row = rows.get(path)
        if row is None:
            continue
        file = path
        try:
            digest = fs.read(path, cap=0).sha256
        except (NoteNotFound, FileNotFoundError, NotADirectoryError):
            # here in another case alone: a rename of case git never carried (a writer on
            # a Mac's disk keeps people/ana.md, git and this copy People/Ana.md); not a
            # note of the index itself (``indexed``: its twin in case on ext4)
            file = case_spelling(str(fs.root), path) or ""
            file = "" if file and indexed(file) else file
            try:
                digest = fs.read(file, cap=0).sha256 if file else ""
            except (OSError, NotText, UnsafePath, NoteNotFound):
                digest = ""
            if not digest:
                out[path] = MISSING
                continue
        except (OSError, NotText, UnsafePath):
            continue
        if row.sha256 and digest != row.sha256 and not same_but_line_ends(fs, file, row.sha256):
            out[path] = DIFFERS
    return out


def same_but_line_ends(fs: VaultFS, path: str, indexed: str) -> bool:
    """Whether this copy's file is the bytes the index read but for its line ends: git's
    ``core.autocrlf`` (Git for Windows' default) checks a note out with CRLF on a
    Windows machine and LF elsewhere, so every note a Windows writer indexed "differed"
    on every other reader. Read again only for a file whose bytes differ."""
    try:
        data = fs.path(path).read_bytes()
    except (OSError, UnsafePath):
        return False
    lf = data.replace(b"\r\n", b"\n")
    return indexed in (sha256_bytes(lf), sha256_bytes(lf.replace(b"\n", b"\r\n")))


def elsewhere(
    reader: Any, path: str, lines: str | None, heading: str | None, missing: NoteNotFound
) -> tuple[str, str | None, str | None]:
    """What ``Reader.get`` reads for ``path``, not in this copy as spelt (``missing``):
    on a reader of a team's index, the file here in another case alone
    (``in_another_case``); else ``not_pulled`` says so, or ``missing`` is raised."""
    if (here := in_another_case(reader, path)) is not None:
        return here[0], lines, heading or here[1]
    not_pulled(reader, path)
    raise missing


def row_of(reader: Any, path: str, same: bool, sha256: str) -> NoteRow | None:
    """The index's row of this copy's file ``path`` for ``get`` (its title): its own when
    ``same`` (``path`` is the very file), else on a reader of a team's index the one it
    holds in another case alone (``indexed_in_another_case``)."""
    if not same:
        return None
    row: NoteRow | None = reader.catalogue.note(path)
    return row or indexed_in_another_case(reader, path, sha256)


def in_another_case(reader: Any, path: str) -> tuple[str, str | None] | None:
    """The file of this copy that a reader of a team's index reads for ``path``, a note
    of the index not here as spelt but in another case alone (``People/Ana.md`` here,
    ``people/ana.md`` indexed by a writer on a Mac's disk, where a rename of case is one
    git never sees), and the section ``path`` names; None when it is not so."""
    if (found := _not_here(reader, path)) is None:
        return None
    indexed, section = found
    spelt = case_spelling(str(reader.fs.root), indexed)
    if spelt is None or not reader.fs.path(spelt).is_file() or _indexed(reader)(spelt):
        return None  # (a note of the index itself: its twin in case on ext4, not pulled)
    return spelt, section


def indexed_in_another_case(reader: Any, path: str, sha256: str) -> NoteRow | None:
    """The index's row of this copy's file ``path`` (its bytes ``sha256``), which a reader
    of a team's index holds under another case alone (its title: ``get`` gave a clone's
    ``people/ana.md`` the title ``ana``, the index's ``People/Ana.md`` being "Ana
    Quill"); None when it holds none, or another text there."""
    if not shared_reader(reader.config, reader.store):
        return None
    indexed = indexed_as(reader.catalogue, path)
    row: NoteRow | None = reader.catalogue.note(indexed) if indexed is not None else None
    return row if row is not None and row.sha256 == sha256 else None


def indexed_as(catalogue: Any, path: str) -> str | None:
    """The path the index holds the note of ``path`` at, when the two differ in case
    alone (``wikilinks.key``); None when it holds it as spelt, or none, or the name is
    several notes' (none is guessed)."""
    try:
        found = catalogue.linked(path)
    except MemvaultError:
        return None
    if not found or found[0] == path or key(found[0]) != key(path):
        return None
    return str(found[0])


def not_pulled(reader: Any, path: str) -> None:
    """A reader of a team's index (docs/TEAM.md) asked for a note its writer indexed and
    this copy's files lack (a `git pull` behind): say so, not only "no note at"."""
    if (found := _not_here(reader, path)) is None:
        return
    raise NoteNotFound(
        f"no note at {found[0]} in this copy of the vault, but the shared index has it: its "
        "writer indexed it after this copy's last `git pull` (or the shared folder's sync); "
        "pull, then get it again"
    )


def _not_here(reader: Any, path: str) -> tuple[str, str | None] | None:
    """On a reader of a team's index, the note of the index ``path`` names (its link's
    target, or the path itself) when this copy has no file there as spelt, and the
    section the link names; None otherwise."""
    if not shared_reader(reader.config, reader.store):
        return None
    linked = reader.catalogue.linked(path)
    indexed = linked[0] if linked else normalize_rel(path)
    if reader.catalogue.note(indexed) is None or reader.fs.path(indexed).exists():
        return None
    return indexed, linked[1] if linked else None


def _indexed(reader: Any) -> Callable[[str], bool]:
    """Whether a path is a note of the index as spelt."""
    return lambda path: reader.catalogue.note(path) is not None


T = TypeVar("T")


def marked(reader: Any, items: Sequence[T]) -> list[T]:
    """``items`` (search hits, context pieces: each a ``path`` and a ``this_copy``),
    each with how this copy of its note stands, on a reader of a team's index (an
    ``engine.reader.Reader``); as they are anywhere else."""
    if not items or not shared_reader(reader.config, reader.store):
        return list(items)
    paths = [getattr(i, "path") for i in items]  # noqa: B009 (any record with a path)
    said = states(reader.fs, reader.catalogue.rows_of(paths), paths, _indexed(reader))
    if not said:
        return list(items)
    return [
        dataclasses.replace(i, this_copy=said[p]) if p in said else i  # type: ignore[type-var]
        for i, p in zip(items, paths, strict=True)
    ]


__all__ = [
    "DIFFERS",
    "MISSING",
    "elsewhere",
    "in_another_case",
    "indexed_as",
    "indexed_in_another_case",
    "marked",
    "not_pulled",
    "row_of",
    "shared_reader",
    "states",
]
