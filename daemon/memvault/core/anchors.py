"""Heading and block anchors — ``[[note#Heading]]``, ``[[note#A#B]]``, ``[[note#^id]]`` —
matched the way Obsidian matches them (sources in docs/LINKS.md).

Headings: Obsidian compares a link's heading and a note's heading after
``stripHeading`` on both sides, then lower case: every character of
``!"#$%&()*+,.:;<=>?@^`{|}~/[]\\`` and line breaks becomes a space, runs of
whitespace become one space, the ends are trimmed. So ``[[Functions#hasTag]]``
opens ``## `hasTag()` `` and ``#How large can each remote vault be`` opens
``### How large can each remote vault be?``. Several headings (``#A#B``) are
walked in order: each must come after the previous match and be deeper than it
(not necessarily its direct child); empty parts (``##A``) are skipped; the
first heading that fits wins.

Blocks: ``^id`` (letters, digits and ``-``) ending a paragraph or a list item,
after a space, at the start of a line (an id on its own line names the block
before it: a table, a list, a quote, an embed) or right after an embed's
``]]``. Ids compare case-insensitively.

Headings and ids inside code, math and HTML comments do not count; headings
inside quotes, callouts and list items do.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from memvault.core.markup import frontmatter_end, mask_inert, may_be_inert
from memvault.core.text import JS_SPACES, split_lines

# JavaScript's \s and trim(): what Obsidian's regexes collapse and trim.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_SPACES = re.compile(f"[{_JS_SPACE}]+")
_STRIP = re.compile(r"[!\"#$%&()*+,.:;<=>?@^`{|}~/\[\]\\\r\n]")

_QUOTE = re.compile(r"(?: {0,3}>[ \t]?)+")
_MARKERS = re.compile(r" {0,3}(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)+")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_BLOCK_ID = re.compile(r"(?:^|[ \t]|(?<=\]\]))\^([A-Za-z0-9-]+)[ \t]*$")
_OPENS_BLOCK = re.compile(
    r" {0,3}(?:[-+*][ \t]|\d{1,9}[.)][ \t]|#{1,6}(?:[ \t]|$)|```|~~~|\$\$|<!--)"
)

AnchorKind = Literal["heading", "block"]
# a line's block id as the embedding model is spared it (``unmarked``): at the line's end
_LINE_BLOCK_ID = re.compile(r"(?:^|[ \t]+|(?<=\]\]))\^[A-Za-z0-9-]+[ \t]*(?=\r?$)", re.MULTILINE)


def unmarked(text: str) -> str:
    """``text`` with the block id ending a line (``^abc123``, ``^iWFQyN0b``) dropped, for
    the embedding model: Obsidian shows no block id in its reading view, and to the
    model it is a random word of four to eight word pieces (an Excalidraw drawing gives
    each of its text elements one: 89 word pieces of its labels were 21 of words).
    A ``^word`` ending a line of code (a fenced block, ``~~~`` or backticks of any
    length; an inline code span; indented code), math or an HTML comment is no block id
    (the outline reads none there either: ``mask_inert``) and is kept: Obsidian shows it.
    Never longer than ``text``."""
    if "^" not in text:
        return text
    if not may_be_inert(text):
        return _LINE_BLOCK_ID.sub("", text)
    masked = mask_inert(text)  # same length: an offset in it is one in ``text``

    def dropped(m: re.Match[str]) -> str:  # an id the mask kept is prose: dropped
        return "" if masked[m.start() + m.group().index("^")] == "^" else m.group()

    return _LINE_BLOCK_ID.sub(dropped, text)


def strip_heading(text: str) -> str:
    """Obsidian's ``stripHeading``: how a heading and a link's heading are compared."""
    return _SPACES.sub(" ", _STRIP.sub(" ", text)).strip(JS_SPACES)


_LINK_BREAKERS = re.compile(r"[#|\[\]^%\r\n]+")
_RUN_OF_SPACES = re.compile(r" {2,}")


def link_heading(text: str) -> str:
    """A heading as a link's anchor can hold it: the characters that would end or split
    the link (``#`` a nested heading, ``|`` an alias, ``]]``, ``^`` a block, ``%%`` a
    comment) as one space. The anchor still finds the heading: Obsidian compares a
    link's heading with the note's after ``stripHeading``, which makes them spaces."""
    if not _LINK_BREAKERS.search(text):
        return text
    return _RUN_OF_SPACES.sub(" ", _LINK_BREAKERS.sub(" ", text)).strip(" ")


def heading_key(text: str) -> str:
    """A heading (or a link's heading) as Obsidian compares it: stripped, lower case."""
    return strip_heading(text).lower()


@dataclass(frozen=True, slots=True)
class OutlineHeading:
    level: int
    text: str  # as written, closing #s and surrounding spaces removed
    line: int  # 1-based line in the file


@dataclass(frozen=True, slots=True)
class Block:
    id: str  # as written
    start: int  # 1-based first and last line of the block it names
    end: int


@dataclass(frozen=True, slots=True)
class Outline:
    """What anchors in a note can point at."""

    headings: tuple[OutlineHeading, ...]
    blocks: Mapping[str, Block]  # by lower-case id
    lines: int  # the file's line count (a final line break ends the last line)


@dataclass(frozen=True, slots=True)
class Section:
    """Where an anchor leads: 1-based first and last line, inclusive."""

    kind: AnchorKind
    start: int
    end: int
    heading: str | None = None  # the heading as written (kind == "heading")
    block: str | None = None  # the block id as written (kind == "block")


def outline(text: str, masked: str | None = None) -> Outline:
    """The headings and block ids of a note (text decoded, BOM removed).

    ``masked`` is ``markup.mask_inert(text)`` when the caller has it already."""
    lines = split_lines(text)
    masked_lines = split_lines(mask_inert(text) if masked is None else masked)
    first = text[: frontmatter_end(text)].count("\n")  # lines of frontmatter to skip
    contents: list[str | None] = []  # each line without quote prefix; None = inert
    for i, (line, mline) in enumerate(zip(lines, masked_lines, strict=True)):
        if i < first or not mline.strip():
            contents.append(None if i < first or line.strip() else "")
            continue
        quote = _QUOTE.match(mline)
        contents.append(mline[quote.end() :] if quote else mline)
    headings = _headings(lines, contents)
    blocks = _blocks(lines, contents, {h.line for h in headings})
    count = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
    return Outline(tuple(headings), blocks, count)


def _headings(lines: list[str], contents: list[str | None]) -> list[OutlineHeading]:
    out: list[OutlineHeading] = []
    for i, content in enumerate(contents):
        if not content:
            continue
        markers = _MARKERS.match(content)
        body = content[markers.end() :] if markers else content
        m = _ATX.match(body)
        if m:
            start = len(lines[i]) - len(content) + (markers.end() if markers else 0)
            raw = _ATX.match(lines[i][start:])
            text = (raw.group(2) or "").strip() if raw else ""
            out.append(OutlineHeading(len(m.group(1)), text, i + 1))
            continue
        setext = _SETEXT.match(content)
        if setext and i > 0 and _paragraph_line(contents, i - 1):
            top = i - 1
            while top > 0 and _paragraph_line(contents, top - 1):
                top -= 1
            text = "\n".join(lines[k].strip() for k in range(top, i))
            out.append(OutlineHeading(1 if setext.group(1)[0] == "=" else 2, text, top + 1))
    out.sort(key=lambda h: h.line)
    return out


def _paragraph_line(contents: list[str | None], i: int) -> bool:
    content = contents[i]
    return bool(
        content
        and content.strip()
        and not _OPENS_BLOCK.match(content)
        and not _SETEXT.match(content)
        and not content.lstrip().startswith("|")
    )


def _blocks(
    lines: list[str], contents: list[str | None], heading_lines: set[int]
) -> dict[str, Block]:
    blocks: dict[str, Block] = {}
    for i, content in enumerate(contents):
        if not content or (i + 1) in heading_lines:
            continue
        m = _BLOCK_ID.search(content)
        if not m or not _ends_paragraph(contents, i):
            continue
        start, end = _block_lines(contents, i, own_line=not content[: m.start()].strip())
        block_id = lines[i][len(lines[i]) - len(content) + m.start(1) :].split()[0]
        blocks.setdefault(block_id.lower(), Block(block_id, start + 1, end + 1))
    return blocks


def _ends_paragraph(contents: list[str | None], i: int) -> bool:
    if i + 1 >= len(contents):
        return True
    nxt = contents[i + 1]
    return not nxt or not nxt.strip() or bool(_OPENS_BLOCK.match(nxt))


def _block_lines(contents: list[str | None], i: int, own_line: bool) -> tuple[int, int]:
    """0-based first and last line of the block an id on line ``i`` names."""
    end = i
    if own_line:  # the id names the block before it, across blank lines
        k = i - 1
        while k >= 0 and contents[k] is not None and not contents[k].strip():  # type: ignore[union-attr]
            k -= 1
        if k < 0:
            return i, i
        if contents[k] is None:  # code, math or a comment: the whole inert run
            start = k
            while start > 0 and contents[start - 1] is None:
                start -= 1
            return start, i
        end = k
    if _MARKERS.match(contents[end] or ""):
        return end, i  # one list item
    start = end
    while start > 0 and contents[start - 1] and contents[start - 1].strip():  # type: ignore[union-attr]
        if _MARKERS.match(contents[start] or "") or _ATX.match(contents[start - 1] or ""):
            break
        start -= 1
    return start, i


def find_anchor(note: Outline, anchor: str) -> Section | None:
    """Where ``anchor`` (what follows the first ``#`` of a link) leads in the note, or None.

    Obsidian's ``resolveSubpath``: the anchor is split on ``#`` (empty parts
    dropped); ``^id`` names a block; otherwise the parts name headings, walked
    in order, each deeper than the one before.
    """
    parts = [p for p in anchor.split("#") if p]
    if not parts:
        return None
    if parts[0].startswith("^"):
        block = note.blocks.get(parts[0][1:].lower())
        return Section("block", block.start, block.end, block=block.id) if block else None
    wanted = [heading_key(p) for p in parts]
    matched, level = 0, 0
    for k, h in enumerate(note.headings):
        if h.level > level and heading_key(h.text) == wanted[matched]:
            matched, level = matched + 1, h.level
            if matched == len(wanted):
                end = next((n.line - 1 for n in note.headings[k + 1 :] if n.level <= h.level), None)
                return Section("heading", h.line, end if end is not None else note.lines, h.text)
    return None


def anchor_matches(note: Outline, anchor: str | None) -> bool:
    """Whether a link's anchor finds its heading or block (no anchor, or an empty one, does).

    Only meaningful for links to markdown notes: ``image.png#outline`` or
    ``file.pdf#page=3`` are not headings. Footnote anchors (``#[^1]``) are not
    checked.
    """
    if anchor is None or not [p for p in anchor.split("#") if p]:
        return True
    if anchor.lstrip("#").startswith("[^"):
        return True
    return find_anchor(note, anchor) is not None
