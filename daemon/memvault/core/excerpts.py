"""Excerpts: the lines of a chunk that carry its facts, and their ranking (pure).

A chunk (~128 tokens) is the unit search ranks: big enough that its vector
knows what the text is about. It is too big a unit to spend a context budget
on: a chunk of a conversation holds four or five turns, of which a question
needs one. So the context is packed with *units* — the non-blank lines of the
chunks search found (a fenced code block stays one unit; heading lines are
left out, the citation names the heading) — each ranked by two things:

- the fused score of its chunk (relevance of the neighbourhood, with the
  context the chunk's vector was embedded with), and
- the cosine of the unit's own vector to the question's (which line of the
  neighbourhood it is).

Both are min-max scaled over the candidates and added with equal weight (the
same convex combination search uses for BM25 and vectors); a unit without a
vector (the vector lane is behind, or no model) scores on its chunk alone.
Measured on LoCoMo with cross-validation (bench/RESULTS.md).

A unit's vector is the embedding of ``unit_text(unit)``: the line with its
whitespace collapsed, cut to ``UNIT_MAX_CHARS``. Indexing embeds it next to
the chunk's own text and keeps it in the same cache, keyed by the sha256 of
that text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

UNIT_MAX_CHARS = 1000  # a unit's embedded text, at most (the model reads ~256 word pieces)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


@dataclass(frozen=True, slots=True)
class Unit:
    """One line (or one fenced code block) of a chunk, with its file line numbers."""

    line_start: int
    line_end: int
    text: str
    seq: int  # position among the chunk's units (0, 1, ...)


def split_units(text: str, line_start: int) -> list[Unit]:
    """The units of a chunk whose ``text`` starts at file line ``line_start``.

    Blank lines and ATX heading lines are not units; the lines of a fenced
    code block (fences included) are one unit. An unclosed fence runs to the
    end of the chunk.
    """
    out: list[Unit] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        lead = line.lstrip(" ")[:1]
        if lead not in ("`", "~", "#"):  # most lines: no regex needed
            if line.strip():
                out.append(Unit(line_start + i, line_start + i, line, len(out)))
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            marker = fence.group(1)
            j = i + 1
            while j < len(lines):
                close = _FENCE.match(lines[j])
                if close and close.group(1)[0] == marker[0] and len(close.group(1)) >= len(marker):
                    break
                j += 1
            j = min(j, len(lines) - 1)
            block = "\n".join(lines[i : j + 1])
            out.append(Unit(line_start + i, line_start + j, block, len(out)))
            i = j + 1
            continue
        if line.strip() and not _HEADING.match(line):
            out.append(Unit(line_start + i, line_start + i, line, len(out)))
        i += 1
    return out


def unit_text(text: str) -> str:
    """What gets embedded for a unit: its text on one line, cut to ``UNIT_MAX_CHARS``."""
    flat = " ".join(text.split())
    return flat[:UNIT_MAX_CHARS]


def unit_texts(chunk_text: str) -> list[str]:
    """The distinct embedded texts of a chunk's units."""
    units = split_units(chunk_text, 1)
    return list(dict.fromkeys(unit_text(u.text) for u in units if unit_text(u.text)))


def _scaled(values: Sequence[float | None]) -> list[float]:
    """Min-max scaled to [0, 1] over the values present; absent (None) -> 0; all equal -> 1."""
    present = [v for v in values if v is not None]
    if not present:
        return [0.0] * len(values)
    lo, hi = min(present), max(present)
    return [0.0 if v is None else ((v - lo) / (hi - lo) if hi > lo else 1.0) for v in values]


def unit_scores(chunk_scores: Sequence[float], similarities: Sequence[float | None]) -> list[float]:
    """Each unit's score: its chunk's fused score and its own cosine to the query,
    each min-max scaled over the candidates, summed. ``None``: no vector."""
    if len(chunk_scores) != len(similarities):
        raise ValueError("one chunk score and one similarity per unit")
    return [a + b for a, b in zip(_scaled(chunk_scores), _scaled(similarities), strict=True)]


def best_first(scores: Sequence[float]) -> list[int]:
    """Indices by score, best first; ties keep the order given (the search order)."""
    return sorted(range(len(scores)), key=lambda i: -scores[i])


__all__ = [
    "UNIT_MAX_CHARS",
    "Unit",
    "best_first",
    "split_units",
    "unit_scores",
    "unit_text",
    "unit_texts",
]
