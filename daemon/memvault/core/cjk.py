"""Keywords of the scripts written without a space between words: Chinese, Japanese, and
Korean within its spaced words.

FTS5's ``unicode61`` tokenizer splits text at spaces and punctuation only, so a run
like ``東京都に住んでいます`` is one token: a search for ``東京`` found nothing, in any
note. The keyword index therefore holds each of these characters as its own token
(``spaced``: a space either side of each, in what the index is given, never in the
note), and a query's run of them is a phrase of its characters (``terms``): found
wherever it stands, inside a longer run too, as a word inside a sentence. A run no
chunk holds as written (a question written without spaces: 東京の天気はどうですか)
asks instead for its overlapping pairs (``backoff``), each a two-token phrase, and BM25
ranks the chunk holding more of them higher — the bigram matching of CJK search
engines (Lucene's ``CJKBigramFilter``), over an index of single characters. A run
found as written keeps to it: a chunk holding its pairs apart is no match, so a
note's name or a line pasted whole finds that note as sharply as when the run was
one token (pairs for every run cost the bench 0.03-0.15 of hit@1 on those:
bench/RESULTS.md).

Full-width Latin letters and digits and half-width katakana are folded to their usual
width first (``fold``): ＰＣ is found by PC, ﾃﾞｰﾀ by データ, in both directions.

Pure; the same text on both backends (``index/pg_keywords`` tokenizes through FTS5).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

# Han (with its radicals, compatibility forms and extensions B-G), hiragana, katakana
# (half-width too), bopomofo, Hangul (syllables and jamo), and the ideographic marks
# 々 〆 〇 and the kana repeat marks. Not Thai, Lao, Khmer or Myanmar: their marks
# combine with the letter before (a mark alone is no token).
CJK_CHARS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3040-\u30ff"
    "\u3100-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_CHAR = re.compile(f"[{CJK_CHARS}]")
_RUN = re.compile(f"[{CJK_CHARS}]+")
LONGEST_RUN = 64  # characters of a run looked up as written (``backoff``)


WIDE_CHARS = "\uff01-\uff5e\uff61-\uff9f"  # full-width ASCII forms, half-width katakana
_WIDE = re.compile(f"[{WIDE_CHARS}]+")


def has_cjk(text: str) -> bool:
    return _CHAR.search(text) is not None


def keyed(text: str) -> bool:
    """Whether the keyword table is given ``text`` otherwise than it is
    (``keyword_form(text) != text``)."""
    if text.isascii():
        return False
    return _CHAR.search(text) is not None or _WIDE.search(text) is not None


def fold(text: str) -> str:
    """``text`` with its full-width Latin letters, digits and signs (ＡＢＣ１２３, common
    in Japanese and Chinese text) and half-width katakana (ﾃﾞｰﾀ) in their usual width
    (NFKC of those runs only: ABC123, データ), the same string when it has none."""
    if _WIDE.search(text) is None:
        return text
    return _WIDE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def keyword_form(text: str) -> str:
    """What the keyword table is given for ``text``: ``fold``, then ``spaced`` (a text
    of ASCII only: itself, at once)."""
    return text if text.isascii() else spaced(fold(text))


def spaced(text: str) -> str:
    """``text`` with a space either side of each CJK character (the same string when it
    has none), ``keyword_form``'s last step: each is then a token of its own, for a
    chunk's columns and a query's term alike."""
    if _CHAR.search(text) is None:
        return text
    return _CHAR.sub(r" \g<0> ", text)


def pairs(run: str) -> list[str]:
    """The overlapping pairs of characters of ``run`` (2+ characters)."""
    return [run[i : i + 2] for i in range(len(run) - 1)]


def terms(word: str) -> list[str]:
    """The keyword terms of one query word (a ``\\w+`` match), folded (``fold``): itself
    when it has no CJK character; else its other letters as words and each CJK run as
    itself (a phrase of its characters, which the index finds wherever it stands, inside
    a longer run too), in order."""
    word = fold(word)
    if not has_cjk(word):
        return [word]
    out: list[str] = []
    start = 0
    for run in _RUN.finditer(word):
        if run.start() > start:
            out.append(word[start : run.start()])
        out.append(run.group())
        start = run.end()
    if start < len(word):
        out.append(word[start:])
    return out


def backoff(
    terms: Sequence[str], docs_of: Callable[[str], int], limit: int | None = None
) -> list[str]:
    """``terms`` with each CJK run of 3+ characters that no chunk holds as written
    (``docs_of(run) == 0``: a question written as one run, 東京の天気はどうですか)
    replaced by its overlapping pairs, distinct, in order. A run some chunk holds stays
    whole: a chunk holding only its pairs apart is no match (a note's name, a line
    pasted whole find that note, as when a run was one token). A run past
    ``LONGEST_RUN`` characters (a paragraph pasted) is not looked up: its pairs at once
    (a phrase of 5,000 characters cost 184 ms to count on 2,689 chunks). Past ``limit``
    terms the rest are left out, not looked up."""
    out: dict[str, None] = {}  # distinct, in order
    for term in terms:
        if limit is not None and len(out) >= limit:
            break  # the rest would be cut: not looked up
        if len(term) > 2 and has_cjk(term) and (len(term) > LONGEST_RUN or docs_of(term) == 0):
            out.update(dict.fromkeys(pairs(term)))
        else:
            out[term] = None
    return list(out)


__all__ = [
    "CJK_CHARS",
    "LONGEST_RUN",
    "WIDE_CHARS",
    "backoff",
    "fold",
    "has_cjk",
    "keyed",
    "keyword_form",
    "pairs",
    "spaced",
    "terms",
]
