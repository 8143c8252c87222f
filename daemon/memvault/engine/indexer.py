"""Indexing notes: read, parse, chunk, embed what is new, commit.

``Indexer.index`` walks the paths a sync found created or modified:
``_prepare`` turns one file into its note row, link rows and chunks (a file
that is not text still gets a row, so it is not re-hashed on every sync);
``_commit`` embeds only the chunk texts the cache lacks and writes a batch in
one transaction, keeping the labels of chunks whose text did not change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memvault.core import memory_md
from memvault.core.chunks import chunk_note
from memvault.core.notes import Note, parse_note
from memvault.core.report import SkippedFile
from memvault.core.text import NotText, sha256_text, split_lines
from memvault.errors import NoteNotFound
from memvault.index.rows import LinkRow, NewChunk, NoteRow

if TYPE_CHECKING:
    from memvault.config import VaultConfig
    from memvault.engine.catalogue import Catalogue
    from memvault.engine.embedding import Embedding
    from memvault.index.store import Store
    from memvault.vault.files import VaultFS

BATCH_CHUNKS = 256  # chunks embedded per model call batch / commit
BATCH_NOTES = 200


@dataclass(frozen=True, slots=True)
class Progress:
    done: int  # notes committed (with their vectors) so far
    total: int
    embedded: int


@dataclass(slots=True)
class _Prepared:
    path: str
    row: NoteRow
    links: list[LinkRow]
    chunks: list[NewChunk]
    texts: dict[str, str]  # sha256 -> the text embedded for it
    lines: dict[str, str]  # sha256 -> a line embedded on its own (core/excerpts)


@dataclass(frozen=True, slots=True)
class Indexed:
    """What one ``Indexer.index`` call did."""

    embedded: int = 0
    reused: int = 0
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[str, ...] = ()


class Indexer:
    """Turns note files into store rows, chunks and vectors."""

    def __init__(
        self,
        config: VaultConfig,
        fs: VaultFS,
        store: Store,
        catalogue: Catalogue,
        embedding: Embedding,
    ) -> None:
        self.config = config
        self.fs = fs
        self.store = store
        self.catalogue = catalogue
        self.embedding = embedding

    # -- indexing notes ----------------------------------------------------------------------------

    def index(
        self, paths: Sequence[str], progress: Callable[[Progress], None] | None = None
    ) -> Indexed:
        embedded = reused = 0
        skipped: list[SkippedFile] = []
        warnings: list[str] = []
        batch: list[_Prepared] = []
        pending = 0
        # progress counts notes committed, not read: reading is fast and the model's
        # time comes at the commit, so a count of notes read runs ahead of the work
        committed = 0
        for done, path in enumerate(paths, 1):
            prepared, skip, warns = self._prepare(path)
            warnings += warns
            if skip is not None:
                skipped.append(skip)
            if prepared is not None:
                batch.append(prepared)
                pending += len(prepared.chunks)
            if pending >= BATCH_CHUNKS or len(batch) >= BATCH_NOTES:
                e, r = self._commit(batch)
                embedded, reused = embedded + e, reused + r
                batch, pending, committed = [], 0, done
            if progress is not None:
                progress(Progress(committed, len(paths), embedded))
        if batch:
            e, r = self._commit(batch)
            embedded, reused = embedded + e, reused + r
        if progress is not None and paths:
            progress(Progress(len(paths), len(paths), embedded))
        return Indexed(embedded, reused, tuple(skipped), tuple(warnings))

    def _prepare(self, path: str) -> tuple[_Prepared | None, SkippedFile | None, list[str]]:
        try:
            result = self.fs.read(path)
        except NoteNotFound:
            return None, None, []
        except NotText as exc:
            row = self._skipped_row(path, str(exc))
            return (
                _Prepared(path, row, [], [], {}, {}) if row else None,
                SkippedFile(path, str(exc)),
                [],
            )
        except OSError as exc:
            return None, SkippedFile(path, f"cannot read: {exc.strerror}"), []
        note = parse_note(path, result.decoded.text)
        kept = list(note.warnings)  # kept in its row: listed by status until it changes
        if result.truncated:
            kept.append(
                f"{result.size / 1e6:.1f} MB; only the first "
                f"{self.fs.max_note_bytes / 1e6:.1f} MB is indexed (vault.max_note_bytes)"
            )
        warnings = [f"{path}: {w}" for w in kept]
        kind = "index" if self._is_index_note(path) else "note"
        lines = split_lines(result.decoded.text)
        row = NoteRow(
            path=path,
            size=result.size,
            mtime_ns=result.mtime_ns,
            sha256=result.sha256,
            kind=kind,
            title=note.title,
            summary=note.summary,
            category=note.category,
            date=note.date,
            updated=note.updated,
            tags=note.tags,
            aliases=note.aliases,
            frontmatter=note.frontmatter,
            headings=tuple((h.level, h.text, h.line) for h in note.headings),
            warnings=tuple(kept),
            lines=len(lines),
        )
        idx = self.catalogue.link_index()
        links = []
        for link in note.links:
            res = idx.resolve(link.target, path)
            links.append(
                LinkRow(
                    source=path,
                    line=link.line,
                    target=link.target,
                    anchor=link.anchor,
                    kind=link.kind,
                    embed=link.embed,
                    verdict=res.verdict,
                    resolved=res.path,
                    candidates=res.candidates,
                )
            )
        chunks: list[NewChunk] = []
        texts: dict[str, str] = {}
        if kind == "note":
            chunks, texts = self._chunks(note)
            if not chunks:
                warnings.append(f"{path}: nothing to embed (empty note)")
        line_texts = self.embedding.line_texts(c.text for c in chunks)
        return _Prepared(path, row, links, chunks, texts, line_texts), None, warnings

    def _skipped_row(self, path: str, reason: str) -> NoteRow | None:
        """A file that is not text still gets a row, so its hash is not recomputed
        on every sync (the size+mtime fast path applies to it too)."""
        st = self.fs.stat(path)
        sha = self.fs.hashes([path]).get(path)
        if st is None or sha is None:
            return None
        return NoteRow(
            path=path,
            size=st.size,
            mtime_ns=st.mtime_ns,
            sha256=sha,
            kind="skipped",
            skip_reason=reason,
            category=path.split("/", 1)[0] if "/" in path else "",
        )

    def _is_index_note(self, path: str) -> bool:
        if path == self.config.memory.file:
            return True
        return memory_md.is_folder_note(path) and any(
            path == memory_md.folder_note_path(r.folder) for r in self.config.memory.sections
        )

    def _chunks(self, note: Note) -> tuple[list[NewChunk], dict[str, str]]:
        """A note's chunks, and the text to embed for each (by its sha256)."""
        settings = self.config.index
        emb = self.embedding.embedder
        max_tokens = min(settings.max_chunk_tokens, emb.max_tokens)
        chunks = chunk_note(
            note,
            emb.count_tokens,
            target_tokens=min(settings.chunk_target_tokens, max_tokens),
            max_tokens=max_tokens,
            parts=settings.embed_context,
        )
        out, texts = [], {}
        for c, text in zip(chunks, self.embedding.texts_for(note, chunks), strict=True):
            sha = sha256_text(text)
            texts[sha] = text
            out.append(
                NewChunk(
                    c.ord,
                    c.heading_path,
                    c.line_start,
                    c.line_end,
                    c.text,
                    sha,
                    emb.count_tokens(c.text),
                    note.title,
                )
            )
        return out, texts

    def _commit(self, batch: list[_Prepared]) -> tuple[int, int]:
        """Embed what the cache lacks, then write the batch in one transaction."""
        embedding = self.embedding if any(p.chunks for p in batch) else None
        embedded = reused = 0
        if embedding is not None:
            embedding.check_model()
            wanted = {sha: text for p in batch for sha, text in p.lines.items()}
            wanted.update((sha, text) for p in batch for sha, text in p.texts.items())
            # chunks are counted; the lines embedded in the same call are not
            embedded = len(embedding.embed_new(wanted) & {c.sha for p in batch for c in p.chunks})
            _ = embedding.vectors  # opened (and reconciled) before the new rows exist
        added: list[int] = []
        removed: list[int] = []
        self.catalogue.changed(p.path for p in batch)
        with self.store.transaction() as conn:
            for p in batch:
                old = self.store.chunk_labels_by_sha(conn, p.path)
                fresh = []
                for c in p.chunks:
                    if old.get(c.sha):
                        self.store.move_chunk(conn, old[c.sha].pop(0), c)
                        reused += 1
                    else:
                        fresh.append(c)
                stale = [label for labels in old.values() for label in labels]
                self.store.delete_chunks(conn, stale)
                removed += stale
                added += self.store.insert_chunks(conn, p.path, fresh)
                self.store.put_note(conn, p.row)
                self.store.put_links(conn, p.path, p.links)
        self.embedding.forget(removed)
        if embedding is not None and added:
            embedding.add(added)
            reused += max(0, len(added) - embedded)
        return embedded, reused


__all__ = ["BATCH_CHUNKS", "Indexed", "Indexer", "Progress"]
