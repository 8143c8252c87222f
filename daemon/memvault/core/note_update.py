"""What an agent's update does to a note a person may have written (pure).

An update keeps every word already in the note unless the agent names the words it
replaces (issue 21 item 1):

- ``append_body``: the new text goes at the end of the note (nothing is replaced);
  text already there, as it is and as whole lines, is not added twice (an agent
  retrying); a part of a line ("Budget: 10" in "Budget: 100") is no copy of it.
- ``replace_section``: the text under one heading (up to the next heading of the same
  or a higher level) is replaced; the heading is added at the end when there is none.
  Every other line stays byte for byte.

A whole note is replaced only by a write that holds the note's hash (a
compare-and-swap: ``Writer`` checks it), never by ``update`` alone.
"""

from __future__ import annotations

from memvault.core.anchors import heading_key, outline
from memvault.core.text import newline_of


class NoSuchHeading(ValueError):
    """The named section's heading appears more than once: which one is meant is unknown."""


def _clean(body: str, nl: str) -> str:
    return body.replace("\r\n", "\n").strip("\n").replace("\n", nl)


def append_body(text: str, body: str) -> str:
    """``text`` with ``body`` added at its end, after a blank line."""
    nl = newline_of(text)
    addition = _clean(body, nl)
    if not addition.strip() or _holds_lines(text, addition, nl):
        return text
    head = text.rstrip("\r\n")
    return f"{head}{nl}{nl}{addition}{nl}"


def _holds_lines(text: str, addition: str, nl: str) -> bool:
    """Whether ``text`` holds ``addition`` as whole lines (an agent's retry), not a part
    of a line: "Budget: 10" is not in "Budget: 100", and must be written."""
    return f"{nl}{addition}{nl}" in f"{nl}{text}{nl}"


def replace_section(text: str, heading: str, body: str, level: int = 2) -> str:
    """``text`` with the lines under ``heading`` replaced by ``body`` (a new ``##``
    heading at the end when the note has none by that name)."""
    nl = newline_of(text)
    name = " ".join(heading.strip().lstrip("#").split())
    if not name:
        raise ValueError("a section needs a heading")
    addition = _clean(body, nl)
    found = [h for h in outline(text).headings if heading_key(h.text) == heading_key(name)]
    if len(found) > 1:
        raise NoSuchHeading(
            f"the note has {len(found)} headings '{name}' (lines "
            f"{', '.join(str(h.line) for h in found)}): name one that appears once"
        )
    lines = text.split("\n")
    if not found:
        head = text.rstrip("\r\n")
        sep = f"{nl}{nl}" if head else ""
        return f"{head}{sep}{'#' * level} {name}{nl}{nl}{addition}{nl}"
    target = found[0]
    after = [h for h in outline(text).headings if h.line > target.line and h.level <= target.level]
    end = after[0].line - 1 if after else len(lines)  # 0-based index of the next heading
    while end > target.line and not lines[end - 1].strip() and after:
        end -= 1  # the blank lines before the next heading stay
    cr = "\r" if nl == "\r\n" else ""
    block = [cr, addition + cr] if addition else [cr]
    if after:
        return "\n".join([*lines[: target.line], *block, *lines[end:]])
    return "\n".join([*lines[: target.line], *block, ""])


__all__ = ["NoSuchHeading", "append_body", "replace_section"]
