"""What search weighs beside a chunk's own fused score: its note's evidence.

Gathers, for the candidate chunks of one search, what ``core/ranking.with_evidence``
ranks them with — their own lines' vectors (from the line cache), the notes their
lines link to — and calls it. Nothing is gathered
for a weight of 0 (the setting is off).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from memvault.core.excerpts import unit_texts
from memvault.core.ranking import with_evidence
from memvault.core.text import sha256_text

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


def joined(
    reader: Sources,
    fused: list[tuple[int, float]],
    rows: Mapping[int, ChunkRow],
    qv: np.ndarray | None,
) -> list[tuple[int, float]]:
    """``fused`` re-ranked with the evidence of each chunk's note (``rows``: the
    candidates' chunk rows). Unchanged when every weight is 0."""
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
    index = catalogue.link_index()
    by_note: dict[str, list[tuple[int, int, int]]] = {}
    for lab, (path, _, start, end) in chunks.items():
        by_note.setdefault(path, []).append((lab, start, end))
    out: dict[int, set[str]] = {}
    for path, spans in by_note.items():
        for link in store.links(path):
            inside = [lab for lab, start, end in spans if start <= link.line <= end]
            if not inside:
                continue
            res = index.resolve(link.target, path)
            target = res.path
            if res.verdict not in LINKED or not target or target == path:
                continue
            for lab in inside:
                out.setdefault(lab, set()).add(target)
    return out
