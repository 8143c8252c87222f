"""A lookup's rare word: which chunks hold it, and which of a context's lines.

Search keeps the notes holding the query's rare words first (``core/rare_words.rare_terms``,
``rare_kept``: engine/evidence); a context ranks lines, not notes, so the lines holding
it are kept first there (``core/excerpts.held_first``): a line naming a ticket, a host,
a rare surname, least like the question in meaning, was outranked by lines nearer it,
or cut as filler (bench/RESULTS.md "Rare words in context").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memvault.core import cjk
from memvault.core.excerpts import best_first, held_first, held_in_turn
from memvault.core.rare_words import query_words, rare_terms
from memvault.index.pg_keywords import TOKENIZER

if TYPE_CHECKING:
    from memvault.config import SearchSettings
    from memvault.core.context import Piece
    from memvault.index.store import Store


@dataclass(frozen=True, slots=True)
class RareWord:
    """The query's rare words (each its rarest query term) and the chunks holding each
    (their labels, in ``terms``' order)."""

    terms: tuple[str, ...]
    held: tuple[frozenset[int], ...]
    # the chunks holding another form of a word and not the form asked (``forms``)
    others: frozenset[int] = frozenset()

    @property
    def holders(self) -> frozenset[int]:
        """The chunks holding one of the words."""
        return frozenset().union(*self.held)

    @property
    def other_forms(self) -> frozenset[int]:
        """The chunks holding only another form of one of the words."""
        return self.others - self.holders


def rare_word(
    cfg: SearchSettings,
    store: Store,
    query: str,
    docs_of: Callable[[str], int] | None = None,
    *,
    other_forms: bool = False,
) -> RareWord | None:
    """The query's rare words (``search.rare_words`` at most) and the chunks holding
    them (``search.rare_chunks`` at most each), when it has them
    (``core/rare_words.rare_terms``); None when ``rare_chunks`` or ``rare_place`` is 0.
    ``docs_of``: the chunks holding a term (counted once a search). ``other_forms``:
    the chunks holding another form of a word too (``forms``: search's rule; a
    context's lines keep to the form asked, ``holding``, so a context asks for none)."""
    if not (cfg.rare_place and cfg.rare_chunks):
        return None
    docs = docs_of or store.term_docs
    words = query_words(query, docs)
    terms = rare_terms(
        words, docs, store.chunk_count(), cfg.rare_chunks, cfg.rare_share, cfg.rare_words
    )
    if not terms:
        return None
    held = tuple(
        frozenset(lab for lab, _ in store.keywords([t], cfg.rare_chunks, docs)) for t in terms
    )
    others = forms(store, terms, cfg.rare_chunks, docs, held) if other_forms else frozenset()
    return RareWord(tuple(terms), tuple(held), others)


def forms(
    store: Store,
    terms: Sequence[str],
    most: int,
    docs_of: Callable[[str], int],
    held: Sequence[frozenset[int]],
) -> frozenset[int]:
    """The chunks holding a rare word of ``terms`` in another form: its stem's
    (``cjk.stem_term``, a Cyrillic word's) best ``most`` chunks not holding the words
    (``held``: the chunks holding each, ``RareWord.held``), by the keyword side's BM25 of
    the stem alone (as many as the word may have: it is rare when at most ``most`` chunks
    hold it); none for any other word.

    The keyword side asks for a Cyrillic word or its stem, the form asked scoring both
    and another form its stem alone (``ranking.keyword_terms``); the convex fusion then
    scales a note holding only another form to a fraction of the note holding the form
    asked, and the vectors of a model that knows little Russian put it off the first
    page: found in the keyword lane's first 10 for 0.88 of such questions, by search for
    0.27 (bench/RESULTS.md "stop 54"). Such a note holds the rare word as much as the
    keyword side counts it held. A stem more chunks hold than ``most`` (a common stem
    of a rare form: 6 to 39 of 911 chunks on the Russian field vault) was skipped, and
    those questions stayed lost (0.55 / 0.43 on two folds); its best ``most`` are the
    keyword lane's own first other forms (0.83 / 0.68, bench/RESULTS.md "stop 55",
    "review of stop 55"). The words' chunks (at most ``most`` each, each holding the stem)
    are asked for beside them and left out: leaving them out of the stem's best ``most``
    + the word's count, as first written, kept up to twice ``most`` when the word's
    chunks ranked low on the stem. The ranking reads the stem's chunks as the keyword
    side read them this search already (the word or its stem).

    A stem held by no more chunks than its word (counted already: ``rare_terms``) is
    asked for no further: each chunk holding the word holds its stem (the word's term is
    the phrase of the two), so none holds another form; nor is one no chunk holds (a
    PostgreSQL index of schema 13, before stems, read by a newer reader)."""
    taken = frozenset().union(*held)
    stems = [(t, s) for t in terms if (s := cjk.stem_term(t)) is not None]
    found = (
        store.keywords([s], most + len(taken), docs_of) for t, s in stems if docs_of(t) < docs_of(s)
    )
    return frozenset(
        lab for labs in found for lab in [lab for lab, _ in labs if lab not in taken][:most]
    )


def holding(
    rare: RareWord, pieces: Sequence[Piece], labels: Sequence[int], ranked: Sequence[int]
) -> list[frozenset[int]]:
    """Which of ``rare``'s words (by their number) each of the ``pieces`` (each of the
    chunk ``labels`` names) holds: a whole note those its chunk holds; a line those its
    keyword tokens (FTS5's, stemmed as the index stems) hold. A holding chunk none of
    whose lines holds one (the word is in its title or heading only) has its best line
    in ``ranked`` (best first) hold those its chunk holds."""

    def words_of(label: int) -> frozenset[int]:
        return frozenset(j for j, chunks in enumerate(rare.held) if label in chunks)

    out = [words_of(labels[i]) if pieces[i].whole else frozenset() for i in range(len(pieces))]
    lines = [i for i in range(len(pieces)) if labels[i] in rare.holders and not pieces[i].whole]
    if not lines:
        return out
    wanted = [set(TOKENIZER.tokens(term)) for term in rare.terms]
    tokens = TOKENIZER.columns_many([(pieces[i].text, "", "", "") for i in lines])
    for i, found in zip(lines, tokens, strict=True):
        have = {t for t, _, _ in found}
        out[i] = frozenset(j for j, w in enumerate(wanted) if w and w <= have)
    for label in {labels[i] for i in lines} - {labels[i] for i in lines if out[i]}:
        best = next(i for i in ranked if labels[i] == label)
        out[best] = words_of(label)
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
    with those holding a ``rare`` word among the first (``core/excerpts.held_first``;
    ``labels``: each piece's chunk), each word's best before any word's second
    (``held_in_turn``). No rare word: ``order`` as it is."""
    if rare is None:
        return list(order)
    ranked = best_first(scores)
    held = holding(rare, pieces, labels, ranked)
    turns = held_in_turn(ranked, held)
    return held_first(order, turns, [bool(words) for words in held], place)
