"""Notes that say the same thing, listed once in a MEMORY.md section (pure).

An agent that saved one fact again and again (the memory tool's ``fact-1.md`` to
``fact-500.md``, one text) filled a section with it: six lines of the same words, the
whole of what an agent loading MEMORY.md saw of its root notes, and a context's
excerpt of MEMORY.md six times the same line. Now a section walks its notes in their
order and lists a note that is a copy of one listed above it (the same description,
``description``, in the same folder, a title differing only in its numbers, the same
date: ``memory_order.copy_key``; each day's log is its own, and a people or projects
section never folds, ``memory_order.folds``, nor a note of ``type: person`` or ``type:
project`` anywhere: two agents, two sprints of one summary are two) as a count on that
note's line instead::

    - [[fact-1]] - The staging password rotates on Mondays. (9 more notes say the same)

The line is memvault's, known by its form (``without_alike``); the notes the walk
passed are counted there, the rest in the section's "N more" line. All of it is read
from the notes alone, so a fresh index writes the same lines.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Hashable, Iterable
from typing import Protocol, TypeVar

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ALIKE = re.compile(r" \((?:1 more note says|[1-9]\d* more notes say) the same\)\Z")


class _Described(Protocol):
    @property
    def summary(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def link(self) -> str: ...


def description(entry: _Described) -> str:
    """What a note's MEMORY.md line says after its link: its summary, else its title
    when that is not its file name; one line of text (a control character from a
    summary, "\\0" in YAML, would make MEMORY.md a binary file no one could edit again)."""
    said = entry.summary.strip()
    if not said and entry.title != posixpath.basename(entry.link):
        said = entry.title
    return " ".join(_CONTROL.sub(" ", said).split())


def alike_said(count: int) -> str:
    """The count a note's line ends with: `` (3 more notes say the same)``; "" for 0."""
    if count <= 0:
        return ""
    return " (1 more note says the same)" if count == 1 else f" ({count} more notes say the same)"


def without_alike(line: str) -> str:
    """``line`` without the count ``alike_said`` put at its end (as it is without one)."""
    return _ALIKE.sub("", line, count=1)


E = TypeVar("E")


def fold(
    ordered: Iterable[E], limit: int, key: Callable[[E], Hashable | None]
) -> tuple[tuple[E, ...], tuple[int, ...]]:
    """The first ``limit`` notes of ``ordered`` whose ``key`` differs from every one
    taken before (a key of None is a note's own), and for each how many notes of the
    same key the walk passed before the next note it would take past the limit."""
    top: list[E] = []
    alike: list[int] = []
    taken: dict[Hashable, int] = {}
    for entry in ordered:
        k = key(entry)
        at = taken.get(k) if k is not None else None
        if at is not None:
            alike[at] += 1
            continue
        if len(top) >= limit:
            break
        if k is not None:
            taken[k] = len(top)
        top.append(entry)
        alike.append(0)
    return tuple(top), tuple(alike)


__all__ = ["alike_said", "description", "fold", "without_alike"]
