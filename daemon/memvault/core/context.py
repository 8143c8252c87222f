"""Assemble a cited context under a token budget (pure).

What goes in, in this order, until the budget is spent:

1. MEMORY.md whole when it fits in ``index_share`` of the budget; otherwise
   its headings and the lines that link a hit note or mention a query word,
   as far as that share allows;
2. the best chunks, best first, each note's chunks grouped under one
   ``[[path#heading]]`` header with line ranges, in reading order within the
   note; adjacent chunks merge into one block; repeated text is dropped, and
   so is a near duplicate (the same fact logged again elsewhere); a small
   note goes in whole;
3. if budget remains, notes linked from the best notes (one hop).

Groups appear in the order of their best chunk, so a reader (or a scorer
cutting the text short) meets the most relevant material first. The token
count is exact: every part is counted with the caller's tokenizer and the
final text is counted again; it never exceeds the budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memvault.core.report import Context, Source
from memvault.core.wikilinks import find_links

SEPARATOR = "…"
# A piece sharing this share of its word 3-grams with one already in (Jaccard) is
# the same fact recorded again — a dump's decision re-logged on another day —
# and would only spend the budget twice.
NEAR_DUPLICATE = 0.8
NEAR_MIN_WORDS = 8
_WORD = re.compile(r"\w+")


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


@dataclass(slots=True)
class _Group:
    path: str
    rank: int
    why: str
    pieces: list[Piece] = field(default_factory=list)
    tokens: int = 0

    def blocks(self) -> list[list[Piece]]:
        """Pieces in reading order, adjacent ones merged into blocks."""
        out: list[list[Piece]] = []
        for p in sorted(self.pieces, key=lambda p: (p.line_start, p.ord)):
            if out and not p.whole and not out[-1][-1].whole and p.ord == out[-1][-1].ord + 1:
                out[-1].append(p)
            else:
                out.append([p])
        return out

    def render(self) -> str:
        blocks = self.blocks()
        first = blocks[0][0]
        link = self.path[:-3] if self.path.lower().endswith(".md") else self.path
        anchor = ""
        if first.heading and not first.whole and first.heading != (first.title,):
            anchor = f"#{first.heading[-1]}"
        ranges = ", ".join(_lines(b[0].line_start, b[-1].line_end) for b in blocks)
        date = f" ({first.date})" if first.date and first.date not in link else ""
        lines = [f"[[{link}{anchor}]]{date} {ranges}"]
        for i, block in enumerate(blocks):
            if i:
                lines.append(SEPARATOR)
            lines.append("\n".join(p.text.strip("\n") for p in block))
        return "\n".join(lines)


def _lines(start: int, end: int) -> str:
    return f"L{start}" if start == end else f"L{start}-{end}"


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _shingles(key: str) -> frozenset[tuple[str, ...]]:
    """Word 3-grams of a normalised text; empty when it is too short to compare."""
    words = _WORD.findall(key)
    if len(words) < NEAR_MIN_WORDS:
        return frozenset()
    return frozenset(zip(words, words[1:], words[2:], strict=False))


def _near_duplicate(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> bool:
    return bool(a and b) and len(a & b) >= NEAR_DUPLICATE * len(a | b)


def index_part(
    memory: str,
    budget: int,
    count: Callable[[str], int],
    terms: Sequence[str],
    hit_paths: set[str],
    resolve: Callable[[str], str | None],
) -> str:
    """MEMORY.md whole if it fits ``budget`` tokens, else its relevant lines."""
    if not memory.strip() or budget <= 0:
        return ""
    if count(memory) <= budget:
        return memory.strip("\n")
    text = memory.replace("\r\n", "\n")
    lines = text.split("\n")
    linked: dict[int, list[str]] = {}  # line -> link targets, read with the whole file's context
    for link in find_links(text):
        linked.setdefault(link.line, []).append(link.target)
    words = [t for t in terms if len(t) > 2]
    keep: list[str] = []
    used = 0
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("<!--"):
            continue
        relevant = stripped.startswith("#") and not keep  # the title
        if not relevant:
            for target in linked.get(number, ()):
                if target and resolve(target) in hit_paths:
                    relevant = True
                    break
        if not relevant and words:
            low = stripped.lower()
            relevant = any(re.search(rf"\b{re.escape(w)}", low) for w in words)
        if not relevant:
            continue
        cost = count(line) + 1
        if used + cost > budget:
            break
        keep.append(line)
        used += cost
    return "\n".join(keep)


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

    def add(piece: Piece, why: str, rank: int) -> None:
        nonlocal used
        if used + count(piece.text) > budget:
            return  # its text alone does not fit what is left (checked first: it is cheap)
        key = _norm(piece.text)
        if not key or key in seen_text:
            return
        shingles = _shingles(key)
        if shingles and any(_near_duplicate(shingles, other) for other in seen_shingles):
            return
        group = groups.get(piece.path)
        if group is not None and any(p.whole for p in group.pieces):
            return  # the whole note is already in
        if group is not None and piece.whole:
            return  # keep the chunks already chosen; no second copy of the note
        trial = group or _Group(piece.path, rank, why)
        before = trial.tokens if group else 0
        trial.pieces.append(piece)
        after = count(trial.render())
        extra = after - before + (0 if group else 2)  # a blank line between groups
        if used + extra > budget:
            trial.pieces.pop()
            return
        trial.tokens = after
        used += extra
        groups[piece.path] = trial
        seen_text.add(key)
        seen_shingles.append(shingles)
        sources.append(
            Source(
                piece.path, piece.heading, piece.line_start, piece.line_end, count(piece.text), why
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
