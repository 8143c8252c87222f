"""The store's row types and their mapping from SQL rows (columns in ``NOTE_COLS`` order).

Plain frozen dataclasses: what the engine reads and writes through ``Store``;
JSON-encoded columns (tags, aliases, frontmatter, headings, warnings, heading
paths) are decoded here, once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteRow:
    """One file the index knows: a note, an index note (MEMORY.md, a folder note), or a
    file skipped with a reason (so its hash is not recomputed on every sync)."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    kind: str  # note | index | skipped
    skip_reason: str | None = None
    title: str = ""
    summary: str = ""
    category: str = ""
    date: str | None = None
    updated: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    frontmatter: dict[str, Any] = field(default_factory=dict)
    headings: tuple[tuple[int, str, int], ...] = ()  # (level, text, line)
    warnings: tuple[str, ...] = ()
    lines: int = 0


@dataclass(frozen=True, slots=True)
class Chunk:
    """What every chunk is: its place in its note, its lines, its text and the embedded
    text's sha256, its size in word pieces."""

    ord: int
    heading: tuple[str, ...]
    line_start: int
    line_end: int
    text: str
    sha: str
    tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkRow(Chunk):
    """A chunk the store holds: with its label and its note's path."""

    label: int
    path: str


@dataclass(frozen=True, slots=True)
class NewChunk(Chunk):
    """A chunk about to be written: with what its keyword row carries beside its text."""

    title: str
    about: str = ""  # the note's description, on its first chunk only (chunks.about_text)


@dataclass(frozen=True, slots=True)
class LinkRow:
    source: str
    line: int
    target: str
    anchor: str | None
    kind: str
    embed: bool
    verdict: str
    resolved: str | None
    candidates: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PendingChunk:
    """A chunk waiting for its vector: the text to embed, and its own text (for its lines)."""

    label: int
    sha: str
    embed_text: str
    text: str


NOTE_COLS = (
    "path, size, mtime_ns, sha256, kind, skip_reason, title, summary, category, date, updated, "
    "tags, aliases, frontmatter, headings, warnings, lines"
)
# the same columns, headings and warnings left empty (read for a note's metadata only)
NOTE_COLS_NO_OUTLINE = NOTE_COLS.replace("headings, warnings", "'[]', '[]'")
CHUNK_COLS = "label, path, ord, heading, line_start, line_end, text, sha, tokens"


def note_row(r: Sequence[Any]) -> NoteRow:
    return NoteRow(
        path=r[0],
        size=r[1],
        mtime_ns=r[2],
        sha256=r[3],
        kind=r[4],
        skip_reason=r[5],
        title=r[6],
        summary=r[7],
        category=r[8],
        date=r[9],
        updated=r[10],
        tags=_listed(r[11]),
        aliases=_listed(r[12]),
        frontmatter={} if r[13] == "{}" else json.loads(r[13]),
        headings=()
        if r[14] == "[]"
        else tuple((int(a), str(b), int(c)) for a, b, c in json.loads(r[14])),
        warnings=_listed(r[15]),
        lines=r[16],
    )


def _listed(value: str) -> tuple[Any, ...]:
    """A JSON list column as a tuple; the empty one most rows hold without decoding it
    (every row is read by a command that lists MEMORY.md: five decodes a row were a
    third of the read)."""
    return () if value == "[]" else tuple(json.loads(value))


def chunk_row(r: Sequence[Any]) -> ChunkRow:
    return ChunkRow(
        label=r[0],
        path=r[1],
        ord=r[2],
        heading=tuple(json.loads(r[3])),
        line_start=r[4],
        line_end=r[5],
        text=r[6],
        sha=r[7],
        tokens=r[8],
    )


__all__ = ["ChunkRow", "LinkRow", "NewChunk", "NoteRow", "PendingChunk"]
