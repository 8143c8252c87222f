"""Results the engine hands back: SyncReport, Hit, Context, LinkProblem; and the one
request value a write travels as (NoteRequest).

Plain frozen dataclasses with ``to_dict`` for the JSON adapters (CLI
``--json``, HTTP, MCP).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from memvault.core.anchors import link_heading
from memvault.core.text import trim_proof


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


class Record:
    """A frozen dataclass that turns into plain JSON-ready data (tuples become lists)."""

    def to_dict(self) -> dict[str, Any]:
        out = _plain(self)
        assert isinstance(out, dict)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record ``to_dict`` gave (a field left out keeps its default; lists come
        back as tuples). Flat records only: nested records are read by their owner."""
        values = {
            f.name: tuple(data[f.name]) if isinstance(data[f.name], list) else data[f.name]
            for f in dataclasses.fields(cls)  # type: ignore[arg-type]
            if f.name in data
        }
        return cls(**values)


@dataclass(frozen=True, slots=True)
class SkippedFile(Record):
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Problem(Record):
    """Something memvault cannot do for a file, kept (and listed by ``status``) until
    the file changes so that it can: state, not an event."""

    path: str
    reason: str
    # index: index.db was deleted or replaced under the open index (restart to rebuild) |
    # memory: MEMORY.md is left untouched (``status`` exits 1), or a folder note the disk
    # refused (engine/folder_failures.py; written once it can) | skipped: the file is not
    # indexed | note: the note is indexed, but not all of it as written | config: a
    # setting of .memvault/config.toml that does not fit the files (status reads it now) |
    # git: git keeps files this disk cannot hold apart (status reads it now)
    kind: str


@dataclass(frozen=True, slots=True)
class SyncReport(Record):
    """What one sync did. Counts are of notes unless named otherwise."""

    created: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    moved: tuple[tuple[str, str], ...] = ()
    attachments_moved: tuple[tuple[str, str], ...] = ()  # images, PDFs...: links follow them
    embedded_chunks: int = 0  # chunks that went through the model
    reused_chunks: int = 0  # chunks whose vectors came from the cache or stayed
    relinked: tuple[str, ...] = ()  # notes whose links were re-targeted after a move
    # notes whose links to moved files were not re-targeted: they kept changing (or stayed
    # open for writing elsewhere) meanwhile; the next sync tries them again
    relink_waiting: tuple[str, ...] = ()
    memory_written: bool = False
    folder_notes_written: tuple[str, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    full: bool = True  # a full reconcile (not just a watcher batch)
    vanished: tuple[str, ...] = ()  # paths a batch named that are neither on disk nor indexed
    # notes a reported rename took to a path gone again before the sync: kept indexed
    # at their old paths, and handed on with the rename to the next batch (old, new)
    moved_on: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(
            self.created
            or self.modified
            or self.deleted
            or self.moved
            or self.attachments_moved
            or self.memory_written
            or self.folder_notes_written
            or self.relinked
        )

    def summary(self) -> str:
        parts = [
            f"{len(self.created)} created",
            f"{len(self.modified)} modified",
            f"{len(self.deleted)} deleted",
            f"{len(self.moved)} moved",
            f"{self.embedded_chunks} chunks embedded",
        ]
        if self.attachments_moved:
            parts.append(f"{len(self.attachments_moved)} attachments moved")
        if self.relinked:
            parts.append(f"{len(self.relinked)} notes relinked")
        if self.relink_waiting:
            parts.append(
                f"links waiting in {len(self.relink_waiting)} notes (busy, or moved meanwhile)"
            )
        if self.memory_written:
            parts.append("MEMORY.md updated")
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped")
        return ", ".join(parts) + f" in {self.seconds:.2f}s"


@dataclass(frozen=True, slots=True)
class Hit(Record):
    """One search result: a chunk of a note."""

    path: str
    title: str
    heading: tuple[str, ...]
    line_start: int
    line_end: int
    snippet: str
    score: float
    text: str = field(repr=False, default="")
    label: int = field(repr=False, default=0)
    ord: int = field(repr=False, default=0)
    # its vector is still being computed: found by keywords only (DESIGN.md, "Two lanes")
    pending: bool = False
    # the other candidates holding this hit's text word for word (spaces and case aside),
    # kept off the page as copies of it (core/copies), and their notes, the first 10
    copies: int = 0
    copy_paths: tuple[str, ...] = ()
    # a reader of a team's index (docs/TEAM.md): "missing" when this copy of the vault
    # has no such note, "differs" when its file is not what the index read (the text is
    # the shared index's, its writer's); "" when they agree, or on the writer
    this_copy: str = ""

    @property
    def address(self) -> str:
        """``[[path#heading]]``: paste it into a note or feed it to ``get``."""
        link = self.path[:-3] if self.path.lower().endswith(".md") else self.path
        link = trim_proof(link, self.path)  # (``Plan .md``: ``[[Plan .md]]``)
        return f"[[{link}#{link_heading(self.heading[-1])}]]" if self.heading else f"[[{link}]]"

    def to_dict(self) -> dict[str, Any]:
        out = _plain(self)
        out["address"] = self.address
        return out


@dataclass(frozen=True, slots=True)
class Source(Record):
    """One piece that went into a context."""

    path: str
    heading: tuple[str, ...]
    line_start: int
    line_end: int
    tokens: int
    why: str  # index | hit | linked
    this_copy: str = ""  # as Hit's: "missing" or "differs" on a reader of a team's index


@dataclass(frozen=True, slots=True)
class Context(Record):
    query: str
    budget: int
    tokens: int
    text: str
    sources: tuple[Source, ...]


@dataclass(frozen=True, slots=True)
class LinkProblem(Record):
    source: str
    line: int
    target: str
    verdict: (
        str  # unresolved | ambiguous | alias | anchor (the file exists, the #heading / #^block not)
    )
    candidates: tuple[str, ...] = ()
    anchor: str | None = None  # the link's #heading or #^block, as written
    column: int = 0  # 1-based column where the link starts (0: not known)
    text: str = ""  # the link as written: [[target#anchor|alias]], ![alt](path)


@dataclass(frozen=True, slots=True)
class NoteText(Record):
    """A note, or one section or line range of it (``memvault get``)."""

    path: str
    title: str
    line_start: int
    line_end: int
    text: str
    heading: str | None = None
    # past ``vault.max_note_bytes`` the text stops short: ``cut`` says where and how to
    # read on (``--lines``), ``total_lines`` is the whole file's; None when it is whole
    cut: str | None = None
    total_lines: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "title": self.title,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "heading": self.heading,
            "text": self.text,
            "truncated": self.cut is not None,
            "cut": self.cut,
            "total_lines": self.total_lines,
        }


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a write (``add``, ``log``) did. ``written`` is False when the note held what
    was asked already (the same log line at the same minute, a body ``add --update``
    found in the note) and nothing was written; ``note`` names a note the write left long
    (core/note_size), for the agent to write what comes next elsewhere."""

    path: str
    created: bool
    report: SyncReport
    written: bool = True
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        # `note` only when there is one, as MCP's memory_write answers
        said = {"note": self.note} if self.note else {}
        return {
            "path": self.path,
            "created": self.created,
            "written": self.written,
            "report": self.report.to_dict(),
            **said,
        }


@dataclass(frozen=True, slots=True)
class NoteRequest:
    """A note to add (or, with ``update``, change), as ``Vault.add`` received it: the
    value the local engine and the daemon's wire both take."""

    category: str
    title: str
    summary: str | None = None
    fields: Mapping[str, str] | None = None
    body: str | None = None
    update: bool = False
    section: str | None = None  # with update: replace only the text under this heading
