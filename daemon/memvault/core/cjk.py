"""Keywords of the scripts written without a space between words: Chinese, Japanese,
Korean within its spaced words, and Thai, Lao, Khmer and Myanmar.

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

Thai, Lao, Khmer and Myanmar are written without spaces too, and their vowel and tone
signs are marks that combine with the letter before (ข้าว: ข, the mark ้, า, ว). Their
unit is a letter with the marks after it (``units``): spaced, paired and looked up as
a CJK character is. The keyword table keeps marks inside a token (its tokenizer's
``categories``: index schema 9), so a word of Hindi, Bengali or Tamil, whose vowel
signs are marks, is one token, not the pieces between its marks; a query's words are
read the same way (``words``). The optional vowel points of Arabic and Hebrew and the
Arabic tatweel are left out of the keyword form (``unpointed``, as search engines
normalize them): كَتَبَ is found by كتب. So are what FTS5's ``remove_diacritics`` leaves
(it folds Latin letters only) and what no one types (``plain``): Greek accents and the
final sigma (δεδομένων, ΔΕΔΟΜΕΝΩΝ and δεδομενων alike; λόγος and ΛΟΓΟΣ), Russian ё as е,
and the invisible characters pasted inside words (zero-width space and joiner, word
joiner, byte order mark, soft hyphen: data\u200bbase is database; variation selectors
and enclosing marks, so an emoji is still no keyword).

A word in Cyrillic letters is given with its stem beside it (``stemmed``: Snowball's
Russian stemmer, the stem marked by ``STEM_MARK``; index schema 15): Москве is
``москве москв\ue000``, and a query's word asks for itself or its stem (``stem_term``,
``ranking.keyword_terms``), so Москва finds it, and a note holding the word as asked
scores both and ranks above one holding another form (the stem in place of the word
put those level: a word as written found first 0.93 -> 0.52 on a Russian vault,
bench/RESULTS.md). What is stemmed is one of FTS5's tokens (letters, digits, marks)
all of whose letters are Cyrillic, lowered and without its marks (which FTS5 drops or
keeps: an accent of stress, мо́сква, is no part of the word): two tokens FTS5 held
equal get one stem, and both sides are given the same tokens, so a query finds every
chunk its exact form found before (Ukrainian, Bulgarian or Serbian through a stemmer
made for Russian: two words may share a stem, never one word get two). A word mixing
scripts (XMLфайл) is as written. A traditional Chinese character is given as its
simplified one (``simplified``, character by character, hanziconv's table): 東京 and
东京 are one keyword, and a Japanese kanji of the table meets its simplified form too
(國 国; 後 and 后, which Japanese keeps apart: a match more, never one less).

Pure; the same text on both backends (``index/pg_keywords`` tokenizes through FTS5).
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

# Han (with its radicals, compatibility forms and extensions B-G), hiragana, katakana
# (half-width too), bopomofo, Hangul (syllables and jamo), and the ideographic marks
# 々 〆 〇 and the kana repeat marks: each character a unit
CJK_CHARS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3040-\u30ff"
    "\u3100-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
# Thai, Lao, Myanmar (and its extensions A, B) and Khmer (and its symbols): a letter and
# the marks after it a unit
CLUSTER_CHARS = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u19e0-\u19ff\ua9e0-\ua9ff\uaa60-\uaa7f"


def _ranges(codes: list[int]) -> str:
    """A character class's body for ``codes`` (ascending), as ranges."""
    out: list[list[int]] = []
    for c in codes:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in out)


def _marks_in(spans: str) -> str:
    """The combining marks (categories Mn, Mc, Me) of the blocks ``spans`` names."""
    codes = [
        c
        for a, b in re.findall(r"(.)-(.)", spans)
        for c in range(ord(a), ord(b) + 1)
        if unicodedata.category(chr(c))[0] == "M"
    ]
    return _ranges(codes)


_CLUSTER_MARKS = _marks_in(CLUSTER_CHARS)
_UNIT_RE = f"[{CJK_CHARS}]|[{CLUSTER_CHARS}][{_CLUSTER_MARKS}]*"
_CHAR = re.compile(f"[{CJK_CHARS}{CLUSTER_CHARS}]")
_UNIT = re.compile(_UNIT_RE)
_RUN = re.compile(f"(?:{_UNIT_RE})+")
LONGEST_RUN = 64  # characters of a run looked up as written (``backoff``)

# Arabic's harakat, superscript alef and Quranic marks, the tatweel (a stretch of the
# line, U+0640); Hebrew's points and cantillation: optional, left out of keywords
_POINTS = re.compile(
    "[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8"
    "\u06ea-\u06ed\u0640\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]+"
)


# zero-width space and joiner, word joiner, byte order mark, soft hyphen; variation
# selectors (an emoji's U+FE0F, the ideographic variants of a name: 葛 and 葛\U000e0100
# are one character to a reader, and a selector left alone is a token of its own between
# two CJK characters); the enclosing marks (1️⃣'s keycap). Not the zero-width
# non-joiner: it parts the pieces of a Persian word (کتاب‌ها: کتاب, ها), as a space does
_INVISIBLE_CHARS = "\u00ad\u200b\u200d\u2060\ufeff\ufe00-\ufe0f\u20dd-\u20e4\U000e0100-\U000e01ef"
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]+")
_GREEK = re.compile("[\u0370-\u03ff\u1f00-\u1fff][\u0300-\u036f]*")
# what ``plain`` may change: those, Greek letters, Ё and ё, ß and ẞ
PLAIN_CHARS = _INVISIBLE_CHARS + "\u0370-\u03ff\u1f00-\u1fff\u0401\u0451"
SHARP_S_CHARS = "\u00df\u1e9e"  # ß, ẞ (version 11 of the SQLite index, 10 of PostgreSQL)
_PLAIN = re.compile(f"[{PLAIN_CHARS}{SHARP_S_CHARS}]")
_GREEK_ACCENTS = re.compile("[\u0300-\u036f]+")
_LETTERS = str.maketrans(
    {"\u03c2": "\u03c3", "\u0451": "\u0435", "\u0401": "\u0415", "\u00df": "ss", "\u1e9e": "SS"}
)


def _greek_plain(m: re.Match[str]) -> str:
    bare = _GREEK_ACCENTS.sub("", unicodedata.normalize("NFD", m.group()))
    return unicodedata.normalize("NFC", bare)


def plain(text: str) -> str:
    """``text`` without what FTS5's tokenizer keeps but no one types alike: invisible
    characters inside words, Greek accents (tonos, dialytika, the polytonic ones) and
    final sigma (ς as σ), Russian ё as е, German ß as ss (Swiss German and a keyboard
    without ß write Strasse for Straße; FTS5 folds ä to a, never ß; the same string when
    it has none)."""
    if _PLAIN.search(text) is None:
        return text
    text = _INVISIBLE.sub("", text)
    return _GREEK.sub(_greek_plain, text).translate(_LETTERS)


@functools.cache
def marks() -> str:
    """A character class's body for Unicode's combining marks (categories Mn, Mc, Me:
    ~2,400 in ~300 ranges, read from ``unicodedata`` on first use, ~13 ms)."""
    codes = [*range(0x300, 0x1F000), *range(0xE0100, 0xE01F0)]  # and the variation selectors
    return _ranges([c for c in codes if unicodedata.category(chr(c))[0] == "M"])


@functools.cache
def _word() -> re.Pattern[str]:
    """A word: letters, digits and the combining marks among them (``\\w`` alone ends
    a word of Hindi at each vowel sign)."""
    return re.compile(f"[\\w{marks()}]+")


def words(text: str) -> list[str]:
    """The words of ``text`` as the keyword table cuts them (its tokenizer keeps marks
    in a token): letters, digits and marks, ``_`` too (``\\w``); an invisible character
    inside a word does not end it (``plain`` leaves it out of the keywords)."""
    return _word().findall(_INVISIBLE.sub("", text) if _INVISIBLE.search(text) else text)


def units(run: str) -> list[str]:
    """The units of a run of ``_RUN``: each CJK character, each other letter with its
    marks."""
    return _UNIT.findall(run)


WIDE_CHARS = "\uff01-\uff5e\uff61-\uff9f"  # full-width ASCII forms, half-width katakana
_WIDE = re.compile(f"[{WIDE_CHARS}]+")


def has_cjk(text: str) -> bool:
    return _CHAR.search(text) is not None


def keyed(text: str) -> bool:
    """Whether the keyword table is given ``text`` otherwise than it is
    (``keyword_form(text) != text``)."""
    return not text.isascii() and keyword_form(text) != text


def unpointed(text: str) -> str:
    """``text`` without Arabic's and Hebrew's optional vowel points and cantillation, and
    without the tatweel (the same string when it has none)."""
    return _POINTS.sub("", text) if _POINTS.search(text) else text


def fold(text: str) -> str:
    """``text`` with its full-width Latin letters, digits and signs (ＡＢＣ１２３, common
    in Japanese and Chinese text) and half-width katakana (ﾃﾞｰﾀ) in their usual width
    (NFKC of those runs only: ABC123, データ), the same string when it has none."""
    if _WIDE.search(text) is None:
        return text
    return _WIDE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def keyword_form(text: str, *, stems: bool = True) -> str:
    """What the keyword table is given for ``text``: ``fold``, ``plain``, ``unpointed``,
    ``simplified``, ``spaced``, then ``stemmed`` (a text of ASCII only: itself, at once).
    ``stems`` False: as index schema 14 (PostgreSQL 13) gave it, neither stemmed nor
    simplified."""
    if text.isascii():
        return text
    text = unpointed(plain(fold(text)))
    return stemmed(spaced(simplified(text))) if stems else spaced(text)


@functools.cache
def _simplified() -> tuple[dict[int, str], re.Pattern[str]]:
    """Each traditional Chinese character's simplified one (hanziconv's table, from
    CUHK's: 2,702 characters; a chain, 諮 谘 咨, followed to its end), and a pattern of
    the characters it changes."""
    from hanziconv import charmap  # (imported once a CJK text is met)

    table: dict[str, str] = {}
    for t, s in zip(charmap.traditional_charmap, charmap.simplified_charmap, strict=True):
        if t != s:
            table.setdefault(t, s)
    for t in list(table):
        seen = {t}
        while table[t] in table and table[t] not in seen:
            seen.add(table[t])
            table[t] = table[table[t]]
    return {ord(t): s for t, s in table.items()}, re.compile(f"[{''.join(sorted(table))}]")


def simplified(text: str) -> str:
    """``text`` with each traditional Chinese character as its simplified one, character
    by character (學習 as 学习; a Japanese kanji of the table too: 國 as 国, 後 as 后);
    the same string when it has none."""
    if _CHAR.search(text) is None:
        return text
    table, changed = _simplified()
    return text.translate(table) if changed.search(text) else text


def han_changed() -> str:
    """A character class's body for the characters ``simplified`` changes."""
    return _simplified()[1].pattern[1:-1]


# Cyrillic, its supplement and extensions A-D (letters, and a few combining marks)
CYRILLIC_CHARS = "\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f\U0001e030-\U0001e08f"
_CYRILLIC = re.compile(f"[{CYRILLIC_CHARS}]")
STEM_MARK = "\ue000"  # a private-use character: no word typed ends in it
_STEMMING = threading.Lock()  # a Snowball stemmer keeps its word in itself


@functools.cache
def _tokens() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """A keyword token as FTS5 cuts one (categories L* N* Co M*: ``\\w`` without ``_``,
    the marks, private use), a word of Cyrillic letters and marks, and a mark."""
    m = marks()
    return (
        re.compile(f"(?:[^\\W_]|[{m}\ue000-\uf8ff\U000f0000-\U0010fffd])+"),
        re.compile(f"[{m}]*[{CYRILLIC_CHARS}][{CYRILLIC_CHARS}{m}]*"),
        re.compile(f"[{m}]+"),
    )


@functools.lru_cache(maxsize=1 << 16)  # words repeat: ~25 us a word stemmed, ~0.1 kept
def stem(word: str) -> str:
    """The Snowball Russian stem of a word of Cyrillic letters (lower case, no mark):
    never empty (the letters up to its first vowel stay)."""
    with _STEMMING:
        got = str(_russian().stemWord(word))
    return got or word


@functools.cache
def _russian() -> Any:
    import snowballstemmer  # (its ~30 languages' modules: imported once Cyrillic is met)

    return snowballstemmer.stemmer("russian")


def stemmed(text: str) -> str:
    """``text`` with each keyword token whose letters are all Cyrillic followed by its
    ``stem`` (of it lowered, its marks left out) and ``STEM_MARK``: a token of its own;
    the same string when it has none."""
    if _CYRILLIC.search(text) is None:
        return text
    token, cyrillic, mark = _tokens()

    def one(m: re.Match[str]) -> str:
        word = m.group()
        if cyrillic.fullmatch(word) is None:
            return word
        bare = mark.sub("", word.lower())
        return f"{word} {stem(bare)}{STEM_MARK}" if bare else word

    return token.sub(one, text)


def stem_term(term: str) -> str | None:
    """The keyword term of a query term's stem when the term is one Cyrillic word (its
    ``stemmed`` token: a chunk holding any form of the word holds it), else None."""
    if _CYRILLIC.search(term) is None:
        return None
    found = _tokens()[0].findall(keyword_form(term))
    return found[1] if len(found) == 2 and found[1].endswith(STEM_MARK) else None


def spaced(text: str) -> str:
    """``text`` with a space either side of each unit (a CJK character, a Thai letter
    and its marks: ``units``; the same string when it has none), in ``keyword_form``:
    each is then a token of its own, for a chunk's columns and a query's term alike."""
    if _CHAR.search(text) is None:
        return text
    return _UNIT.sub(r" \g<0> ", text)


def pairs(run: str) -> list[str]:
    """The overlapping pairs of units of ``run`` (2+ units)."""
    u = units(run)
    return [u[i] + u[i + 1] for i in range(len(u) - 1)]


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
        if (
            has_cjk(term)
            and len(units(term)) > 2
            and (len(term) > LONGEST_RUN or docs_of(term) == 0)
        ):
            out.update(dict.fromkeys(pairs(term)))
        else:
            out[term] = None
    return list(out)


__all__ = [
    "CJK_CHARS",
    "CLUSTER_CHARS",
    "CYRILLIC_CHARS",
    "LONGEST_RUN",
    "PLAIN_CHARS",
    "SHARP_S_CHARS",
    "STEM_MARK",
    "WIDE_CHARS",
    "backoff",
    "fold",
    "han_changed",
    "has_cjk",
    "keyed",
    "keyword_form",
    "marks",
    "pairs",
    "plain",
    "simplified",
    "spaced",
    "stem",
    "stem_term",
    "stemmed",
    "terms",
    "units",
    "unpointed",
    "words",
]
