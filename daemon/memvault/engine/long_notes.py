"""``get`` of a note longer than ``vault.max_note_bytes``: what is read, said as cut.

Only the first ``max_note_bytes`` of a note are read for the index; ``get`` used to
return that much as if it were the whole note (a 4 MB note: 38,680 of 80,006 lines, no
word; a 50 MB one-line note: ``# Huge``). Here the lines asked for are read from the
file, at most that many bytes of them, and ``NoteText.cut`` says where they stop and
how to read on (``--lines``, memory_get's ``lines``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memvault.core.anchors import find_anchor, outline
from memvault.core.results import NoteText
from memvault.core.text import split_lines
from memvault.errors import BadRequest, NoteNotFound

if TYPE_CHECKING:
    from memvault.vault.files import VaultFS


def section(text: str, wanted: str, path: str) -> tuple[int, int, str]:
    """The lines ``wanted`` leads to, matched as Obsidian matches a link's anchor
    (``anchors.find_anchor``): ``Heading``, ``#Heading``, ``A#B`` (nested), ``^block``."""
    found = find_anchor(outline(text), wanted)
    if found is None:
        what = "block" if wanted.lstrip("#").startswith("^") else "heading"
        raise NoteNotFound(f"{path} has no {what} {wanted!r}")
    return found.start, found.end, found.heading or f"^{found.block}"


def line_range(spec: str, total: int, path: str) -> tuple[int, int]:
    """The lines ``spec`` names (``10:20``, ``10:``, ``:20``, ``10-20``) of ``total``."""
    text = spec.strip()
    a_text, sep, b_text = text.partition(":")
    if not sep:
        a_text, sep, b_text = text.partition("-")
    try:
        a = int(a_text) if a_text.strip() else 1
        b = int(b_text) if sep and b_text.strip() else (a if not sep else total)
    except ValueError:
        raise BadRequest(f"lines must look like 10:20, 10: or :20, not {spec!r}") from None
    if a < 1 or (b < a and b_text.strip()):  # ``900:`` of 56 lines: past the end, below
        raise BadRequest(
            f"lines {spec!r}: the range must start at 1 or later and not run backwards"
        )
    if a > total:
        raise NoteNotFound(f"{path} has {total} lines; line {a} does not exist")
    return a, min(b, total)


def past_cap(
    fs: VaultFS, rel: str, title: str, lines: str | None, heading: str | None, head: str
) -> NoteText:
    """``get`` of a note over ``vault.max_note_bytes``: the lines asked for (all, or
    ``lines``), at most that many bytes of them, saying where they stop. A ``heading``
    is looked for in what was read (``head``); a section that runs into the cut says so."""
    cap = fs.max_note_bytes
    if heading:
        start, end, found = section(head, heading, rel)
        head_lines = split_lines(head)
        if head_lines and head_lines[-1] == "":
            head_lines.pop()
        text = "\n".join(head_lines[start - 1 : end])
        if end < len(head_lines) or lines:  # whole (a line range in it: not guessed)
            if lines:
                raise NoteNotFound(f"{rel}: --lines with --heading past the first {cap:,} bytes")
            return NoteText(rel, title, start, end, text, found)
        said = _cut_message(rel, end, None, cap)
        return NoteText(rel, title, start, end, text, found, said)
    total = fs.read_lines(rel, 1, 0, 0).total_lines
    a, b = line_range(lines, total, rel) if lines else (1, total)
    window = fs.read_lines(rel, a, b, cap)
    end = a + max(len(window.lines), 1) - 1
    cut: str | None = None
    if window.partial:  # that one line is longer than the cap: no read-on helps
        cut = (
            f"{rel}: line {end:,} of {total:,} alone is longer than vault.max_note_bytes "
            f"({cap:,} bytes): its first {cap:,} bytes are shown; raise "
            "vault.max_note_bytes to read it whole"
        )
    elif window.cut:
        cut = _cut_message(rel, end, total, cap)
    return NoteText(rel, title, a, end, "\n".join(window.lines), None, cut, total)


def _cut_message(rel: str, end: int, total: int | None, cap: int) -> str:
    """Where a ``get`` past ``vault.max_note_bytes`` stops, and how to read on."""
    of = f" of {total:,}" if total is not None else ""
    return (
        f"{rel} is longer than vault.max_note_bytes ({cap:,} bytes): the text is cut "
        f"after line {end:,}{of}; read on with --lines {end + 1}: (memory_get: lines)"
    )


__all__ = ["past_cap"]
