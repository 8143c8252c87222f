"""The engine's indexing of notes: read, parse, chunk, embed what is new, commit.

A mixin of ``Engine`` (kept in its own file so neither half passes ~600
lines). ``_index`` walks the paths ``sync`` found created or modified:
``_prepare`` turns one file into its note row, link rows and chunks (a file
that is not text still gets a row, so it is not re-hashed on every sync);
``_commit`` embeds only the chunk texts the cache lacks and writes a batch in
one transaction, keeping the labels of chunks whose text did not change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memvault.core import memory_md
from memvault.core.chunks import Chunk, chunk_note, embed_texts
from memvault.core.excerpts import unit_texts
from memvault.core.notes import Note, parse_note
from memvault.core.report import SkippedFile
from memvault.core.text import NotText, sha256_text, split_lines
from memvault.errors import NoteNotFound
from memvault.store_rows import LinkRow, NewChunk, NoteRow

if TYPE_CHECKING:
    from memvault.config import VaultConfig
    from memvault.core.wikilinks import LinkIndex
    from memvault.embedder import Embedder
    from memvault.store import Store
    from memvault.vault import VaultFS
    from memvault.vectors import VectorIndex

BATCH_CHUNKS = 256  # chunks embedded per model call batch / commit
BATCH_NOTES = 200


@dataclass(frozen=True, slots=True)
class Progress:
    done: int
    total: int
    embedded: int


@dataclass(slots=True)
class _Prepared:
    path: str
    row: NoteRow
    links: list[LinkRow]
    chunks: list[NewChunk]
    texts: dict[str, str]  # sha256 -> the text embedded for it
    units: dict[str, str]  # sha256 -> the text of a line embedded on its own (core/excerpts)


class IndexMixin:
    """Indexing created and modified notes, over the parts the Engine owns."""

    config: VaultConfig
    fs: VaultFS
    store: Store

    if TYPE_CHECKING:  # provided by Engine; declared for the type checker only

        @property
        def embedder(self) -> Embedder: ...

        @property
        def vectors(self) -> VectorIndex: ...

        def link_index(self) -> LinkIndex: ...

        def model_id(self) -> str: ...

        def _check_model(self) -> str | None: ...

        def _hash(self, paths: Sequence[str]) -> dict[str, str]: ...

        def _changed_rows(self, paths: Iterable[str]) -> None: ...

    # -- indexing notes ----------------------------------------------------------------------------

    def _index(
        self, paths: Sequence[str], progress: Callable[[Progress], None] | None
    ) -> tuple[int, int, list[SkippedFile], list[str]]:
        embedded = reused = 0
        skipped: list[SkippedFile] = []
        warnings: list[str] = []
        batch: list[_Prepared] = []
        pending = 0
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
                batch, pending = [], 0
            if progress is not None:
                progress(Progress(done, len(paths), embedded))
        if batch:
            e, r = self._commit(batch)
            embedded, reused = embedded + e, reused + r
        if progress is not None and paths:
            progress(Progress(len(paths), len(paths), embedded))
        return embedded, reused, skipped, warnings

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
        warnings = [f"{path}: {w}" for w in note.warnings]
        if result.truncated:
            warnings.append(
                f"{path}: {result.size / 1e6:.1f} MB; only the first "
                f"{self.fs.max_note_bytes / 1e6:.1f} MB is indexed (vault.max_note_bytes)"
            )
        kind = "index" if self._is_index_note(path) else "note"
        lines = split_lines(result.decoded.text)
        row = NoteRow(
            path,
            result.size,
            result.mtime_ns,
            result.sha256,
            kind,
            None,
            note.title,
            note.summary,
            note.category,
            note.date,
            note.updated,
            note.tags,
            note.aliases,
            note.frontmatter,
            tuple((h.level, h.text, h.line) for h in note.headings),
            tuple(note.warnings),
            len(lines),
        )
        idx = self.link_index()
        links = []
        for link in note.links:
            res = idx.resolve(link.target, path)
            links.append(
                LinkRow(
                    path,
                    link.line,
                    link.target,
                    link.anchor,
                    link.kind,
                    link.embed,
                    res.verdict,
                    res.path,
                    res.candidates,
                )
            )
        chunks: list[NewChunk] = []
        texts: dict[str, str] = {}
        if kind == "note":
            chunks, texts = self._chunks(note)
            if not chunks:
                warnings.append(f"{path}: nothing to embed (empty note)")
        units = self._unit_texts(c.text for c in chunks)
        return _Prepared(path, row, links, chunks, texts, units), None, warnings

    def _unit_texts(self, chunk_texts: Iterable[str]) -> dict[str, str]:
        """sha256 -> text of every line embedded on its own (none when line_vectors is off)."""
        if not self.config.index.line_vectors:
            return {}
        return {sha256_text(t): t for text in chunk_texts for t in unit_texts(text)}

    def _skipped_row(self, path: str, reason: str) -> NoteRow | None:
        """A file that is not text still gets a row, so its hash is not recomputed
        on every sync (the size+mtime fast path applies to it too)."""
        st = self.fs.stat(path)
        sha = self._hash([path]).get(path)
        if st is None or sha is None:
            return None
        category = path.split("/", 1)[0] if "/" in path else ""
        return NoteRow(
            path,
            st.size,
            st.mtime_ns,
            sha,
            "skipped",
            reason,
            "",
            "",
            category,
            None,
            None,
            (),
            (),
            {},
            (),
            (),
            0,
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
        emb = self.embedder
        max_tokens = min(settings.max_chunk_tokens, emb.max_tokens)
        chunks = chunk_note(
            note,
            emb.count_tokens,
            target_tokens=min(settings.chunk_target_tokens, max_tokens),
            max_tokens=max_tokens,
            parts=settings.embed_context,
        )
        out, texts = [], {}
        for c, text in zip(chunks, self._embed_texts(note, chunks), strict=True):
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
        emb = self.embedder if any(p.chunks for p in batch) else None
        embedded = reused = 0
        if emb is not None:
            self._check_model()
            shas = list(dict.fromkeys(c.sha for p in batch for c in p.chunks))
            chunk_shas = set(shas)
            unit_shas = [s for s in dict.fromkeys(s for p in batch for s in p.units)]
            unit_shas = [s for s in unit_shas if s not in chunk_shas]
            have = self.store.cached(emb.model_id, shas + unit_shas)
            need = [s for s in shas if s not in have]
            need_units = [s for s in unit_shas if s not in have]
            if need or need_units:
                by_sha = {sha: text for p in batch for sha, text in p.texts.items()}
                by_sha.update((sha, text) for p in batch for sha, text in p.units.items())
                todo = need + need_units
                vectors = emb.embed([by_sha[s] for s in todo])
                self.store.put_embeddings(emb.model_id, dict(zip(todo, vectors, strict=True)))
                embedded = len(need)  # chunks; the lines embedded with them are not counted
        added: list[int] = []
        removed: list[int] = []
        if emb is not None:
            _ = self.vectors  # opened (and reconciled) before the new rows exist
        self._changed_rows(p.path for p in batch)
        with self.store.transaction() as conn:
            for p in batch:
                old: dict[str, list[int]] = {}
                for r in conn.execute("SELECT label, sha FROM chunks WHERE path = ?", (p.path,)):
                    old.setdefault(r[1], []).append(r[0])
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
        if emb is not None and (added or removed):
            vi = self.vectors
            if removed:
                vi.delete(removed)
            if added:
                labels, matrix = self.store.vectors_for(emb.model_id, added, emb.dim)
                vi.add(labels, matrix)
            reused += max(0, len(added) - embedded)
        elif removed and self.store.meta("model_id"):
            self.vectors.delete(removed)
        return embedded, reused

    def _embed_missing(self, paths: Iterable[str]) -> None:
        emb = self.embedder
        for path in paths:
            note_row = self.store.note(path)
            chunks = self.store.chunks_of(path)
            if note_row is None or not chunks:
                continue
            note = Note(
                note_row.path,
                note_row.title,
                note_row.summary,
                note_row.frontmatter,
                note_row.tags,
                note_row.aliases,
                (),
                (),
                "",
                1,
            )
            texts = self._embed_texts(
                note, [Chunk(c.ord, c.heading, c.line_start, c.line_end, c.text) for c in chunks]
            )
            texts += self._unit_texts(c.text for c in chunks).values()
            have = self.store.cached(emb.model_id, [sha256_text(t) for t in texts])
            missing = {sha256_text(t): t for t in texts if sha256_text(t) not in have}
            if missing:
                vecs = emb.embed(list(missing.values()))
                self.store.put_embeddings(emb.model_id, dict(zip(missing, vecs, strict=True)))

    def _embed_texts(self, note: Note, chunks: Sequence[Chunk]) -> list[str]:
        """The exact texts embedded for a note's chunks (context header + overlap)."""
        settings = self.config.index
        emb = self.embedder
        return embed_texts(
            note,
            chunks,
            settings.embed_context,
            emb.count_tokens,
            max_tokens=min(settings.max_chunk_tokens, emb.max_tokens),
            overlap_tokens=settings.context_overlap_tokens,
        )


__all__ = ["BATCH_CHUNKS", "IndexMixin", "Progress"]
