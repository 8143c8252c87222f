"""What a note's frontmatter says it is about, and which of its lines say it (pure).

A note's description — its ``summary`` or ``description`` (what ``memvault add
--summary`` writes, what a person writes as the note's description), its
``aliases`` and its ``tags`` — lives in the frontmatter, which no chunk's text
holds. ``about_text`` is that description as text: the indexer searches it with
the note's first chunk (its keyword row; its embedded text, ``chunks.embed_texts``).
``describing_lines`` are the frontmatter lines that hold it: a note with nothing
in its body is searched by them, so a hit still quotes lines of the file.
"""

from __future__ import annotations

import re

from memvault.core.notes import Note
from memvault.core.text import split_lines

# Frontmatter fields that say what a note is about (in this order); ``title`` is
# searched on every chunk already (its own keyword column, the embedded header).
ABOUT_FIELDS = ("summary", "description", "aliases", "alias", "tags", "tag")
# A top-level YAML key at the start of a line: "summary:", 'tags' :, "my key":
_YAML_KEY = re.compile(
    r"""^(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#'"\-?:{}\[\],&*!|>%@`][^:\n]*?))[ \t]*:(?:[ \t]|$)"""
)


def about_text(note: Note) -> str:
    """What the note's frontmatter says it is about (``ABOUT_FIELDS``), one value a
    line: searched with its first chunk ('' when it says nothing)."""
    return "\n".join(w for name in ABOUT_FIELDS for w in _words(note.frontmatter.get(name)))


def _words(value: object) -> list[str]:
    """The text of a frontmatter value: a scalar, or the scalars of a list or mapping
    (the YAML loader bounds their depth: frontmatter_yaml)."""
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, (list, tuple)):
        return [w for v in value for w in _words(v)]
    if isinstance(value, dict):
        return [w for v in value.values() for w in _words(v)]
    text = " ".join(str(value).split())
    return [text] if text else []


def describing_lines(note: Note) -> list[tuple[int, int]]:
    """The runs of frontmatter lines (0-based in ``note.raw_frontmatter``, end
    exclusive) of the fields that describe the note: those of ``ABOUT_FIELDS`` that
    hold words, else ``title`` if it does. A field's lines are its key's line and
    the indented or ``-`` lines under it; a value is found only as a top-level key
    written at the start of a line (a flow mapping ``{summary: x}`` describes nothing)."""
    lines = split_lines(note.raw_frontmatter)
    fm = note.frontmatter
    wanted = {name for name in ABOUT_FIELDS if _words(fm.get(name))}
    if not wanted and _words(fm.get("title")):
        wanted = {"title"}
    marked = [False] * len(lines)
    field: str | None = None
    for i, line in enumerate(lines):
        key = _YAML_KEY.match(line)
        if key is not None:
            field = next(g for g in key.groups() if g is not None).strip()
        elif line[:1] not in ("", " ", "\t", "-", "\r"):
            field = None  # a comment or something this reading does not know
        marked[i] = field in wanted
    runs: list[tuple[int, int]] = []
    for i, on in enumerate(marked):
        if on and lines[i].strip():
            if runs and runs[-1][1] == i:
                runs[-1] = (runs[-1][0], i + 1)
            else:
                runs.append((i, i + 1))
        elif on and runs and runs[-1][1] == i:  # a blank line inside a block scalar
            runs[-1] = (runs[-1][0], i + 1)
    # a blank line taken into a run that then ended carries no text: give it back
    return [(a, _last_text(lines, a, b)) for a, b in runs]


def _last_text(lines: list[str], first: int, end: int) -> int:
    while end > first + 1 and not lines[end - 1].strip():
        end -= 1
    return end


__all__ = ["ABOUT_FIELDS", "about_text", "describing_lines"]
