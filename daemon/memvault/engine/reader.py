"""The read side: hybrid search, budgeted context, get, related notes.

``Reader`` writes nothing and takes no engine lock: a search answers while a
long sync embeds. It reads the store, the catalogue's note rows and link
index, and the vectors.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from memvault.core.context import Piece, assemble, index_part, join_spans
from memvault.core.copies import Kept, first_distinct, further
from memvault.core.excerpts import (
    common_terms,
    focus_query,
    on_subject,
    split_units,
    unit_scores,
    unit_text,
    windows,
    worth_a_place,
)
from memvault.core.notes import parse_note
from memvault.core.ranking import (
    Filters,
    allows,
    convex,
    fuse,
    informative_terms,
    keyword_terms,
    query_terms,
    snippet,
)
from memvault.core.results import Context, Hit, NoteText
from memvault.core.text import NotText, sha256_text, split_lines
from memvault.core.timeref import Span, note_in, question_days, single_days
from memvault.engine.evidence import joined as note_evidence
from memvault.engine.lane import Lane
from memvault.engine.line_similarity import line_similarities
from memvault.engine.long_notes import line_range as _line_range
from memvault.engine.long_notes import past_cap
from memvault.engine.long_notes import section as _section
from memvault.engine.rare_lines import RareWord, rare_first, rare_word
from memvault.engine.stored_links import leads
from memvault.engine.this_copy import elsewhere, marked, row_of
from memvault.errors import BadRequest, NoteNotFound
from memvault.index.rows import ChunkRow, NoteRow
from memvault.vault.files import normalize_rel

if TYPE_CHECKING:
    import numpy as np

    from memvault.config import SearchSettings
    from memvault.vault.files import VaultFS

SMALL_NOTE_TOKENS = 160  # a hit in a note this small brings the whole note
FULL_ENOUGH = 0.9  # a context this full of its budget does not look for more candidates
WIDEN = 4  # ...otherwise it looks this many times further, once
NO_FILTERS = Filters()
Allowed = Callable[[str], bool] | None  # the notes a filter passes (None: every note)
UNIT_ORD = 10_000  # a unit's Piece.ord: chunk ord * UNIT_ORD + its place in the chunk


def _whole_within(budget: int, sizes: dict[str, int]) -> dict[str, int]:
    """``sizes`` (tokens by note) with a note past half the budget counted as no small
    note: a note brought whole is one of half the budget at most (a small note of CJK
    text, a token a character, past it left no room, and its lines none)."""
    small = min(SMALL_NOTE_TOKENS, budget // 2)
    return {p: n if n <= small else max(n, SMALL_NOTE_TOKENS + 1) for p, n in sizes.items()}


NEAR = 5  # notes named like a name no note has, said by get


class Reader(Lane):
    """Search, context, get and related over one vault's index."""

    def _allowed(self, filters: Filters) -> Allowed:
        if not filters:
            return None
        meta = self.catalogue.notes()
        ok = {p for p, n in meta.items() if allows(filters, p, n.tags, n.frontmatter)}
        return ok.__contains__

    def search(
        self,
        query: str,
        k: int | None = None,
        filters: Filters = NO_FILTERS,
        group: bool = False,
        qv: np.ndarray | None = None,
        evidence: bool = True,
        docs_of: Callable[[str], int] | None = None,
        copies: bool = True,
        past: Collection[int] = (),
    ) -> tuple[list[Hit], np.ndarray | None]:
        """Hybrid BM25 + vector search, fused (convex combination by default, or RRF);
        with the query's vector (``qv``, else embedded here; None without vectors),
        which context ranks lines with: a value, as reads run on many threads at once.
        ``evidence=False``: context's (it ranks lines by their note and own vectors).
        ``docs_of``: the chunks holding a term, counted once for the caller's searches
        (else once for this one). ``copies``: a text the candidates hold more than once is
        one hit (core/copies; off for context, which drops a repeat itself); copies leaving
        fewer than ``k``, the candidates past those read (``past``) are looked at, once."""
        if not query.strip():
            raise BadRequest("the query is empty")
        cfg = self.config.search
        k = k or cfg.k
        pool = max(cfg.candidates, k * (4 if group else 1))
        allowed_path = self._allowed(filters)
        label_ok: Callable[[int], bool] | None = None
        if allowed_path is not None:
            allowed_labels = self.store.labels_of(
                p for p in self.catalogue.notes() if allowed_path(p)
            ) - set(past)  # a further look's: a set still (_besides says why)
            label_ok = allowed_labels.__contains__
            if not allowed_labels:
                return [], qv
        label_ok = _besides(past) if past and label_ok is None else label_ok  # a further look
        terms = query_terms(query)
        docs_of = docs_of or functools.cache(self.store.term_docs)  # a term counted once
        lexical = self._lexical(terms, pool, docs_of, label_ok)
        vector: list[tuple[int, float]] = []
        if self.embedding.indexed_with:
            qv = self.embedding.query_vector(query) if qv is None else qv
            vector = [] if qv is None else self.embedding.searching.query(qv, pool, label_ok)
        away = qv is None and bool(self.embedding.indexed_with)  # its process: keywords alone
        # no vector yet (the vector lane is behind): found, and ranked, by keywords alone
        waiting = self.store.pending_among(lab for lab, _ in lexical) if vector else set()
        fused = _fused(cfg, lexical, vector, waiting)
        rows = self.store.chunk_rows([lab for lab, _ in fused[:pool]])
        if evidence:  # its note's, its own lines', its note's links in (engine/evidence)
            nearest = [lab for lab, _ in vector]  # the vector side's, best first
            fused = note_evidence(self, fused, rows, qv, allowed_path, nearest, query, docs_of)
            # a note one hop away enters with its first chunk (engine/evidence)
            if new := [lab for lab, _ in fused[:pool] if lab not in rows]:
                rows = {**rows, **self.store.chunk_rows(new)}
        if not vector:  # nothing has a vector yet: every hit is keywords-only if pending
            waiting = set(rows) if away else self.store.pending_among(rows)
        found = _first(fused, rows, k, group, copies, past)  # (a hop may bring one back)
        meta = self.catalogue.rows_of(f.item[1].path for f in found)
        hits = [_hit(f, meta.get(f.item[1].path), terms, f.item[0] in waiting) for f in found]
        if copies and not past and len(hits) < k and any(h.copies for h in hits):
            # copies of one text filled the candidates: as many again past them, once
            more, _ = self.search(query, k, filters, group, qv, evidence, docs_of, True, set(rows))
            hits = further(hits, more, k, group)
        return hits, qv

    def context(
        self, query: str, budget: int | None = None, filters: Filters = NO_FILTERS
    ) -> Context:
        """The index, then the lines of the best notes that answer it, cited, within
        ``budget`` tokens."""
        cfg = self.config
        budget = cfg.context.budget if budget is None else budget  # 0 is a budget, not "default"
        if budget < 1:
            raise BadRequest("the budget must be at least 1 token")
        k = cfg.context.candidates
        docs_of = functools.cache(self.store.term_docs)  # a term counted once a context
        # every candidate, copies too: assemble drops a repeated passage itself
        ask = functools.partial(self.search, evidence=False, docs_of=docs_of, copies=False)
        hits, qv = ask(query, k=k, filters=filters)
        allowed = self._allowed(filters)
        # the query's rare word: its lines kept first (engine/rare_lines)
        rare = rare_word(cfg.search, self.store, query, docs_of) if cfg.context.excerpts else None
        ctx = self._assemble(query, budget, hits, qv, allowed, rare, docs_of)
        if len(hits) == k and ctx.tokens < budget * FULL_ENOUGH:
            # The candidates ran out before the budget did — most were near
            # duplicates of what is in (a fact logged on many days): look further,
            # keeping the first ranking and adding what lies beyond it.
            seen = {(h.path, h.ord) for h in hits}
            more, _ = ask(query, k=k * WIDEN, filters=filters, qv=qv)
            wider = [*hits, *(h for h in more if (h.path, h.ord) not in seen)]
            ctx = self._assemble(query, budget, wider, qv, allowed, rare, docs_of)
        return ctx

    def _assemble(
        self,
        query: str,
        budget: int,
        hits: Sequence[Hit],
        qv: np.ndarray | None,
        ok: Allowed,
        rare: RareWord | None,
        docs_of: Callable[[str], int],
    ) -> Context:
        cfg = self.config
        count = self.embedding.count_tokens
        hit_paths = list(dict.fromkeys(h.path for h in hits))
        # Query words found in most candidates (a name in a chat log) tell none of them
        # apart (core/excerpts): the candidates are ranked against the question with
        # and without them, and they mark no line of the index as relevant.
        terms = query_terms(query)
        common = common_terms(terms, [u.text for h in hits for u in split_units(h.text, 1)])
        qv = None if qv is None else self._query_vector(query, common, qv)
        if qv is not None and common:
            hits = self._rescored(query, hits, qv, docs_of)
        linked_hits = (
            self._linked_hits(hit_paths[:3], set(hit_paths), hits) if cfg.context.link_hops else []
        )
        if ok is not None:  # a linked note is drawn on only when the filter passes it too
            linked_hits = [h for h in linked_hits if ok(h.path)]
        candidates = [*hits, *linked_hits]
        sizes = _whole_within(
            budget, self.store.note_tokens(dict.fromkeys(h.path for h in candidates))
        )
        meta = self.catalogue.rows_of(h.path for h in candidates)
        if cfg.context.excerpts:
            spans = single_days(question_days(query, dt.date.today()))
            ranked = self._unit_pieces(
                candidates, sizes, meta, qv, spans, frozenset(terms), rare=rare
            )
        else:  # whole chunks, by their search score (a linked note's is 0: never used)
            ranked = [
                self._piece(
                    candidates[i], sizes.get(candidates[i].path, 0), meta.get(candidates[i].path)
                )
                for i in worth_a_place([h.score for h in candidates])
            ]
        index_text = index_part(
            _memory_text(self.fs, self.config.memory.file),
            int(budget * cfg.context.index_share),
            count,
            [t for t in terms if t not in common],
        )
        from_links = {h.path for h in linked_hits}
        pieces = marked(self, [p for p in ranked if p.path not in from_links])  # this_copy
        linked = marked(self, [p for p in ranked if p.path in from_links])
        return assemble(query, budget, count, index_text, pieces, linked)

    def _query_vector(self, query: str, common: set[str], qv: np.ndarray) -> np.ndarray:
        """The vector the candidates are ranked with: the question's (``qv``), averaged
        with that of the question without its ``common`` terms; ``qv`` alone when the
        model's process went away meanwhile (``Embedding.query_vector``)."""
        focus = focus_query(query, common)
        fv = self.embedding.query_vector(focus) if focus else None
        return qv if fv is None else (qv + fv) / 2

    def _lexical(
        self,
        terms: Sequence[str],
        limit: int,
        docs_of: Callable[[str], int],
        label_ok: Callable[[int], bool] | None = None,
    ) -> list[tuple[int, float]]:
        """The keyword ranking of ``terms``, the ``limit`` best (of the chunks ``label_ok``
        allows). A CJK run some chunk holds as written is asked for whole
        (``keyword_terms``); when none the filter allows holds it, its pairs are.
        ``docs_of``: the chunks holding a term, counted once a search (or context)."""

        def ranked(wanted: list[str]) -> list[tuple[int, float]]:
            keep = informative_terms(wanted, self.store.chunk_count(), docs_of)
            found = self.store.keywords(keep, limit * 3 if label_ok else limit, docs_of)
            return found if label_ok is None else [r for r in found if label_ok(r[0])][:limit]

        asked = keyword_terms(terms, docs_of)
        found = ranked(asked)
        if not found and label_ok is not None:
            paired = keyword_terms(terms, lambda _term: 0)  # every run as its pairs
            if paired != asked:
                found = ranked(paired)
        return found

    def _rescored(
        self, query: str, hits: Sequence[Hit], qv: np.ndarray, docs_of: Callable[[str], int]
    ) -> list[Hit]:
        """The hits with the score search would give them for the vector ``qv`` (each
        term's chunks counted once a context: ``docs_of``)."""
        pool = len(hits)
        lexical = self._lexical(query_terms(query), pool, docs_of)
        vector = self.embedding.searching.query(qv, pool)
        scores = dict(_fused(self.config.search, lexical, vector))
        return [dataclasses.replace(h, score=scores.get(h.label, 0.0)) for h in hits]

    def _unit_pieces(
        self,
        hits: Sequence[Hit],
        sizes: dict[str, int],
        meta: dict[str, NoteRow],
        qv: np.ndarray | None,
        spans: Sequence[Span] = (),
        subject: frozenset[str] = frozenset(),
        rare: RareWord | None = None,
    ) -> list[Piece]:
        """The lines of the hits (core/excerpts), best first, without filler; a small
        note stays whole, ranked by the best line of the chunk that found it. Each
        line is ranked by its chunk, itself, its note's best line, its window and
        whether its label names a word of ``subject``; a line of a note dated on one
        of ``spans`` (the days the question names) ranks higher; the lines holding the
        ``rare`` word come first (engine/rare_lines)."""
        pieces: list[Piece] = []
        scores: list[float] = []
        keys: list[list[str]] = []  # the line vectors that rank each piece (their best)
        places: list[tuple[str, int, int] | None] = []  # where a line sits, for its window
        labels: list[int] = []  # the chunk each piece is of
        for hit in hits:
            note = meta.get(hit.path)
            if sizes.get(hit.path, 0) <= SMALL_NOTE_TOKENS:
                piece = self._piece(hit, sizes.get(hit.path, 0), note)
                pieces.append(piece)
                scores.append(hit.score)
                # ranked by the best line of the chunk that found it (not of the whole
                # note: a chunk found by one word must not borrow another part's meaning)
                keys.append([sha256_text(unit_text(u.text)) for u in split_units(hit.text, 1)])
                places.append(None)
                labels.append(hit.label)
                continue
            for unit in split_units(hit.text, hit.line_start):
                seq = hit.ord * UNIT_ORD + unit.seq
                pieces.append(_cut(hit, note, seq, unit.line_start, unit.line_end, unit.text))
                scores.append(hit.score)
                keys.append([sha256_text(unit_text(unit.text))])
                places.append((hit.path, hit.ord, unit.line_start))
                labels.append(hit.label)
        sims: list[float | None] = [None] * len(pieces)
        window_sims: list[float | None] | None = None
        if self.config.index.line_vectors and qv is not None:
            cached = self.embedding.line_vectors([k for ks in keys for k in ks])
            sims, window_sims = line_similarities(cached, keys, windows(places), qv)
        timely = [note_in(p.date, spans) for p in pieces] if spans else None
        named = [on_subject(p.text, subject) for p in pieces] if subject else None
        score = functools.partial(
            unit_scores,
            scores,
            sims,
            timely,
            window_similarities=window_sims,
            on_subject=named,
        )
        ranked = score(notes=[p.path for p in pieces])
        admit = score() if self.config.context.own_admits else None  # the note can't admit
        order = worth_a_place(ranked, admit=admit)
        order = rare_first(rare, order, ranked, pieces, labels, self.config.search.rare_place)
        return [pieces[i] for i in order]

    def _piece(self, hit: Hit, note_tokens: int, note: NoteRow | None) -> Piece:
        if note_tokens <= SMALL_NOTE_TOKENS:
            whole = self._whole_piece(hit.path)
            if whole is not None:
                return whole
        return _cut(hit, note, hit.ord, hit.line_start, hit.line_end, hit.text)

    def _whole_piece(self, path: str) -> Piece | None:
        chunks = self.store.chunks_of(path)
        if not chunks:
            return None
        text = join_spans([(c.line_start, c.line_end, c.text) for c in chunks])
        note = self.catalogue.rows_of([path]).get(path)
        return Piece(
            path,
            -1,
            (),
            chunks[0].line_start,
            chunks[-1].line_end,
            text,
            whole=True,
            title=note.title if note else "",
            date=note.date if note else None,
        )

    def _linked_hits(
        self, sources: Sequence[str], already: set[str], hits: Sequence[Hit]
    ) -> list[Hit]:
        """The first chunk of each note linked from ``sources`` that search did not
        find, as a candidate ranked below every hit (its own lines may still lift it
        past the filler bar; with whole chunks nothing does)."""
        floor = min((h.score for h in hits), default=0.0) if self.config.context.excerpts else 0.0
        out: list[Hit] = []
        lookup = self.catalogue.link_lookup()  # no map held (no daemon): the link keys
        seen = set(already)
        for source in sources:
            for _, res in leads(lookup, self.store.links(source)):
                if res.verdict not in ("resolved", "alias") or not res.path:
                    continue
                target = res.path
                if (
                    not target.endswith(".md")
                    or target in seen
                    or target == self.config.memory.file
                ):
                    continue
                seen.add(target)
                first = self.store.chunks_of(target)[:1]
                if first:
                    c = first[0]
                    out.append(
                        Hit(
                            target,
                            "",
                            c.heading,
                            c.line_start,
                            c.line_end,
                            "",
                            floor,
                            c.text,
                            c.label,
                            c.ord,
                        )
                    )
        return out

    def get(self, path: str, lines: str | None = None, heading: str | None = None) -> NoteText:
        """A note, one section of it (``heading``), or a line range (``lines='a:b'``).
        A file there that is not text (NUL bytes, not UTF-8) is no note: NoteNotFound
        saying so, as for a folder (the path was fine: not a usage error)."""
        try:
            try:
                return self._get(path, lines, heading)
            except NoteNotFound as missing:  # a team's reader: in another case, or not pulled
                return self._get(*elsewhere(self, path, lines, heading, missing))
        except NotText as exc:  # (the file here in another case, too)
            raise NoteNotFound(
                f"{path.strip('/')} is not a text note: {exc}; memvault reads notes as UTF-8 text"
            ) from None

    def _get(self, path: str, lines: str | None, heading: str | None) -> NoteText:
        try:
            result = self.fs.read(path)
        except NoteNotFound as missing:  # no such file: read where [[path]] leads (and its section)
            if not (found := self.catalogue.linked(path)) or (found[1] and heading):
                if not found and (near := self.catalogue.named_like(path)):  # what was meant
                    more = f" and {len(near) - NEAR:,} more" if len(near) > NEAR else ""
                    said = ", ".join(near[:NEAR])
                    raise NoteNotFound(f"{missing}; notes named like it: {said}{more}") from None
                raise
            path, heading, result = found[0], heading or found[1], self.fs.read(found[0])
        rel = self.fs.spelt("/".join(p for p in path.split("/") if p not in ("", ".")))
        all_lines = split_lines(result.decoded.text)
        if all_lines and all_lines[-1] == "":
            all_lines.pop()
        key = normalize_rel(rel)  # the index's row, when it is this very file's
        same = key == rel or self.fs.path(key) == self.fs.path(rel)
        row = row_of(self, key, same, result.sha256)  # (a team's: in another case, too)
        title = row.title if row else parse_note(rel, result.decoded.text).title
        start, end = 1, len(all_lines)
        found_heading = None
        if result.truncated:  # past max_note_bytes: say so, and read on by lines
            return past_cap(self.fs, rel, title, lines, heading, result.decoded.text)
        if heading:
            start, end, found_heading = _section(result.decoded.text, heading, rel)
        if lines:
            start, end = _lines_in(lines, len(all_lines), rel, heading, start, end)
        text = "\n".join(all_lines[start - 1 : end])
        return NoteText(rel, title, start, end, text, found_heading)

    def related(self, path: str, k: int = 10, exclude: Sequence[str] = ()) -> list[Hit]:
        """Notes most like a given note (its chunks' mean vector), best first; none
        from the ``exclude`` folders (vault-relative, with their subfolders)."""
        import numpy as np

        self.fs.path(path)  # the same safe-join as every path from outside (raises UnsafePath)
        chunks = self.store.chunks_of(normalize_rel(path))
        if not chunks:
            raise NoteNotFound(f"{path} is not indexed (or has nothing to embed)")
        if not self.embedding.indexed_with:
            return []  # nothing has a vector yet
        labels = [c.label for c in chunks]
        _, matrix = self.store.vectors_for(self.embedding.model_id(), labels, self.embedding.dim())
        if not len(matrix):
            return []
        centre = matrix.mean(axis=0)
        centre = centre / (np.linalg.norm(centre) or 1.0)
        own = normalize_rel(path)
        prefixes = tuple(f"{normalize_rel(f).strip('/')}/" for f in exclude if f.strip("/ "))
        label_ok: Callable[[int], bool] = lambda lab: True  # noqa: E731
        if prefixes:
            kept = (p for p in self.catalogue.notes() if not p.startswith(prefixes))
            label_ok = self.store.labels_of(kept).__contains__
        results = self.embedding.searching.query(centre, max(k * 8, 40), allowed=label_ok)
        rows = self.store.chunk_rows([lab for lab, _ in results])
        others = {lab: row for lab, row in rows.items() if row.path != own}
        found = _first(results, others, k, True, True)  # a chunk a note, the best; a text once
        meta = self.catalogue.rows_of(f.item[1].path for f in found)
        return [_hit(f, meta.get(f.item[1].path), []) for f in found]


def _fused(
    cfg: SearchSettings,
    lexical: list[tuple[int, float]],
    vector: list[tuple[int, float]],
    waiting: Collection[int] = (),
) -> list[tuple[int, float]]:
    """The configured fusion of keyword and vector hits (``waiting``: labels whose
    vectors are pending, ranked on keywords alone)."""
    if cfg.fusion == "convex":
        return convex(
            lexical,
            vector,
            lexical_weight=cfg.lexical_weight,
            vector_weight=cfg.vector_weight,
            unembedded=waiting,
        )
    return fuse(
        [lab for lab, _ in lexical],
        [lab for lab, _ in vector],
        rrf_k=cfg.rrf_k,
        lexical_weight=cfg.lexical_weight,
        vector_weight=cfg.vector_weight,
        unembedded=waiting,
    )


def _besides(past: Collection[int]) -> Callable[[int], bool]:
    """Every label but those ``past`` (a further look without a filter; with one, its
    set less ``past``: a set, which a PostgreSQL index searches exactly in SQL, where
    it asks any other test of the whole index's nearest chunks, index/pg_vectors)."""
    return lambda lab: lab not in past


Found = tuple[int, ChunkRow, float]  # a candidate's label, chunk row and score


def _first(
    fused: Sequence[tuple[int, float]],
    rows: dict[int, ChunkRow],
    k: int,
    group: bool,
    copies: bool,
    past: Collection[int] = (),
) -> list[Kept[Found]]:
    """The first ``k`` of ``fused`` with a chunk row, at most one a note with ``group``;
    with ``copies``, each text once, its copies among the rows read counted on it; none
    of the labels ``past`` (a further look's: read and counted already)."""
    read = ((lab, rows[lab], s) for lab, s in fused if lab in rows and lab not in past)
    return first_distinct(read, k, lambda f: f[1].text, lambda f: f[1].path, group, copies)


def _cut(hit: Hit, note: NoteRow | None, ord: int, start: int, end: int, text: str) -> Piece:
    """A piece of ``hit``'s chunk (lines ``start``-``end``), with its note's title and date."""
    title, date = (note.title, note.date) if note else ("", None)
    return Piece(hit.path, ord, hit.heading, start, end, text, title=title, date=date)


def _memory_text(fs: VaultFS, name: str) -> str:
    try:
        return fs.read(name).decoded.text
    except (NoteNotFound, OSError, ValueError):
        return ""


def _lines_in(
    lines: str, total: int, rel: str, heading: str | None, start: int, end: int
) -> tuple[int, int]:
    """The line range ``lines`` asks for; with a ``heading``, inside its section."""
    a, b = _line_range(lines, total, rel)
    if heading:  # a line range inside the section
        a, b = max(a, start), min(b, end)
        if a > b:
            raise NoteNotFound(f"lines {lines} are outside the section {heading!r}")
    return a, b


def _hit(
    kept: Kept[Found], note: NoteRow | None, terms: Sequence[str], pending: bool = False
) -> Hit:
    """A search or related hit for one chunk row, with the copies of its text."""
    label, row, score = kept.item
    return Hit(
        row.path,
        note.title if note else row.path,
        row.heading,
        row.line_start,
        row.line_end,
        snippet(row.text, terms),
        round(float(score), 6),
        row.text,
        label,
        row.ord,
        pending=pending,
        copies=kept.copies,
        copy_paths=tuple(kept.copy_paths),
    )
