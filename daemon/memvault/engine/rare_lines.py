"""A lookup's rare word: which chunks hold it, and which of a context's lines.

Search keeps the notes holding the query's rare words first (``core/ranking.rare_terms``,
``rare_kept``: engine/evidence); a context ranks lines, not notes, so the lines holding
it are kept first there (``core/excerpts.held_first``): a line naming a ticket, a host,
a rare surname, least like the question in meaning, was outranked by lines nearer it,
or cut as filler (bench/RESULTS.md "Rare words in context").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memvault.core.excerpts import best_first, held_first
from memvault.core.rare_words import query_words, rare_terms
from memvault.index.pg_keywords import TOKENIZER

if TYPE_CHECKING:
    from memvault.config import SearchSettings
    from memvault.core.context import Piece
    from memvault.index.store import Store


@dataclass(frozen=True, slots=True)
class RareWord:
    """The query's rare words (each its rarest query term) and the chunks holding them
    (their labels)."""

    terms: tuple[str, ...]
    holders: frozenset[int]


def rare_word(
    cfg: SearchSettings, store: Store, query: str, docs_of: Callable[[str], int] | None = None
) -> RareWord | None:
    """The query's rare words (``search.rare_words`` at most) and the chunks holding
    them (``search.rare_chunks`` at most each), when it has them
    (``core/ranking.rare_terms``); None when ``rare_chunks`` or ``rare_place`` is 0.
    ``docs_of``: the chunks holding a term (counted once a search)."""
    if not (cfg.rare_place and cfg.rare_chunks):
        return None
    docs = docs_of or store.term_docs
    words = query_words(query, docs)
    terms = rare_terms(
        words, docs, store.chunk_count(), cfg.rare_chunks, cfg.rare_share, cfg.rare_words
    )
    if not terms:
        return None
    held = {lab for term in terms for lab, _ in store.keywords([term], cfg.rare_chunks, docs)}
    return RareWord(tuple(terms), frozenset(held))


def holding(
    rare: RareWord, pieces: Sequence[Piece], labels: Sequence[int], ranked: Sequence[int]
) -> list[bool]:
    """Which ``pieces`` (each of the chunk ``labels`` names) hold one of ``rare``'s words:
    a whole note of a holding chunk; a line of one whose keyword tokens (FTS5's, stemmed
    as the index stems) hold it. A holding chunk none of whose lines does (the word is
    in its title or heading only) has its best line in ``ranked`` (best first) held."""
    out = [labels[i] in rare.holders and pieces[i].whole for i in range(len(pieces))]
    lines = [i for i in range(len(pieces)) if labels[i] in rare.holders and not pieces[i].whole]
    if not lines:
        return out
    wanted = [w for w in (set(TOKENIZER.tokens(term)) for term in rare.terms) if w]
    tokens = TOKENIZER.columns_many([(pieces[i].text, "", "", "") for i in lines])
    for i, found in zip(lines, tokens, strict=True):
        have = {t for t, _, _ in found}
        out[i] = any(w <= have for w in wanted)
    for label in {labels[i] for i in lines} - {labels[i] for i in lines if out[i]}:
        out[next(i for i in ranked if labels[i] == label)] = True
    return out


def rare_first(
    rare: RareWord | None,
    order: Sequence[int],
    scores: Sequence[float],
    pieces: Sequence[Piece],
    labels: Sequence[int],
    place: int,
) -> list[int]:
    """``order`` (the ``pieces`` worth a place, best first; ``scores``: every piece's)
    with those holding the ``rare`` word among the first (``core/excerpts.held_first``;
    ``labels``: each piece's chunk). No rare word: ``order`` as it is."""
    if rare is None:
        return list(order)
    ranked = best_first(scores)
    return held_first(order, ranked, holding(rare, pieces, labels, ranked), place)
