"""Pure pieces of hybrid search: the FTS5 query, rank fusion, filters, snippets.

Two fusions of the BM25 and vector rankings are offered: weighted
reciprocal-rank fusion (``weight / (rrf_k + rank)`` summed over the rankings)
and a convex combination of normalised scores. Which one is the default, and
with what weights, was decided on the LoCoMo dev split (bench/RESULTS.md).
"""

from __future__ import annotations

import bisect
import datetime as dt
import fnmatch
import itertools
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core import cjk
from memvault.core.text import grapheme_cut

COMMON_DOCS = 1000  # a term in this many chunks (and half of all) is too common to score
MAX_QUERY_TERMS = 64

# Words too common to help a keyword ranking (questions are full of them).
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if
    in into is it its itself just me more most my myself no nor not now of off on once
    only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word list reads best as text
)


def query_terms(query: str) -> list[str]:
    """Distinct words of a query, stopwords dropped (all of them kept if that leaves none),
    the first ``MAX_QUERY_TERMS`` of them: a query pasted from a long text would otherwise
    make an FTS5 OR of thousands of terms (1.4 s for 5,000), and the embedding model reads
    only its first ~256 word pieces anyway. A word's run of Chinese or Japanese
    characters is a term of its own (``cjk.terms``; ``keyword_terms`` asks for its
    pairs when no chunk holds it as written)."""
    words = [t for w in cjk.words(query) for t in cjk.terms(w.lower())]
    kept = [w for w in words if w not in STOPWORDS]
    return list(dict.fromkeys(kept or words))[:MAX_QUERY_TERMS]


def keyword_terms(terms: Sequence[str], docs_of: Callable[[str], int]) -> list[str]:
    """The terms a keyword ranking asks for: ``terms`` (``query_terms``) with each CJK run
    no chunk holds as written replaced by its pairs of characters (``cjk.backoff``;
    ``docs_of(term)``: the chunks holding it), the first ``MAX_QUERY_TERMS``, each
    Cyrillic word followed by its stem (``cjk.stem_term``: its other forms found, the
    form asked ranked above them; a stem takes no word's place, so at most twice as many)."""
    out: dict[str, None] = {}
    for term in cjk.backoff(terms, docs_of, MAX_QUERY_TERMS)[:MAX_QUERY_TERMS]:
        out[term] = None
        if (stem := cjk.stem_term(term)) is not None:
            out[stem] = None
    return list(out)


def fts_query(terms: Sequence[str]) -> str:
    """An FTS5 MATCH expression: any of the words, each quoted (no syntax injection),
    its CJK characters spaced as the index holds them (``cjk.keyword_form``: a pair is a
    phrase). A NUL ends an FTS5 string early ("unterminated string"): it is dropped."""
    return " OR ".join(
        '"' + cjk.keyword_form(t).replace("\x00", "").replace('"', '""') + '"' for t in terms
    )


def informative_terms(
    terms: Sequence[str],
    total: int,
    docs_of: Callable[[str], int],
    min_docs: int = COMMON_DOCS,
) -> list[str]:
    """The terms worth a BM25 ranking: all but those in at least half of the
    ``total`` chunks and in at least ``min_docs`` of them.

    FTS5's bm25 gives a term in at least half the chunks an IDF of 1e-6 (its
    floor for a negative IDF), so such a term adds nothing next to any other
    term — but scoring every chunk it matches is most of a query's cost in a
    large vault (~80 ms for a term in 40,000 of 60,000 chunks). In a small
    vault scoring is cheap and even a floored term still orders its few
    chunks, so it is kept there. A query left with no term has no lexical
    side; the vectors answer alone. ``docs_of(term)`` (chunks holding the term) is
    asked only when the index is large enough for a term to be dropped.
    """
    if total < min_docs:
        return list(terms)
    out = []
    for term in terms:
        docs = docs_of(term)
        if not (2 * docs >= total and docs >= min_docs):
            out.append(term)
    return out


def fuse(
    lexical: Sequence[int],
    vector: Sequence[int],
    *,
    rrf_k: int = 60,
    lexical_weight: float = 1.0,
    vector_weight: float = 1.0,
    unembedded: Collection[int] = (),
) -> list[tuple[int, float]]:
    """Weighted reciprocal-rank fusion of two best-first label lists. A label in
    ``unembedded`` (its vector is still pending) could not be in the vector list:
    its lexical part stands for both, rather than counting it as dissimilar."""
    scores: dict[int, float] = {}
    for weight, ranking in ((lexical_weight, lexical), (vector_weight, vector)):
        for rank, label in enumerate(ranking):
            scores[label] = scores.get(label, 0.0) + weight / (rrf_k + rank + 1)
    if unembedded and lexical_weight > 0:
        for label in unembedded:
            if label in scores:
                scores[label] *= (lexical_weight + vector_weight) / lexical_weight
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def convex(
    lexical: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    *,
    lexical_weight: float = 1.0,
    vector_weight: float = 1.0,
    unembedded: Collection[int] = (),
) -> list[tuple[int, float]]:
    """Convex combination of normalised scores (Bruch et al., 2023, "An Analysis
    of Fusion Functions for Hybrid Retrieval"): BM25 divided by the best BM25
    of the query, cosine min-max scaled over the candidates, then
    ``a * lexical + (1 - a) * vector`` with ``a = w_lex / (w_lex + w_vec)``.
    A chunk missing from one list scores 0 there — except a chunk in
    ``unembedded`` (its vector is still pending: it cannot be in the vector list),
    scored on its lexical part alone, with the weights renormalised over the one
    signal it has."""
    total = lexical_weight + vector_weight
    a = lexical_weight / total if total > 0 else 0.5
    scores: dict[int, float] = {}
    best = max((s for _, s in lexical), default=0.0)
    for label, s in lexical:
        share = 1.0 if label in unembedded else a
        scores[label] = share * (s / best if best > 0 else 0.0)
    if vector:
        sims = [s for _, s in vector]
        lo, hi = min(sims), max(sims)
        for label, s in vector:
            scaled = (s - lo) / (hi - lo) if hi > lo else 1.0
            scores[label] = scores.get(label, 0.0) + (1 - a) * scaled
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def _scaled(values: Sequence[float]) -> list[float]:
    """Min-max scaled to [0, 1]; all equal -> 1."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    return [(v - lo) / (hi - lo) if hi > lo else 1.0 for v in values]


def note_evidence(scores: Sequence[float], notes: Sequence[str], top: int = 2) -> list[float]:
    """For each candidate chunk, the evidence its note holds: the sum of the ``top`` best
    fused ``scores`` among the candidates of the same note (``notes``: each chunk's),
    min-max scaled over the candidates.

    A note is a unit as well as its chunks: a question about a note is answered by
    several of its sections at once (a how-to's steps, its caveats), while a chunk of a
    note that is about something else matches by one turn of phrase. The sum of the
    best few (not of all: a long note would win by its length) is the classic
    passage-to-document evidence (CombSUM over the top passages)."""
    if len(scores) != len(notes):
        raise ValueError("one note per score")
    best: dict[str, list[float]] = {}
    for note, score in zip(notes, scores, strict=True):
        best.setdefault(note, []).append(score)
    total = {n: sum(sorted(v, reverse=True)[: max(top, 1)]) for n, v in best.items()}
    return _scaled([total[n] for n in notes])


def with_evidence(
    fused: Sequence[tuple[int, float]],
    notes: Mapping[int, str],
    own: Mapping[int, float] | None = None,
    *,
    note_weight: float = 0.0,
    note_top: int = 2,
    own_weight: float = 0.0,
    links: Mapping[int, Collection[str]] | None = None,
    link_weight: float = 0.0,
    unknown: Collection[int] = (),
) -> list[tuple[int, float]]:
    """The fused ranking of the chunks in ``notes`` (label -> its note; a label
    without one is dropped), each score joined by three pieces of evidence, then
    divided by the weights' sum so a score stays in [0, 1]; best first:

    - its note's (``note_evidence``, weight ``note_weight``): a note is a unit as
      well as its chunks. A chunk in ``unknown`` is not judged on it: its note's
      other chunks cannot be vector candidates yet, so the sum of its note's best
      chunks counts what is missing against it (Ana's note just written, asked by
      its own word, lost to Sarah's note, which does not hold the word but had two
      vector candidates);
    - its own text's (``own``: label -> the best cosine of one of the chunk's own
      lines to the query, min-max scaled over the chunks that have one, weight
      ``own_weight``; a chunk without one counts 0). A chunk's vector is embedded
      with its note's title and headings and the text before it (``core/chunks``):
      a section with little text of its own ("Accepted on 2024-03-12. Supersedes
      nothing.") takes its meaning from its neighbours and its title, and ranks with
      them; its own lines' vectors say what it adds. A chunk in ``unknown`` (its own
      lines were asked for but have no vector yet: a note just written, the vector
      lane behind) is neither rewarded nor punished there: its score is divided by
      the weights of the evidence it has, not counted 0 against the chunks that
      have theirs;
    - the chunks that link to its note (``links``: label -> the notes its lines link
      to): a note gains ``link_weight`` times the best fused score of a chunk of
      another note that links to it. A line that names a note is about that note
      ("Drove the database choice in [[the decision]]"), as Obsidian's graph would
      answer "the decision Sarah drove". A chunk in ``unknown`` passes nothing on:
      its score is its keywords' alone, stretched to stand for its missing vector
      too (``convex``), and without its lines' vectors nothing says whether the
      line that links is the one that matched ("Works with [[sarah]]" beside the
      line a question names)."""
    kept = [(label, score) for label, score in fused if label in notes]
    if not kept:
        return []
    scores = [s for _, s in kept]
    total = 1.0
    missing = [0.0] * len(kept)  # the weight of evidence a chunk lacks (not counted)
    if note_weight:
        ev = note_evidence(scores, [notes[label] for label, _ in kept], note_top)
        for i, (label, _) in enumerate(kept):
            if label in unknown:
                missing[i] += note_weight
            else:
                scores[i] += note_weight * ev[i]
        total += note_weight
    if own_weight and own:
        present = [own[label] for label, _ in kept if label in own]
        lo, hi = (min(present), max(present)) if present else (0.0, 0.0)
        for i, (label, _) in enumerate(kept):
            if label in own:
                scaled = (own[label] - lo) / (hi - lo) if hi > lo else 1.0
                scores[i] += own_weight * scaled
            elif label in unknown:
                missing[i] += own_weight
        total += own_weight
    if link_weight and links:
        # a line that links to a note is about that note: the best score of a chunk
        # linking to a note (from another note) is evidence for that note's chunks
        fused_score = dict(kept)
        described: dict[str, float] = {}
        for label, targets in links.items():
            if label in fused_score and label not in unknown:
                for target in targets:
                    if target != notes.get(label):
                        described[target] = max(described.get(target, 0.0), fused_score[label])
        for i, (label, _) in enumerate(kept):
            scores[i] += link_weight * described.get(notes[label], 0.0)
        total += link_weight
    out = [
        (label, s / (total - lack))
        for (label, _), s, lack in zip(kept, scores, missing, strict=True)
    ]
    return sorted(out, key=lambda kv: (-kv[1], kv[0]))


def nearest_kept(
    ranked: Sequence[tuple[int, float]],
    notes: Mapping[int, str],
    nearest: Sequence[int],
    place: int = 2,
    depth: int = 2,
) -> list[tuple[int, float]]:
    """``ranked`` with the vector side's best notes kept on the first page: the n-th
    note of ``nearest`` (the vector side's labels, best first; its best chunk there),
    for n up to ``depth``, ranks among the first ``place`` x n notes. A note ranked
    below its place has that chunk moved up to just before the note at it, its score
    set between its new neighbours' (the rest keep their order and scores; a label not
    in ``notes``, a note a hop brought in, is a note of its own). ``place`` 0 leaves
    the ranking as it is.

    The convex fusion adds a chunk's scaled keyword score to its scaled cosine, so a
    chunk that shares no word with the question ("a folder on another drive" ->
    Symbolic links) counts 0 on one side and ranks below chunks that match a common
    word weakly on both; the note evidence then lifts the notes with many such
    chunks further. The chunks the vectors rank first are the strongest sign of what
    a question in other words is about: they keep places on the first page, as
    interleaving two rankings keeps each one's best, without taking the first place
    from the hit the fused ranking puts first (bench/RESULTS.md "fifth round")."""
    out = list(ranked)
    if place < 1 or depth < 1:  # either setting 0 turns the rule off
        return out
    wanted: list[int] = []  # the vector side's best chunk of each of its first notes
    taken: set[str] = set()
    for label in nearest:
        note = notes.get(label)
        if note is None or note in taken:
            continue
        taken.add(note)
        wanted.append(label)
        if len(wanted) >= depth:
            break
    for n, label in enumerate(wanted, start=1):
        out = _kept_among(out, notes, label, place * n)
    return out


def rare_kept(
    ranked: Sequence[tuple[int, float]],
    notes: Mapping[int, str],
    holders: Collection[int],
    place: int = 1,
    other_forms: Collection[int] = (),
) -> list[tuple[int, float]]:
    """``ranked`` with the notes holding the query's rare word kept first: ``holders``
    are the chunks that hold it (``core/rare_words.rare_terms``); the n-th of their notes
    among the candidates (each by its best-ranked holding chunk, in ``ranked``'s order)
    ranks among the first ``place`` x n notes, moved as ``nearest_kept`` moves one. A
    holder that is no candidate (a filter left it out) is passed over; ``place`` 0
    leaves the ranking as it is. The notes holding only another form of the word
    (``other_forms``: the stem's best chunks not holding the form asked,
    ``engine/rare_lines.forms``) come after those holding it as asked, each counted on from
    them: the first ``place`` x m notes, m those holding it as asked, are as without them.

    The convex fusion scores the one chunk holding an identifier the question names
    (a ticket, a host, an error code, a rare surname) 1.0 on the keyword side but, when
    its vector is the candidates' least like the question's, 0 on the vector side:
    chunks without the word but near in meaning, and their notes' evidence, put it
    below the first page. A word in a few chunks of a large vault is the strongest
    sign of which note is meant (bench/RESULTS.md "rare words")."""
    out = list(ranked)
    if place < 1 or not holders:
        return out
    wanted: list[int] = []  # the best-ranked holding chunk of each holding note
    taken: set[str] = set()
    for held in (holders, other_forms):  # the form asked first, then its other forms
        for label, _ in out:
            note = notes.get(label)
            if label in held and note is not None and note not in taken:
                taken.add(note)
                wanted.append(label)
    for n, label in enumerate(wanted, start=1):
        out = _kept_among(out, notes, label, place * n)
    return out


def _kept_among(
    out: list[tuple[int, float]], notes: Mapping[int, str], label: int, first: int
) -> list[tuple[int, float]]:
    """``out`` with ``label``'s note among its ``first`` notes (``nearest_kept``)."""
    starts: list[int] = []  # the index in ``out`` of each note's best chunk, best first
    seen: set[str] = set()
    for i, (lab, _) in enumerate(out):
        note = notes.get(lab, f"\0{lab}")  # not in ``notes``: a note of its own
        if note not in seen:
            seen.add(note)
            starts.append(i)
    at = next((i for i, (lab, _) in enumerate(out) if lab == label), None)
    if at is None or len(starts) <= first or at < starts[first]:
        return out  # not a candidate, or among the first notes already
    if notes[label] in {notes.get(out[i][0]) for i in starts[:first]}:
        return out
    where = starts[first - 1]  # the note at its place: it goes just before
    below = out[where][1]
    score = (out[where - 1][1] + below) / 2 if where else below + 1e-9
    out = [*out[:at], *out[at + 1 :]]
    out.insert(where, (label, score))
    return out


@dataclass(frozen=True, slots=True)
class Filters:
    """What a search may return. Empty filters allow everything."""

    folder: str | None = None
    tags: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    where: Mapping[str, str] | None = None
    path: str | None = None  # a glob over the note path
    # the vault's spellings of ``folder`` (engine/folders: any case), matched exactly
    folders: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.folder or self.tags or self.since or self.until or self.where or self.path)


def parse_day(value: str, name: str) -> str:
    """Validate a --since/--until value: YYYY-MM-DD (or a longer ISO stamp)."""
    text = value.strip()
    try:
        dt.date.fromisoformat(text[:10])
    except ValueError:
        raise ValueError(f"{name} must be a date like 2024-01-31, not {value!r}") from None
    return text[:10]


def note_day(fields: Mapping[str, Any], path: str) -> str | None:
    """The date a note is about: frontmatter date, else updated, else one in its file name."""
    for name in ("date", "updated"):
        value = fields.get(name)
        if value is not None and re.match(r"^\d{4}-\d{2}-\d{2}", str(value).strip()):
            return str(value).strip()[:10]
    m = re.search(r"(\d{4}-\d{2}-\d{2})", path.rsplit("/", 1)[-1])
    return m.group(1) if m else None


def tag_matches(tag: str, wanted: str) -> bool:
    """Tag filters are case-insensitive and nested: 'project' matches 'project/alpha'."""
    t, w = tag.casefold().lstrip("#"), wanted.casefold().lstrip("#")
    return t == w or t.startswith(w + "/")


def allows(f: Filters, path: str, tags: Sequence[str], fields: Mapping[str, Any]) -> bool:
    if f.folder:
        folders = f.folders or (f.folder.strip("/"),)
        if not any(path.startswith(folder + "/") for folder in folders):
            return False
    if f.tags and not all(any(tag_matches(t, want) for t in tags) for want in f.tags):
        return False
    if f.since or f.until:
        day = note_day(fields, path)
        if day is None or (f.since and day < f.since) or (f.until and day > f.until):
            return False
    for name, value in (f.where or {}).items():
        have = fields.get(name)
        values = have if isinstance(have, list) else [have]
        if not any(v is not None and str(v).casefold() == value.casefold() for v in values):
            return False
    return not (f.path and not fnmatch.fnmatchcase(path, f.path))


def snippet(text: str, terms: Sequence[str], width: int = 220) -> str:
    """A one-line excerpt around the first query term found (a CJK run found nowhere as
    written: the first of its pairs found), cut where a reader sees characters part
    (``grapheme_cut``: never between a letter and its marks, inside a joined emoji)."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    low = flat.lower()
    hits = [low.find(t) for t in terms if t and low.find(t) >= 0]
    if not hits:  # a CJK run not held as written (cjk.backoff): where its pairs stand
        found = (low.find(p) for t in terms if len(t) > 2 and cjk.has_cjk(t) for p in cjk.pairs(t))
        hits = [i for i in found if i >= 0]
    if hits and len(low) != len(flat):  # "İ" lowers to two characters: places in flat
        ends = list(itertools.accumulate(len(ch.lower()) for ch in flat))
        hits = [bisect.bisect_right(ends, i) for i in hits]
    start = max(0, min(hits) - width // 4) if hits else 0
    if start:
        space = flat.rfind(" ", 0, start)
        start = space + 1 if space >= 0 else grapheme_cut(flat, start)
    piece = flat[start : start + width]
    if start + width < len(flat):
        cut = piece.rfind(" ")
        end = start + cut if cut > width // 2 else grapheme_cut(flat, start + width)
        piece = flat[start : max(start + 1, end)]
    return ("…" if start else "") + piece + ("…" if start + len(piece) < len(flat) else "")
