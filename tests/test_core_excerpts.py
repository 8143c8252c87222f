"""Excerpts: the units of a chunk (lines; a fenced code block whole; no headings)
and their ranking by chunk score plus their own similarity."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.core.excerpts import (
    NOTE_WEIGHT,
    SUBJECT_WEIGHT,
    UNIT_MAX_CHARS,
    WINDOW_WEIGHT,
    best_first,
    common_terms,
    focus_query,
    held_first,
    split_units,
    subject_words,
    unit_scores,
    unit_text,
    unit_texts,
    windows,
)


@pytest.mark.parametrize(
    ("text", "first", "units"),
    [
        ("", 1, []),
        ("\n\n  \n", 5, []),
        ("\t\n \t \n", 5, []),
        ("\tindented text", 2, [(2, 2, "\tindented text")]),
        ("    # indented four: not a heading", 1, [(1, 1, "    # indented four: not a heading")]),
        ("one line", 7, [(7, 7, "one line")]),
        (
            "**Ann**: hello\n\n**Bob**: hi there",
            10,
            [(10, 10, "**Ann**: hello"), (12, 12, "**Bob**: hi there")],
        ),
        ("## Plan\nfirst step\nsecond step", 3, [(4, 4, "first step"), (5, 5, "second step")]),
        ("#hashtag is text, not a heading", 1, [(1, 1, "#hashtag is text, not a heading")]),
        (
            "intro\n```python\nx = 1\n\ny = 2\n```\nafter",
            1,
            [(1, 1, "intro"), (2, 6, "```python\nx = 1\n\ny = 2\n```"), (7, 7, "after")],
        ),
        ("~~~\n# not a heading\n~~~", 1, [(1, 3, "~~~\n# not a heading\n~~~")]),
        ("```\nunclosed\n\nfence", 2, [(2, 5, "```\nunclosed\n\nfence")]),
        ("- item one\n- item two", 1, [(1, 1, "- item one"), (2, 2, "- item two")]),
        # a line of markup alone says nothing: the empty line of a callout (Obsidian's
        # help: a context spent its tokens on "L71 >"), a rule, a table's separator
        ("> [!tip] Sync\n> \n> use iCloud", 1, [(1, 1, "> [!tip] Sync"), (3, 3, "> use iCloud")]),
        ("a\n---\n* * *\n|---|:--:|\n- \nb", 1, [(1, 1, "a"), (6, 6, "b")]),
        ("> 1\n- 東", 1, [(1, 1, "> 1"), (2, 2, "- 東")]),
        # an emoji is no markup: a line of them alone is what the writer said (a context
        # cited "## Status" over nothing, its "✅" left out)
        (
            "## Mood\n🎉\n\n## Status\n✅\n🚀 🚀",
            1,
            [(2, 2, "🎉"), (5, 5, "✅"), (6, 6, "🚀 🚀")],
        ),
        # by the variation selector, joined by ZWJ, a flag, with a skin tone
        (
            "❤️\n- 👩‍💻\n🇫🇷\n> 👍🏽",
            3,
            [(3, 3, "❤️"), (4, 4, "- 👩‍💻"), (5, 5, "🇫🇷"), (6, 6, "> 👍🏽")],
        ),
        # by the variation selector, below U+2300 or not a symbol (So): ‼ is punctuation,
        # ↩ and ↔ arrows (Sm), ™ a letterlike symbol, # a keycap's base; each was markup
        (
            "‼️\n- ↩️\n↔️\n™️\n#️⃣\n〰️",
            1,
            [(1, 1, "‼️"), (2, 2, "- ↩️"), (3, 3, "↔️"), (4, 4, "™️"), (5, 5, "#️⃣"), (6, 6, "〰️")],
        ),
        # symbols shown as text stay markup: a box-drawn rule, shapes, a dingbat
        # bullet, an empty ballot box, stars, a check mark without its selector
        ("a\n───────\n■ ■ ■\n➤\n- ☐\n★ ★\n✔\nb", 1, [(1, 1, "a"), (8, 8, "b")]),
    ],
)
def test_split_units(text: str, first: int, units: list[tuple[int, int, str]]) -> None:
    got = split_units(text, first)
    assert [(u.line_start, u.line_end, u.text) for u in got] == units
    assert [u.seq for u in got] == list(range(len(units)))


@given(st.text(alphabet=st.sampled_from(list("ab #`~\n-*")), max_size=200), st.integers(1, 500))
def test_units_are_the_lines_they_claim_in_order(text: str, first: int) -> None:
    lines = text.split("\n")
    previous_end = first - 1
    for unit in split_units(text, first):
        assert unit.line_start > previous_end and unit.line_end >= unit.line_start
        assert unit.text == "\n".join(lines[unit.line_start - first : unit.line_end - first + 1])
        assert unit.text.strip()
        previous_end = unit.line_end


@pytest.mark.parametrize(
    ("text", "embedded"),
    [
        ("  **Ann**:\tgood   morning ", "**Ann**: good morning"),
        ("```\ncode\n```", "``` code ```"),
        ("x" * (UNIT_MAX_CHARS + 50), "x" * UNIT_MAX_CHARS),
        ("   ", ""),
        ("\t \t", ""),
    ],
)
def test_unit_text(text: str, embedded: str) -> None:
    assert unit_text(text) == embedded


def test_unit_texts_are_distinct_and_skip_headings() -> None:
    assert unit_texts("# Title\nsame\n\nsame\nother") == ["same", "other"]


@pytest.mark.parametrize(
    ("chunk", "sims", "expected"),
    [
        ([0.9, 0.9, 0.1], [0.2, 0.8, 0.5], [0.0 + 1.0, 1.0 + 1.0, 0.0 + 0.5]),
        ([0.5, 0.5], [None, None], [1.0, 1.0]),  # no vectors: chunk score alone
        ([1.0, 0.0], [None, 0.3], [1.0, 1.0]),  # one vector: it scales to 1, the other 0
        ([], [], []),
    ],
)
def test_unit_scores(chunk: list[float], sims: list[float | None], expected: list[float]) -> None:
    assert unit_scores(chunk, sims) == pytest.approx(expected)


def test_a_line_that_answers_beats_its_neighbours_in_a_better_chunk() -> None:
    """The point of ranking lines: the chunk says where, the line's own vector says which."""
    chunk = [0.8, 0.8, 0.7, 0.2]  # two lines of the best chunk, one of the next, one far off
    sims = [0.10, 0.12, 0.70, 0.30]
    assert best_first(unit_scores(chunk, sims)) == [2, 1, 0, 3]


def test_unit_scores_need_one_similarity_per_unit() -> None:
    with pytest.raises(ValueError, match="one chunk score"):
        unit_scores([1.0], [])


def test_best_first_keeps_search_order_on_ties() -> None:
    assert best_first([0.5, 1.0, 0.5, 1.0]) == [1, 3, 0, 2]


@pytest.mark.parametrize(
    ("terms", "texts", "common"),
    [
        (
            ["melanie", "camped"],
            ["**Melanie**: hi", "Melanie's tent", "we camped", "ok"],
            {"melanie"},
        ),
        (["melanie"], ["**Melanie**: hi", "ok", "fine"], set()),  # one of three: not half
        (["mel"], ["Melanie", "Melanie"], set()),  # whole words only
        (["melanie"], ["MELANIE", "x"], {"melanie"}),  # half, any case
        (["café"], ["un café", "le café noir", "thé"], {"café"}),
        (["a.b"], ["a.b", "axb"], {"a.b"}),  # a term is matched literally, not as a pattern
        (["x"], [], set()),
        ([], ["x"], set()),
    ],
)
def test_common_terms(terms: list[str], texts: list[str], common: set[str]) -> None:
    assert common_terms(terms, texts) == common


def test_a_term_counts_once_per_text_however_often_it_is_there() -> None:
    assert common_terms(["ann"], ["ann ann ann ann", "bob", "carl"]) == set()


@pytest.mark.parametrize(
    ("query", "common", "focus"),
    [
        ("Where has Melanie camped?", {"melanie"}, "Where has camped?"),
        ("What did Melanie's kids paint?", {"melanie"}, "What did kids paint?"),
        ("Where has Melanie camped?", set(), ""),  # nothing common: no second query
        ("Where has Ann camped?", {"melanie"}, ""),  # nothing removed
        ("Melanie?", {"melanie"}, ""),  # nothing left
        ("Melanie ???", {"melanie"}, ""),  # only punctuation left
    ],
)
def test_focus_query(query: str, common: set[str], focus: str) -> None:
    assert focus_query(query, common) == focus


def test_a_line_of_a_day_the_question_names_counts_a_third_part() -> None:
    chunk, sims = [0.9, 0.5, 0.1], [0.9, 0.5, 0.1]
    assert unit_scores(chunk, sims, [False, False, True]) == pytest.approx([2.0, 1.0, 1.0])
    assert best_first(unit_scores([0.9, 0.8, 0.1], [0.9, 0.8, 0.1], [False, True, False])) == [
        1,
        0,
        2,
    ]


def test_no_line_of_a_named_day_changes_nothing() -> None:
    chunk, sims = [0.9, 0.5, 0.1], [0.2, 0.5, None]
    assert unit_scores(chunk, sims, [False, False, False]) == unit_scores(chunk, sims)
    assert unit_scores(chunk, sims, None) == unit_scores(chunk, sims)


def test_unit_scores_need_one_time_match_per_unit() -> None:
    with pytest.raises(ValueError, match="one time match"):
        unit_scores([1.0], [None], [True, False])


@given(
    st.lists(st.sampled_from(["ann", "an", "bob", "o"]), max_size=4),
    st.lists(st.text(alphabet=st.sampled_from(list("anbo* :\n")), max_size=20), max_size=9),
)
def test_common_terms_is_the_whole_word_count_over_half(terms: list[str], texts: list[str]) -> None:
    expected = {
        t
        for t in terms
        if 2 * sum(1 for x in texts if t in re.findall(r"\w+", x.lower())) >= len(texts)
    }
    assert common_terms(terms, texts) == (expected if texts else set())


# -- the note, the window and the subject (bench/RESULTS.md, "Passage evidence") ----------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("**Caroline**: I went to a support group", {"caroline"}),
        ("  - **Owner**: Ann", {"owner"}),
        ("**Decision:** use PostgreSQL", {"decision"}),
        ("**Mary Ann**:hello", {"mary", "ann"}),
        ("I said **Caroline**: hi", set()),  # not where the line opens
        ("**bold** words, then: a colon", set()),  # bold, but not a label
        ("**unclosed: label", set()),
        ("", set()),
        ("Caroline: plain text is not a label", set()),
        ("****: an empty label", set()),
        ("**" + "a" * 10_000 + "**: a label too long to be one", set()),
        ("**Ann** **Bob**: two bold words", set()),
    ],
)
def test_subject_words(text: str, words: set[str]) -> None:
    assert subject_words(text) == words


def test_windows_join_lines_with_nothing_between_them() -> None:
    places: list[tuple[str, int, int] | None] = [
        ("a.md", 0, 5),  # 0
        ("a.md", 0, 7),  # 1: next to 0 in one chunk
        ("a.md", 1, 9),  # 2: first line of the next chunk: next to 1
        ("a.md", 3, 20),  # 3: chunk 2 was not found: nothing next to it
        ("b.md", 0, 6),  # 4: another note
        None,  # 5: a whole note: alone
        ("a.md", 3, 22),  # 6: after 3, given out of order
    ]
    assert windows(places) == [[0, 1], [1, 0, 2], [2, 1], [3, 6], [4], [5], [6, 3]]


def test_windows_of_nothing() -> None:
    assert windows([]) == []


def test_the_note_the_window_and_the_subject_add_their_weights() -> None:
    chunk, sims = [1.0, 0.0, 0.0], [1.0, 0.0, 0.5]
    base = unit_scores(chunk, sims)
    assert base == pytest.approx([2.0, 0.0, 0.5])
    # the note: its best line's sum, scaled; units 0 and 1 share a note
    with_notes = unit_scores(chunk, sims, notes=["a", "a", "b"])
    assert with_notes == pytest.approx([2.0 + NOTE_WEIGHT, NOTE_WEIGHT, 0.5])
    with_window = unit_scores(chunk, sims, window_similarities=[0.2, 0.6, None])
    assert with_window == pytest.approx([2.0, WINDOW_WEIGHT, 0.5])
    with_subject = unit_scores(chunk, sims, on_subject=[False, True, False])
    assert with_subject == pytest.approx([2.0, SUBJECT_WEIGHT, 0.5])


def test_a_line_of_the_note_asked_about_beats_a_line_as_good_elsewhere() -> None:
    # two lines alike on their own; the first's note holds the best line of all
    chunk, sims = [0.9, 0.5, 0.5], [0.9, 0.4, 0.4]
    assert best_first(unit_scores(chunk, sims, notes=["a", "a", "b"])) == [0, 1, 2]
    assert best_first(unit_scores(chunk, sims)) == [0, 1, 2]  # a tie kept in search order
    assert best_first(unit_scores(chunk, sims, notes=["a", "b", "a"])) == [0, 2, 1]


@pytest.mark.parametrize("name", ["notes", "window_similarities", "on_subject"])
def test_each_signal_needs_one_value_per_unit(name: str) -> None:
    with pytest.raises(ValueError, match="one chunk score and one"):
        unit_scores([1.0, 0.5], [None, None], **{name: [0.1]})  # type: ignore[arg-type]


def test_a_line_is_admitted_on_its_own_evidence_not_its_notes() -> None:
    """a person's note that answers lends its weight to all its lines, and
    "Prefers async communication" passed the filler bar on it alone."""
    from memvault.core.excerpts import unit_scores, worth_a_place

    chunk = [1.0, 0.5, 0.9, 0.2]
    sims = [0.9, 0.4, 0.8, 0.75]
    notes = ["people/sarah.md", "people/sarah.md", "decisions/pg.md", "decisions/pg.md"]
    ranked = unit_scores(chunk, sims, notes=notes)
    alone = unit_scores(chunk, sims)
    assert worth_a_place(ranked) == [0, 2, 1]  # 1 lifted over the bar by its note's best line
    # on their own evidence: 1 is filler; 3 (a weaker note, a line close to the question)
    # is not; the order stays the note-aware one
    assert worth_a_place(ranked, admit=alone) == [0, 2, 3]
    with pytest.raises(ValueError):
        worth_a_place(ranked, admit=alone[:2])


@pytest.mark.parametrize(
    ("order", "ranked", "held", "place", "expected"),
    [
        ([0, 1, 2], [0, 1, 2, 3], [False, False, True, False], 1, [2, 0, 1]),
        ([0, 1, 2], [0, 1, 2, 3], [False, False, False, True], 1, [3, 0, 1, 2]),  # filler
        ([0, 1, 2], [0, 1, 2, 3], [False, True, False, True], 1, [1, 3, 0, 2]),
        ([0, 1, 2], [0, 1, 2, 3], [False, False, False, True], 2, [0, 3, 1, 2]),
        ([0, 1, 2], [0, 1, 2, 3], [True, False, False, False], 1, [0, 1, 2]),  # first already
        ([0, 1, 2], [0, 1, 2, 3], [False, False, True, False], 0, [0, 1, 2]),  # off
        ([0, 1, 2], [0, 1, 2, 3], [False, False, False, False], 1, [0, 1, 2]),
        ([2, 0], [2, 0, 1], [False, True, True], 1, [2, 1, 0]),  # the n-th by ``ranked``
        # a held filler unit is kept when ``order`` is shorter than its place
        ([0], [0, 1], [False, True], 2, [0, 1]),
        ([0], [0, 1, 2], [True, False, True], 1, [0, 2]),
        ([], [0, 1], [False, True], 1, [1]),
    ],
)
def test_held_first(
    order: list[int], ranked: list[int], held: list[bool], place: int, expected: list[int]
) -> None:
    assert held_first(order, ranked, held, place) == expected


@pytest.mark.parametrize(
    ("ranked", "held", "expected"),
    [
        ([0, 1, 2, 3], [{0}, {0}, {0}, {1}], [0, 3, 1, 2]),  # each word's best, then the rest
        ([3, 2, 1, 0], [{0}, {0}, {0}, {1}], [3, 2, 1, 0]),  # the second word's is first
        ([0, 1, 2, 3], [{0}, set(), {1}, {0}], [0, 2, 3]),
        ([0, 1, 2], [{0, 1}, {0}, {1}], [0, 1, 2]),  # one line holding both: its turn first
        ([0, 1, 2], [{0}, {0}, {0}], [0, 1, 2]),  # one word: ``ranked``'s order
        ([0, 1], [set(), set()], []),
    ],
)
def test_held_in_turn(ranked: list[int], held: list[set[int]], expected: list[int]) -> None:
    from memvault.core.excerpts import held_in_turn

    assert held_in_turn(ranked, held) == expected
