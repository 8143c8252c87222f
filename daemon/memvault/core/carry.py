"""A relinked note's index rows carried over from its old ones, when that is exact.

A rename re-targets links in thousands of notes (``relink.relink_note``). Such a
note changes only inside those link targets, and the relink knows each one: its
offsets in the old text and its new raw target (``Relinked.spans``). Parsing and
chunking it again from scratch (the YAML, the masks, the chunker's token counts)
would give back the old rows with those bytes replaced, whenever the change is of
a kind that can move nothing else. ``carry`` says whether it is, and if so gives
the new chunk texts and links; otherwise None, and the caller indexes the note
from scratch. It is never a guess: each condition below is one the parse or the
chunker reads.

The change must be, for every span:

- made of characters no markup reads (word characters, spaces, ``.``, ``/``,
  ``-``; no newline) on both sides, so the masks of code, math and comments, the
  link patterns and the tag pattern find the same structure (a markdown link
  without angle brackets holds no space);
- in a link on one line, after the frontmatter (the YAML and what it gives: title,
  summary, tags, aliases, date), on no heading line (the heading path, the title),
  in a note with no template hint (``%%``) and no carriage return;
- invisible to the summary when the summary is the first paragraph's: a wikilink
  shows its alias, else its target's last name, which must stay the same;
- inside a chunk that is whole lines, whose text with its links' inner folders
  dropped (``wikilinks.unfiled_links``: what the chunker measures and the model
  embeds) is the same before and after: the embedded texts, their sha256 and the
  vectors stay;
- unable to move a cut: the chunker compares a paragraph's and a merged run's
  length in characters with ``max_tokens * MAX_CHARS_PER_TOKEN``; every run of
  paragraphs in a changed section must fall on the same side of it before and
  after (``chunks.unit_spans``).
"""

from __future__ import annotations

import bisect
import dataclasses
import posixpath
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.core.chunks import MAX_CHARS_PER_TOKEN, unit_spans
from memvault.core.notes import Heading, split_frontmatter
from memvault.core.text import split_lines
from memvault.core.wikilinks import Link, line_start_offsets, unfiled_links

_PLAIN = re.compile(r"[\w ./-]*")


@dataclass(frozen=True, slots=True)
class Carried:
    """What changes in a relinked note's rows: its text, its links (all of them, in
    order, with their new targets), and the new text of each chunk that changed (by
    its index in the chunks given; every other chunk is as it was)."""

    text: str
    links: tuple[Link, ...]
    chunk_texts: dict[int, str]


def apply_spans(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, new) span replaced (spans in order, not overlapping)."""
    pieces, pos = [], 0
    for start, end, new in spans:
        pieces += [text[pos:start], new]
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def carry(
    old_text: str,
    spans: Sequence[tuple[int, int, str]],
    links: Sequence[Link],
    headings: Sequence[tuple[int, str, int]],
    chunks: Sequence[tuple[int, int, str]],
    *,
    summary_from_frontmatter: bool,
    max_tokens: int,
) -> Carried | None:
    """The relinked note's new text, links and changed chunk texts, or None when the
    change is not one of the kinds above (the note is then parsed again).

    ``spans``: the relink's (target_start, target_end, new raw target), offsets in
    ``old_text``; ``links``: every link found in ``old_text``; ``headings`` (level,
    text, line) and ``chunks`` (line_start, line_end, text): the note's rows, which
    must be those of ``old_text``."""
    if not spans or "%%" in old_text or "\r" in old_text:
        return None
    spans = sorted(spans)
    _, _, body_line = split_frontmatter(old_text)
    line_starts = line_start_offsets(old_text)
    body_start = line_starts[body_line - 1] if body_line - 1 < len(line_starts) else len(old_text)
    by_start = {link.target_start: link for link in links}
    heading_lines = {line for _, _, line in headings}
    old_lines = split_lines(old_text)
    changed_lines: set[int] = set()  # 1-based
    new_links = {}
    for start, end, new in spans:
        link = by_start.get(start)
        if link is None or link.target_end != end or start < body_start:
            return None
        old = old_text[start:end]
        if not (_plain(old) and _plain(new)) or not new.strip():
            return None
        if link.kind == "markdown" and not link.angle and (" " in old or " " in new):
            return None
        if "\n" in old_text[link.start : link.end]:
            return None
        line = bisect.bisect_right(line_starts, start)
        if line in heading_lines or old_lines[line - 1].lstrip().startswith("#"):
            return None
        target = new.strip() if link.kind == "wiki" else unicodedata.normalize("NFC", new)
        if (
            not summary_from_frontmatter
            and link.kind == "wiki"
            and link.alias is None
            and posixpath.basename(old.strip()) != posixpath.basename(new.strip())
        ):
            return None  # the summary shows this link by its last name
        changed_lines.add(line)
        new_links[start] = dataclasses.replace(link, target=target)
    new_text = apply_spans(old_text, spans)
    new_lines = split_lines(new_text)
    if len(new_lines) != len(old_lines):
        return None
    texts: dict[int, str] = {}
    covered: set[int] = set()
    for i, (first, last, text) in enumerate(chunks):
        inside = {n for n in changed_lines if first <= n <= last}
        if not inside:
            continue
        if text != "\n".join(old_lines[first - 1 : last]):
            return None  # a piece of an oversize paragraph: where it is cut may move
        new_chunk = "\n".join(new_lines[first - 1 : last])
        if unfiled_links(new_chunk) != unfiled_links(text):
            return None  # what the model reads of it changes: embedded again
        texts[i] = new_chunk
        covered |= inside
    if covered != changed_lines:
        return None
    ranges = [(first, last) for first, last, _ in chunks]
    new_starts = line_start_offsets(new_text)
    starts = (line_starts, new_starts)
    if not _same_cuts(
        headings, body_line, (old_lines, new_lines), starts, changed_lines, ranges, max_tokens
    ):
        return None
    return Carried(
        new_text,
        tuple(new_links.get(link.target_start, link) for link in links),
        texts,
    )


def _plain(raw: str) -> bool:
    return _PLAIN.fullmatch(raw) is not None


def _same_cuts(
    headings: Sequence[tuple[int, str, int]],
    body_line: int,
    lines: tuple[list[str], list[str]],
    line_starts: tuple[list[int], list[int]],
    changed: set[int],
    chunks: Sequence[tuple[int, int]],
    max_tokens: int,
) -> bool:
    """Whether every length comparison the chunker makes in a changed section comes
    out the same for the new lines as for the old (the token counts are the same:
    the chunks' unfiled texts are). In such a section each paragraph must lie in one
    chunk (one the chunker split into pieces spans two: its cuts fall by length); then
    its units are its paragraphs, and the runs it compares are those from a chunk's
    first paragraph up to the next chunk's first, each with the cap on characters."""
    cap = max_tokens * MAX_CHARS_PER_TOKEN
    heads = [Heading(level, text, line) for level, text, line in headings]
    old_body, new_body = lines[0][body_line - 1 :], lines[1][body_line - 1 :]
    # the body's line starts, from the whole text's: offsets in "\n".join(body lines)
    old_starts = [s - line_starts[0][body_line - 1] for s in line_starts[0][body_line - 1 :]]
    new_starts = [s - line_starts[1][body_line - 1] for s in line_starts[1][body_line - 1 :]]
    touched_lines = {n - body_line for n in changed}  # 0-based in the body
    for units in unit_spans(heads, body_line, old_body):
        # each paragraph as (first, last) body line, 0-based
        spans = [
            (bisect.bisect_right(old_starts, a) - 1, bisect.bisect_right(old_starts, b - 1) - 1)
            for a, b in units
        ]
        if not any(first <= n <= last for first, last in spans for n in touched_lines):
            continue
        owner = []  # the chunk each paragraph lies in
        for first, last in spans:
            fl, ll = first + body_line, last + body_line
            inside = [k for k, (lo, hi) in enumerate(chunks) if lo <= fl and ll <= hi]
            if not inside:
                return False
            owner.append(inside[0])

        for i in range(len(spans)):
            if i and owner[i] == owner[i - 1]:
                continue  # not the first paragraph of its chunk: no run starts here
            k = i
            while k < len(spans):
                old_ok = _run_length(old_starts, old_body, spans, i, k) <= cap
                if old_ok != (_run_length(new_starts, new_body, spans, i, k) <= cap):
                    return False
                if owner[k] != owner[i]:
                    break  # the next chunk's first paragraph: the last run compared
                k += 1
    return True


def _run_length(
    starts: list[int], lines: list[str], spans: list[tuple[int, int]], i: int, k: int
) -> int:
    """Characters from paragraph ``i``'s first line to paragraph ``k``'s last."""
    return starts[spans[k][1]] + len(lines[spans[k][1]]) - starts[spans[i][0]]


__all__ = ["Carried", "apply_spans", "carry"]
