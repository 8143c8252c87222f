"""A MEMORY.md's own lines, those outside memvault's sections: a dump, or an index (pure).

Past what an agent loads (Claude Code: the first 200 lines or 25 KB), ``status`` and
``init`` name ``memvault migrate MEMORY.md`` when the lines past the budget are not
memvault's: a dump an agent grew, paragraphs and observations, which migrate splits into
notes by day, person, project and decision. An agent that keeps its own index there —
Claude Code's auto memory writes one line per topic file, ``- [Debugging](debugging.md)
— how we bisect flaky tests`` — was told the same, and migrate would have moved those
pointers, every one, into a single inbox note: nothing to split. ``is_index`` tells the
two apart: nearly every line of text a list item that starts with a link (a wikilink or
a markdown link) followed by at most a one-line hook.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

INDEX_SHARE = 0.8  # of the lines of text, those that are pointers, for an index
HOOK_CHARS = 200  # a pointer's hook after its link: one line an agent reads at a glance

# a list item (-, *, +, 1.) opening with a link, bold or not, then a separator and a hook
_POINTER = re.compile(
    r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\*\*|__)?"
    r"(?:\[\[(?P<name>[^\[\]|#\n]+)[^\[\]\n]*\]\]|\[[^\[\]\n]*\]\((?P<file>[^()\n]+)\))"
    r"(?:\*\*|__)?(?:[ \t]*(?:[-:|–—]+|\(|,)?[ \t]*(?P<hook>.*))?"
)
_NOT_TEXT = re.compile(r"[ \t]*(?:#{1,6}(?:[ \t]|$)|<!--.*-->[ \t]*$|(?:[-*_][ \t]*){3,}$)")


def pointer(line: str) -> str | None:
    """The note ``line`` points to when it is a line of an index: a list item that starts
    with a link and says at most a short hook after it; else None."""
    m = _POINTER.fullmatch(line.rstrip("\r\n"))
    if m is None or len((m.group("hook") or "").strip()) > HOOK_CHARS:
        return None
    return (m.group("name") or m.group("file")).strip().casefold()


def is_index(lines: Iterable[str]) -> bool:
    """Whether ``lines`` (a MEMORY.md's own, outside memvault's sections) are an index
    of links, not a dump: of the lines of text (blank lines, headings, comments and rules
    aside), at least ``INDEX_SHARE`` are pointers (``pointer``), and as many of those
    point to notes no other line does (an index names each note once; a dump's
    ``- [[Ana]] agreed to ...`` names the same people again and again)."""
    text = 0
    targets: list[str] = []
    for line in lines:
        if not line.strip() or _NOT_TEXT.match(line):
            continue
        text += 1
        if (target := pointer(line)) is not None:
            targets.append(target)
    share = INDEX_SHARE * len(targets)
    return text > 0 and len(targets) >= INDEX_SHARE * text and len(set(targets)) >= share


__all__ = ["HOOK_CHARS", "INDEX_SHARE", "is_index", "pointer"]
