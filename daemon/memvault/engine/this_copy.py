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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from memvault.core.text import NotText, sha256_bytes
from memvault.errors import NoteNotFound, UnsafePath
from memvault.index.rows import NoteRow
from memvault.vault.files import VaultFS

MISSING = "missing"  # this copy of the vault has no file at the note's path
DIFFERS = "differs"  # its file is not the bytes the index read


def shared_reader(config: Any, store: Any) -> bool:
    """Whether this process reads a team's index it does not write (docs/TEAM.md)."""
    return config.index.store == "postgres" and bool(getattr(store, "read_only", False))


def states(fs: VaultFS, rows: Mapping[str, NoteRow], paths: Iterable[str]) -> dict[str, str]:
    """``MISSING`` or ``DIFFERS`` for each of ``paths`` that this copy lacks or holds
    otherwise than the index read it (its ``rows``); the others are left out (a file
    unreadable here too: nothing can be said of it)."""
    out: dict[str, str] = {}
    for path in dict.fromkeys(paths):
        row = rows.get(path)
        if row is None:
            continue
        try:
            digest = fs.read(path, cap=0).sha256
        except (NoteNotFound, FileNotFoundError, NotADirectoryError):
            out[path] = MISSING
            continue
        except (OSError, NotText, UnsafePath):
            continue
        if row.sha256 and digest != row.sha256 and not same_but_line_ends(fs, path, row.sha256):
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


T = TypeVar("T")


def marked(reader: Any, items: Sequence[T]) -> list[T]:
    """``items`` (search hits, context pieces: each a ``path`` and a ``this_copy``),
    each with how this copy of its note stands, on a reader of a team's index (an
    ``engine.reader.Reader``); as they are anywhere else."""
    if not items or not shared_reader(reader.config, reader.store):
        return list(items)
    paths = [getattr(i, "path") for i in items]  # noqa: B009 (any record with a path)
    said = states(reader.fs, reader.catalogue.rows_of(paths), paths)
    if not said:
        return list(items)
    return [
        dataclasses.replace(i, this_copy=said[p]) if p in said else i  # type: ignore[type-var]
        for i, p in zip(items, paths, strict=True)
    ]


__all__ = ["DIFFERS", "MISSING", "marked", "shared_reader", "states"]
