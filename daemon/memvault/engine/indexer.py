"""Indexing notes — the structure lane: read, parse, chunk, commit; never the model.

``Indexer.index`` walks the paths a sync found created or modified:
``_prepare`` turns one file into its note row, link rows and chunks (a file
that is not text still gets a row, so it is not re-hashed on every sync);
``_commit`` writes a batch in one transaction — rows, links, chunks, FTS —
keeping the labels (and vectors) of chunks whose embedded text did not change
and queueing the new ones, with the exact text to embed, for the vector lane
(``Embedding.embed_pending``). Chunking counts word pieces with the tokenizer
alone, so nothing here waits for the model.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from memvault.core import memory_md
from memvault.core.chunks import about_text, chunk_note
from memvault.core.folder_parse import parse_outside_listing
from memvault.core.notes import Note, parse_note
from memvault.core.results import SkippedFile
from memvault.core.text import NotText, sha256_text
from memvault.core.wikilinks import link_name
from memvault.engine.catalogue import ADD_ONE_BY_ONE
from memvault.engine.lane import Lane
from memvault.engine.stored_links import LinkLookup, answering
from memvault.errors import NoteNotFound, UnsafePath
from memvault.index.rows import LinkRow, NewChunk, NoteRow

BATCH_CHUNKS = 256  # chunks embedded per model call batch / commit
BATCH_NOTES = 200


def link_row(
    source: str,
    line: int,
    target: str,
    anchor: str | None,
    kind: str,
    embed: bool,
    links: LinkLookup,
) -> LinkRow:
    """A link's row, resolved against ``links`` (the indexer's and the carry-over's)."""
    res = links.resolve(target, source)
    return LinkRow(
        source=source,
        line=line,
        target=target,
        anchor=anchor,
        kind=kind,
        embed=embed,
        verdict=res.verdict,
        resolved=res.path,
        candidates=res.candidates,
    )


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a long sync is: notes committed (``stage="notes"``), then chunks given
    their vectors (``stage="vectors"``); ``embedded`` counts the model's work so far."""

    done: int
    total: int
    embedded: int
    stage: str = "notes"


@dataclass(slots=True)
class _Prepared:
    path: str
    row: NoteRow
    links: list[LinkRow]
    chunks: list[NewChunk]
    texts: dict[str, str]  # sha256 -> the text embedded for it


@dataclass(frozen=True, slots=True)
class Indexed:
    """What one ``Indexer.index`` call did (the structure lane: no vectors)."""

    kept: int = 0  # chunks whose embedded text did not change: label and vector kept
    queued: int = 0  # new chunks, queued for the vector lane
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[str, ...] = ()

    def plus(self, other: Indexed) -> Indexed:
        """What this call and ``other`` did together."""
        return Indexed(
            self.kept + other.kept,
            self.queued + other.queued,
            self.skipped + other.skipped,
            self.warnings + other.warnings,
        )


class Indexer(Lane):
    """Turns note files into store rows, chunks and vectors."""

    # -- indexing notes ----------------------------------------------------------------------------

    def index(
        self,
        paths: Sequence[str],
        progress: Callable[[Progress], None] | None = None,
        *,
        pause: Callable[[Sequence[str], Progress], None] | None = None,
        wanted: Callable[[str], bool] | None = None,
        coming: Iterable[str] = (),
    ) -> Indexed:
        """Index ``paths`` in batches, each committed in one transaction. With ``pause``,
        progress is reported through it, after each commit but the last, with the
        paths that batch committed: the engine steps aside there (a long reconcile lets
        a person's save through between two batches). ``wanted``: asked of each path
        when its turn comes; one it refuses is skipped (indexed meanwhile by a sync let
        in at a pause).

        Links are resolved against the vault as it is once the call is done: every
        file indexed already, ``paths`` and ``coming`` (notes a long sync still has to
        index, for a save it let in), so a link into the same batch or a later one is
        stored resolved. An alias first known when its note is read (a later batch)
        resolves again, at the end, the links of ``paths`` it can change."""
        if not paths:  # a sync that found nothing to read: no link index to build (a
            return Indexed()  # process's first sync, 100,000 notes: ~1 s)
        kept = queued = 0
        skipped: list[SkippedFile] = []
        warnings: list[str] = []
        batch: list[_Prepared] = []
        pending = 0
        # progress counts notes committed, not read: reading is fast and the model's
        # time comes at the commit, so a count of notes read runs ahead of the work
        committed = 0
        start = 0  # index in ``paths`` of the batch being read
        coming = list(coming)
        many = len(paths) + len(coming) > ADD_ONE_BY_ONE  # else by the store's link keys
        known = self.catalogue.link_lookup(many=many)
        new = [p for p in paths if p not in known]
        links = self.catalogue.link_lookup(itertools.chain(paths, coming), many=many)
        aliased: set[str] = set()  # link names of aliases ``links`` does not know
        for done, path in enumerate(paths, 1):
            if wanted is not None and not wanted(path):
                continue
            prepared, skip, warns = self._prepare(path, links)
            warnings += warns
            if skip is not None:
                skipped.append(skip)
            if prepared is not None:
                batch.append(prepared)
                pending += len(prepared.chunks)
                if (had := links.aliases_of(path)) != tuple(prepared.row.aliases):
                    aliased |= {link_name(a) for a in (*had, *prepared.row.aliases)}
            if pending >= BATCH_CHUNKS or len(batch) >= BATCH_NOTES:
                k, q = self._commit(batch)
                kept, queued = kept + k, queued + q
                batch, pending, committed = [], 0, done
                if pause is not None and done < len(paths):
                    pause(paths[start:done], Progress(committed, len(paths), 0))
                start = done
            if progress is not None and pause is None:
                progress(Progress(committed, len(paths), 0))
        if batch:
            k, q = self._commit(batch)
            kept, queued = kept + k, queued + q
        if new:  # notes came: the catalogue's link index has them from now on
            self.catalogue.files_added(new)
        if aliased:
            self._resolve_again(paths, coming, aliased, many)
        if progress is not None and paths:
            progress(Progress(len(paths), len(paths), 0))
        return Indexed(kept, queued, tuple(skipped), tuple(warnings))

    def _resolve_again(
        self, paths: Sequence[str], coming: Iterable[str], named: set[str], many: bool
    ) -> None:
        """Resolve again, against the rows as committed (every alias known now), the
        links of ``paths`` that an alias can change (those not resolved by path or name)
        and every note's links of the ``named`` aliases (given or taken away: a note
        indexed before, in another call, resolved them without: MEMORY.md's own
        aliases, indexed after the notes, left ``[[zed]]`` unresolved on a first sync)."""
        self.catalogue.files_changed()
        links = self.catalogue.link_lookup(coming, many=many)
        rows = []
        pairs = self.store.unresolved_targets(paths)
        pairs += [(s, t) for s, t, *_ in self.store.links_named(named)]
        pairs = list(dict.fromkeys(pairs))
        links = answering(links, ((t, s) for s, t in pairs))  # (one lookup for them all)
        for source, target in pairs:
            res = links.resolve(target, source)
            rows.append((source, target, res.verdict, res.path, res.candidates))
        if rows:
            with self.store.transaction() as conn:
                self.store.set_link_verdicts(conn, rows)

    def _prepare(
        self, path: str, links: LinkLookup
    ) -> tuple[_Prepared | None, SkippedFile | None, list[str]]:
        try:
            result = self.fs.read(path)
        except NoteNotFound:
            return None, None, []
        except NotText as exc:
            row = self._skipped_row(path, str(exc))
            return (
                _Prepared(path, row, [], [], {}) if row else None,
                SkippedFile(path, str(exc)),
                [],
            )
        except UnsafePath as exc:  # one bad path never fails the batch it came in
            return None, SkippedFile(path, str(exc)), []
        except OSError as exc:
            return None, SkippedFile(path, f"cannot read: {exc.strerror}"), []
        text = result.decoded.text
        kind = "index" if self._is_index_note(path, text) else "note"
        if kind == "index" and path != self.config.memory.file:
            # its listing is the catalogue's: not parsed again
            note = parse_outside_listing(path, text, cut_off=result.truncated)
        else:
            note = parse_note(path, text)
        kept = list(note.warnings)  # kept in its row: listed by status until it changes
        if result.truncated:
            kept.append(_cut_said(result.size, self.fs.max_note_bytes))
        warnings = [f"{path}: {w}" for w in kept]
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
            lines=text.count("\n") + 1,  # len(split_lines(text)), without the list
        )
        links = answering(links, ((k.target, path) for k in note.links))  # (one lookup)
        rows = [
            link_row(path, k.line, k.target, k.anchor, k.kind, k.embed, links) for k in note.links
        ]
        chunks: list[NewChunk] = []
        texts: dict[str, str] = {}
        if kind == "note":
            chunks, texts = self._chunks(note)
            if not chunks:
                warnings.append(f"{path}: nothing to embed (empty note)")
        # the lines embedded on their own are the vector lane's to find (embed_pending):
        # they were made here too, for every chunk, kept or not, and never read
        return _Prepared(path, row, rows, chunks, texts), None, warnings

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

    def _is_index_note(self, path: str, text: str) -> bool:
        """MEMORY.md, or a folder note memvault keeps (never a person's note named like
        its folder: that one is listed and searched like any other)."""
        if path == self.config.memory.file:
            return True
        return any(
            path == memory_md.folder_note_path(r.folder) for r in self.config.memory.sections
        ) and memory_md.is_managed_folder_note(text)

    def _chunks(self, note: Note) -> tuple[list[NewChunk], dict[str, str]]:
        """A note's chunks, and the text to embed for each (by its sha256)."""
        settings = self.config.index
        count = self.embedding.count_tokens  # the tokenizer, never the model
        max_tokens = min(settings.max_chunk_tokens, self.embedding.max_tokens)
        chunks = chunk_note(
            note,
            count,
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
                    count(c.text),
                    note.title,
                    about_text(note) if c.ord == 0 else "",
                )
            )
        return out, texts

    def _commit(self, batch: list[_Prepared]) -> tuple[int, int]:
        """Write a batch in one transaction: rows, links, chunks and their FTS entries. A
        chunk whose embedded text did not change keeps its label (and its vector); a new
        one is queued for the vector lane. Returns (chunks kept, chunks queued)."""
        kept = queued = 0
        removed: list[int] = []
        self.catalogue.aliases_written(p.row for p in batch)
        now = time.time()
        with (
            self.catalogue.changing((p.path for p in batch), written=True),
            self.store.transaction() as conn,
        ):
            for p in batch:
                old = self.store.chunk_labels_by_sha(conn, p.path)
                fresh = []
                for c in p.chunks:
                    if old.get(c.sha):
                        self.store.move_chunk(conn, old[c.sha].pop(0), c)
                        kept += 1
                    else:
                        fresh.append(c)
                stale = [label for labels in old.values() for label in labels]
                self.store.delete_chunks(conn, stale)
                removed += stale
                labels = self.store.insert_chunks(conn, p.path, fresh)
                self.store.add_pending(
                    conn,
                    (
                        (label, c.sha, p.texts[c.sha])
                        for label, c in zip(labels, fresh, strict=True)
                    ),
                    now,
                )
                queued += len(fresh)
                self.store.put_note(conn, p.row)
                self.store.put_links(conn, p.path, p.links)
        self.embedding.forget(removed)
        return kept, queued


__all__ = ["BATCH_CHUNKS", "BATCH_NOTES", "Indexed", "Indexer", "Progress"]


def _cut_said(size: int, cap: int) -> str:
    """How much of a note too big is indexed, in MB — in bytes when the two sizes would
    print alike ("2.0 MB; only the first 2.0 MB")."""
    whole, part = f"{size / 1e6:.1f}", f"{cap / 1e6:.1f}"
    if whole != part:
        return f"{whole} MB; only the first {part} MB is indexed (vault.max_note_bytes)"
    return f"{size:,} bytes; only the first {cap:,} bytes are indexed (vault.max_note_bytes)"
