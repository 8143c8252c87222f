"""A first day in notes that are not English: what a person writing German, Turkish,
Thai, Japanese or Korean sees in a search's snippet, in the links Obsidian draws and
in keyword search (field test, December 2026)."""

from __future__ import annotations

import unicodedata

import pytest

from memvault.core.ranking import snippet
from memvault.core.text import grapheme_cut

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one picture: three people joined
FLAG = "\U0001f1e9\U0001f1ea"  # 🇩🇪: two regional indicators
THAI = "ที่นี่คือข้อความภาษาไทยที่ไม่มีการเว้นวรรคระหว่างคำเลย"  # no spaces; vowel marks


def graphemes_whole(piece: str, whole: str) -> bool:
    """Whether ``piece`` (an excerpt of ``whole``, "…" at a cut) starts and ends where a
    character a reader sees starts and ends: no orphan mark, no half-joined emoji."""
    body = piece.strip("…")
    at = whole.find(body)
    assert at >= 0, "the excerpt is not a piece of the text"
    end = at + len(body)
    return grapheme_cut(whole, at) == at and grapheme_cut(whole, end) == end


@pytest.mark.parametrize(
    ("text", "term"),
    [
        (("家族" + FAMILY) * 60, "家族"),  # emoji joined by ZWJ: the cut fell inside one
        ((FLAG + "旅行") * 80, "旅行"),  # a flag is two indicators
        ("ข้อความ" * 60 + THAI * 3, "ภาษาไทย"),  # Thai: no spaces, marks after letters
        (unicodedata.normalize("NFD", "ÉÈÊÀÖÜ" * 90) + " Zeit", "zeit"),  # NFD (macOS)
        (unicodedata.normalize("NFD", "한국어텍스트") * 60, "x"),  # NFD Hangul: jamo
        ("Grüße👍🏽" * 50, "grüße"),  # a skin tone is part of its emoji
    ],
    ids=["zwj-emoji", "flags", "thai", "nfd-latin", "nfd-hangul", "skin-tone"],
)
def test_a_snippet_never_cuts_a_character_a_reader_sees_in_half(text: str, term: str) -> None:
    for width in range(80, 131):  # wherever the width happens to fall
        got = snippet(text, [term], width=width)
        assert graphemes_whole(got, " ".join(text.split())), (width, got)


def test_a_snippet_stands_at_its_term_after_letters_whose_lowercase_is_longer() -> None:
    # "İ".lower() is two characters: the place found in the lowered text was that many
    # characters later in the text itself, and a term past them fell out of the excerpt
    text = "İSTANBUL İZMİR İNEBOLU " * 30 + "toplantı notları burada " + "x " * 200
    assert "toplantı" in snippet(text, ["toplantı"])


@pytest.mark.parametrize(
    ("text", "at", "expected"),
    [
        ("abc", 1, 1),
        ("e\u0301x", 1, 0),  # before a combining acute: the e's
        ("a" + FAMILY + "b", 3, 1),  # after a ZWJ: the family's start
        ("a" + FAMILY + "b", 2, 1),  # before a ZWJ
        ("a" + FLAG + FLAG, 2, 1),  # between a flag's two indicators
        ("a" + FLAG + FLAG, 3, 3),  # between two flags
        ("\u1112\u1161\u11ab", 2, 0),  # inside a Hangul syllable in jamo
        ("ok\r\nx", 3, 2),  # a CRLF is one
        ("x" + "\u0301" * 100, 90, 90),  # a hostile run of marks: cut, not walked to 0
    ],
)
def test_grapheme_cut_is_the_last_boundary_at_or_before(text: str, at: int, expected: int) -> None:
    assert grapheme_cut(text, at) == expected
