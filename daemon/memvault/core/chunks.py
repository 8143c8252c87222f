"""Split a note into chunks that fit the embedding model's window.

A chunk is a run of whole lines of one section (the text under one heading),
or a piece of one oversize paragraph. How a note is cut:

1. The body (frontmatter excluded, template hints blanked: ``notes``) is cut at
   ATX headings outside fenced code.
   A heading line belongs to the chunk that follows it, so its words are
   searchable. A heading with nothing under it (blank lines, hints, or only
   the next heading) makes no chunk: it is no memory, and as a hit of its own
   it is noise an agent must skip; its text still opens the heading path of
   the sections below it.
2. Each section is cut into paragraphs: blocks of non-blank lines. A fenced
   code block is one paragraph whatever blank lines it holds; a list without
   blank lines between its items is one paragraph.
3. Consecutive paragraphs of one section are merged greedily while their
   tokens stay within ``target_tokens``. Nothing merges across a heading.
4. A paragraph whose embedded text would exceed ``max_tokens`` is cut into
   pieces of about ``target_tokens``, preferring line ends, then sentence ends,
   then spaces, then (a run of text with no space at all) characters.

The guarantee: ``count_tokens(embed_text(note, chunk, parts)) <= max_tokens``
for every chunk, and a chunk holds at most ``max_tokens * MAX_CHARS_PER_TOKEN``
characters. The character cap exists because a word-piece tokenizer turns a
long run without spaces (a 5 MB base64 line) into a handful of ``[UNK]``
tokens: such a chunk is "within the window" while the model sees nothing of
it, and it would defeat token budgeting downstream.

``count_tokens`` may be a real tokenizer (the MiniLM one takes ~0.8 µs per
character here), so it is only ever called on texts of bounded size, about
twice per chunk: the work is linear in the note's length (a 5 MB line of
prose: ~2.4 characters counted per character of text, ~13 s, while embedding
its ~19,000 chunks takes minutes).

A note whose body holds no text (``memvault add --summary`` writes headings
only; a person may fill in only the properties) is searched by the lines of
its frontmatter that describe it (``describing_lines``): its summary or
description, aliases and tags, else its title. Every chunk's lines are lines
of the file, so a context quoting them quotes the file.

The note's own description (``about_text``: the frontmatter's summary or
description, aliases and tags, which the body never repeats word for word) is
searched with its first chunk: the indexer gives it to that chunk's keyword
row, and ``embed_texts`` embeds its head before that chunk's text, whatever
context ``parts`` are configured (they say what frames each chunk; this is the
note's own words). The chunk's text and lines stay those of the file.

``heading_path`` holds every heading above the chunk, outermost first,
including an H1 title heading; ``context_prefix`` drops a leading heading that
repeats the title, so the embedded header does not say the title twice.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memvault.core.about import about_text, describing_lines
from memvault.core.anchors import unmarked
from memvault.core.notes import Heading, Note, blank_lines
from memvault.core.text import grapheme_cut, split_lines
from memvault.core.wikilinks import unfiled_links

CONTEXT_PARTS = ("title", "headings", "date")
# The description embedded before a note's first chunk, at most: it frames the
# chunk, it must not drown it (a summary may be a page long).
ABOUT_TOKENS = 64
MAX_CHARS_PER_TOKEN = 10
PREFIX_PART_CHARS = 60  # one title or heading in the header, at most
PREFIX_MAX_CHARS = 160  # the whole header, at most: it must leave room for the text
_HEADING_SEP = " › "
# First guess of a piece's length in characters per token of budget (English
# averages ~4.5 characters per word piece); later guesses use the ratio the
# previous piece had, so most pieces cost one tokenizer call.
_GUESS_CHARS_PER_TOKEN = 4.0
_FULL_ENOUGH = 0.75  # a piece this full of its budget is not grown further

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")  # the same rule as wikilinks.mask_code
# a sentence's end: Latin stops before a space; CJK full stops with or without one (those
# scripts put no space after them: a long line was cut inside a word, which then no
# keyword found), a closing bracket or quote kept with its sentence
_CLOSERS = "[)\\]\"'»”’）」』】〕〉》]*"
_SENTENCE_END = re.compile(rf"[.!?…]{_CLOSERS}(?=\s)|[。！？]{_CLOSERS}")
_CLAUSE_END = re.compile(rf"[，、；：]{_CLOSERS}")  # CJK, with no space to cut at

_LAST_SPACE = re.compile(r"\s(?=\S*\Z)")  # with endpos: the last whitespace before it
_NON_SPACE = re.compile(r"\S")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One searchable piece of a note.

    ``line_start``/``line_end`` are 1-based, inclusive line numbers of the
    file (frontmatter lines counted). ``text`` is the markdown exactly as in
    the file (carriage returns stripped): those lines joined by ``\\n`` when
    the chunk is whole paragraphs, a substring of them when it is a piece of
    an oversize paragraph.
    """

    ord: int
    heading_path: tuple[str, ...]
    line_start: int
    line_end: int
    text: str


def embed_text(note: Note, chunk: Chunk, parts: Sequence[str], before: str = "") -> str:
    """The text that gets embedded: the context header, the tail of the text
    before the chunk (``before``, already cut to size), then the chunk text with its
    links' folders dropped (``wikilinks.unfiled_links``: ``[[plan#Risks|the risks]]``
    for ``[[projects/alpha/plan#Risks|the risks]]``; a folder rename leaves it as it
    was) and its lines' block ids (``anchors.unmarked``): ``model_text``; never more
    word pieces than the text as written."""
    return _join(_prefix(note, chunk.heading_path, parts), _join(before, model_text(chunk.text)))


def model_text(text: str) -> str:
    """A chunk's text as the model reads it: links without their inner folders, no
    block ids (``embed_text``)."""
    return unmarked(unfiled_links(text))


def embed_texts(
    note: Note,
    chunks: Sequence[Chunk],
    parts: Sequence[str],
    count_tokens: Callable[[str], int],
    *,
    max_tokens: int,
    overlap_tokens: int,
) -> list[str]:
    """The embedded text of every chunk of a note, each with up to
    ``overlap_tokens`` of the chunk before it as context.

    A paragraph alone ("Yes, we went there yesterday") often says little; with
    the end of what precedes it, its embedding says what it is about. Measured
    on the LoCoMo dev split (bench/RESULTS.md). The window is never exceeded:
    the overlap is what gives way.
    """
    out: list[str] = []
    about = about_text(note)
    for i, chunk in enumerate(chunks):
        before = ""
        if i == 0 and about:
            room = min(ABOUT_TOKENS, max_tokens - count_tokens(embed_text(note, chunk, parts)) - 1)
            before = _head(about, room, count_tokens)
        if overlap_tokens > 0 and i > 0:
            room = min(
                overlap_tokens, max_tokens - count_tokens(embed_text(note, chunk, parts)) - 1
            )
            before = _tail(model_text(chunks[i - 1].text), room, count_tokens)
        out.append(embed_text(note, chunk, parts, before))
    return out


def _head(text: str, tokens: int, count_tokens: Callable[[str], int]) -> str:
    """The start of ``text`` holding at most ``tokens`` word pieces, cut at a space
    (from a first guess of its length: shrunk until it fits, then grown once)."""
    if tokens <= 0:
        return ""
    text = " ".join(text[: tokens * MAX_CHARS_PER_TOKEN].split())  # never the whole of it
    best, size, grown = "", min(len(text), int(tokens * _GUESS_CHARS_PER_TOKEN)), False
    while size > 0:
        piece = text[:size]
        if size < len(text) and text[size] != " " and " " in piece:
            piece = piece[: piece.rfind(" ")]
        n = count_tokens(piece)
        if n <= tokens:
            if len(piece) > len(best):
                best = piece
            if grown or size >= len(text) or n >= tokens * _FULL_ENOUGH:
                return best
            size, grown = min(len(text), size * tokens // max(1, n)), True
        elif best:
            return best  # grew past the budget: keep the piece that fitted
        else:
            size = int(size * 0.8)
    return best


def _tail(text: str, tokens: int, count_tokens: Callable[[str], int]) -> str:
    """The end of ``text`` holding at most ``tokens`` word pieces, cut at a space."""
    if tokens <= 0:
        return ""
    text = " ".join(text.split())
    size = min(len(text), int(tokens * _GUESS_CHARS_PER_TOKEN))
    while size > 0:
        piece = text[len(text) - size :]
        space = piece.find(" ")
        if 0 <= space < len(piece) - 1 and size < len(text):
            piece = piece[space + 1 :]
        if count_tokens(piece) <= tokens:
            return piece
        size = int(size * 0.8)
    return ""


def chunk_note(
    note: Note,
    count_tokens: Callable[[str], int],
    *,
    target_tokens: int,
    max_tokens: int,
    parts: Sequence[str] = (),
) -> list[Chunk]:
    """Cut ``note`` into chunks; ``[]`` when the body holds nothing to embed.

    ``count_tokens`` counts word pieces without special tokens; ``max_tokens``
    is the model window minus its special tokens (254 for all-MiniLM-L6-v2).
    ``parts`` must be the context parts the caller embeds with, so the header
    is counted against the window too. Raises ValueError only when
    ``max_tokens`` leaves no room for a single character after the header.
    """
    if target_tokens < 1 or max_tokens < 1:
        raise ValueError("target_tokens and max_tokens must be positive")
    # template hints are not memory: blanked, so line numbers stay true (notes.py)
    lines = split_lines(blank_lines(note.body, note.hints, note.body_line))
    size = (count_tokens, min(target_tokens, max_tokens), max_tokens, parts)
    chunks = _cut(note, lines, note.body_line, _sections(note, lines), *size)
    if not chunks and note.raw_frontmatter:
        # nothing but properties: the lines that describe the note (file line 2 on)
        head = split_lines(note.raw_frontmatter)
        runs: list[tuple[tuple[str, ...], int, int, bool]] = [
            ((), a, b, False) for a, b in describing_lines(note)
        ]
        chunks = _cut(note, head, 2, runs, *size)
    return chunks


def _cut(
    note: Note,
    lines: list[str],
    first_line: int,
    sections: list[tuple[tuple[str, ...], int, int, bool]],
    count_tokens: Callable[[str], int],
    target_tokens: int,
    max_tokens: int,
    parts: Sequence[str],
) -> list[Chunk]:
    """The chunks of ``sections`` of ``lines`` (``lines[0]`` is line ``first_line``)."""
    if not any(line.strip() for line in lines):
        return []
    body = "\n".join(lines)
    starts = _line_starts(lines)
    fenced = _fenced(lines)
    chunks: list[Chunk] = []
    for path, first, last, has_heading in sections:
        if has_heading and not any(line.strip() for line in lines[first + 1 : last]):
            continue  # a heading with nothing under it (module docstring)
        cutter = _SectionCutter(
            body,
            _prefix(note, path, parts),
            count_tokens,
            target_tokens,
            max_tokens,
        )
        units: list[_Unit] = []
        for start, end in _paragraphs(lines, starts, fenced, first, last, has_heading):
            units += cutter.units(start, end)
        for start, end in cutter.pack(units):
            chunks.append(
                Chunk(
                    ord=len(chunks),
                    heading_path=path,
                    line_start=first_line + bisect.bisect_right(starts, start) - 1,
                    line_end=first_line + bisect.bisect_right(starts, end - 1) - 1,
                    text=body[start:end],
                )
            )
    return chunks


def _prefix(note: Note, heading_path: Sequence[str], parts: Sequence[str]) -> str:
    unknown = set(parts) - set(CONTEXT_PARTS)
    if unknown:
        raise ValueError(f"unknown context part {sorted(unknown)[0]!r} (known: {CONTEXT_PARTS})")
    pieces: list[str] = []
    headings = list(heading_path)
    if "title" in parts:
        title = _clip(note.title, PREFIX_PART_CHARS)
        if title:
            pieces.append(title)
        if headings and headings[0].casefold() == note.title.strip().casefold():
            headings = headings[1:]
    if "headings" in parts:
        pieces += [_clip(h, PREFIX_PART_CHARS) for h in headings if h.strip()]
    text = _HEADING_SEP.join(pieces)
    if "date" in parts and note.date:
        date = f"({_clip(note.date, 24)})"
        text = f"{text} {date}" if text else date
    return _clip(text, PREFIX_MAX_CHARS)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())  # a header is one line
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _join(prefix: str, text: str) -> str:
    return f"{prefix}\n{text}" if prefix else text


def _line_starts(lines: list[str]) -> list[int]:
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    return starts


def _fenced(lines: list[str]) -> list[bool]:
    """Per line: inside a fenced code block (fence lines included)."""
    out: list[bool] = []
    fence: tuple[str, int] | None = None
    for line in lines:
        m = _FENCE.match(line)
        if fence is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = (m.group(1)[0], len(m.group(1)))
            out.append(fence is not None)
        else:
            out.append(True)
            if (
                m
                and m.group(1)[0] == fence[0]
                and len(m.group(1)) >= fence[1]
                and not m.group(2).strip()
            ):
                fence = None
    return out


def unit_spans(
    headings: Sequence[Heading], body_line: int, lines: list[str]
) -> list[list[tuple[int, int]]]:
    """Per section that makes chunks, the character spans (in ``"\\n".join(lines)``, the
    body's lines) of its paragraphs: the units the chunker sizes, then packs while their
    tokens fit and their span holds at most ``max_tokens * MAX_CHARS_PER_TOKEN``
    characters. For a caller that must know whether a change of lengths alone (a link
    re-targeted, core/carry.py) could move a cut."""
    starts = _line_starts(lines)
    fenced = _fenced(lines)
    out = []
    for _, first, last, has_heading in _section_runs(headings, body_line, lines):
        if has_heading and not any(line.strip() for line in lines[first + 1 : last]):
            continue
        out.append(_paragraphs(lines, starts, fenced, first, last, has_heading))
    return out


def _sections(note: Note, lines: list[str]) -> list[tuple[tuple[str, ...], int, int, bool]]:
    """(heading path, first line, end line (exclusive), starts with a heading), 0-based."""
    return _section_runs(note.headings, note.body_line, lines)


def _section_runs(
    headings: Sequence[Heading], body_line: int, lines: list[str]
) -> list[tuple[tuple[str, ...], int, int, bool]]:
    heads = [(h.line - body_line, h) for h in headings if 0 <= h.line - body_line < len(lines)]
    out: list[tuple[tuple[str, ...], int, int, bool]] = []
    first = heads[0][0] if heads else len(lines)
    if any(line.strip() for line in lines[:first]):
        out.append(((), 0, first, False))
    stack: list[tuple[int, str]] = []
    for i, (index, heading) in enumerate(heads):
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.text))
        end = heads[i + 1][0] if i + 1 < len(heads) else len(lines)
        out.append((tuple(text for _, text in stack), index, end, True))
    return out


def _paragraphs(
    lines: list[str],
    starts: list[int],
    fenced: list[bool],
    first: int,
    last: int,
    has_heading: bool,
) -> list[tuple[int, int]]:
    """Character spans of the section's paragraphs; a lone heading line joins the next one."""
    blocks: list[list[int]] = []
    open_block = False
    for i in range(first, last):
        if not lines[i].strip() and not fenced[i]:
            open_block = False
        elif open_block:
            blocks[-1][1] = i + 1
        else:
            blocks.append([i, i + 1])
            open_block = True
    for block in blocks:  # an unclosed fence swallows trailing blank lines: not text
        while not lines[block[1] - 1].strip():
            block[1] -= 1
    if has_heading and len(blocks) > 1 and blocks[0][1] - blocks[0][0] == 1:
        blocks[0:2] = [[blocks[0][0], blocks[1][1]]]
    return [(starts[a], starts[b - 1] + len(lines[b - 1])) for a, b in blocks]


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int
    end: int
    tokens: int  # tokens of the text alone (header excluded), as measured


class _SectionCutter:
    """Sizes, splits and packs the paragraphs of one section (one header)."""

    def __init__(
        self,
        body: str,
        prefix: str,
        count_tokens: Callable[[str], int],
        target: int,
        max_tokens: int,
    ) -> None:
        self.body = body
        self.prefix = prefix
        self.count = count_tokens
        self.max_tokens = max_tokens
        self.prefix_tokens = count_tokens(prefix) if prefix else 0
        self.size = min(target, max_tokens - self.prefix_tokens)  # a split piece's text
        if self.size < 1:
            raise ValueError(
                f"max_tokens={max_tokens} leaves no room for text after the context "
                f"header {prefix!r} ({self.prefix_tokens} tokens)"
            )
        self.target = target
        self.cap = max_tokens * MAX_CHARS_PER_TOKEN
        self.chars_per_token: float = _GUESS_CHARS_PER_TOKEN

    def measure(self, start: int, end: int) -> int:
        """Tokens of the embedded text (header included) of body[start:end]: its links
        without their folders and no block ids, as ``embed_text`` gives them (so a folder
        rename that lengthens every link into it moves no chunk's boundary)."""
        return self.count(_join(self.prefix, model_text(self.body[start:end])))

    def units(self, start: int, end: int) -> list[_Unit]:
        """One paragraph as one unit, or as pieces when it does not fit the window."""
        if end - start <= self.cap:
            n = self.measure(start, end)
            if n <= self.max_tokens:
                return [_Unit(start, end, max(0, n - self.prefix_tokens))]
        return self.split(start, end)

    def pack(self, units: list[_Unit]) -> list[tuple[int, int]]:
        """Merge consecutive units greedily while their tokens stay within the target."""
        spans: list[tuple[int, int]] = []
        i = 0
        while i < len(units):
            j, total = i + 1, units[i].tokens
            while (
                j < len(units)
                and total + units[j].tokens <= self.target
                and units[j].end - units[i].start <= self.cap
            ):
                total += units[j].tokens
                j += 1
            # Token counts are not exactly additive (the text between units,
            # word pieces merging): verify the merged text, give back units.
            while j - i > 1 and self.measure(units[i].start, units[j - 1].end) > self.max_tokens:
                j -= 1
            spans.append((units[i].start, units[j - 1].end))
            i = j
        return spans

    def split(self, start: int, end: int) -> list[_Unit]:
        """Cut body[start:end] into pieces of about ``size`` tokens that fit the window."""
        out: list[_Unit] = []
        pos = self._next_start(start, end)
        while pos < end:
            piece = self._piece(pos, end)
            if piece is None:
                text = _NON_SPACE.search(self.body, pos, end)
                if text is not None and text.start() > pos:
                    pos = text.start()  # even the indentation does not fit: drop it
                    continue
                raise ValueError(
                    f"max_tokens={self.max_tokens}: one character does not fit "
                    f"after the context header {self.prefix!r}"
                )
            piece_end, next_pos, n = piece
            out.append(_Unit(pos, piece_end, n - self.prefix_tokens))
            # The next piece is most likely text of the same kind: guess its
            # length from this one, so most pieces cost one tokenizer call.
            self.chars_per_token = (piece_end - pos) / max(1, n - self.prefix_tokens)
            pos = next_pos
        return out

    def _piece(self, pos: int, end: int) -> tuple[int, int, int] | None:
        """(piece end, next start, tokens) of the piece starting at ``pos``; None if none fits."""
        limit = self.prefix_tokens + self.size
        length = max(1, min(end - pos, self.cap, int(self.size * self.chars_per_token * 0.9)))
        best: tuple[int, int, int] | None = None
        grown, last_cut = 0, end + 1
        while True:
            cut = self._cut(pos, pos + length, end)
            piece_end = self._rstrip(pos, cut)
            n = self.measure(pos, piece_end)
            if n <= limit:
                if best is None or piece_end > best[0]:
                    best = (piece_end, self._next_start(cut, end), n)
                text_tokens = n - self.prefix_tokens
                if cut >= end or length >= self.cap or grown >= 3:
                    return best
                if text_tokens >= _FULL_ENOUGH * self.size:
                    return best
                longer = min(end - pos, self.cap, length * self.size // max(1, text_tokens))
                if longer <= length:
                    return best
                length, grown = longer, grown + 1
            elif best is not None:
                return best  # grew past the budget: keep the last piece that fitted
            elif cut >= last_cut or length <= 1:
                return None
            else:
                # Shrink in proportion to the overshoot, and by a quarter at least.
                over = max(1, n - self.prefix_tokens)
                guess = (cut - pos) * self.size * 9 // (10 * over)
                length = max(1, min(guess, (cut - pos) * 3 // 4))
                last_cut = cut

    def _cut(self, pos: int, hi: int, end: int) -> int:
        """Where to end a piece starting at ``pos`` no later than ``hi``.

        The piece always holds a non-space character (``pos`` may sit on a
        line's indentation), and a boundary in the first half of the window
        is not taken: it would make too small a piece.
        """
        if hi >= end:
            return end
        first_text = _NON_SPACE.search(self.body, pos, end)
        floor = first_text.start() + 1 if first_text else pos + 1
        lo = max(floor, pos + (hi - pos) // 2)
        if lo <= hi:
            newline = self.body.rfind("\n", lo, hi + 1)
            if newline >= 0:
                return newline
            sentence = self._last_end(_SENTENCE_END, lo, hi)
            if sentence is not None:
                return sentence
            space = _LAST_SPACE.search(self.body, lo, hi + 1)
            if space is not None:
                return space.start()
            clause = self._last_end(_CLAUSE_END, lo, hi)
            if clause is not None:
                return clause
        # No space at all: cut between characters a reader sees (``grapheme_cut``: never
        # before a combining mark, any of Mn, Mc, Me: Thai's ั and Hindi's ा are of
        # combining class 0; nor inside an emoji joined by ZWJ, a flag, a syllable in
        # jamo), unless the window is one such run to its floor (a hostile run of 40,000
        # marks): then at its end, so a piece is a window's worth, not one character
        cut = max(hi, floor)
        back = grapheme_cut(self.body, cut)
        return back if back > floor else cut

    def _last_end(self, pattern: re.Pattern[str], lo: int, hi: int) -> int | None:
        """Where the last match of ``pattern`` ending within ``lo``..``hi`` ends."""
        ends = [m.end() for m in pattern.finditer(self.body, lo, hi + 1) if lo <= m.end() <= hi]
        return ends[-1] if ends else None

    def _rstrip(self, pos: int, cut: int) -> int:
        while cut > pos + 1 and self.body[cut - 1].isspace():
            cut -= 1
        return cut

    def _next_start(self, cut: int, end: int) -> int:
        """The next piece starts at the next text, keeping its line's indentation."""
        m = _NON_SPACE.search(self.body, cut, end)
        if m is None:
            return end
        newline = self.body.rfind("\n", cut, m.start())
        return newline + 1 if newline >= 0 else m.start()
