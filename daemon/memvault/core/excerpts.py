"""Excerpts: the lines of a chunk that carry its facts, and their ranking (pure).

A chunk (~128 tokens) is the unit search ranks: big enough that its vector
knows what the text is about. It is too big a unit to spend a context budget
on: a chunk of a conversation holds four or five turns, of which a question
needs one. So the context is packed with *units* — the lines of the
chunks search found that say something (a fenced code block stays one unit;
heading lines and lines of markup alone, a callout's empty ``>``, are left
out, the citation names the heading) — each ranked by two things:

- the fused score of its chunk (relevance of the neighbourhood, with the
  context the chunk's vector was embedded with), and
- the cosine of the unit's own vector to the question's (which line of the
  neighbourhood it is).

Both are min-max scaled over the candidates and added with equal weight (the
same convex combination search uses for BM25 and vectors); a unit without a
vector (the vector lane is behind, or no model) scores on its chunk alone.
Measured on LoCoMo with cross-validation (bench/RESULTS.md).

A term of the question found in at least half of the candidate units cannot
tell them apart (BM25 gives such a term an IDF of at most zero: the rule
``ranking.informative_terms`` applies to chunks), yet in the vector of a short
line it weighs as much as the line's content: asked "Where has Melanie
camped?", every "**Melanie**: Wow, did you join in?" looks close. So the
units are compared with the mean of the question's vector and the vector of
the question without those terms (``focus_query``); the plain question
alone, when no term is that common.

A unit's vector is the embedding of ``unit_text(unit)``: the line as the model reads
a chunk (``chunks.model_text``) with its whitespace collapsed, cut to
``UNIT_MAX_CHARS``. Indexing embeds it next to
the chunk's own text and keeps it in the same cache, keyed by the sha256 of
that text.

Three more pieces of evidence join those two (``unit_scores``), each chosen
from principle and weighed by cross-validation on the two LoCoMo folds
(bench/RESULTS.md, "Passage evidence"):

- the note: the best score of a line of the same note. A line of the note
  that is about the question is likelier to be evidence than a line as good
  on its own in a note that is not (a passage's document is evidence about
  the passage, the old lesson of passage retrieval);
- the window: the line's vector summed with those of the lines next to it,
  compared with the question. A chunk's fixed boundaries are arbitrary; the
  window is the line's own neighbourhood ("What flavour did you make?" /
  "Chocolate and vanilla swirl." answer together);
- the subject: a line led by a bold label (``**Caroline**: ...``,
  ``**Owner**: Ann``) is about what the label names; when the label holds a
  word of the question, the line is about what is asked. In a conversation
  that is the speaker: asked about Caroline, Caroline's own lines hold the
  answer far more often than the lines said to her.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from memvault.core.chunks import model_text
from memvault.core.cjk import has_cjk, words

# A unit scoring under this share of the best unit's score is filler, not evidence: it
# stays out even when the budget has room (1/3: the largest share of 0.25, 1/3, 0.4, 0.5
# that lost nothing on either LoCoMo fold, with room to spare; bench/RESULTS.md).
FILLER_SHARE = 1 / 3
# The weights of the note's best line, the window and the subject, against 1 for each of
# the chunk and the line (bench/RESULTS.md, "Passage evidence": the note's weight is the
# mean of the two folds' choices, 0.6 on one and 1.0 on the other; the window's and the
# subject's were the choice of both folds).
NOTE_WEIGHT = 0.8
WINDOW_WEIGHT = 0.5
SUBJECT_WEIGHT = 0.3
UNIT_MAX_CHARS = 1000  # a unit's embedded text, at most (the model reads ~256 word pieces)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
# A line led by a bold label: "**Caroline**: ...", "- **Owner**: Ann", "**Decision:** ..."
_LABEL = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?\*\*([^*\n]{1,80}?)(?:[:：]\*\*|\*\*[ \t]*[:：])")


@dataclass(frozen=True, slots=True)
class Unit:
    """One line (or one fenced code block) of a chunk, with its file line numbers."""

    line_start: int
    line_end: int
    text: str
    seq: int  # position among the chunk's units (0, 1, ...)


def split_units(text: str, line_start: int) -> list[Unit]:
    """The units of a chunk whose ``text`` starts at file line ``line_start``.

    Blank lines, lines of markup alone (no letter or digit) and ATX heading lines are
    not units; the lines of a fenced
    code block (fences included) are one unit. An unclosed fence runs to the
    end of the chunk.
    """
    out: list[Unit] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        lead = line.lstrip(" ")[:1]
        if lead not in ("`", "~", "#"):  # most lines: no regex needed
            if _says_something(line):
                out.append(Unit(line_start + i, line_start + i, line, len(out)))
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            marker = fence.group(1)
            j = i + 1
            while j < len(lines):
                close = _FENCE.match(lines[j])
                if close and close.group(1)[0] == marker[0] and len(close.group(1)) >= len(marker):
                    break
                j += 1
            j = min(j, len(lines) - 1)
            block = "\n".join(lines[i : j + 1])
            out.append(Unit(line_start + i, line_start + j, block, len(out)))
            i = j + 1
            continue
        if _says_something(line) and not _HEADING.match(line):
            out.append(Unit(line_start + i, line_start + i, line, len(out)))
        i += 1
    return out


def _says_something(line: str) -> bool:
    """A line with a letter, a digit or an emoji: one of markup alone — a callout's empty
    line (``>``), a rule, a table's separator, an empty list item — says nothing, like a
    blank one (a context spent its tokens on them). An emoji is no markup: a line of
    them alone (``🎉``, ``✅`` under "## Status") is what the writer said, which a
    context left out, citing the heading over nothing."""
    return any(ch.isalnum() for ch in line) or any(
        _emoji(ch, line[i + 1 : i + 2])
        for i, ch in enumerate(line)
        if ord(ch) >= 0x2300 or line[i + 1 : i + 2] == "\ufe0f"
    )


# Unicode's Emoji_Presentation below U+1F000 (emoji-data.txt): the symbols shown as an
# emoji, not as text, with no variation selector. ``★``, a box-drawing rule (``───``),
# a geometric shape (``■``) or a dingbat bullet (``➤``) are text, markup-like.
_EMOJI_BMP = frozenset(
    {
        *(0x231A, 0x231B, 0x23E9, 0x23EA, 0x23EB, 0x23EC, 0x23F0, 0x23F3, 0x25FD, 0x25FE),
        *(0x2614, 0x2615, *range(0x2648, 0x2654), 0x267F, 0x2693, 0x26A1, 0x26AA, 0x26AB),
        *(0x26BD, 0x26BE, 0x26C4, 0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2, 0x26F3, 0x26F5),
        *(0x26FA, 0x26FD, 0x2705, 0x270A, 0x270B, 0x2728, 0x274C, 0x274E, 0x2753, 0x2754),
        *(0x2755, 0x2757, 0x2795, 0x2796, 0x2797, 0x27B0, 0x27BF, 0x2B1B, 0x2B1C, 0x2B50),
        0x2B55,
    }
)
# From U+1F000, the blocks of pictographs (alchemical symbols, arrows and the plain
# geometric shapes of U+1F700-1F7DF are text)
_EMOJI_BLOCKS: tuple[tuple[int, int], ...] = (
    *((0x1F004, 0x1F004), (0x1F0CF, 0x1F0CF), (0x1F18E, 0x1F1FF)),
    *((0x1F300, 0x1F6FF), (0x1F7E0, 0x1F7FF), (0x1F900, 0x1FAFF)),
)


def _emoji(ch: str, after: str) -> bool:
    """Whether ``ch`` (followed by ``after``) is shown as an emoji: by default, or asked
    to by the variation selector U+FE0F (``❤️``, ``✔️``, ``‼️``, ``↩️``, ``™️``, the
    ``#️⃣`` keycap), which follows only a character that can be one (emoji-variation-
    sequences.txt: symbols, arrows, punctuation; a keyboard puts it after no markup)."""
    code = ord(ch)
    if code in _EMOJI_BMP or any(low <= code <= high for low, high in _EMOJI_BLOCKS):
        return True
    return after == "\ufe0f"


def unit_text(text: str) -> str:
    """What gets embedded for a unit: its text on one line as the model reads a chunk's
    (``chunks.model_text``: links without their folders, no block id), cut to
    ``UNIT_MAX_CHARS``. A block id Obsidian appends to a line changes neither its
    chunk's embedded text nor this: the line keeps its vector with its chunk's."""
    flat = " ".join(model_text(text).split())
    return flat[:UNIT_MAX_CHARS]


def unit_texts(chunk_text: str) -> list[str]:
    """The distinct embedded texts of a chunk's units."""
    texts = (unit_text(u.text) for u in split_units(chunk_text, 1))
    return list(dict.fromkeys(t for t in texts if t))


def common_terms(terms: Sequence[str], texts: Sequence[str]) -> set[str]:
    """The ``terms`` (lower-case words) found, as whole words (a CJK run: anywhere), in
    at least half of the ``texts`` (case-insensitively)."""
    if not texts or not terms:
        return set()
    lowered = [text.lower() for text in texts]
    need = (len(texts) + 1) // 2
    out: set[str] = set()
    for term in dict.fromkeys(terms):
        # a CJK run stands inside longer runs (no space parts those words)
        word = re.escape(term)
        pattern = re.compile(word if has_cjk(term) else rf"(?<!\w){word}(?!\w)")
        found = 0
        for text in lowered:  # a substring test first: most texts lack the term
            if term in text and pattern.search(text):
                found += 1
                if found >= need:
                    out.add(term)
                    break
    return out


def focus_query(query: str, common: Collection[str]) -> str:
    """The query without its words that hold a ``common`` term; ``""`` when that
    removes nothing or leaves no word."""
    if not common:
        return ""
    kept: list[str] = []
    dropped = False
    for word in query.split():
        if any(w.lower() in common for w in words(word)):
            dropped = True
        else:
            kept.append(word)
    focus = " ".join(kept)
    return focus if dropped and words(focus) else ""


def _scaled(values: Sequence[float | None]) -> list[float]:
    """Min-max scaled to [0, 1] over the values present; absent (None) -> 0; all equal -> 1."""
    present = [v for v in values if v is not None]
    if not present:
        return [0.0] * len(values)
    lo, hi = min(present), max(present)
    return [0.0 if v is None else ((v - lo) / (hi - lo) if hi > lo else 1.0) for v in values]


def on_subject(text: str, subject: frozenset[str]) -> bool:
    """Whether the bold label ``text`` opens with names a word of ``subject`` (the
    question's terms): a word of it, or a CJK name inside one of its runs
    (张三喜欢什么 names **张三**)."""
    words = subject_words(text)
    return bool(words & subject) or any(has_cjk(w) and any(w in t for t in subject) for w in words)


@functools.lru_cache(maxsize=4096)  # the same lines come back question after question
def subject_words(text: str) -> frozenset[str]:
    """The words (lower-case) of the bold label a line opens with (``**Caroline**: hi``
    gives ``{"caroline"}``; a full-width colon too, ``**张三**：``); empty when it opens
    with none."""
    label = _LABEL.match(text)
    return frozenset(w.lower() for w in words(label.group(1))) if label else frozenset()


def windows(places: Sequence[tuple[str, int, int] | None]) -> list[list[int]]:
    """For each unit, itself and the units next to it in its note: ``places`` holds
    each unit's (note, chunk ordinal, first line), or None for a unit with no
    neighbours (a whole note). Units are next to each other when nothing lies
    between them: consecutive in their note's line order, in one chunk or in two
    consecutive chunks (a chunk search did not find leaves a gap)."""
    out = [[i] for i in range(len(places))]
    by_note: dict[str, list[tuple[int, int, int]]] = {}  # note -> (first line, chunk, index)
    for i, place in enumerate(places):
        if place is not None:
            note, chunk, line = place
            by_note.setdefault(note, []).append((line, chunk, i))
    for members in by_note.values():
        members.sort()
        for (_, chunk_a, a), (_, chunk_b, b) in itertools.pairwise(members):
            if chunk_b - chunk_a <= 1:
                out[a].append(b)
                out[b].append(a)
    return out


def unit_scores(
    chunk_scores: Sequence[float],
    similarities: Sequence[float | None],
    timely: Sequence[bool] | None = None,
    *,
    notes: Sequence[str] | None = None,
    window_similarities: Sequence[float | None] | None = None,
    on_subject: Sequence[bool] | None = None,
) -> list[float]:
    """Each unit's score: its chunk's fused score and its own cosine to the query,
    each min-max scaled over the candidates, summed. ``None``: no vector.

    With ``notes`` (each unit's note), the best such sum among the units of the
    same note, scaled, weighs ``NOTE_WEIGHT``; with ``window_similarities`` (the
    cosine of the unit's window, see ``windows``), that, scaled, weighs
    ``WINDOW_WEIGHT``; with ``on_subject`` (whether the unit's label names a word
    of the question, see ``subject_words``), ``SUBJECT_WEIGHT`` is added to those
    that do.

    ``timely`` (one per unit): whether the unit's note is dated on a day the
    question names (core/timeref). When some are, that is one more piece of
    evidence with the weight of the chunk's or the line's: 1 for those units, 0
    for the rest; when none is (or the question names no day), nothing changes."""
    n = len(chunk_scores)
    if len(similarities) != n:
        raise ValueError("one chunk score and one similarity per unit")
    for name, given in (
        ("time match", timely),
        ("note", notes),
        ("window similarity", window_similarities),
        ("subject match", on_subject),
    ):
        if given is not None and len(given) != n:
            raise ValueError(f"one chunk score and one {name} per unit")
    base = [a + b for a, b in zip(_scaled(chunk_scores), _scaled(similarities), strict=True)]
    scores = list(base)
    if notes is not None:
        best: dict[str, float] = {}
        for note, score in zip(notes, base, strict=True):
            best[note] = max(score, best.get(note, score))
        of_note = _scaled([best[note] for note in notes])
        scores = [s + NOTE_WEIGHT * b for s, b in zip(scores, of_note, strict=True)]
    if window_similarities is not None:
        window = _scaled(window_similarities)
        scores = [s + WINDOW_WEIGHT * w for s, w in zip(scores, window, strict=True)]
    if on_subject is not None:
        scores = [
            s + (SUBJECT_WEIGHT if o else 0.0) for s, o in zip(scores, on_subject, strict=True)
        ]
    if timely is not None and any(timely):
        scores = [s + (1.0 if t else 0.0) for s, t in zip(scores, timely, strict=True)]
    return scores


def best_first(scores: Sequence[float]) -> list[int]:
    """Indices by score, best first; ties keep the order given (the search order)."""
    return sorted(range(len(scores)), key=lambda i: -scores[i])


def worth_a_place(
    scores: Sequence[float],
    share: float = FILLER_SHARE,
    admit: Sequence[float] | None = None,
) -> list[int]:
    """Indices by score, best first, without the filler: those scoring under ``share``
    of the best score. Scores are >= 0 (min-max scaled sums).

    With ``admit`` (each unit's score on its own evidence: ``unit_scores`` without
    ``notes``), a unit is filler when that score is under ``share`` of the best such
    score: its note's evidence orders the units, it does not admit one. A note
    that answers lends its weight to all its lines; "Prefers async communication"
    in the note of the person who signed off the decision asked about is still not
    about the decision."""
    order = best_first(scores)
    if not order:
        return []
    if admit is not None:
        if len(admit) != len(scores):
            raise ValueError("one admitting score per unit")
        bar = share * max(admit)
        return [i for i in order if admit[i] >= bar]
    floor = share * scores[order[0]]
    return [i for i in order if scores[i] >= floor]


def held_first(
    order: Sequence[int], ranked: Sequence[int], held: Sequence[bool], place: int = 1
) -> list[int]:
    """``order`` (the units worth a place, best first) with the units ``held`` (those
    holding the query's rare word, wherever ``ranked`` — every unit, best first — has
    them, filler too) kept first: the n-th among the first ``place`` x n. A line naming
    the ticket or the surname looked up, least like the question in meaning, was
    outranked by lines nearer it, or cut as filler (bench/RESULTS.md "Rare words in
    context"). ``place`` 0 leaves ``order`` as it is."""
    out = list(order)
    if place < 1:
        return out
    for n, i in enumerate((i for i in ranked if held[i]), start=1):
        # a held unit not in ``order`` (filler) is added even when ``order`` is short
        if i not in out or out.index(i) >= place * n:
            out = [j for j in out if j != i]
            out.insert(place * n - 1, i)
    return out


def held_in_turn(ranked: Sequence[int], held: Sequence[Collection[int]]) -> list[int]:
    """The units holding one of the query's rare words (``held``: the words each holds,
    by their number; ``ranked``: every unit, best first), in turns: each word's best
    unit, then each word's second, and so on, in ``ranked``'s order within a turn:
    ``held_first``'s ``ranked`` when two words are asked together. A ticket named on six
    lines of a log had its six kept first, and a 100-token context held four of them and
    none of the host asked about with it."""
    turn: dict[int, int] = {}  # each holding unit's turn, in ``ranked``'s order
    seen: dict[int, int] = {}  # each word's units so far
    for i in ranked:
        if held[i]:
            turn[i] = min(seen.get(w, 0) for w in held[i])
            for w in held[i]:
                seen[w] = seen.get(w, 0) + 1
    return sorted(turn, key=turn.__getitem__)  # stable: ``ranked``'s order in a turn


__all__ = [
    "FILLER_SHARE",
    "NOTE_WEIGHT",
    "SUBJECT_WEIGHT",
    "UNIT_MAX_CHARS",
    "WINDOW_WEIGHT",
    "Unit",
    "best_first",
    "common_terms",
    "focus_query",
    "held_first",
    "held_in_turn",
    "on_subject",
    "split_units",
    "subject_words",
    "unit_scores",
    "unit_text",
    "unit_texts",
    "windows",
    "worth_a_place",
]
