"""Unresolved git merge conflicts left in a note, found to be reported (never resolved).

A merge git could not finish writes both sides of each clashing hunk into the file,
between marker lines at the start of a line::

    <<<<<<< HEAD
    our side
    ||||||| base        (only with merge.conflictStyle diff3 or zdiff3)
    what both sides changed
    =======
    their side
    >>>>>>> other

A person who commits or saves the file that way leaves the markers in it. memvault
never edits it: the note gets a warning naming the line of each conflict (``status``
lists it until the file is saved without them), and the marker lines and the base
section are never taken for the note's summary or title (``notes.parse_note``).

The rule: a line ``<<<<<<<`` (git's seven, then a space and a label, or nothing) that
is not inside a fenced code block opens a conflict; then, in this order, an optional
``|||||||`` line, a line ``=======``, and a line ``>>>>>>>`` close it. Between the
opening line and the closing one the sides are alternatives, so a fence one side opens
and does not close hides none of the markers that follow. What is not a conflict: a
document showing the markers inside a fenced code block, a Setext heading underlined
with seven ``=``, a ``>>>>>>>`` nested quote, an opening line never closed in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.core.text import split_lines

_OPEN = re.compile(r"<{7}(?: .*)?")
_BASE = re.compile(r"\|{7}(?: .*)?")
_SEPARATOR = re.compile(r"={7}")
_CLOSE = re.compile(r">{7}(?: .*)?")
# a marker line as git writes it, with its label: one left alone (``left_as_git_wrote_it``)
_LABELLED = re.compile(r"(?:<{7}|\|{7}|>{7}) \S.*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_SHOWN = 5  # conflicts named by line in the warning; the rest counted


@dataclass(frozen=True, slots=True)
class Conflict:
    """One unresolved conflict: the 1-based lines of its markers."""

    start: int  # the <<<<<<< line
    base: int | None  # the ||||||| line (diff3), else None
    separator: int  # the ======= line
    end: int  # the >>>>>>> line


def find_conflicts(text: str) -> tuple[Conflict, ...]:
    """The unresolved conflicts of ``text`` (the module docstring's rule), in order."""
    if "<<<<<<<" not in text:
        return ()  # most notes: nothing to scan
    return _scan(split_lines(text))[0]


def unread_lines(conflicts: Sequence[Conflict]) -> frozenset[int]:
    """The 1-based lines of ``conflicts`` no summary or title is taken from: the marker
    lines, and a base section's (what both sides changed away from)."""
    out: set[int] = set()
    for c in conflicts:
        out.update((c.start, c.end))
        out.update(range(c.base if c.base is not None else c.separator, c.separator + 1))
    return frozenset(out)


_WARNING = re.compile(
    r"(?:unresolved merge conflict|\d+ unresolved merge conflicts) \(git\) at line"
)


def is_conflict_warning(warning: str) -> bool:
    """Whether ``warning`` is one ``conflict_warning`` wrote."""
    return _WARNING.match(warning) is not None


def conflict_warning(conflicts: Sequence[Conflict]) -> str | None:
    """The note's warning naming where its conflicts start (None when it has none)."""
    if not conflicts:
        return None
    lines = [str(c.start) for c in conflicts[:_SHOWN]]
    more = len(conflicts) - _SHOWN
    if len(conflicts) == 1:
        return f"unresolved merge conflict (git) at line {lines[0]}: resolve it and save"
    where = ", ".join(lines) + (f" and {more} more" if more > 0 else "")
    return (
        f"{len(conflicts)} unresolved merge conflicts (git) at lines {where}: resolve them and save"
    )


def left_as_git_wrote_it(text: str) -> str | None:
    """Why a file memvault keeps (MEMORY.md, a folder note) is left as git wrote it: the
    conflicts ``text`` holds and what to do, or None when it holds none. Its lists
    rewritten around the markers, each side's lines moved to the other (a field test).

    A marker line git wrote, with its label (``<<<<<<< Updated upstream``, ``|||||||
    base``, ``>>>>>>> Stashed changes``), outside a fenced code block, counts alone too:
    the person is resolving it, one marker line deleted and the file saved (an editor's
    autosave), the others still to go; it was rewritten then, under their editor, its
    lines moved around the markers left. A bare ``=======`` (a Setext heading) does not."""
    if not any(m in text for m in ("<<<<<<<", "|||||||", ">>>>>>>")):
        return None
    conflicts, stray = _scan(split_lines(text))
    starts = sorted({c.start for c in conflicts} | set(stray))
    if not starts:
        return None
    lines = [str(n) for n in starts[:_SHOWN]]
    more = len(starts) - _SHOWN
    where = ", ".join(lines) + (f" and {more} more" if more > 0 else "")
    return (
        f"it holds git's conflict markers (line{'s' if len(starts) > 1 else ''} {where}): "
        "keep either side's lines or both, delete the marker lines and save; memvault "
        "brings it up to date then"
    )


class _Fences:
    """Whether a line is inside a fenced code block (fence lines included), line by line."""

    def __init__(self) -> None:
        self.open: tuple[str, int] | None = None  # (fence character, length)

    def inside(self, line: str) -> bool:
        m = _FENCE.fullmatch(line)
        if self.open is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                self.open = (m.group(1)[0], len(m.group(1)))
                return True
            return False
        char, length = self.open
        if m and m.group(1)[0] == char and len(m.group(1)) >= length and not m.group(2).strip():
            self.open = None
        return True


def _scan(lines: Sequence[str]) -> tuple[tuple[Conflict, ...], tuple[int, ...]]:
    """The conflicts of ``lines``, and the 1-based lines of git's labelled marker lines
    (``_LABELLED``) outside them and outside fenced code: what is left of one."""
    found: list[Conflict] = []
    stray: list[int] = []
    fences = _Fences()
    before: tuple[str, int] | None = None  # the fence state where the open conflict began
    start = base = separator = 0  # 1-based lines of the open conflict's markers (0: none)
    for i, raw in enumerate(lines, 1):
        line = raw.rstrip(" \t")
        in_code = fences.inside(raw)  # kept up to date inside a conflict too
        if start:
            if _OPEN.fullmatch(line):
                stray += _labelled(lines, start, base)  # the one before never closed
                start, base, separator = i, 0, 0  # this opens
            elif _BASE.fullmatch(line) and not base and not separator:
                base = i
            elif _SEPARATOR.fullmatch(line) and not separator:
                separator = i
            elif _CLOSE.fullmatch(line) and separator:
                found.append(Conflict(start, base or None, separator, i))
                fences.open = before  # each side is an alternative to what came before
                start = base = separator = 0
            elif _CLOSE.fullmatch(line):
                stray += _labelled(lines, start, base, i)
                start = base = 0  # closed before its separator: not git's
            continue
        if in_code:
            continue
        if _OPEN.fullmatch(line):
            start, base, separator, before = i, 0, 0, fences.open
        elif _LABELLED.fullmatch(line):
            stray.append(i)
    if start:
        stray += _labelled(lines, start, base)  # opened, never closed
    return tuple(found), tuple(stray)


def _labelled(lines: Sequence[str], *at: int) -> list[int]:
    """Those of the 1-based lines ``at`` (0: none) that are git's labelled marker lines."""
    return [n for n in at if n and _LABELLED.fullmatch(lines[n - 1].rstrip(" \t\r\n"))]
