"""The days a question names, to match against the days notes are about (pure).

"What did Nate make on 9 November, 2022?", "Where did Joanna travel in July
2022?", "what did we decide yesterday?": a note whose date falls on a day the
question names is about the time asked about. ``question_days`` reads the
spans of days a question names:

- a day: ``2022-11-09``, ``9 November 2022``, ``9th Nov, 2022``,
  ``November 9, 2022``, ``Nov 9th 2022``;
- a month: ``July 2022``, ``in July`` (any year: a month name alone, after
  in/during/since/until/before/after/early/mid/late/of, so "may" the verb is not
  a month);
- a year: ``in 2022`` (any four-digit year from 1900 to 2099);
- relative to ``today`` (given by the caller: core reads no clock):
  ``today``, ``yesterday``, ``this/last week``, ``this/last month``,
  ``this/last year``, ``this/last summer`` (and the other seasons, by the
  northern-hemisphere months).

No date in the question gives no span, and then nothing changes.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

_MONTHS = {
    name: i
    for i in range(1, 13)
    for name in (calendar.month_name[i].lower(), calendar.month_abbr[i].lower())
}
_MONTHS["sept"] = 9
_MONTH = r"(?P<{0}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{0}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{0}>(?:19|20)\d\d)"

_ISO = re.compile(r"(?<!\d)(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)(?!\d)")
_DAY_MONTH_YEAR = re.compile(
    rf"\b{_DAY.format('d')}(?:\s+of)?\s+{_MONTH.format('m')},?\s*{_YEAR.format('y')}\b", re.I
)
_MONTH_DAY_YEAR = re.compile(
    rf"\b{_MONTH.format('m')}\s+{_DAY.format('d')},?\s*{_YEAR.format('y')}\b", re.I
)
_MONTH_YEAR = re.compile(rf"\b{_MONTH.format('m')},?\s+{_YEAR.format('y')}\b", re.I)
_MONTH_ALONE = re.compile(
    r"\b(?:in|during|since|until|before|after|early|mid|late|of)\s+(?:early\s+|mid-?\s*|late\s+)?"
    + _MONTH.format("m")
    + r"(?!\w)",
    re.I,
)
_YEAR_ALONE = re.compile(rf"(?<![\d-]){_YEAR.format('y')}(?![\d-])")
_RELATIVE = re.compile(
    r"\b(?P<word>today|yesterday)\b|\b(?P<which>this|last|past)\s+"
    r"(?P<unit>week|month|year|summer|winter|spring|autumn|fall)\b",
    re.I,
)
_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


@dataclass(frozen=True, slots=True)
class Span:
    """Days from ``start`` to ``end``, both included; with ``any_year``, those
    days of whichever year (the dates then hold the leap year 2000)."""

    start: dt.date
    end: dt.date
    any_year: bool = False

    def holds(self, day: dt.date) -> bool:
        if self.any_year:
            probe = (day.month, day.day)
            return (self.start.month, self.start.day) <= probe <= (self.end.month, self.end.day)
        return self.start <= day <= self.end


def _month_span(year: int, month: int) -> Span:
    last = calendar.monthrange(year, month)[1]
    return Span(dt.date(year, month, 1), dt.date(year, month, last))


def _day(year: int, month: int, day: int) -> Span | None:
    try:
        d = dt.date(year, month, day)
    except ValueError:
        return None
    return Span(d, d)


def _season_of(start_year: int, first: int) -> Span:
    """The season of three months starting with month ``first`` of ``start_year``."""
    end_year, end_month = (start_year + 1, first - 10) if first > 10 else (start_year, first + 2)
    last = calendar.monthrange(end_year, end_month)[1]
    return Span(dt.date(start_year, first, 1), dt.date(end_year, end_month, last))


def _season(which: str, season: str, today: dt.date) -> Span:
    """ "this summer": the one of this year (this winter: the one holding January);
    "last summer": the latest one over before today."""
    first = _SEASON_START[season]
    if which == "this":
        if first == 12:  # the winter holding this year's January (December: the next one)
            return _season_of(today.year if today.month == 12 else today.year - 1, first)
        return _season_of(today.year, first)
    year = today.year
    while _season_of(year, first).end >= today:
        year -= 1
    return _season_of(year, first)


def _relative(m: re.Match[str], today: dt.date) -> Span:
    word = (m.group("word") or "").lower()
    if word == "today":
        return Span(today, today)
    if word == "yesterday":
        day = today - dt.timedelta(days=1)
        return Span(day, day)
    which, unit = m.group("which").lower(), m.group("unit").lower()
    last = which != "this"
    if unit == "week":
        monday = today - dt.timedelta(days=today.weekday())
        if last:
            monday -= dt.timedelta(days=7)
        return Span(monday, monday + dt.timedelta(days=6))
    if unit == "month":
        year, month = today.year, today.month
        if last:
            year, month = (year, month - 1) if month > 1 else (year - 1, 12)
        return _month_span(year, month)
    if unit == "year":
        year = today.year - (1 if last else 0)
        return Span(dt.date(year, 1, 1), dt.date(year, 12, 31))
    return _season(which, unit, today)


def question_days(question: str, today: dt.date | None = None) -> list[Span]:
    """The spans of days ``question`` names (see the module docstring); ``today``
    anchors "yesterday", "last month" and the like (without it they are ignored)."""
    spans: list[Span] = []
    taken: list[tuple[int, int]] = []  # text already read as a date

    def free(m: re.Match[str]) -> bool:
        return not any(a < m.end() and m.start() < b for a, b in taken)

    def take(m: re.Match[str], span: Span | None) -> None:
        taken.append((m.start(), m.end()))
        if span is not None:
            spans.append(span)

    for m in _ISO.finditer(question):
        take(m, _day(int(m["y"]), int(m["m"]), int(m["d"])))
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        for m in pattern.finditer(question):
            if free(m):
                take(m, _day(int(m["y"]), _MONTHS[m["m"].lower().rstrip(".")], int(m["d"])))
    for m in _MONTH_YEAR.finditer(question):
        if free(m):
            take(m, _month_span(int(m["y"]), _MONTHS[m["m"].lower().rstrip(".")]))
    for m in _MONTH_ALONE.finditer(question):
        if free(m):
            month = _MONTHS[m["m"].lower().rstrip(".")]
            span = _month_span(2000, month)  # a leap year: February has its 29th
            take(m, Span(span.start, span.end, any_year=True))
    for m in _YEAR_ALONE.finditer(question):
        if free(m):
            year = int(m["y"])
            take(m, Span(dt.date(year, 1, 1), dt.date(year, 12, 31)))
    if today is not None:
        for m in _RELATIVE.finditer(question):
            if free(m):
                take(m, _relative(m, today))
    return spans


def single_days(spans: Sequence[Span]) -> list[Span]:
    """The spans of one day (of one year). Context ranks with these only: a named
    day pins the log written on it, while a month or a year is too coarse — an
    event of March is logged in April, "in September" is a plan made in August
    (measured on LoCoMo, both folds: bench/RESULTS.md)."""
    return [s for s in spans if s.start == s.end and not s.any_year]


def note_in(day: str | None, spans: Sequence[Span]) -> bool:
    """Whether a note dated ``day`` (``YYYY-MM-DD...``; None: undated) falls in a span."""
    if not day or not spans:
        return False
    try:
        when = dt.date.fromisoformat(day[:10])
    except ValueError:
        return False
    return any(span.holds(when) for span in spans)


__all__ = ["Span", "note_in", "question_days", "single_days"]
