"""A note grown long: where that starts, and how it is said.

An agent appending to one note every turn grows it until a write is refused
(``vault.max_note_bytes``, 2 MB by default: ~25,000 lines of a log) or, written
otherwise (Claude Code writes its topic files itself), until only its head is indexed
and what it appends is never found. Long before, an agent reads it only in parts (a
memory-tool view stops at 40,000 characters) and every append costs a parse of the
whole note. So a note past a quarter of the cap is named, to the agent in the answer
to its write and to the person in ``memvault status``, while there is room to split it.
"""

from __future__ import annotations

from memvault.core.memory_names import suggested
from memvault.core.text import line_count

LONG_SHARE = 4  # a note past max_note_bytes // LONG_SHARE is long


def long_from(cap: int) -> int:
    """The size in bytes past which a note is long, for a cap of ``cap`` bytes."""
    return cap // LONG_SHARE


def is_long(size: int, cap: int) -> bool:
    return size > long_from(cap)


def megabytes(size: int) -> str:
    """1,048,576 -> "1.0 MB"; below 100 KB in KB ("52 KB")."""
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{max(1, round(size / 1e3))} KB"


def grown_said(path: str, size: int, lines: int, cap: int) -> str:
    """What the memory tool adds to its answer to a write that leaves ``path`` long."""
    stem = path[:-3] if path.endswith(".md") else path
    folder, _, name = stem.rpartition("/")
    # the name a new note may have (``memory_names.suggested``): a person's Pl<U+200B>an.md
    # gave Pl<U+200B>an-2.md, which the memory tool then refused to create
    after = (f"{folder}/" if folder else "") + suggested(f"{name}-2.md")
    if size > cap:  # (an edit that shortens a note past the cap is taken)
        return (
            f"\nNote: {path} is {lines:,} lines ({megabytes(size)}), past the "
            f"{megabytes(cap)} a note may be (vault.max_note_bytes): only its first "
            f"{megabytes(cap)} is indexed, a write that makes it bigger is refused, and one "
            "that makes it smaller is taken: shorten it, moving what it holds into notes by "
            "topic."
        )
    return (
        f"\nNote: {path} is now {lines:,} lines ({megabytes(size)}). A view shows it in "
        f"parts, and a write that makes it bigger than {megabytes(cap)} "
        "(vault.max_note_bytes) is refused: write what comes next in a new note "
        f"(by topic, or by period: {after}), and keep this one for what it holds."
    )


def long_said(path: str, size: int, lines: int | None, cap: int) -> str:
    """One long note as ``memvault status`` names it."""
    counted = f"{lines:,} lines, " if lines else ""
    cut = f", only the first {megabytes(cap)} indexed" if size > cap else ""
    return f"{path} ({counted}{megabytes(size)}{cut})"


def write_grown_said(path: str, title: str, size: int, lines: int, cap: int) -> str:
    """What MCP's memory_write adds to its answer (``note``) when ``path`` is now long."""
    return (
        f"{path} is now {lines:,} lines ({megabytes(size)}): memory_get with `lines` or "
        f"`heading` reads a part of it, and a write that makes it bigger than "
        f"{megabytes(cap)} (vault.max_note_bytes) is refused. Write what comes next in a "
        f'new note (by topic, or by period: title "{title} 2"), and keep this one for '
        "what it holds."
    )


def add_grown_said(path: str, title: str, size: int, lines: int, cap: int) -> str:
    """What ``add`` adds to its answer (``note``: CLI ``--json``, HTTP, ``WriteResult``;
    the CLI prints it as ``note: ...``) when ``path`` is now long: as MCP's, its read of
    a part said for every door (``memvault get --lines``, ``GET /notes/..?lines=``)."""
    return (
        f"{path} is now {lines:,} lines ({megabytes(size)}): `get` with a line range "
        f"(--lines) or a heading (--heading) reads a part of it, and a write that makes it "
        f"bigger than {megabytes(cap)} (vault.max_note_bytes) is refused. Write what comes "
        f'next in a new note (by topic, or by period: title "{title} 2"), and keep this one '
        "for what it holds."
    )


def write_said(path: str, title: str, text: str, cap: int) -> str | None:
    """``add_grown_said`` for a note whose text is now ``text``, None while it is short."""
    size = len(text.encode("utf-8"))
    return add_grown_said(path, title, size, line_count(text), cap) if is_long(size, cap) else None
