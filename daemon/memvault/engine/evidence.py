"""What search weighs beside a chunk's own fused score: its note's evidence.

Gathers, for the candidate chunks of one search, what ``core/ranking.with_evidence``
ranks them with — their own lines' vectors (from the line cache), the notes their
lines link to — and calls it; then the notes the best hits' pointer lines lead to
(``core/hops``: one hop along a link, as Obsidian's graph answers "which book did
my CQRS notes come from"). Nothing is gathered for a weight of 0 (the setting is off).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from memvault.core.excerpts import split_units, unit_text, unit_texts
from memvault.core.focus import note_focus, with_focus
from memvault.core.hops import Pointer, has_link, hop_scores, is_pointer, lifted, passed_share
from memvault.core.ranking import nearest_kept, rare_kept, with_evidence
from memvault.core.text import sha256_text
from memvault.engine import link_verdicts as verdicts
from memvault.engine.rare_lines import rare_word
from memvault.engine.stored_links import leads

if TYPE_CHECKING:
    import numpy as np

    from memvault.config import VaultConfig
    from memvault.engine.catalogue import Catalogue
    from memvault.engine.embedding import Embedding
    from memvault.index.rows import ChunkRow
    from memvault.index.store import Store


class Sources(Protocol):
    """Where the evidence is read (the ``Reader``, which calls ``joined``: named by its
    shape so the two make no import circle)."""

    @property
    def config(self) -> VaultConfig: ...
    @property
    def store(self) -> Store: ...
    @property
    def embedding(self) -> Embedding: ...
    @property
    def catalogue(self) -> Catalogue: ...


LINKED = ("resolved", "alias")
# Own lines and links are read for the best this many candidates only (the rest keep
# their note's evidence): they cost a line-cache and a link-table read per chunk, and
# a chunk ranked past them does not reach the first page of hits.
EVIDENCE_TOP = 12
# The best this many candidates (after the evidence) pass their pointer lines on
HOP_TOP = 5


def joined(
    reader: Sources,
    fused: list[tuple[int, float]],
    rows: Mapping[int, ChunkRow],
    qv: np.ndarray | None,
    allowed: Callable[[str], bool] | None = None,
    nearest: Sequence[int] = (),
    query: str = "",
    docs_of: Callable[[str], int] | None = None,
) -> list[tuple[int, float]]:
    """``fused`` re-ranked with the evidence of each chunk's note (``rows``: the
    candidates' chunk rows), then, when the query's nearest chunk (``nearest``: the
    vector side's labels, best first) is of another note than the first, with each note's focus
    (``core/focus``), then with the notes its best hits point at (a label of such a
    note may be new: not in ``rows``; only notes ``allowed`` passes, when given);
    then the vector side's best notes keep places among the first notes
    (``core/ranking.nearest_kept``); last, the notes holding the rarest term of the
    ``query`` (``docs_of``: the chunks holding a term), when it is rare, keep theirs
    (``core/ranking.rare_kept``). Unchanged when every weight is 0 and each pair of
    place settings has a 0."""
    ranked = _with_evidence(reader, fused, rows, qv)
    ranked = _focused(reader, ranked, rows, qv, nearest[0] if nearest else None)
    cfg = reader.config.search
    if cfg.hop_weight and qv is not None:
        ranked = _hopped(reader, ranked, rows, qv, cfg.hop_weight, allowed)
    notes = {lab: row.path for lab, row in rows.items()}
    ranked = nearest_kept(ranked, notes, nearest, cfg.nearest_place, cfg.nearest_notes)
    rare = rare_word(cfg, reader.store, query, docs_of, other_forms=True)
    return (
        ranked
        if rare is None
        else rare_kept(ranked, notes, rare.holders, cfg.rare_place, rare.other_forms)
    )


def _with_evidence(
    reader: Sources,
    fused: list[tuple[int, float]],
    rows: Mapping[int, ChunkRow],
    qv: np.ndarray | None,
) -> list[tuple[int, float]]:
    config, store, embedding = reader.config, reader.store, reader.embedding
    catalogue = reader.catalogue
    cfg = config.search
    if not (cfg.note_weight or cfg.own_weight or cfg.link_weight):
        return fused
    chunks = {lab: (r.path, r.text, r.line_start, r.line_end) for lab, r in rows.items()}
    notes = {lab: path for lab, (path, *_) in chunks.items()}
    top = [lab for lab, _ in fused if lab in chunks][:EVIDENCE_TOP]
    best = {lab: chunks[lab] for lab in top}
    own: dict[int, float] = {}
    unknown: set[int] = set()
    if cfg.own_weight and qv is not None and config.index.line_vectors:
        own = _own(embedding, best, qv)
        # asked for, none there yet (a note just written, its vectors pending): its
        # missing own lines and links are no evidence either way (core/ranking)
        unknown = set(best) - set(own)
    links: dict[int, set[str]] = {}
    if cfg.link_weight:
        links = _links(store, catalogue, best)
    return with_evidence(
        fused,
        notes,
        own,
        note_weight=cfg.note_weight,
        note_top=cfg.note_top,
        own_weight=cfg.own_weight,
        links=links,
        link_weight=cfg.link_weight,
        unknown=unknown,
    )


def _focused(
    reader: Sources,
    ranked: list[tuple[int, float]],
    rows: Mapping[int, ChunkRow],
    qv: np.ndarray | None,
    nearest: int | None,
) -> list[tuple[int, float]]:
    """``ranked`` with its notes' focus joined (``core/focus``) at
    ``search.focus_weight``, when the query's nearest chunk is another note's than
    the first's. The first notes' vectors are read from the cache (as ``related``
    reads them, in one batch), only when the two disagree."""
    import numpy as np

    cfg = reader.config.search
    near = rows.get(nearest) if nearest is not None else None
    if not cfg.focus_weight or qv is None or near is None:
        return ranked
    store, embedding = reader.store, reader.embedding
    q = qv.astype(np.float32)
    q = q / (np.linalg.norm(q) or 1.0)

    def focus_of(paths: Collection[str]) -> dict[str, float]:
        by_note = {path: sorted(store.labels_of([path])) for path in paths}
        every = [lab for labs in by_note.values() for lab in labs]
        found, matrix = store.vectors_for(embedding.model_id(), every, embedding.dim())
        row = {lab: i for i, lab in enumerate(found)}
        sims = matrix @ q
        out: dict[str, float] = {}
        for path, labels in by_note.items():
            rows = [row[lab] for lab in labels if lab in row]
            if not rows:
                continue  # no vector yet: no focus (core/focus: neither way)
            centre = matrix[rows].mean(axis=0)
            centre = centre / (np.linalg.norm(centre) or 1.0)
            out[path] = note_focus(float(centre @ q), float(sims[rows].max()))
        return out

    notes = {lab: row.path for lab, row in rows.items()}
    total = 1.0 + cfg.note_weight + cfg.own_weight + cfg.link_weight
    return with_focus(ranked, notes, near.path, focus_of, cfg.focus_weight, total)


def _own(
    embedding: Embedding, chunks: dict[int, tuple[str, str, int, int]], qv: np.ndarray
) -> dict[int, float]:
    """Each chunk's best cosine of one of its own lines to the query (lines not yet
    embedded are left out; a chunk with none is left out)."""
    import numpy as np

    keys = {
        lab: [sha256_text(t) for t in unit_texts(text)] for lab, (_, text, *_) in chunks.items()
    }
    cached = embedding.line_vectors([k for ks in keys.values() for k in ks])
    if not cached:
        return {}
    row = {sha: i for i, sha in enumerate(cached)}
    sims = np.stack(list(cached.values())).astype(np.float32) @ qv.astype(np.float32)
    out: dict[int, float] = {}
    for lab, ks in keys.items():
        found = [float(sims[row[k]]) for k in ks if k in row]
        if found:
            out[lab] = max(found)
    return out


def _links(
    store: Store, catalogue: Catalogue, chunks: dict[int, tuple[str, str, int, int]]
) -> dict[int, set[str]]:
    """The notes each chunk's lines link to (resolved as Obsidian would; not its own)."""
    leads = _leads(store, catalogue)
    by_note: dict[str, list[tuple[int, int, int]]] = {}
    for lab, (path, _, start, end) in chunks.items():
        by_note.setdefault(path, []).append((lab, start, end))
    out: dict[int, set[str]] = {}
    for path, spans in by_note.items():
        for line, target in leads(path):
            for lab, start, end in spans:
                if start <= line <= end:
                    out.setdefault(lab, set()).add(target)
    return out


def _leads(store: Store, catalogue: Catalogue) -> Callable[[str], list[tuple[int, str]]]:
    """Each link of a note that leads to another file (resolved as Obsidian would, an
    alias too): its line and the file's path. Resolved by the link index a process
    holds (a daemon's); in one that holds none (a command without a daemon) the
    verdicts stored are read as they are when they are true to the files
    (``link_verdicts.trusted``: a fresh resolve gives the same rows), so a search
    builds no link index of every file (0.2-0.5 s at 100,000 notes)."""
    if not catalogue.holds_link_index() and verdicts.trusted(store):

        def stored(path: str) -> list[tuple[int, str]]:
            return [
                (link.line, link.resolved)
                for link in store.links(path)
                if link.verdict in LINKED and link.resolved and link.resolved != path
            ]

        return stored
    lookup = catalogue.link_lookup()  # no map held: the store's link keys

    def resolved(path: str) -> list[tuple[int, str]]:
        out = []
        for link, res in leads(lookup, store.links(path)):
            if res.verdict in LINKED and res.path and res.path != path:
                out.append((link.line, res.path))
        return out

    return resolved


def _hopped(
    reader: Sources,
    ranked: list[tuple[int, float]],
    rows: Mapping[int, ChunkRow],
    qv: np.ndarray,
    weight: float,
    allowed: Callable[[str], bool] | None,
) -> list[tuple[int, float]]:
    """``ranked`` with the notes the pointer lines of its best ``HOP_TOP`` chunks lead
    to raised, and the note each one's best line links, if one (``core/hops``
    ``passed_share``). A line with no vector yet passes nothing on."""
    import numpy as np

    top = [(lab, rows[lab]) for lab, _ in ranked if lab in rows][:HOP_TOP]
    described = reader.config.search.hop_described
    leads = _leads(reader.store, reader.catalogue)
    pointers: list[Pointer] = []
    q = qv.astype(np.float32)
    for lab, row in top:
        units = split_units(row.text, row.line_start)
        shas = [sha256_text(unit_text(u.text)) for u in units]
        cached = reader.embedding.line_vectors(shas)
        if not cached:
            continue
        cos = {sha: float(vec.astype(np.float32) @ q) for sha, vec in cached.items()}
        best = max(cos.values())
        # a pointer line, or the best line if it links: only those pass anything on
        pointing = [
            (u, sha)
            for u, sha in zip(units, shas, strict=True)
            if sha in cos and (is_pointer(u.text) or (cos[sha] >= best and has_link(u.text)))
        ]
        if not pointing:
            continue
        links = [
            (line, target)
            for line, target in leads(row.path)
            if row.line_start <= line <= row.line_end and target.endswith(".md")
        ]
        for unit, sha in pointing:
            mine = [t for line, t in links if unit.line_start <= line <= unit.line_end]
            share = passed_share(unit.text, cos[sha], best, len(set(mine)), described)
            if share is None:
                continue
            for target in mine:
                if allowed is None or allowed(target):
                    pointers.append(Pointer(lab, target, share))
    if not pointers:
        return ranked
    notes = {lab: row.path for lab, row in rows.items()}
    proposals = hop_scores(ranked, notes, pointers, weight)
    have = set(notes.values())
    firsts: dict[str, int] = {}
    for target in proposals:
        if target not in have:
            first = reader.store.chunks_of(target)[:1]
            if first:
                firsts[target] = first[0].label
    return lifted(ranked, notes, proposals, firsts)
