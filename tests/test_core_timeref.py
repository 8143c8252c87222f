"""The days a question names (core/timeref): absolute days, months, years, and
words relative to a given today; and whether a note's date falls in them."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.core.timeref import Span, note_in, question_days, single_days

D = dt.date
TODAY = D(2024, 3, 13)  # a Wednesday


@pytest.mark.parametrize(
    ("question", "spans"),
    [
        ("What did Nate make on 9 November, 2022?", [Span(D(2022, 11, 9), D(2022, 11, 9))]),
        ("What happened on 2023-05-08?", [Span(D(2023, 5, 8), D(2023, 5, 8))]),
        ("What did she paint on October 13, 2023?", [Span(D(2023, 10, 13), D(2023, 10, 13))]),
        ("news on 9th Nov 2022", [Span(D(2022, 11, 9), D(2022, 11, 9))]),
        ("news on Nov. 9th, 2022", [Span(D(2022, 11, 9), D(2022, 11, 9))]),
        ("Where did Joanna travel in July 2022?", [Span(D(2022, 7, 1), D(2022, 7, 31))]),
        ("What was decided in Feb 2024?", [Span(D(2024, 2, 1), D(2024, 2, 29))]),
        ("When did Melanie go camping in June?", [Span(D(2000, 6, 1), D(2000, 6, 30), True)]),
        ("How many times did she go to the beach in 2023?", [Span(D(2023, 1, 1), D(2023, 12, 31))]),
        (
            "two dates: 2023-01-02 and March 2023",
            [
                Span(D(2023, 1, 2), D(2023, 1, 2)),
                Span(D(2023, 3, 1), D(2023, 3, 31)),
            ],
        ),
    ],
)
def test_absolute_days(question: str, spans: list[Span]) -> None:
    assert question_days(question) == spans


@pytest.mark.parametrize(
    "question",
    [
        "",
        "What did we decide about the database?",
        "May I ask what she likes?",  # "may" the verb is no month
        "I may go to the march",  # nor is "march" without in/during/...
        "Room 12345 and 30000 people",  # no year: not 1900-2099, or part of a longer number
        "on 31 February, 2023",  # no such day: no span
        "?!... ,,,",
    ],
)
def test_no_date_no_span(question: str) -> None:
    assert question_days(question, TODAY) == []


@pytest.mark.parametrize(
    ("question", "span"),
    [
        ("what did we decide today?", Span(TODAY, TODAY)),
        ("what did we decide yesterday?", Span(D(2024, 3, 12), D(2024, 3, 12))),
        ("this week", Span(D(2024, 3, 11), D(2024, 3, 17))),
        ("last week", Span(D(2024, 3, 4), D(2024, 3, 10))),
        ("last month", Span(D(2024, 2, 1), D(2024, 2, 29))),
        ("this year", Span(D(2024, 1, 1), D(2024, 12, 31))),
        ("last year", Span(D(2023, 1, 1), D(2023, 12, 31))),
        ("last summer", Span(D(2023, 6, 1), D(2023, 8, 31))),
        ("this winter", Span(D(2023, 12, 1), D(2024, 2, 29))),
        ("last winter", Span(D(2023, 12, 1), D(2024, 2, 29))),  # over before today
    ],
)
def test_relative_words_need_today(question: str, span: Span) -> None:
    assert question_days(question, TODAY) == [span]
    assert question_days(question) == []  # core reads no clock


def test_last_month_in_january_is_december() -> None:
    assert question_days("last month", D(2024, 1, 5)) == [Span(D(2023, 12, 1), D(2023, 12, 31))]


def test_winter_spans_the_new_year() -> None:
    assert question_days("this winter", D(2024, 12, 5)) == [Span(D(2024, 12, 1), D(2025, 2, 28))]
    assert question_days("this winter", D(2024, 1, 5)) == [Span(D(2023, 12, 1), D(2024, 2, 29))]
    assert question_days("last winter", D(2024, 1, 5)) == [Span(D(2022, 12, 1), D(2023, 2, 28))]


def test_note_in() -> None:
    may = question_days("in May 2023")
    assert note_in("2023-05-08", may)
    assert note_in("2023-05-31T23:00:00", may)
    assert not note_in("2023-06-01", may)
    assert not note_in(None, may) and not note_in("", may) and not note_in("someday", may)
    assert not note_in("2023-05-08", [])
    any_june = question_days("camping in June?")
    assert note_in("2019-06-30", any_june) and note_in("2031-06-01", any_june)
    assert not note_in("2019-07-01", any_june)
    feb = question_days("in February")  # any year: the 29th of a leap year too
    assert note_in("2024-02-29", feb)


@given(st.text(max_size=300))
def test_any_text_gives_spans_in_order(text: str) -> None:
    for span in question_days(text, TODAY):
        assert span.start <= span.end


def test_single_days_keep_named_days_only() -> None:
    spans = question_days("on 3 June, 2023, in July 2023, in August, in 2022, yesterday", TODAY)
    assert single_days(spans) == [
        Span(D(2023, 6, 3), D(2023, 6, 3)),
        Span(D(2024, 3, 12), D(2024, 3, 12)),
    ]
