"""Relinked notes indexed by carrying their rows over (core/carry.py), not from scratch.

After a rename the relink has rewritten link targets in many notes, and knows each
rewrite. ``CarryOver.index`` takes those notes and, for each whose change
``core.carry`` can follow exactly, writes its rows in place: the note row's size,
mtime and hash, its links (resolved again, as the indexer resolves them), and the
text of the chunks that hold a rewritten link (their label, embedded text and vector
stay; ``Store.move_chunk`` rewrites their keyword rows). A note is carried over only
when its row is that of the text the relink read and the file now holds exactly
what the relink wrote (read back: a person's save since then is indexed from
scratch, as theirs). Every other note is left to ``Indexer.index``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from memvault.core.about import about_text
from memvault.core.carry import carry
from memvault.core.relink import Relinked
from memvault.core.text import Decoded, NotText, encode, sha256_bytes
from memvault.core.wikilinks import LinkIndex
from memvault.engine.embedding import note_of
from memvault.engine.indexer import link_row
from memvault.engine.lane import Lane
from memvault.errors import NoteNotFound, UnsafePath
from memvault.index.rows import LinkRow, NewChunk, NoteRow

if TYPE_CHECKING:
    from memvault.vault.files import ReadResult

BATCH = 500  # notes per transaction


class CarryOver(Lane):
    """Writes the rows of relinked notes from their old rows and the relink's spans."""

    def index(
        self,
        edits: Mapping[str, tuple[str, Relinked]],
        moved: Sequence[tuple[str, str]] = (),
        coming: Iterable[str] = (),
    ) -> set[str]:
        """Carry over each note of ``edits`` (path -> (the text the relink read, what it
        made of it)) and of ``moved`` (old, new: rows renamed, by content hash) that it
        can; returns the paths done (the rest need indexing). A moved note keeps its
        chunks when it keeps its file name (its title, when the name is its title, and
        so its embedded texts): its category is its new folder's, its links are
        resolved again from where it is now."""
        done: set[str] = set()
        # links resolved as the indexer resolves them: the vault as the sync leaves it
        # (the notes it creates, and those a long sync it let in has still to index)
        links = self.catalogue.link_index_with(coming)
        renamed = {new: old for old, new in moved}
        max_tokens = min(self.config.index.max_chunk_tokens, self.embedding.max_tokens)
        ready: list[tuple[NoteRow, list[LinkRow], list[tuple[int, NewChunk]]]] = []
        for path in sorted(set(edits) | set(renamed)):
            if path in renamed and posixpath.basename(renamed[path]) != posixpath.basename(path):
                continue  # a new name: maybe a new title, embedded again
            # the store's row, whole: the catalogue keeps its rows without headings and
            # warnings (catalogue.kept_row), and a moved note's row is renamed in the
            # store, not yet in the catalogue
            row = self.store.note(path)
            if row is None or row.kind != "note" or row.warnings:
                continue
            try:
                now = self.fs.read(path)
            except (NoteNotFound, NotText, UnsafePath, OSError):
                continue
            if now.truncated:
                continue
            got = self._carried(path, row, now, edits.get(path), max_tokens)
            if got is None:
                continue
            found, moved_chunks = got
            category = path.split("/", 1)[0] if "/" in path else ""
            new_row = NoteRow(
                **{
                    **{f: getattr(row, f) for f in NoteRow.__dataclass_fields__},
                    "size": now.size,
                    "mtime_ns": now.mtime_ns,
                    "sha256": now.sha256,
                    "category": category,
                }
            )
            ready.append((new_row, self._resolved(path, found, links), moved_chunks))
            done.add(path)
            if len(ready) >= BATCH:
                self._commit(ready)
                ready = []
        if ready:
            self._commit(ready)
        return done

    def _carried(
        self,
        path: str,
        row: NoteRow,
        now: ReadResult,
        edit: tuple[str, Relinked] | None,
        max_tokens: int,
    ) -> tuple[list[tuple[int, str, str | None, str, bool]], list[tuple[int, NewChunk]]] | None:
        """The note's links (line, target, anchor, kind, embed) and the chunks whose text
        changes (label, chunk), or None when it must be indexed from scratch."""
        if edit is None:  # moved, not relinked: the file must be the row's, unchanged
            if now.sha256 != row.sha256:
                return None
            links = [(r.line, r.target, r.anchor, r.kind, r.embed) for r in self.store.links(path)]
            return links, []
        old_text, result = edit
        if not result.spans:
            return None
        old_bytes = encode(Decoded(old_text, now.decoded.bom))
        if sha256_bytes(old_bytes) != row.sha256:
            return None  # its row is not that of the text the relink changed
        chunks = self.store.chunks_of(path)
        plan = carry(
            old_text,
            result.spans,
            result.links,
            row.headings,
            [(c.line_start, c.line_end, c.text) for c in chunks],
            summary_from_frontmatter=_summary_from_frontmatter(row),
            max_tokens=max_tokens,
        )
        if plan is None or plan.text != now.decoded.text:
            return None  # not a change carry follows, or the file is not what was written
        about = about_text(note_of(row))
        moved = [
            (
                chunks[i].label,
                NewChunk(
                    c.ord,
                    c.heading,
                    c.line_start,
                    c.line_end,
                    text,
                    c.sha,
                    self.embedding.count_tokens(text),  # of the text as written
                    row.title,
                    about if c.ord == 0 else "",
                ),
            )
            for i, text in plan.chunk_texts.items()
            for c in (chunks[i],)
        ]
        links = [(k.line, k.target, k.anchor, k.kind, k.embed) for k in plan.links]
        return links, moved

    def _resolved(
        self, path: str, found: list[tuple[int, str, str | None, str, bool]], links: LinkIndex
    ) -> list[LinkRow]:
        """Link rows resolved against ``links``."""
        return [link_row(path, *link, links) for link in found]

    def _commit(
        self, ready: list[tuple[NoteRow, list[LinkRow], list[tuple[int, NewChunk]]]]
    ) -> None:
        self.catalogue.changed(row.path for row, _, _ in ready)
        with self.store.transaction() as conn:
            for row, links, moved in ready:
                for label, chunk in moved:
                    self.store.move_chunk(conn, label, chunk)
                self.store.put_note(conn, row)
                self.store.put_links(conn, row.path, links)


def _summary_from_frontmatter(row: NoteRow) -> bool:
    """Whether the note's summary is its frontmatter's (notes._summary), not its
    first paragraph's."""
    for name in ("summary", "description"):
        value = row.frontmatter.get(name)
        if isinstance(value, (str, int, float)) and str(value).strip():
            return True
    return False


__all__ = ["CarryOver"]
