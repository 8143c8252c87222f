"""A lookup's rare words: which words of a query a search keeps the notes of first.

An agent looking up an identifier (a ticket, a host, an error code, a rare surname)
wants the one note holding it; the convex fusion can rank that note off the first page
(``ranking.rare_kept`` keeps it first: bench/RESULTS.md "rare words"). Here: the
query's words as written (``query_words``) and which of them are its rare words
(``rare_terms``): the share of the query's weight a word carries tells a lookup from
a question that happens to use a word few chunks hold; two identifiers asked together
are two lookups (bench/RESULTS.md "stop 49"). Pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence

from memvault.core import cjk
from memvault.core.ranking import MAX_QUERY_TERMS, STOPWORDS

# Two or more rare words asked together are each held by at most one chunk in this
# many: in a vault of a few dozen chunks every word is held by a few ("CQRS
# references" in a garden of five notes, "food" and "ordering" in a vault of 49
# chunks), and each then passes the share with the others taken out
RARE_AMONG = 50

# What parts written words as a space does: a list's commas and semicolons, brackets and
# double quotes, in their Latin and CJK forms ("PAY-4521,kestrel-db-04" is two things
# asked for). A hyphen, dot, slash, colon or underscore is inside an identifier.
_PARTS = re.compile(r"[\s,;()\[\]{}<>\"\u201c\u201d\u3001\u3008-\u3011\uff08\uff09\uff0c\uff1b]+")


def query_words(query: str, docs_of: Callable[[str], int] | None = None) -> list[list[str]]:
    """The query's words as written, each as the terms the keyword table cuts it into, of
    ``query_terms``'s only (stopwords dropped, the first ``MAX_QUERY_TERMS``):
    ``PAY-4521`` is one word of two terms, ``pay`` and ``4521``. Words are split at
    spaces, commas, semicolons, brackets and double quotes (``_PARTS``) and where a CJK
    run starts or ends (``PAY-4521の担当者は誰ですか``: ``PAY-4521`` and the run; Chinese and
    Japanese are written without spaces, so a question was one word, its identifier's
    share of it always whole). A run no chunk holds as written (``docs_of``;
    ``cjk.backoff``, as the keyword side asks for it) is its pairs, each a word of its
    own (``rare_terms`` joins the held ones again); without ``docs_of`` a run is one
    word. Read as far as ``query_terms`` reads (to the word holding its last term, when
    it has all it takes): a text pasted whole was read to its end twice more (0.5 s a
    MB), and a page of Japanese pasted (no space in it) had each of its runs looked up
    (``docs_of``: a statement each), 77,084 for a MB where the keyword side looks up 64."""
    words: list[list[str]] = []
    kept: dict[str, None] = {}  # the terms not stopwords, in order
    stops: dict[str, None] = {}  # the stopwords: the terms when they are all there is
    for word in _written(query):
        read = [word]
        if docs_of is not None and cjk.has_cjk(word[0]):
            read = [[p] for p in cjk.backoff(word, docs_of)]
        words.extend(read)
        for t in (t for w in read for t in w):
            (stops if t in STOPWORDS else kept).setdefault(t, None)
        if len(kept) >= MAX_QUERY_TERMS:
            break
    chosen = set(list(kept or stops)[:MAX_QUERY_TERMS])
    return [[t for t in word if t in chosen] for word in words]


def _written(query: str) -> Iterator[list[str]]:
    """The query's words as written, in order, each its terms (``_split_runs`` of each
    piece between spaces or what parts words as they do: ``_PARTS``)."""
    for piece in filter(None, _PARTS.split(query)):
        yield from _split_runs([t for w in cjk.words(piece) for t in cjk.terms(w.lower())])


def _split_runs(terms: Sequence[str]) -> list[list[str]]:
    """A word's ``terms`` (``cjk.terms``, in order) cut where a CJK run starts or ends:
    each run a word of its own, the terms between runs one word each."""
    out: list[list[str]] = []
    for t in terms:
        if cjk.has_cjk(t) or not out or cjk.has_cjk(out[-1][0]):
            out.append([t])
        else:
            out[-1].append(t)
    return out


def rare_terms(
    words: Sequence[Sequence[str]],
    docs_of: Callable[[str], int],
    total: int,
    most: int,
    share: float = 0.0,
    count: int = 1,
) -> list[str]:
    """The rarest term of each of the query's rare words (at most ``count`` words), if
    it has them. ``words``: the query's words, each its terms (``query_words``); a
    word is rare when at most ``most`` of the ``total`` chunks hold one of its terms
    (``docs_of(term)``). The k rarest such words (by their rarest term, the first on a
    tie), for the largest k up to ``count`` for which it holds, are the rare words when
    each carries at least ``share`` of the query's weight with the other k - 1 taken out
    of the query (and, k 2 or more, each is held by at most one chunk in
    ``RARE_AMONG``): the weight is the IDF of a word's terms (FTS5's BM25 IDF, ``log((N -
    n + 0.5) / (n + 0.5))``) over that of the query's terms some chunk holds. With
    ``count`` 1, the rarest term's word carries ``share`` of the whole query. Empty
    otherwise (``most`` 0: never).

    The share tells a lookup ("PAY-4521", "who is Tom Rautenbach?": the query is about
    the word) from a question that happens to use a word few chunks hold ("How fast
    was OpenSearch on our catalogue?": "fast" in one chunk, not the one that answers).
    A word counts whole: "CVE-2025-52805" is one thing asked for, though every CVE
    note holds "cve" and "2025". Two identifiers asked together ("did ERR_LEDGER_STALE
    happen on kestrel-db-04?") are two lookups: each would pass alone, though neither
    carries ``share`` of the two together. A CJK run's pairs that some chunk holds one
    after another (凤凰, 凰项 in 关于凤凰项目的决定) are the pieces of one word written
    without spaces: one word, weighing as its rarest pair (overlapping pairs counted
    each, a word of two characters in a run, の原因, weighed twice)."""
    if most < 1 or count < 1:
        return []
    terms = list(dict.fromkeys(t for word in words for t in word))
    docs = {t: n for t in terms if (n := docs_of(t)) > 0}
    if not docs:
        return []
    # a term counted in more chunks than ``total`` (a sync deleted some between the
    # two counts) is at the floor too, not a log of a negative number
    idf = {t: max(math.log((max(total - n, 0) + 0.5) / (n + 0.5)), 1e-6) for t, n in docs.items()}
    joined = _joined_pairs(words, docs)
    scaled: dict[str, float] = {}  # a word's overlapping pairs weigh as one term: its rarest
    for word in joined:  # pair (once: a name asked twice, 凤凰项目？凤凰项目的…, weighed as once)
        if len(word) > 1 and all(cjk.has_cjk(t) for t in word):
            pairs = [t for t in dict.fromkeys(word) if t in idf]
            scale = max(idf[t] for t in pairs) / sum(idf[t] for t in pairs)
            for t in pairs:
                scaled.setdefault(t, idf[t] * scale)
    idf.update(scaled)
    rare: dict[str, set[str]] = {}  # each rare word's rarest term: the word's terms
    for word in joined:
        held = [t for t in word if t in docs]
        if held:
            term = min(held, key=lambda t: (docs[t], terms.index(t)))
            if docs[term] <= most:
                rare.setdefault(term, set(word))
    order = sorted(rare, key=lambda t: (docs[t], terms.index(t)))
    for k in range(min(count, len(order)), 0, -1):
        if k > 1 and docs[order[k - 1]] * RARE_AMONG > total:
            continue  # in a small vault every word is in few chunks: one lookup at most
        chosen = [rare[t] for t in order[:k]]
        if all(_alone(word, chosen, idf, share) for word in chosen):
            return order[:k]
    return []


def _alone(
    word: set[str], chosen: Sequence[set[str]], idf: Mapping[str, float], share: float
) -> bool:
    """Whether ``word`` carries ``share`` of the query's weight (``idf``: its terms')
    with the other ``chosen`` words taken out of the query: each of the rare words
    asked together would be a lookup had it been asked alone."""
    others = set().union(*(w for w in chosen if w is not word)) - word
    rest = sum(v for t, v in idf.items() if t not in others)
    return sum(idf.get(t, 0.0) for t in word) >= share * rest


def _joined_pairs(words: Sequence[Sequence[str]], docs: Mapping[str, int]) -> list[list[str]]:
    """``words`` with each chain of CJK pairs that follow one another in a run (ab, bc)
    and are each held by some chunk (``docs``) made one word: a run asked for as its
    pairs (a question written without spaces) has its words' pairs held and the pairs
    across two words mostly not (凤凰, 凰项 in 关于凤凰项目的决定; の原, 原因 in
    E4417の原因は)."""
    out: list[list[str]] = []
    for word in words:
        if out and _held_pair(word, docs) and _held_pair(out[-1][-1:], docs):
            a, b = cjk.units(out[-1][-1]), cjk.units(word[0])
            if a[-1] == b[0]:
                out[-1].append(word[0])
                continue
        out.append(list(word))
    return out


def _held_pair(word: Sequence[str], docs: Mapping[str, int]) -> bool:
    return (
        len(word) == 1
        and docs.get(word[0], 0) > 0
        and cjk.has_cjk(word[0])
        and len(cjk.units(word[0])) == 2
    )


__all__ = ["RARE_AMONG", "query_words", "rare_terms"]
