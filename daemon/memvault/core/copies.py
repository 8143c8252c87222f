"""Copies of one text among a search's candidates, kept as one hit (pure).

An agent that writes the same fact into many notes (the memory tool's
``fact-1.md`` ... ``fact-500.md``, a line pasted into several notes) made every
place of a search's first page a copy of it. A chunk whose text is another's,
word for word once spaces and case are set aside (``copy_key``: the key
context drops a repeated passage by, core/context), is a copy: the page keeps
the best of them and says how many others the candidates held and in which
notes (``Kept.copies``, ``Kept.copy_paths``), so ``k`` counts distinct answers.
The note's title and headings are no part of the chunk's text, so copies in
notes of other names (``fact-1``, ``fact-2``) are copies; a heading line the
chunk holds is part of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from memvault.core.results import Hit

T = TypeVar("T")

# the notes of a hit's copies named on it, best first (the count is whole)
COPY_PATHS = 10


def copy_key(text: str) -> str:
    """``text`` as copies are compared: spaces collapsed, case folded."""
    return " ".join(text.split()).casefold()


@dataclass(slots=True)
class Kept(Generic[T]):
    """A candidate kept for the page, with the copies of its text the candidates held."""

    item: T
    copies: int = 0  # the other candidates with this text (in this note or others)
    copy_paths: list[str] = field(default_factory=list)  # their notes, the first COPY_PATHS


def first_distinct(
    items: Iterable[T],
    k: int,
    text: Callable[[T], str],
    path: Callable[[T], str],
    group: bool = False,
    copies: bool = True,
) -> list[Kept[T]]:
    """The first ``k`` of ``items`` (best first), each text once: a later item with a
    kept one's text is counted on it as a copy, whether it comes before the ``k``-th
    or after (every item is looked at: they are read already). With ``group``, at most
    one kept item a note; an item of a note kept already with another text is passed
    over, as a note's other sections are. ``copies=False``: every text as often as it
    comes (context's candidates: it drops a repeated passage itself)."""
    kept: list[Kept[T]] = []
    by_key: dict[str, Kept[T]] = {}
    notes: set[str] = set()
    for item in items:
        if not copies and len(kept) >= k:
            break
        key = copy_key(text(item)) if copies else ""
        first = by_key.get(key)
        if first is not None:
            first.copies += 1
            where = path(item)
            if (
                where != path(first.item)
                and where not in first.copy_paths
                and len(first.copy_paths) < COPY_PATHS
            ):
                first.copy_paths.append(where)
            continue
        if len(kept) >= k:
            continue  # still looked at: a copy of a kept one may follow
        where = path(item)
        if group and where in notes:
            continue
        notes.add(where)
        one = Kept(item)
        kept.append(one)
        if copies:
            by_key[key] = one
    return kept


def further(hits: Sequence[Hit], more: Sequence[Hit], k: int, group: bool = False) -> list[Hit]:
    """``hits`` (a page copies left short of ``k``) and then ``more``, a further look
    past the candidates they were chosen from: a hit of ``more`` holding a text of
    ``hits`` is counted on it as a copy (with its own), another text follows them
    (with ``group``, none of a note they hold), up to ``k``. A hit that follows scores
    at most the last before it: the further look ranks its candidates among
    themselves, and a page stays best first."""
    out = list(hits)
    at = {copy_key(h.text): i for i, h in enumerate(out)}
    notes = {h.path for h in out}
    for hit in more:
        i = at.get(copy_key(hit.text))
        if i is not None:
            first = out[i]
            paths = dict.fromkeys(first.copy_paths)
            for where in (hit.path, *hit.copy_paths):
                if where != first.path and len(paths) < COPY_PATHS:
                    paths[where] = None
            out[i] = dataclasses.replace(
                first, copies=first.copies + 1 + hit.copies, copy_paths=tuple(paths)
            )
            continue
        if len(out) >= k or (group and hit.path in notes):
            continue
        floor = out[-1].score if out else hit.score
        out.append(dataclasses.replace(hit, score=min(hit.score, floor)))
        at[copy_key(hit.text)] = len(out) - 1
        notes.add(hit.path)
    return out
