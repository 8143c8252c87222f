"""One hop along a link: the note a strong hit points at, as Obsidian's graph answers it.

"Which book did I take the CQRS notes from?" finds the CQRS note, whose
``## References`` line is ``- [[Understanding Distributed Systems]]``: the answer is
one link away, and nothing in the book's own text says CQRS. A line that is mostly a
link (``is_pointer``) says "this is about that note"; when such a line is what a hit
matched, the note it links becomes a candidate of its own, ranked just behind the hit
(``hop_scores``: the hit's score times ``weight`` times the line's share of the
hit). The share is the line's cosine to the query over the chunk's best line's: a tag
line (``- [[Python]]``) in a chunk found for its other lines passes almost nothing on,
and a chunk that *is* its pointer line passes its whole score. The hit's best line,
when it links one note, passes the hit on too, however long (``passed_share``): the
sentence that matched the question describes the note it links, as anchor text does.
Measured in bench/RESULTS.md (issue 25, third and fifth rounds); search's
``engine/evidence.py`` gathers the pointers, ``lifted`` applies them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memvault.core.cjk import words

# a wikilink or embed ([[x]], ![[x|y]]) or a markdown link ([text](target))
_LINK = re.compile(r"!?\[\[[^\]\n]*\]\]|\[[^\]\n]*\]\([^)\n]*\)")
POINTER_WORDS = 4  # a pointer line has at most this many words beside its links


def is_pointer(line: str, max_words: int = POINTER_WORDS) -> bool:
    """Whether ``line`` is mostly a link: it holds one, and at most ``max_words``
    words outside its links ("- [[NoSQL Distilled]]", "Source: [[Deep Work]], ch. 3")."""
    if _LINK.search(line) is None:
        return False
    return len(words(_LINK.sub(" ", line))) <= max_words


def has_link(line: str) -> bool:
    """Whether ``line`` holds a wikilink, an embed or a markdown link."""
    return _LINK.search(line) is not None


def line_share(cosine: float, best: float) -> float:
    """A line's share of its chunk's match: 1 for the chunk's best line (a chunk that
    is its pointer line passes its whole score, whatever the cosine's sign), else its
    cosine over the best one's, in [0, 1] (0 when no line of the chunk is like the
    query at all)."""
    if cosine >= best:
        return 1.0
    return max(cosine, 0.0) / best if best > 0 else 0.0


def passed_share(
    line: str, cosine: float, best: float, targets: int, described: float = 1.0
) -> float | None:
    """The share of its hit a line of the hit passes on to the note it links (``Pointer``),
    or None when it passes nothing: a pointer line (``is_pointer``) its ``line_share``;
    the hit's best line (``cosine`` >= ``best``: the line most like the query) that links
    exactly one other note (``targets``: the distinct notes it links) ``described`` x 1,
    however many words it has ("Use [[Symbolic links]] to keep a folder that lives on
    another drive in your vault": the line that matched describes that note; a list note
    of one-line descriptions is about the notes it lists). ``described`` 0: only
    pointer lines pass anything on."""
    if is_pointer(line):
        return line_share(cosine, best)
    if described > 0 and targets == 1 and cosine >= best:
        return min(described, 1.0)
    return None


@dataclass(frozen=True, slots=True)
class Pointer:
    """A pointer line of a candidate chunk: ``label`` (the chunk), ``target`` (the note
    its link resolves to) and ``share`` (the line's cosine to the query over the best
    cosine of any line of the chunk, in [0, 1])."""

    label: int
    target: str
    share: float


def hop_scores(
    ranked: Sequence[tuple[int, float]],
    notes: Mapping[int, str],
    pointers: Sequence[Pointer],
    weight: float,
) -> dict[str, float]:
    """The score each note a pointer leads to is proposed: the best, over the pointers
    to it, of ``weight`` x the pointing chunk's score in ``ranked`` x the line's share.
    A pointer to its own note, or from a chunk not in ``ranked``, proposes nothing."""
    score = dict(ranked)
    out: dict[str, float] = {}
    for p in pointers:
        if p.label not in score or notes.get(p.label) == p.target:
            continue
        proposed = weight * score[p.label] * min(max(p.share, 0.0), 1.0)
        if proposed > out.get(p.target, 0.0):
            out[p.target] = proposed
    return out


def lifted(
    ranked: Sequence[tuple[int, float]],
    notes: Mapping[int, str],
    proposals: Mapping[str, float],
    firsts: Mapping[str, int],
) -> list[tuple[int, float]]:
    """``ranked`` (best first) with each proposed note raised to its proposal: its best
    chunk's score, if lower; a note with no chunk in ``ranked`` enters with its first
    chunk (``firsts``: note -> label; a note missing there is left out). Best first."""
    scores = dict(ranked)
    best: dict[str, int] = {}
    for label, _ in ranked:
        note = notes.get(label)
        if note is not None and note not in best:
            best[note] = label
    for note, proposed in proposals.items():
        found = best.get(note, firsts.get(note))
        if found is not None and proposed > scores.get(found, 0.0):
            scores[found] = proposed
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
