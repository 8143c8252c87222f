"""Assemble a cited context under a token budget (pure).

What goes in, in this order, until the budget is spent:

1. MEMORY.md whole when it fits in ``index_share`` of the budget; otherwise
   the lines that hold a word of the question, under their headings, as far as
   that share allows (nothing when none does);
2. the best chunks, best first, each note's chunks grouped under one
   ``[[path#heading]] L7-9`` header, in reading order within the note, each
   later block opening with its own ``L12-14`` line; adjacent chunks merge
   into one block; repeated text is dropped, and
   so is a near duplicate (the same fact logged again elsewhere); a small
   note goes in whole;
3. if budget remains, notes linked from the best notes (one hop).

Groups appear in the order of their best chunk, so a reader (or a scorer
cutting the text short) meets the most relevant material first. The token
count is exact: every part is counted with the caller's tokenizer and the
final text is counted again; it never exceeds the budget.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memvault.core.anchors import link_heading
from memvault.core.cjk import has_cjk
from memvault.core.cjk import words as cjk_words
from memvault.core.excerpts import split_units
from memvault.core.markup import mask_inert
from memvault.core.results import Context, Source
from memvault.core.text import trim_proof

# A piece sharing this share of its word 3-grams with one already in (Jaccard) is
# the same fact recorded again — a dump's decision re-logged on another day —
# and would only spend the budget twice.
NEAR_DUPLICATE = 0.8
NEAR_MIN_WORDS = 8


# What a reader of a team's index is told of a note cited from the shared index whose
# file this copy of the vault lacks or holds otherwise (docs/TEAM.md): the lines shown
# are the index's, which `get` here would not give.
COPY_SAYS = {
    "missing": "not in this copy of the vault: the shared index's text; git pull",
    "differs": "this copy's file differs: the shared index's text",
}


@dataclass(frozen=True, slots=True)
class Piece:
    """A candidate: one chunk (or a whole small note) of one note."""

    path: str
    ord: int
    heading: tuple[str, ...]
    line_start: int
    line_end: int
    text: str
    whole: bool = False  # the whole note (``ord`` is then -1)
    title: str = ""  # the note's title: an anchor to it would be redundant
    date: str | None = None  # the note's date, shown when its path does not hold it
    this_copy: str = ""  # a reader's copy of the note: "missing", "differs" (results.Hit)


def _order(p: Piece) -> tuple[int, int]:
    return (p.line_start, p.ord)


def _adjacent(a: Piece, b: Piece) -> bool:
    """Whether ``b`` follows ``a`` in one block (the next unit of the same chunk)."""
    return not a.whole and not b.whole and b.ord == a.ord + 1


def _blocks(pieces: Sequence[Piece]) -> list[list[Piece]]:
    """Pieces already in reading order, adjacent ones merged into blocks."""
    out: list[list[Piece]] = []
    for p in pieces:
        if out and _adjacent(out[-1][-1], p):
            out[-1].append(p)
        else:
            out.append([p])
    return out


@dataclass(slots=True)
class _Group:
    path: str
    rank: int
    why: str
    pieces: list[Piece] = field(default_factory=list)  # in reading order (``_order``)
    tokens: int = 0  # the rendered group's, as ``_count_lines`` counts them
    whole: bool = False  # a piece of it is the whole note

    def blocks(self) -> list[list[Piece]]:
        """Pieces in reading order, adjacent ones merged into blocks."""
        return _blocks(self.pieces)

    def _head(self, first: Piece, where: str) -> str:
        """The first block's line: the note's link (and heading, and date when its path
        does not hold it) with the block's line range."""
        link = self.path[:-3] if self.path.lower().endswith(".md") else self.path
        link = trim_proof(link, self.path)  # (``Plan .md``: ``[[Plan .md]]``)
        anchor = ""
        if first.heading and not first.whole and first.heading != (first.title,):
            anchor = f"#{link_heading(first.heading[-1])}"
        date = f" ({first.date})" if first.date and first.date not in link else ""
        said = f" ({COPY_SAYS[first.this_copy]})" if first.this_copy in COPY_SAYS else ""
        return f"[[{link}{anchor}]]{date} {where}{said}"

    def render(self) -> str:
        """The note's link (and heading, and date when its path does not hold it)
        with the line range of its first block, then each block; a later block
        opens with its own range on a line of its own (one token, not a list of
        ranges in the header plus a separator line per block)."""
        lines: list[str] = []
        for i, block in enumerate(self.blocks()):
            where = _lines(block[0].line_start, block[-1].line_end)
            lines.append(self._head(block[0], where) if i == 0 else f"\n{where}")
            lines.append(join_spans([(p.line_start, p.line_end, p.text) for p in block]))
        return "\n".join(lines)

    def _heads_cost(self, pieces: Sequence[Piece], first: bool, count: Callable[[str], int]) -> int:
        """The tokens of the range lines of ``pieces`` (whole blocks), the first of
        them the group's head line when ``first``."""
        total = 0
        for i, block in enumerate(_blocks(pieces)):
            where = _lines(block[0].line_start, block[-1].line_end)
            total += _count_lines(count, self._head(block[0], where) if first and i == 0 else where)
        return total

    def tokens_with(self, piece: Piece, count: Callable[[str], int]) -> tuple[int, int]:
        """The group's tokens with ``piece`` in, and where it goes in ``pieces`` —
        ``_count_lines(count, render())`` of the group with it, worked out from the
        blocks beside it alone (a line's tokens do not depend on the lines around it):
        rendering and counting the whole group again for each piece was quadratic, a
        context of 40,000 tokens from one 10 MB log took 70 s."""
        at = bisect.bisect_right(self.pieces, _order(piece), key=_order)
        start, end = at, at  # the blocks either side of ``at``, whole
        if at > 0:
            start = at - 1
            while start > 0 and _adjacent(self.pieces[start - 1], self.pieces[start]):
                start -= 1
        if at < len(self.pieces):
            end = at + 1
            while end < len(self.pieces) and _adjacent(self.pieces[end - 1], self.pieces[end]):
                end += 1
        before = self._heads_cost(self.pieces[start:end], start == 0, count)
        around = [*self.pieces[start:at], piece, *self.pieces[at:end]]
        after = self._heads_cost(around, start == 0, count)
        return self.tokens - before + after + _count_lines(count, piece.text), at


def join_spans(spans: Sequence[tuple[int, int, str]]) -> str:
    """Texts of consecutive parts of one file (line_start, line_end, text), joined with
    the blank line the file has between them (a heading keeps the blank line before
    it); blank lines cost no tokens."""
    out: list[str] = []
    previous_end: int | None = None
    for start, end, text in spans:
        text = text.strip("\n")
        if previous_end is not None:
            out.append("\n\n" if start - previous_end > 1 else "\n")
        out.append(text)
        previous_end = end
    return "".join(out)


def _count_lines(count: Callable[[str], int], text: str) -> int:
    """``text``'s tokens counted a line at a time: a line break is a word boundary
    for the tokenizers used here, and a caching counter then encodes only the
    lines it has not seen (a group is re-counted each time a piece joins it). A
    tokenizer that merges across lines is caught by the final count."""
    return sum(count(line) for line in text.split("\n") if line)


def _lines(start: int, end: int) -> str:
    return f"L{start}" if start == end else f"L{start}-{end}"


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _shingles(key: str) -> frozenset[tuple[str, ...]]:
    """Word 3-grams of a normalised text; empty when it is too short to compare."""
    words = cjk_words(key)
    if len(words) < NEAR_MIN_WORDS:
        return frozenset()
    return frozenset(zip(words, words[1:], words[2:], strict=False))


def _near_duplicate(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> bool:
    return bool(a and b) and len(a & b) >= NEAR_DUPLICATE * len(a | b)


def _near_any(
    shingles: frozenset[tuple[str, ...]],
    seen: Sequence[frozenset[tuple[str, ...]]],
    holding: dict[tuple[str, ...], list[int]],
) -> bool:
    """Whether a piece in (``seen``, ``holding``: each 3-gram's pieces) is a near
    duplicate of ``shingles``. One shares at least ``NEAR_DUPLICATE`` of these 3-grams,
    so it holds one of any ``len - ceil(NEAR_DUPLICATE * len) + 1`` of them: only the
    pieces holding the rarest of them (one more, for the float's sake) are compared
    (comparing each piece in with every other was quadratic in a large budget's pieces:
    a log's lines share their words)."""
    need = len(shingles) - math.ceil(NEAR_DUPLICATE * len(shingles)) + 2
    rarest = sorted(shingles, key=lambda s: len(holding.get(s, ())))[:need]
    candidates = {i for shingle in rarest for i in holding.get(shingle, ())}
    return any(_near_duplicate(shingles, seen[i]) for i in candidates)


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")


@dataclass(frozen=True, slots=True)
class _IndexLine:
    number: int  # 1-based line of MEMORY.md
    text: str
    headings: tuple[int, ...]  # the lines of the headings it sits under, outermost first


def _index_lines(text: str) -> tuple[list[str], list[_IndexLine]]:
    """MEMORY.md's lines that say something (not blank, not a heading, not only an
    HTML comment such as a section marker, not code), each with its headings."""
    lines = text.split("\n")
    masked = mask_inert(text).split("\n")
    stack: list[tuple[int, int]] = []  # (level, line number)
    out: list[_IndexLine] = []
    for number, (line, bare) in enumerate(zip(lines, masked, strict=True), 1):
        if not bare.strip():
            continue
        heading = _ATX.match(bare)
        if heading:
            level = len(heading.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, number))
            continue
        out.append(_IndexLine(number, line, tuple(n for _, n in stack)))
    return lines, out


def _render_index(lines: list[str], kept: Sequence[_IndexLine]) -> str:
    """The kept lines in file order, each under its headings (each heading once)."""
    out: list[str] = []
    shown: set[int] = set()
    for entry in kept:
        for number in entry.headings:
            if number not in shown:
                shown.add(number)
                if out:
                    out.append("")  # a blank line before a heading, as in the file
                out.append(lines[number - 1])
        out.append(entry.text)
    return "\n".join(out)


def index_part(
    memory: str,
    budget: int,
    count: Callable[[str], int],
    terms: Sequence[str],
) -> str:
    """What of MEMORY.md goes in a context of ``budget`` tokens for this question.

    Only lines that say something go in, each under its headings: no section
    markers, blank lines or headings left without a line (an index with nothing
    to say gives ``""``, not a bare ``# Memory Index``). All of them when they
    fit ``budget``; otherwise, in file order while they fit, the lines holding a
    word of the question (``terms``: pass those that tell notes apart). A line
    that only links or describes a note the context cites is left out: the
    note's own lines follow, and on LoCoMo such lines cost recall on both folds
    (bench/RESULTS.md). What the index does not use goes to the evidence.
    """
    if not memory.strip() or budget <= 0:
        return ""
    lines, entries = _index_lines(memory.replace("\r\n", "\n"))
    if not entries:
        return ""
    whole = _render_index(lines, entries)
    if count(whole) <= budget:
        return whole
    # a word from its start; a CJK run (two characters say a word) wherever it stands
    words = [r"\b" + re.escape(t) for t in terms if len(t) > 2 and not has_cjk(t)]
    words += [re.escape(t) for t in terms if len(t) > 1 and has_cjk(t)]
    if not words:
        return ""
    wanted = re.compile("|".join(words))
    kept: list[_IndexLine] = []
    shown: set[int] = set()
    used = 0
    for entry in entries:
        if not wanted.search(entry.text.lower()):
            continue
        heads = [lines[n - 1] for n in entry.headings if n not in shown]
        cost = sum(count(h) + 1 for h in heads) + count(entry.text) + 1
        if used + cost > budget:
            break
        kept.append(entry)
        shown.update(entry.headings)
        used += cost
    return _render_index(lines, kept)


def assemble(
    query: str,
    budget: int,
    count: Callable[[str], int],
    index_text: str,
    hits: Sequence[Piece],
    linked: Sequence[Piece] = (),
) -> Context:
    """The context: ``index_text`` (already cut to its share), then hits, then linked notes."""
    parts: list[str] = []
    sources: list[Source] = []
    used = 0
    if index_text:
        cost = count(index_text)
        if cost <= budget:
            parts.append(index_text)
            sources.append(Source("MEMORY.md", (), 0, 0, cost, "index"))
            used = cost + 1
    groups: dict[str, _Group] = {}
    seen_text: set[str] = set()
    seen_shingles: list[frozenset[tuple[str, ...]]] = []
    holding: dict[tuple[str, ...], list[int]] = {}  # a 3-gram -> the pieces in holding it

    def add(piece: Piece, why: str, rank: int) -> None:
        nonlocal used
        if used + count(piece.text) > budget:
            return  # its text alone does not fit what is left (checked first: it is cheap)
        key = _norm(piece.text)
        if not key or key in seen_text:
            return
        if not split_units(piece.text, 1):
            return  # only headings: nothing to say
        shingles = _shingles(key)
        if shingles and _near_any(shingles, seen_shingles, holding):
            return
        group = groups.get(piece.path)
        if group is not None and group.whole:
            return  # the whole note is already in
        if group is not None and piece.whole:
            return  # keep the chunks already chosen; no second copy of the note
        trial = group or _Group(piece.path, rank, why)
        after, at = trial.tokens_with(piece, count)
        extra = after - trial.tokens + (0 if group else 2)  # a blank line between groups
        if used + extra > budget:
            return
        trial.pieces.insert(at, piece)
        trial.whole = trial.whole or piece.whole
        trial.tokens = after
        used += extra
        groups[piece.path] = trial
        seen_text.add(key)
        for shingle in shingles:
            holding.setdefault(shingle, []).append(len(seen_shingles))
        seen_shingles.append(shingles)
        sources.append(
            Source(
                piece.path,
                piece.heading,
                piece.line_start,
                piece.line_end,
                count(piece.text),
                why,
                piece.this_copy,
            )
        )

    for rank, piece in enumerate(hits):
        add(piece, "hit", rank)
    for rank, piece in enumerate(linked):
        add(piece, "linked", len(hits) + rank)

    ordered = sorted(groups.values(), key=lambda g: g.rank)
    text = "\n\n".join(parts + [g.render() for g in ordered])
    tokens = count(text)
    while tokens > budget and ordered:  # never over budget, whatever the tokenizer does at joins
        dropped = ordered.pop()
        sources = [s for s in sources if s.path != dropped.path or s.why == "index"]
        text = "\n\n".join(parts + [g.render() for g in ordered])
        tokens = count(text)
    if tokens > budget:
        text, tokens, sources = "", 0, []
    return Context(query, budget, tokens, text, tuple(sources))
