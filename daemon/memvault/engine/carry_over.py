"""Relinked notes indexed by carrying their rows over (core/carry.py), not from scratch.

After a rename the relink has rewritten link targets in many notes, and knows each
rewrite. ``CarryOver.index`` takes those notes and, for each whose change
``core.carry`` can follow exactly, writes its rows in place: the note row's size,
mtime and hash, its links (resolved again, as the indexer resolves them), and the
text of the chunks that hold a rewritten link (their label, embedded text and vector
stay; ``Store.move_chunk`` rewrites their keyword rows). A note is carried over only
when its row is that of the text the relink read and the file now holds exactly
what the relink wrote: known without reading it when the file is still the one the
swap put there (``VaultFS.written``: its inode, size, mtime and ctime unchanged, the
sha256 of the bytes written), else read back (a person's save since then is indexed
from scratch, as theirs). The note row changes in its size, mtime, hash and category
alone (``Store.set_note_file``). Every other note is left to ``Indexer.index``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memvault.core.about import about_text
from memvault.core.carry import carry
from memvault.core.relink import Relinked
from memvault.core.text import Decoded, NotText, encode, sha256_bytes
from memvault.engine.catalogue import ADD_ONE_BY_ONE
from memvault.engine.embedding import note_of
from memvault.engine.indexer import link_row
from memvault.engine.lane import Lane
from memvault.engine.stored_links import LinkLookup, answering
from memvault.errors import NoteNotFound, UnsafePath
from memvault.index.rows import LinkRow, NewChunk, NoteRow
from memvault.vault.swap import Written

BATCH = 500  # notes per transaction
_Link = tuple[int, str, "str | None", str, bool]  # line, target, anchor, kind, embed
# (path, size, mtime_ns, sha256, category), its link rows, its changed chunks
_Ready = tuple[tuple[str, int, int, str, str], list[LinkRow], list[tuple[int, NewChunk]]]


@dataclass(frozen=True, slots=True)
class _File:
    """What the file holds now, as its note row records it."""

    size: int
    mtime_ns: int
    sha256: str


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
        # (a few notes, no map held: the store's link keys, ``Catalogue.link_lookup``;
        # many to come, a map: the store's keys would hold them all in each note's index)
        coming = list(coming)
        many = len(edits) + len(moved) + len(coming) > ADD_ONE_BY_ONE
        links = self.catalogue.link_lookup(coming, many=many)
        renamed = {new: old for old, new in moved}
        max_tokens = min(self.config.index.max_chunk_tokens, self.embedding.max_tokens)
        ready: list[_Ready] = []
        for path in sorted(set(edits) | set(renamed)):
            if path in renamed and posixpath.basename(renamed[path]) != posixpath.basename(path):
                continue  # a new name: maybe a new title, embedded again
            # the store's row, whole: the catalogue keeps its rows without headings and
            # warnings (catalogue.kept_row), and a moved note's row is renamed in the
            # store, not yet in the catalogue
            row = self.store.note(path)
            if row is None or row.kind != "note" or row.warnings:
                continue
            edit = edits.get(path)
            ours = self.fs.written(path) if edit is not None else None
            got = (
                self._known(path, row, ours, edit, max_tokens)
                if ours is not None and edit is not None
                else self._read_back(path, row, edit, max_tokens)
            )
            if got is None:
                continue
            now, found, moved_chunks = got
            category = path.split("/", 1)[0] if "/" in path else ""
            file = (path, now.size, now.mtime_ns, now.sha256, category)
            ready.append((file, self._resolved(path, found, links), moved_chunks))
            done.add(path)
            if len(ready) >= BATCH:
                self._commit(ready)
                ready = []
        if ready:
            self._commit(ready)
        return done

    def _known(
        self,
        path: str,
        row: NoteRow,
        w: Written,
        edit: tuple[str, Relinked],
        max_tokens: int,
    ) -> tuple[_File, list[_Link], list[tuple[int, NewChunk]]] | None:
        """``_carried`` of a relinked note whose file is still the one the relink's swap
        put there (``w``: ``VaultFS.written``), without reading it: when the swap
        replaced the row's version and wrote what carry makes of it; else None."""
        if w.before != row.sha256:
            return None  # its row is not that of the text the relink changed
        # the byte-order mark the note has: the one with which the old text is the row's
        for bom in (False, True):
            if sha256_bytes(encode(Decoded(edit[0], bom))) == row.sha256:
                break
        else:
            return None
        got = self._carried(path, row, edit, max_tokens)
        if got is None:
            return None
        text, found, moved_chunks = got
        if sha256_bytes(encode(Decoded(text, bom))) != w.sha256:
            return None  # the file is not what carry makes of the old text
        return _File(w.size, w.mtime_ns, w.sha256), found, moved_chunks

    def _read_back(
        self, path: str, row: NoteRow, edit: tuple[str, Relinked] | None, max_tokens: int
    ) -> tuple[_File, list[_Link], list[tuple[int, NewChunk]]] | None:
        """The file read, its links and changed chunks when they can be carried over."""
        if edit is None:  # moved, not relinked: the file must be the row's, unchanged
            seen = self.fs.stat(path)
            if seen is not None and (seen.size, seen.mtime_ns) == (row.size, row.mtime_ns):
                # as a sync tells a file unchanged (it was hashed to find the move)
                known = _File(row.size, row.mtime_ns, row.sha256)
                return known, self._links_of(path), []
        try:
            now = self.fs.read(path)
        except (NoteNotFound, NotText, UnsafePath, OSError):
            return None
        if now.truncated:
            return None
        file = _File(now.size, now.mtime_ns, now.sha256)
        if edit is None:
            return (file, self._links_of(path), []) if now.sha256 == row.sha256 else None
        if sha256_bytes(encode(Decoded(edit[0], now.decoded.bom))) != row.sha256:
            return None  # its row is not that of the text the relink changed
        got = self._carried(path, row, edit, max_tokens)
        if got is None or got[0] != now.decoded.text:
            return None  # not a change carry follows, or the file is not what was written
        return file, got[1], got[2]

    def _links_of(self, path: str) -> list[_Link]:
        return [(r.line, r.target, r.anchor, r.kind, r.embed) for r in self.store.links(path)]

    def _carried(
        self,
        path: str,
        row: NoteRow,
        edit: tuple[str, Relinked],
        max_tokens: int,
    ) -> tuple[str, list[_Link], list[tuple[int, NewChunk]]] | None:
        """What carry makes of the relinked note whose row is that of ``edit``'s old
        text: its new text, its links (line, target, anchor, kind, embed) and the
        chunks whose text changes (label, chunk); None when it must be indexed from
        scratch."""
        old_text, result = edit
        if not result.spans:
            return None
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
        if plan is None:
            return None  # not a change carry follows
        first = any(chunks[i].ord == 0 for i in plan.chunk_texts)
        about = about_text(note_of(row)) if first else ""
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
        links: list[_Link] = [(k.line, k.target, k.anchor, k.kind, k.embed) for k in plan.links]
        return plan.text, links, moved

    def _resolved(self, path: str, found: list[_Link], links: LinkLookup) -> list[LinkRow]:
        """Link rows resolved against ``links`` (the note's looked up at once)."""
        ask = answering(links, [(link[1], path) for link in found])
        return [link_row(path, *link, ask) for link in found]

    def _commit(self, ready: list[_Ready]) -> None:
        with (
            self.catalogue.changing(file[0] for file, _, _ in ready),
            self.store.transaction() as conn,
        ):
            for (path, size, mtime_ns, sha256, category), links, moved in ready:
                for label, chunk in moved:
                    self.store.move_chunk(conn, label, chunk)
                self.store.set_note_file(conn, path, size, mtime_ns, sha256, category)
                self.store.put_links(conn, path, links)


def _summary_from_frontmatter(row: NoteRow) -> bool:
    """Whether the note's summary is its frontmatter's (notes._summary), not its
    first paragraph's."""
    for name in ("summary", "description"):
        value = row.frontmatter.get(name)
        if isinstance(value, (str, int, float)) and str(value).strip():
            return True
    return False


__all__ = ["CarryOver"]
