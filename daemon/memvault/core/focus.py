"""A note's focus as evidence: how much of a note is about what its best chunk matched.

A long digest (a book's notes, a site's summary) has one chunk that matches a
question well and many that do not; a short note about the thing asked has its
whole text on it. The cosine of the note's mean vector (its chunks' vectors
averaged, as ``related`` builds it) to the query, over its best chunk's cosine,
says which: near 1 for a note that is about the match throughout, low for a note
that mentions it once. It is asked for only when the query's nearest chunk (the
vector side's first) belongs to another note than the ranking's first: the two
sides disagree about which note is meant, and the focus breaks the tie. When they
agree the ranking stands (measured: applied always, it costs the help vault's
fold B; bench/RESULTS.md "Issue 25, fourth round").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence


def note_focus(mean_cosine: float, best_cosine: float) -> float:
    """The note's mean vector's cosine to the query over its best chunk's, in [0, 1]
    (a mean can exceed its best chunk's cosine: 1; no chunk leaning toward the query
    at all, or a mean leaning away: 0)."""
    if best_cosine <= 0:
        return 0.0
    return min(max(mean_cosine / best_cosine, 0.0), 1.0)


def with_focus(
    ranked: Sequence[tuple[int, float]],
    notes: Mapping[int, str],
    nearest: str | None,
    focus_of: Callable[[Collection[str]], Mapping[str, float]],
    weight: float,
    total: float,
    top: int = 5,
) -> list[tuple[int, float]]:
    """``ranked`` (label, score; best first; each score the mean of ``total`` weights
    of evidence) with its note's focus joined at ``weight``: ``(score * total +
    weight * focus) / (total + weight)``, re-sorted. Only the ranking's first ``top``
    notes are asked for (their vectors are the cost; the order lower down is not
    what the two sides disagree about); another note, or one ``focus_of`` gives none
    for (no vectors yet: a note just written, the vector lane behind), is neither
    rewarded nor punished: its chunks keep their scores. Unchanged when ``weight``
    is 0, when there is no ``nearest`` note (the note of the query's nearest chunk)
    or when the ranking's first note is it: ``focus_of`` is then not called."""
    kept = [(label, score) for label, score in ranked if label in notes]
    if not weight or nearest is None or not kept or notes[kept[0][0]] == nearest:
        return list(ranked)
    focus = focus_of(list(dict.fromkeys(notes[label] for label, _ in kept))[:top])
    joined = [
        (label, (score * total + weight * focus[notes[label]]) / (total + weight))
        if notes[label] in focus
        else (label, score)
        for label, score in kept
    ]
    return sorted(joined, key=lambda kv: (-kv[1], kv[0]))
