"""Claude's memory tool (tool type ``memory_20250818``) over a vault: the pure part.

The Messages API sends commands (``view``, ``create``, ``str_replace``, ``insert``,
``delete``, ``rename``) on paths under ``/memories``; the application answers with
text. This module holds everything about those answers that needs no disk: the
path prefix, the edits (one exact match replaced, a line inserted), the numbered
views, the refusal of an edit inside a section memvault writes (the bounded listings
are ``core.memory_views``). Texts follow the wording of the SDK's reference
implementation (``anthropic.lib.tools.BetaLocalFilesystemMemoryTool``) wherever it
has one: models are trained on it. ``engine.memory_tool`` does the I/O.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from memvault.core.compose import not_text
from memvault.core.memory_md import MarkerError, parse_blocks
from memvault.core.memory_names import (
    closed,
    invisible,
    kept_name,
    shows_unseen,
    spelt,
    suggested,
    unportable,
    unportable_refusal,
    untrimmed_note,
)
from memvault.core.wikilinks import Resolution

ROOT = "/memories"
LINE_NUMBER_WIDTH = 6  # the reference's width (len("999999"))
MAX_LINES = 999_999


class Refusal(ValueError):
    """A command refused; its text is the tool's error answer (nothing was changed)."""


# -- paths --------------------------------------------------------------------------------


def memory_rel(path: str) -> str:
    """The vault-relative part of a ``/memories`` path ('' for ``/memories`` itself),
    its ``.``, ``..``, doubled and trailing slashes resolved as the reference tool
    resolves them (``/memories/a/../notes.md`` is ``notes.md``); refused when the path
    leaves ``/memories``. It is validated as a vault path by the caller."""
    if not isinstance(path, str) or not (path == ROOT or path.startswith(ROOT + "/")):
        raise Refusal(f"Path must start with {ROOT}, got: {path}")
    resolved = posixpath.normpath(path)
    if resolved != ROOT and not resolved.startswith(ROOT + "/"):
        raise Refusal(f"Path {path} would escape {ROOT} directory")
    return resolved[len(ROOT) :].lstrip("/")


def stepped_out_of(path: str) -> list[str]:
    """The folders (vault-relative) a ``..`` of ``path`` steps back out of: where one is
    a symlink, the reference (which resolves the link first) and a reading of the
    path as written would name different places."""
    out: list[str] = []
    stack: list[str] = []
    for part in path[len(ROOT) :].split("/"):
        if part in ("", "."):
            continue
        if part != "..":
            stack.append(part)
        elif stack:
            out.append("/".join(stack))
            stack.pop()
    return out


def shown(rel: str) -> str:
    return f"{ROOT}/{rel}" if rel else ROOT


def format_size(size: int) -> str:
    """4.2K, 12M: the reference's sizes."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((size.bit_length() - 1) // 10, len(units) - 1)
    value = size / (1024**i)
    return f"{int(value)}{units[i]}" if value == int(value) else f"{value:.1f}{units[i]}"


def check_text(name: str, value: str) -> None:
    """NUL and lone surrogates are not text: a note holding them is lost to every editor."""
    i = not_text(value)
    if i is None:
        return
    if value[i] == "\x00":
        raise Refusal(f"The `{name}` parameter holds a NUL character (at {i}): it is not text")
    raise Refusal(
        f"The `{name}` parameter holds a lone surrogate (U+{ord(value[i]):04X} at {i}): "
        "it is not text"
    )


def dangling(
    linking: Mapping[str, Sequence[tuple[str, str]]],
    resolve: Callable[[str, str], Resolution] | None,
    restore: str,
) -> str:
    """What a delete left of the links that led to what it deleted (``linking``: the
    notes holding them, and their (target, kind)), where each leads now
    (``resolve(target, source)``: nowhere, or another note of that name): lines added
    to the answer, so the agent can mend them; none when no link led there."""
    if not linking or resolve is None:
        return ""
    nowhere: list[str] = []
    elsewhere: list[str] = []
    for source, targets in linking.items():
        for target, kind in targets:
            now = resolve(target, source)
            if now.verdict in ("resolved", "alias") and now.path:
                link = f"[[{target}]]" if kind == "wiki" else f"({target})"
                elsewhere.append(f"{link} in {shown(source)} -> {shown(now.path)}")
            elif shown(source) not in nowhere:
                nowhere.append(shown(source))
    said = ""
    if nowhere:
        more = f" and {len(nowhere) - 10} more" if len(nowhere) > 10 else ""
        said += (
            f"\nLinks to it now lead nowhere in {len(nowhere)} "
            f"note{'s' if len(nowhere) > 1 else ''}: {', '.join(nowhere[:10])}{more} "
            f"(edit them, or restore it from {restore})"
        )
    if elsewhere:
        more = f"; and {len(elsewhere) - 10} more" if len(elsewhere) > 10 else ""
        said += f"\nLinks to it now lead to another note of that name: {'; '.join(elsewhere[:10])}{more}"
    return said


OTHER_CASE = (
    "names differing only in case are one name on macOS and Windows, and to Obsidian's links"
)


def other_case_there(other: str) -> str:
    """Added to "does not exist": the note or folder there in another case."""
    return f" ({shown(other)} is there: a path names a note in its exact case)"


def spaced_there(other: str) -> str:
    """Added to "does not exist": the note or folder there whose name has a space or an
    invisible character at its start or end (``kept_name``), or one a person cannot see
    inside it (``hidden_at``: then spelt out, ``spelt``, after what ends the reach of its
    bidi controls, ``closed``, so that the spelling reads in its order)."""
    parts = other.split("/")
    note = [i == len(parts) - 1 for i in range(len(parts))]
    if all(
        suggested(p, note=n) == kept_name(p, note=n) and not shows_unseen(kept_name(p, note=n))
        for p, n in zip(parts, note, strict=True)
    ):
        return (
            f" ({shown(other)} is there: its name holds a space or an invisible character "
            "at its start or end, which a path gives as the name is)"
        )
    return (
        f" ({shown(other)} {closed(other)}is there, spelt {spelt(shown(other))}: its name "
        "holds a character a person cannot see or tell from a space, which a path gives as the "
        "name is)"
    )


def look_alike_refusal(path: str, other: str) -> str:
    """Why a folder is not made at ``path``: one named alike to a person is there,
    ``other`` (a no-break space where the path has a space, an invisible character)."""
    return (
        f"Nothing was changed: {path} is {shown(other)} {closed(other)}in this vault's "
        f"spelling (spelt {spelt(shown(other))}: a folder a person cannot tell apart from it "
        f"would be made beside it); give {shown(other)}"
    )


def other_case_refusal(path: str, other: str, there: bool, destination: bool) -> str:
    """Why a note or folder is not made at ``path``: the vault spells it ``other``
    (``there``: a file or folder of that name is; else only its folder)."""
    if there:
        start = "The destination" if destination else "File"
        return (
            f"{start} {path} already exists as {shown(other)} ({OTHER_CASE}): view or edit "
            f"{shown(other)}"
        )
    return (
        f"Nothing was changed: {path} is {shown(other)} in this vault's spelling "
        f"({OTHER_CASE}); give {shown(other)}"
    )


# -- views ----------------------------------------------------------------------------------


VIEW_CHARS = 40_000  # a note's view at most (~10,000 tokens), then how to read on


def numbered(text: str, path: str, view_range: Sequence[object] | None) -> str:
    """A file's lines, numbered: all of them, or ``view_range`` read as the reference
    tool reads it. Only a list of two is a range (any other length shows the whole
    file); ``[start, end]``: from line ``max(start, 1)`` to ``end`` (-1 or null: the
    end of the file; another negative counts back from it, 0 none), so a range past
    the end or reversed shows no lines. Anything else in it is refused (the reference
    fails there with a Python ``TypeError``). Past ``VIEW_CHARS`` the view stops at a
    line's end and says which ``view_range`` shows the next lines (the reference gives
    a 50,000-line note whole, and a model's context has no room for it)."""
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        raise Refusal(f"File {path} exceeds maximum line limit of 999,999 lines.")
    start = 1
    shown_lines = lines
    if view_range is not None and len(view_range) == 2:
        first, last = view_range
        if not (whole(first) and (last is None or whole(last))):
            raise Refusal(
                f"Invalid `view_range`: {list(view_range)}. It should be two whole numbers, "
                "[start_line, end_line] (end_line -1: to the end of the file)."
            )
        begin = max(1, first) - 1
        shown_lines = lines[begin : None if last == -1 else last]
        start = begin + 1
    out: list[str] = []
    size = 0
    for i, line in enumerate(shown_lines):
        row = f"{str(i + start).rjust(LINE_NUMBER_WIDTH)}\t{line}"
        if size + len(row) > VIEW_CHARS:  # a view is read into a model's context
            if not out:  # one line past the bound by itself: its start
                out.append(row[:VIEW_CHARS] + " …")
            last = start + len(out) - 1
            out.append(
                f"(… lines {start}-{last} of {len(lines)} shown: a view shows "
                f"{VIEW_CHARS:,} characters at most; view_range [{last + 1}, -1] shows "
                "the next)"
            )
            break
        out.append(row)
        size += len(row) + 1
    body = "\n".join(out)
    return f"Here's the content of {path} with line numbers:\n{body}"


def whole(value: object) -> TypeGuard[int]:
    """A whole number as the tool takes one (not a bool, which Python counts as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


# -- edits ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Section:
    """A section memvault writes (MEMORY.md's, a folder note's): 1-based marker lines."""

    name: str
    begin: int
    end: int


def sections(text: str) -> list[Section]:
    """The managed sections of a note; none when its markers do not pair up (memvault
    leaves such a file alone, so the agent may mend it)."""
    try:
        blocks = parse_blocks(text.split("\n"))
    except MarkerError:
        return []
    return [Section(b.name, b.begin + 1, b.end + 1) for b in blocks]


def replace_once(text: str, old: str, new: str, path: str) -> tuple[str, int]:
    """``text`` with the one occurrence of ``old`` replaced; and the 0-based line the
    change starts on. Zero or several occurrences: refused, in the reference's words."""
    if not old:
        raise Refusal(
            f"No replacement was performed, old_str is empty: give the text to replace in {path}."
        )
    count = text.count(old)
    if count == 0:
        raise Refusal(
            f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
        )
    if count > 1:
        lines, found = occurrence_lines(text, old)
        more = f" (the first {len(lines)} of {found} occurrences)" if found > len(lines) else ""
        raise Refusal(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
            f"{', '.join(map(str, lines))}{more}. Please ensure it is unique"
        )
    pos = text.find(old)
    return text[:pos] + new + text[pos + len(old) :], text[:pos].count("\n")


MATCHES_SAID = 100  # the line numbers a refusal of several occurrences lists at most


def occurrence_lines(text: str, old: str) -> tuple[list[int], int]:
    """The 1-based line of each occurrence of ``old`` (overlapping ones too, as the
    reference finds them), the first ``MATCHES_SAID``, and how many there are: in one
    pass (the reference counts the lines before each one again from the start, minutes
    on a 2 MB note of a common word, and lists a million numbers). Where occurrences
    overlap (``old`` repeats itself: ``aa`` in ``aaaa``), the next is ``old``'s period
    on when the text goes on repeating it, found by comparing that period's characters,
    not by searching for ``old`` again at each one (``old`` of 10,000 ``a`` in a note of
    a million: 76 s before)."""
    lines: list[int] = []
    found, line, last, period = 0, 1, 0, len(old)
    pos = text.find(old)
    while pos != -1:
        found += 1
        if len(lines) < MATCHES_SAID:
            line += text.count("\n", last, pos)
            last = pos
            lines.append(line)
        if period < len(old) and text.startswith(old[-period:], pos + len(old)):
            pos += period  # (no occurrence starts nearer: each distance between two is a period)
            continue
        following = text.find(old, pos + 1)
        if period == len(old) and following != -1 and following - pos < len(old):
            period = _period(old)  # (they overlap: old repeats itself)
        pos = following
    return lines, found


def _period(s: str) -> int:
    """The smallest ``p`` with ``s[i] == s[i + p]`` for every ``i`` (``len(s)`` if none
    shorter): the longest border's complement (Knuth-Morris-Pratt's failure function)."""
    border = [0] * len(s)
    k = 0
    for i in range(1, len(s)):
        while k and s[i] != s[k]:
            k = border[k - 1]
        if s[i] == s[k]:
            k += 1
        border[i] = k
    return len(s) - (border[-1] if s else 0)


def line_ends(text: str, s: str) -> str:
    """``s`` with the line ends of ``text`` when they are all CRLF (a note saved on
    Windows, or checked out there with core.autocrlf), else as it is."""
    if "\r\n" not in text or text.count("\n") != text.count("\r\n"):
        return s
    return s.replace("\r\n", "\n").replace("\n", "\r\n")


def as_written(text: str, old: str) -> str:
    """``old`` as ``text`` holds it: as given, else in its CRLF line ends. A view shows
    a CRLF note's lines, and the model copies them with ``\n`` between: verbatim, they
    are never found (the reference's "did not appear verbatim", however often tried)."""
    if old in text:
        return old
    crlf = line_ends(text, old)
    return crlf if crlf in text else old


def match_lines(text: str, old: str) -> tuple[int, int]:
    """1-based first and last line of the (one) occurrence of ``old``."""
    pos = text.find(old)
    first = text[:pos].count("\n") + 1
    return first, first + old.count("\n")


def snippet(text: str, line: int) -> str:
    """The reference's answer to a replacement: two lines either side, numbered."""
    lines = text.split("\n")
    start, end = max(0, line - 2), min(len(lines), line + 3)
    body = "\n".join(
        f"{str(n).rjust(LINE_NUMBER_WIDTH)}\t{lines[n - 1]}" for n in range(start + 1, end + 1)
    )
    return (
        "The memory file has been edited. Here is the snippet showing the change "
        f"(with line numbers):\n{body}"
    )


def insert_at(text: str, line: int, insert: str) -> str:
    """``insert`` as new lines after line ``line`` (0: at the top), as the reference does."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if isinstance(line, bool) or not isinstance(line, int) or line < 0 or line > len(lines):
        raise Refusal(
            f"Invalid `insert_line` parameter: {line}. It should be within the range "
            f"[0, {len(lines)}]."
        )
    lines.insert(line, insert.rstrip("\n"))
    out = "\n".join(lines)
    return out if out.endswith("\n") else out + "\n"


def line_count(text: str) -> int:
    lines = text.split("\n")
    return len(lines) - 1 if lines[-1] == "" else len(lines)


def unpaired(before: str, after: str, path: str, inserting: bool) -> None:
    """Refused: an edit that leaves the markers of a file memvault keeps unpaired (a
    stray ``<!-- memvault:begin people -->`` typed outside the sections). They paired
    before; after it memvault would leave the file alone, and every note made since
    would go unlisted while the answers said it was done."""
    try:
        parse_blocks(before.split("\n"))
    except MarkerError:
        return  # broken already: the agent may be mending it
    try:
        parse_blocks(after.split("\n"))
    except MarkerError as exc:
        start = "Text was not inserted" if inserting else "No replacement was performed"
        raise Refusal(
            f"{start}: {path} would be left with memvault's section markers unpaired ({exc}), "
            "and memvault would stop keeping it. Write no `<!-- memvault:begin ... -->` or "
            "`<!-- memvault:end ... -->` line of your own; other text outside the sections "
            "is yours to edit."
        ) from None


def touched(spans: Sequence[Section], first: int, last: int) -> Section | None:
    """The managed section lines ``first``-``last`` (1-based) reach into, if any."""
    return next((s for s in spans if first <= s.end and last >= s.begin), None)


def inside(spans: Sequence[Section], after: int) -> Section | None:
    """The managed section a line inserted after line ``after`` would land in."""
    return next((s for s in spans if s.begin <= after < s.end), None)


def managed_refusal(
    path: str, section: Section, notes: Sequence[str], folder: str | None, inserting: bool
) -> str:
    """Why an edit inside a managed section is refused, naming the note to change."""
    where = f"lines {section.begin}-{section.end}"
    start = "Text was not inserted" if inserting else "No replacement was performed"
    if notes:
        instead = (
            "Change the note instead and this line follows: "
            + ", ".join(shown(n) for n in notes)
            + " (its title or the `summary:` line of its frontmatter)"
        )
    elif folder:
        instead = (
            f"Create or change a note in {shown(folder)}/ instead: memvault lists it here itself"
        )
    else:
        instead = "Change the notes it lists instead: memvault lists them here itself"
    edit = (
        f"Insert above line {section.begin} or below line {section.end}, outside it, for text of your own"
        if inserting
        else "Text outside the markers is yours to edit"
    )
    return (
        f"{start}: {where} of {path} are memvault's `{section.name}` section (between "
        f"`<!-- memvault:begin {section.name} -->` and `<!-- memvault:end {section.name} -->`), "
        f"written from the notes themselves, so an edit there would be undone. {instead}. {edit}."
    )


__all__ = [
    "ROOT",
    "Refusal",
    "Section",
    "as_written",
    "check_text",
    "format_size",
    "insert_at",
    "invisible",
    "kept_name",
    "line_ends",
    "look_alike_refusal",
    "managed_refusal",
    "match_lines",
    "memory_rel",
    "numbered",
    "occurrence_lines",
    "other_case_refusal",
    "other_case_there",
    "replace_once",
    "sections",
    "shown",
    "snippet",
    "spaced_there",
    "spelt",
    "stepped_out_of",
    "suggested",
    "touched",
    "unpaired",
    "unportable",
    "unportable_refusal",
    "untrimmed_note",
    "whole",
]
