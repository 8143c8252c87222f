"""The memory tool's listings read from the vault: ``view /memories`` and ``view`` of a
folder (``MemoryCommands`` asks them; ``core.memory_views`` renders them).

Notes are listed newest first with their summaries, read from the index's rows of the
page shown only. A file named as a note but for its case (``Fact.MD``) is listed too,
as a file: Obsidian reads it as no note, memvault indexes and writes none, and the
tool refuses every command on it but its ``view`` (its numbered lines, as the SDK's
reference shows any file) and its rename to ``.md`` — which an agent can only ask for
a file it has seen (the reference lists every file it holds).
"""

from __future__ import annotations

import os
import posixpath
import stat
import unicodedata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from memvault.core import memory_views as V
from memvault.core.changes import Seen
from memvault.core.memory_md import folder_note_path
from memvault.core.text import NotText
from memvault.errors import NoteNotFound
from memvault.vault.paths import not_a_note_for_obsidian

if TYPE_CHECKING:
    from memvault.config import VaultConfig
    from memvault.engine.catalogue import Catalogue
    from memvault.vault.files import Scan, VaultFS


class MemoryViews:
    """The two listings over one vault."""

    def __init__(self, config: VaultConfig, fs: VaultFS, catalogue: Catalogue) -> None:
        self.config = config
        self.fs = fs
        self.catalogue = catalogue
        self.memory_file = config.memory.file

    def index(self, first: int | None, mark: int | None = None) -> str:
        """``view /memories`` (``first``: a page of the notes at the top level, or past
        them of its folders; ``mark``: its command's, ``core.page_marks``)."""
        scan = self.fs.scan()
        top = {p: s for p, s in scan.notes.items() if "/" not in p and p != self.memory_file}
        not_notes = self._not_notes(scan)
        counts: dict[str, list[int]] = {}
        for rel, st in scan.notes.items():
            if "/" in rel:
                c = counts.setdefault(rel.split("/", 1)[0], [0, 0, 0])
                c[0] += 1
                c[1] += st.size
        for e in not_notes:  # a folder holding only such files is listed too
            if "/" in e.rel:
                c = counts.setdefault(e.rel.split("/", 1)[0], [0, 0, 0])
                c[1] += e.size
                c[2] += 1
        # the folders MEMORY.md has sections for first, then the biggest
        mains = [r.folder.split("/", 1)[0] for r in self.config.memory.sections]
        order = sorted(counts, key=lambda f: (f not in mains, -counts[f][0], f))
        folders = [V.FolderCount(f, *counts[f]) for f in order]
        if first is not None:
            here = [e for e in not_notes if "/" not in e.rel]  # (numbered past the folders)
            return V.render_top_notes(self._entries(top, first), first, folders, here, mark)
        lines = None
        try:
            read = self.fs.read(self.memory_file)
            memory = read.decoded.text
            if read.truncated:  # past max_note_bytes: its lines counted to its end
                lines = self.fs.read_lines(self.memory_file, 1, 1, 1).total_lines
        except (NoteNotFound, NotText, OSError):
            memory = None
        entries = self._entries(top, 1, V.INDEX_TOP_NOTES)
        return V.render_index(self.memory_file, memory, folders, entries, not_notes, lines)

    def folder(self, rel: str, first: int | None, mark: int | None = None) -> str:
        """``view /memories/<folder>``: its subfolders, its files not read as notes, a
        page of its notes (``first``: the first of the page, from 1; ``mark``: its
        command's, ``core.page_marks``)."""
        scan = self.fs.scan(rel)
        direct = {p: s for p, s in scan.notes.items() if posixpath.dirname(p) == rel}
        not_notes = self._not_notes(scan)
        counts: dict[str, list[int]] = {}
        for p, st in scan.notes.items():
            if (sub := _below(rel, p)) is not None:
                c = counts.setdefault(sub, [0, 0, 0])
                c[0] += 1
                c[1] += st.size
        for e in not_notes:
            if (sub := _below(rel, e.rel)) is not None:
                c = counts.setdefault(sub, [0, 0, 0])
                c[1] += e.size
                c[2] += 1
        subfolders = [V.FolderCount(f, *c) for f, c in sorted(counts.items())]
        note = folder_note_path(rel)
        return V.render_folder(
            rel,
            self._entries(direct, first),
            subfolders,
            first or 1,
            note if note in direct else None,
            [e for e in not_notes if posixpath.dirname(e.rel) == rel],
            mark,
            self._others(scan, not_notes),
        )

    def _entries(
        self, notes: Mapping[str, Seen], first: int | None, shown: int = V.FOLDER_PAGE
    ) -> list[V.Entry]:
        """``notes`` newest first, the ``shown`` from the ``first`` (1: the newest) with
        their summaries: only their rows are read (a vault opened for one command, on
        100,000 notes, does not read every note's row to list forty)."""
        order = sorted(notes.items(), key=lambda item: (-item[1].mtime_ns, item[0]))
        start = max(first or 1, 1) - 1
        rows = self.catalogue.rows_of(rel for rel, _ in order[start : start + shown])
        out = []
        for rel, st in order:
            row = rows.get(rel)
            about = (row.summary or row.title) if row is not None else ""
            out.append(V.Entry(rel, st.size, st.mtime_ns, about))
        return out

    def _others(self, scan: Scan, listed: Sequence[V.Entry]) -> int:
        """The files at or below a folder (its ``scan``) that a ``delete`` of it moves and
        its view does not list (``listed``: its files named as notes but for their case):
        its attachments (images, PDFs), what ``vault.ignore`` leaves out (a template, a
        ``Draft.MD`` there), and the files memvault does not index (a sync tool's conflict
        copy of a note, a name it refuses, a note's twin in another Unicode form): counted.
        Hidden files (``.DS_Store``) are not, as the SDK's reference lists none."""
        shown = {e.rel for e in listed}
        count = sum(1 for rel in scan.attachments if rel not in shown)
        for skipped in scan.skipped:  # (few: an lstat each)
            rel = unicodedata.normalize("NFC", skipped.path)
            if rel in scan.attachments:  # a NOTE.MD is said there too: counted above
                continue
            try:
                count += not stat.S_ISDIR(os.lstat(self.fs.root / skipped.path).st_mode)
            except OSError:  # a name not UTF-8 (escaped), or gone since: a file it was
                count += 1
        return count

    def _not_notes(self, scan: Scan) -> list[V.Entry]:
        """The files of ``scan`` named as notes but for their case (``Fact.MD``), newest
        first; those ``vault.ignore`` leaves out are no memory, as its notes are not."""
        found = [
            V.Entry(rel, st.size, st.mtime_ns, taken=rel[:-3] + ".md" in scan.notes)
            for rel, st in scan.attachments.items()
            if not_a_note_for_obsidian(rel) is not None and not self.fs.is_ignored(rel)
        ]
        return sorted(found, key=lambda e: (-e.mtime_ns, e.rel))


def _below(folder: str, rel: str) -> str | None:
    """The subfolder of ``folder`` that holds ``rel``; None for a file of ``folder``."""
    if posixpath.dirname(rel) == folder:
        return None
    return folder + "/" + rel[len(folder) + 1 :].split("/", 1)[0]


__all__ = ["MemoryViews"]
