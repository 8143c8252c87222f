"""Plan the migration of a giant memory dump into vault notes — pure and deterministic.

``plan_migration(sources)`` reads one or more ``Source(name, text, date_hint)`` (a MEMORY.md
or CLAUDE.md dump, plus ``memory/YYYY-MM-DD.md`` files with ``date_hint``) and returns a
``MigrationPlan``: the notes to write, what was uncertain, and counts. No I/O, no clock.

Invariant: every non-blank source line lands in exactly one note body, verbatim (heading
lines included), and ``PlannedNote.segments`` says where it came from. A body adds nothing
but blank lines between non-adjacent segments and one ``link_line()`` in place of each
decision extracted from it (listed in ``PlannedNote.extracted``).

Rules, in order of precedence:

- Lines end at ``\\r\\n``, ``\\n`` or a lone ``\\r`` (as editors count them). ATX headings
  (``#`` to ``######``) outside fenced code (``````` or ``~~~``, any indent) structure the
  text; a heading owns the lines up to the next heading. An unclosed fence runs to the end
  of its source, as in CommonMark, and is reported.
- Inside a decision section everything stays in the decision.
- A heading that reads as a decision ("decided", "decision:", "we chose", "ADR", "ADR-12";
  not when negated — "not decided yet" — or a question), or any heading under a
  ``Decisions`` container, becomes ``decisions/<date>-<slug>.md`` (``status: accepted``),
  dated by the heading, else the enclosing section, else the source's ``date_hint``;
  undated ones are reported. Nested in a log, person or project, it leaves a link there.
- Inside a person or project section everything else stays there (its history).
- Inside a day's log everything else stays in the log, except a heading with another date,
  which starts that day's log. Person- or project-like headings there are only reported.
- A heading starting with a date (``2024-01-02``, ``Jan 2, 2024``, ``2 January 2024``,
  ``2024-01-02T10:30Z``, ``Tue, 2024-01-02 — standup``...) extends ``logs/<date>.md``.
  Same-day entries append in source order, each with its heading. Dates are taken as
  written (no timezone conversion).
- A container heading (``People``, ``Projects``, ``Decisions``...) makes its children
  people, projects or decisions; the container heading line itself goes to the inbox.
- ``Project: X``, ``Projects / X``, ``X (project)`` or a child of ``Projects`` extends
  ``projects/<slug>.md``. ``People / X``, ``Person: X``, a name-like child of ``People``,
  or (level 2 or deeper) a heading of 2–3 capitalised words that are not known non-name
  words (``Sarah Chen (backend lead)``) extends ``people/<slug>.md``; the last is reported
  as a heuristic. Names merely mentioned in text are only reported, never given notes.
- Anything else goes to ``inbox/<source-slug>.md`` — or, for a source with a ``date_hint``,
  to that day's log (a daily file is one day's log throughout).
- Inbox text is split by timestamps: a top-level line starting with a date
  (``2024-01-02:``, ``[2024-01-02 10:30]``, ``- Jan 2, 2024 —``) starts a run that goes to
  that day's log, up to the next heading or timestamp. This is how a dump without headings
  is split; with no timestamps either it stays one inbox note. Both are reported.
- In log text, a top-level entry (a list item with its indented and lazy continuation, or a
  paragraph; a paragraph ending in ``:`` takes the list after it) whose lead paragraph
  reads as a decision moves to its own decision note; the log keeps a link in its place.
  Undated entries that read as decisions stay in the inbox and are reported.
- The same day, person, project (same slug) or decision (same date and title) is one note
  across all sources, parts in source order (sources in the order given).
- Slugs: NFC, lowercase, unicode letters kept, other runs to ``-``, at most 60 chars. A
  path taken by ``existing_paths`` (case-insensitively) or an earlier note gets ``-2``,
  ``-3``... in order of first appearance. Re-running on the same input gives the same plan;
  to re-run into a vault, compare ``content_hash`` with what is on disk and pass as
  ``existing_paths`` only the paths that hold something else.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

import yaml

__all__ = [
    "MigrationPlan",
    "MigrationStats",
    "PlannedNote",
    "Source",
    "Uncertainty",
    "link_line",
    "plan_migration",
    "render_note",
]

Kind = Literal["log", "decision", "person", "project", "inbox"]
Segment = tuple[str, int, int]
FOLDERS: dict[str, str] = {
    "log": "logs",
    "decision": "decisions",
    "person": "people",
    "project": "projects",
    "inbox": "inbox",
}
FIELD_ORDER = ("title", "type", "date", "status", "summary", "tags", "source")
SLUG_MAX, TITLE_MAX, SUMMARY_MAX = 60, 80, 160


@dataclass(frozen=True, slots=True)
class Source:
    """One text to migrate; ``date_hint`` (ISO date) makes it that day's log."""

    name: str
    text: str
    date_hint: str | None = None


@dataclass(frozen=True, slots=True)
class PlannedNote:
    path: str  # vault-relative posix path
    kind: Kind
    title: str
    date: str | None
    frontmatter: dict[str, object]
    body: str  # without frontmatter; no trailing newline
    segments: tuple[Segment, ...]  # (source name, first line, last line), 1-based inclusive
    extracted: tuple[str, ...]  # decision paths whose link_line() stands in the body
    content_hash: str  # sha256 hex of body


@dataclass(frozen=True, slots=True)
class Uncertainty:
    source: str
    line: int  # 1-based; 0 when it concerns the whole source
    kind: str
    message: str
    path: str | None = None


@dataclass(frozen=True, slots=True)
class MigrationStats:
    sources: int
    lines: int
    non_blank_lines: int
    headings: int
    notes: int
    notes_by_kind: dict[str, int]
    decisions_from_entries: int
    inbox_lines: int  # non-blank lines left in inbox notes


@dataclass(frozen=True, slots=True)
class MigrationPlan:
    notes: tuple[PlannedNote, ...]  # sorted by path
    uncertainties: tuple[Uncertainty, ...]
    stats: MigrationStats


_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MON = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DATE_CORE = (
    r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?[\[(]?"
    r"(?:(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})"
    rf"|(?P<mon1>{_MON})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y1>\d{{4}})"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<mon2>{_MON})\.?,?\s+(?P<y2>\d{{4}}))"
    r"(?:(?:T|\s+at\s+|\s+|,\s*)\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s*[ap]\.?m\.?)?"
    r"(?:\s*(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}))?)?[\])]?"
)
_DATE_END = r"(?=$|[\s:,;.|)\]—–-])"
_HEAD_DATE = re.compile(_DATE_CORE + _DATE_END, re.I)
_LINE_DATE = re.compile(
    r"(?:[-*+]\s+)?(?:\*\*|__)?" + _DATE_CORE + r"(?:\*\*|__)?" + _DATE_END, re.I
)
_TITLE_STRIP = " \t:,;.|()[]—–-"
_DECISION = re.compile(r"\bdecided\b|\bwe\s+chose\b|\bdecision\s*(?::|：|\s[—–-]\s)", re.I)
_ADR = re.compile(r"\bADR(?:[- ]?\d+)?\b")
_NEGATED = re.compile(r"(?:\bnot|\bnever|n['’]t|\bto\s+be)\s+(?:\w+\s+){0,2}decided\b", re.I)
_DECISION_LEAD = re.compile(
    r"^(?:decision\s*(?::|：|[—–-])\s*|(?:we\s+)?(?:have\s+)?decided\s+(?:to\s+|that\s+|on\s+)?)",
    re.I,
)
_ENTRY_PREFIX = re.compile(r"^\s*(?:>\s*)*(?:(?:[-*+]|\d{1,9}[.)])\s+)?(?:\[[ xX]\]\s+)?")
_TIME_PREFIX = re.compile(
    r"^\[?\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?\]?\s*(?:[:—–|-]\s*)?", re.I
)
_SEP = r"\s*(?::|/|>|\||\s[—–-]\s)\s*"
_PROJECT_PREFIX = re.compile(r"projects?" + _SEP + r"(?P<name>.+)", re.I)
_PROJECT_SUFFIX = re.compile(r"(?P<name>.+?)\s*[(\[]\s*project\s*[)\]]", re.I)
_PERSON_PREFIX = re.compile(r"(?:people|person|contacts?)" + _SEP + r"(?P<name>.+)", re.I)
_PAREN_TAIL = re.compile(r"\s*[(\[][^)\]]*[)\]]\s*$")
_ROLE_TAIL = re.compile(r"\s+[—–-]\s+.*$|:\s.*$")
_UP, _LOW = "A-ZÀ-ÖØ-Þ", "a-zß-öø-ÿ"
_MENTION = re.compile(rf"\b([{_UP}][{_LOW}]+) (?=([{_UP}][{_LOW}]+)\b)")
_CONTAINERS = {
    **dict.fromkeys(
        ("people", "persons", "team", "team members", "contacts", "colleagues", "whos who"),
        "people",
    ),
    **dict.fromkeys(
        ("projects", "active projects", "current projects", "project list"), "projects"
    ),
    **dict.fromkeys(
        (
            "decisions",
            "decision log",
            "decision records",
            "key decisions",
            "adrs",
            "adr",
            "architecture decisions",
            "architecture decision records",
        ),
        "decisions",
    ),
}
# Capitalised words that are not names: headings made of them are not people.
_NOT_NAME_WORDS = """
    project projects meeting meetings notes note decisions decision ideas idea todo todos
    task tasks plan plans planning review reviews update updates weekly daily monthly sprint
    roadmap backlog release releases design architecture standup retro retrospective summary
    overview introduction intro misc miscellaneous general important open questions question
    action actions items item next steps links resources reading list bugs bug issues issue
    the a an and of for to in on at by with about my our your their new old current active
    archive archived done completed goals goal context background preferences preference
    settings setup config user users team teams people contacts log logs journal memory
    memories facts learnings lessons learned things stuff random thoughts inbox key main core
    api database server service services client frontend backend infra infrastructure deploy
    deployment production staging testing tests test code docs documentation research
    feedback status progress results data model models system systems security performance
    billing payments auth login search index migration schema workflow process rules
    guidelines conventions style tools tool commands environment dev quick reference faq help
    known problems solutions fixes fix work personal health family travel books music home
    office week month year today tomorrow yesterday morning afternoon evening agenda minutes
    sync call chat interview onboarding hiring budget finance legal marketing sales product
    customer customers support ops operations handbook guide readme changelog history
    monday tuesday wednesday thursday friday saturday sunday last first this that these those
    met ask asked call called email emailed tell told ping thanks thank hi hello dear per cc
    via see also then when while after before during since until because if but so or
    follow up lunch dinner"""
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())
_PARTICLES = frozenset(
    ("van", "von", "de", "da", "del", "der", "di", "du", "la", "le", "bin", "al")
)
_NOT_NAME_SUFFIXES = ("tion", "sion", "ment", "ness", "ity", "ogy", "ics", "ware", "ing")
_RESERVED = frozenset(("con", "prn", "aux", "nul", "com1", "com2", "com3", "lpt1", "lpt2"))


def _clean(raw: str) -> str:
    """Heading text without emphasis, code ticks, wikilink brackets, leading emoji."""
    s = raw.replace("**", "").replace("__", "").replace("`", "")
    s = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", s)
    s = re.sub(r"^[^\w(\[]+", "", s).strip(" \t*_:")
    return " ".join(s.split())


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", "", text.casefold()).split())


def _match_date(m: re.Match[str]) -> str | None:
    if m["y"]:
        y, mo, d = int(m["y"]), int(m["m"]), int(m["d"])
    elif m["y1"]:
        y, mo, d = int(m["y1"]), _MONTHS.index(m["mon1"][:3].lower()) + 1, int(m["d1"])
    else:
        y, mo, d = int(m["y2"]), _MONTHS.index(m["mon2"][:3].lower()) + 1, int(m["d2"])
    try:
        return _dt.date(y, mo, d).isoformat() if 1900 <= y <= 2199 else None
    except ValueError:
        return None


def _reads_as_decision(text: str) -> bool:
    s = text.replace("*", "").strip()
    return bool(
        (_DECISION.search(s) or _ADR.search(s))
        and not _NEGATED.search(s)
        and not s.rstrip(" _").endswith("?")
    )


def _first_sentence(s: str) -> str:
    m = re.match(r"(.+?[.!?])(?=\s|$)", s)
    return m[1] if m else s


def _shorten(s: str, n: int) -> str:
    if len(s) <= n:
        return s
    cut = s[: n - 1]
    if (sp := cut.rfind(" ")) > n // 2:
        cut = cut[:sp]
    return cut.rstrip(" ,;:-—–") + "…"


def _strip_prefixes(line: str) -> str:
    """Entry text without list marker, checkbox, quote, emphasis, leading date and time."""
    s = _ENTRY_PREFIX.sub("", line).replace("**", "").replace("__", "")
    if (m := _HEAD_DATE.match(s)) and _match_date(m):
        s = s[m.end() :].lstrip(_TITLE_STRIP)
    return _TIME_PREFIX.sub("", s).strip()


def _decision_title(text: str) -> str:
    s = _DECISION_LEAD.sub("", _strip_prefixes(text), count=1)
    s = _shorten(_first_sentence(s).rstrip(" .;:"), TITLE_MAX)
    return s[:1].upper() + s[1:]


def _slug(text: str, limit: int = SLUG_MAX) -> str:
    s = unicodedata.normalize("NFC", text).lower().replace("'", "").replace("’", "")
    s = re.sub(r"[\W_]+", "-", s).strip("-")
    if limit and len(s) > limit:
        s = s[:limit].rstrip("-")
    s = s or "untitled"
    return s + "-note" if s in _RESERVED else s


def _namelike(text: str, lo: int, hi: int) -> bool:
    words = text.split()
    if not lo <= len(words) <= hi:
        return False
    for n, w in enumerate(words):
        folded = w.casefold()
        if folded in _NOT_NAMES:
            return False
        if n and w in _PARTICLES:
            continue
        if not (w[0].isupper() and all(c.isalpha() or c in "'’-." for c in w)):
            return False
        if sum(c.isalpha() for c in w) > 1 and w.isupper():
            return False
        if len(w) >= 6 and folded.endswith(_NOT_NAME_SUFFIXES):
            return False
    return True


def _person_name(text: str, liberal: bool, level: int) -> tuple[str | None, bool]:
    """(name, found only by its shape) for a heading naming a person."""
    m = _PERSON_PREFIX.fullmatch(text)
    name = _ROLE_TAIL.sub("", _PAREN_TAIL.sub("", m["name"] if m else text)).strip()
    if m or liberal:
        return (name if _namelike(name, 1, 4) else None), False
    return (name, True) if level >= 2 and _namelike(name, 2, 3) else (None, False)


def _project_name(text: str, in_container: bool) -> str | None:
    m = _PROJECT_PREFIX.fullmatch(text) or _PROJECT_SUFFIX.fullmatch(text)
    if not m and not in_container:
        return None
    name = m["name"] if m else text
    return _PAREN_TAIL.sub("", name).strip() or name.strip() or None


def link_line(path: str, title: str) -> str:
    """The line standing in a body where the decision at ``path`` was taken out."""
    alias = " ".join(re.sub(r"[\[\]|#^]", " ", title).split())
    return f"- Decision: [[{path.removesuffix('.md')}|{alias}]]"


_Key = tuple[str, str]
_Part = tuple[int, int, int, "_Key | None"]  # (source index, first, last 0-based, or a link)


@dataclass(slots=True)
class _Frame:
    level: int
    target: _Key
    kind: str  # log decision person project container generic inbox
    absorbing: bool
    date: str | None
    hint: str | None = None


@dataclass(slots=True)
class _Draft:
    kind: Kind
    title: str
    date: str | None
    parts: list[_Part]


class _Planner:
    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources = sources
        self.lines: list[list[str]] = []
        self.meta: dict[_Key, tuple[Kind, str, str | None]] = {}
        self.drafts: dict[_Key, _Draft] = {}
        self.pending: list[tuple[int, int, str, str, _Key | None]] = []
        self.headings = self.entry_decisions = self.stamps = 0
        self.code = self.head = bytearray()
        self.ends: dict[int, int] = {}

    # -- notes ---------------------------------------------------------------------------
    def _note(self, kind: Kind, ident: str, title: str, date: str | None) -> _Key:
        key = (kind, ident)
        self.meta.setdefault(key, (kind, title, date))
        return key

    def _log(self, date: str) -> _Key:
        return self._note("log", date, date, date)

    def _decision(self, title: str, date: str | None) -> _Key:
        return self._note("decision", f"{date or ''}/{_slug(title, 0)}", title, date)

    def _draft(self, key: _Key) -> _Draft:
        if (d := self.drafts.get(key)) is None:
            kind, title, date = self.meta[key]
            d = self.drafts[key] = _Draft(kind, title, date, [])
        return d

    def _add(self, key: _Key, si: int, a: int, b: int) -> None:
        lines = self.lines[si]
        if a > b or not any(lines[k].strip() for k in range(a, b + 1)):
            return
        d = self._draft(key)
        if d.parts and (p := d.parts[-1])[3] is None and p[0] == si and p[2] + 1 == a:
            d.parts[-1] = (si, p[1], b, None)
        else:
            d.parts.append((si, a, b, None))

    def _report(self, si: int, i: int, kind: str, msg: str, key: _Key | None = None) -> None:
        self.pending.append((si, i + 1, kind, msg, key))

    # -- one source ----------------------------------------------------------------------
    def plan_source(self, si: int, src: Source) -> None:
        lines = src.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if lines[-1] == "":
            lines.pop()
        self.lines.append(lines)
        heads = self._scan(si, lines)
        if src.date_hint:
            root = _Frame(0, self._log(src.date_hint), "log", True, src.date_hint)
        else:
            root = _Frame(
                0, self._note("inbox", src.name, f"Inbox: {src.name}", None), "inbox", False, None
            )
        stack, stamps = [root], self.stamps
        self._emit(si, root.target, 0, (heads[0][0] if heads else len(lines)) - 1, False)
        for n, (i, level, raw) in enumerate(heads):
            end = heads[n + 1][0] - 1 if n + 1 < len(heads) else len(lines) - 1
            while stack[-1].level >= level:
                stack.pop()
            self._emit(si, self._classify(si, i, level, raw, stack), i, end, True)
        if not lines:
            self._report(si, -1, "empty-source", "the source is empty")
        elif not heads and not src.date_hint:
            found = self.stamps - stamps
            msg = (
                f"no headings: split by {found} paragraph timestamps into dated logs"
                if found
                else "no headings and no timestamps: kept whole as one inbox note"
            )
            self._report(si, -1, "no-headings", msg, None if found else root.target)

    def _scan(self, si: int, lines: list[str]) -> list[tuple[int, int, str]]:
        """Mark fenced code and collect ATX headings outside it."""
        n = len(lines)
        self.code, self.head, self.ends = bytearray(n), bytearray(n), {}
        heads: list[tuple[int, int, str]] = []
        i = 0
        while i < n:
            line = lines[i]
            c = line.lstrip(" \t")[:1]
            if c == "#" and (m := _HEADING.match(line)):
                heads.append((i, len(m[1]), _CLOSING_HASHES.sub("", m[2] or "").strip()))
                self.head[i] = len(m[1])
            elif c in ("`", "~") and (m := _FENCE.match(line)):
                fch, flen = m[1][0], len(m[1])
                if not (fch == "`" and "`" in m[2]):
                    j = i + 1
                    while j < n:
                        if lines[j].lstrip(" \t").startswith(fch * 3):
                            f = _FENCE.match(lines[j])
                            if f and f[1][0] == fch and len(f[1]) >= flen and not f[2].strip():
                                break
                        j += 1
                    if j >= n:
                        self._report(
                            si,
                            i,
                            "unclosed-fence",
                            "code fence never closes: the rest of the source is code",
                        )
                    last = min(j, n - 1)
                    self.code[i : last + 1] = b"\x01" * (last + 1 - i)
                    self.ends[i], i = last, last
            i += 1
        return heads

    def _classify(self, si: int, i: int, level: int, raw: str, stack: list[_Frame]) -> _Key:
        self.headings += 1
        parent, text = stack[-1], _clean(raw)
        m = _HEAD_DATE.match(text)
        date = _match_date(m) if m else None
        if m and date is None:
            self._report(si, i, "invalid-date", f"heading {raw!r} looks dated but is no valid date")
        rest = text[m.end() :].strip(_TITLE_STRIP) if m and date else text

        def push(
            target: _Key, kind: str, absorbing: bool, fdate: str | None, hint: str | None = None
        ) -> _Key:
            stack.append(_Frame(level, target, kind, absorbing, fdate, hint))
            return target

        if parent.kind == "decision":
            return push(parent.target, "decision", True, date or parent.date)
        if (parent.hint == "decisions" and not parent.absorbing) or _reads_as_decision(rest):
            d = date or parent.date
            title = _decision_title(rest) or (f"Decisions {d}" if d else "Decision")
            key = self._decision(title, d)
            if parent.absorbing:
                self._draft(parent.target).parts.append((si, i, i, key))
            if d is None:
                self._report(si, i, "decision-undated", f"decision {raw!r} has no date", key)
            return push(key, "decision", True, d)
        if parent.absorbing:
            if parent.kind == "log" and date and date != parent.date:
                return push(self._log(date), "log", True, date)
            if parent.kind == "log" and (
                _person_name(text, False, 2)[0] or _project_name(text, False)
            ):
                self._report(
                    si,
                    i,
                    "kept-in-log",
                    f"heading {raw!r} looks like a person or project; kept in its day's log",
                    parent.target,
                )
            fdate = parent.date if parent.kind == "log" else date or parent.date
            return push(parent.target, parent.kind, True, fdate)
        if date:
            return push(self._log(date), "log", True, date)
        if hint := _CONTAINERS.get(_norm(text)):
            return push(parent.target, "container", False, None, hint)
        if name := _project_name(text, parent.hint == "projects"):
            key = self._note("project", _slug(name, 0), name, None)
            return push(key, "project", True, None)
        name, heuristic = _person_name(text, parent.hint == "people", level)
        if name:
            key = self._note("person", _slug(name, 0), name, None)
            if heuristic:
                self._report(
                    si,
                    i,
                    "person-heuristic",
                    f"heading {raw!r} taken for a person by its shape",
                    key,
                )
            return push(key, "person", True, None)
        return push(parent.target, "generic", False, None, parent.hint)

    def _emit(self, si: int, key: _Key, a: int, b: int, heading_first: bool) -> None:
        if a > b:
            return
        if key[0] == "log":
            self._emit_log(si, key, a, b)
        elif key[0] != "inbox":
            self._add(key, si, a, b)
        else:  # split inbox text at top-level timestamp lines
            lines, code, start, cur = self.lines[si], self.code, a, key
            for i in range(a + 1 if heading_first else a, b + 1):
                line = lines[i]
                if code[i] or not line or line[0] in " \t" or not (m := _LINE_DATE.match(line)):
                    continue
                if (d := _match_date(m)) is not None:
                    self._emit_run(si, cur, start, i - 1)
                    cur, start, self.stamps = self._log(d), i, self.stamps + 1
            self._emit_run(si, cur, start, b)

    def _emit_run(self, si: int, key: _Key, a: int, b: int) -> None:
        if key[0] == "log":
            return self._emit_log(si, key, a, b)
        for i, _j, lead in self._entries(si, a, b):
            if _reads_as_decision(lead):
                self._report(
                    si,
                    i,
                    "undated-decision",
                    "reads as a decision but has no date; kept in the inbox",
                    key,
                )
        self._add(key, si, a, b)

    def _emit_log(self, si: int, key: _Key, a: int, b: int) -> None:
        start = a
        for i, j, lead in self._entries(si, a, b):
            if _reads_as_decision(lead):
                self._add(key, si, start, i - 1)
                dkey = self._decision(_decision_title(lead) or "Decision", key[1])
                self._draft(key).parts.append((si, i, i, dkey))
                self._add(dkey, si, i, j)
                self.entry_decisions, start = self.entry_decisions + 1, j + 1
        self._add(key, si, start, b)

    def _entries(self, si: int, a: int, b: int) -> Iterator[tuple[int, int, str]]:
        """Top-level entries in lines a..b: (first, last, lead paragraph text)."""
        lines, code, head, i = self.lines[si], self.code, self.head, a
        while i <= b:
            line = lines[i]
            if code[i] or head[i] or not line.strip() or line[0] in " \t":
                i += 1
                continue
            mode = "item" if _LIST_ITEM.match(line) else "para"
            last, lead, lead_open, blank, k = i, [line], True, False, i + 1
            while k <= b:
                ln = lines[k]
                if head[k]:
                    break
                if not ln.strip():
                    if mode == "para":
                        break
                    blank, lead_open, k = True, False, k + 1
                    continue
                indented = ln[0] in " \t"
                if code[k]:  # a fence opener: it belongs to a list item only when indented
                    if mode == "para" or not indented:
                        break
                    k = last = min(self.ends.get(k, k), b)
                    lead_open = False
                elif indented:
                    last = k
                    if lead_open and not _LIST_ITEM.match(ln.lstrip()):
                        lead.append(ln)
                    else:
                        lead_open = False
                elif _LIST_ITEM.match(ln):
                    if mode == "para" and not blank and lines[last].rstrip().endswith(":"):
                        mode = "list"
                    if mode != "list":
                        break
                    last, lead_open = k, False
                else:
                    if blank:
                        break
                    last = k  # lazy continuation
                    if lead_open:
                        lead.append(ln)
                blank, k = False, k + 1
            yield i, last, " ".join(lead)
            i = last + 1

    # -- the plan ------------------------------------------------------------------------
    def finish(self, existing: AbstractSet[str]) -> MigrationPlan:
        taken, paths = {p.casefold() for p in existing}, {}
        for key, d in self.drafts.items():
            if d.kind == "log":
                base = f"logs/{d.date}.md"
            elif d.kind == "decision":
                base = f"decisions/{d.date + '-' if d.date else ''}{_slug(d.title)}.md"
            elif d.kind == "inbox":
                base = f"inbox/{_slug(key[1].removesuffix('.md'))}.md"
            else:
                base = f"{FOLDERS[d.kind]}/{_slug(d.title)}.md"
            path, n = base, 1
            while path.casefold() in taken:
                n += 1
                path = f"{base[:-3]}-{n}.md"
            if n > 1:
                si, a = next(((p[0], p[1]) for p in d.parts if p[3] is None), (0, 0))
                self._report(si, a, "renamed", f"{base} is taken; planned as {path}", key)
            taken.add(path.casefold())
            paths[key] = path
        notes = [self._build(key, d, paths) for key, d in self.drafts.items()]
        self._mentions()
        names = [s.name for s in self.sources]
        found = sorted(self.pending, key=lambda p: (p[0], p[1], p[2], p[3]))
        uncertain = tuple(
            Uncertainty(names[si], ln, kind, msg, paths.get(key) if key else None)
            for si, ln, kind, msg, key in found
        )
        notes.sort(key=lambda note: note.path)
        by_kind = dict.fromkeys(FOLDERS, 0) | Counter(note.kind for note in notes)
        inbox_lines = sum(
            1
            for note in notes
            if note.kind == "inbox"
            for ln in note.body.split("\n")
            if ln.strip()
        )
        stats = MigrationStats(
            sources=len(self.sources),
            lines=sum(map(len, self.lines)),
            non_blank_lines=sum(1 for ls in self.lines for ln in ls if ln.strip()),
            headings=self.headings,
            notes=len(notes),
            notes_by_kind=by_kind,
            decisions_from_entries=self.entry_decisions,
            inbox_lines=inbox_lines,
        )
        return MigrationPlan(tuple(notes), uncertain, stats)

    def _build(self, key: _Key, d: _Draft, paths: dict[_Key, str]) -> PlannedNote:
        out: list[str] = []
        segs: list[Segment] = []
        extracted: list[str] = []
        after_seg = False
        for si, a, b, link in d.parts:
            if link is not None:
                out.append(link_line(paths[link], self.drafts[link].title))
                extracted.append(paths[link])
                after_seg = False
                continue
            lines = self.lines[si]
            lo, hi = a, b
            while not lines[lo].strip():
                lo += 1
            while not lines[hi].strip():
                hi -= 1
            if after_seg:  # two separate stretches of text: one blank line between them
                while out and not out[-1].strip():
                    out.pop()
                out.append("")
                a = lo
            out.extend(lines[a : b + 1])
            segs.append((self.sources[si].name, lo + 1, hi + 1))
            after_seg = True
        while out and not out[-1].strip():
            out.pop()
        start = next((n for n, ln in enumerate(out) if ln.strip()), len(out))
        body = "\n".join(out[start:])
        fm: dict[str, object] = {"title": d.title, "type": d.kind}
        if d.date:
            fm["date"] = d.date
        if d.kind == "decision":
            fm["status"] = "accepted"
        fm["summary"] = _summary(out[start:], d.title)
        fm["tags"] = ["migrated"]
        refs = [f"{name}#L{a}-L{b}" if a != b else f"{name}#L{a}" for name, a, b in segs]
        if refs:
            fm["source"] = refs[0] if len(refs) == 1 else refs
        return PlannedNote(
            path=paths[key],
            kind=d.kind,
            title=d.title,
            date=d.date,
            frontmatter=fm,
            body=body,
            segments=tuple(segs),
            extracted=tuple(extracted),
            content_hash=hashlib.sha256(body.encode()).hexdigest(),
        )

    def _mentions(self) -> None:
        """Report capitalised name pairs mentioned often that got no people note."""
        people = {k[1] for k in self.drafts if k[0] == "person"}
        counts: Counter[str] = Counter()
        first: dict[str, tuple[int, int]] = {}
        for si, lines in enumerate(self.lines):
            joined, pos, line = "\n".join(lines), 0, 0
            for m in _MENTION.finditer(joined):
                name = f"{m[1]} {m[2]}"
                counts[name] += 1
                if name not in first:
                    line, pos = line + joined.count("\n", pos, m.start()), m.start()
                    first[name] = (si, line)
        found = [(n, c) for n, c in counts.items() if c >= 3 and _slug(n, 0) not in people]
        found = [(n, c) for n, c in found if _namelike(n, 2, 2)]
        for name, c in sorted(found, key=lambda nc: (-nc[1], nc[0]))[:20]:
            si, ln = first[name]
            self._report(
                si,
                ln,
                "name-mentions",
                f"{name!r} is mentioned {c} times but has no heading; no people note made",
            )


def _summary(body: list[str], title: str) -> str:
    for line in body:
        s = line.strip()
        if not s or s.startswith(("#", "```", "~~~", "- Decision: [[", "---")):
            continue
        if s := _strip_prefixes(s):
            return _shorten(_first_sentence(s), SUMMARY_MAX)
    return _shorten(title, SUMMARY_MAX)


def plan_migration(
    sources: Sequence[Source], *, existing_paths: AbstractSet[str] = frozenset()
) -> MigrationPlan:
    """Split ``sources`` into planned notes (see the module docstring for the rules).

    Raises ValueError for duplicate or empty source names and a ``date_hint`` that is not
    an ISO date (YYYY-MM-DD).
    """
    names = [s.name for s in sources]
    if len(set(names)) != len(names) or not all(names):
        raise ValueError(f"source names must be unique and non-empty: {names!r}")
    for s in sources:
        if s.date_hint is not None:
            try:
                ok = _dt.date.fromisoformat(s.date_hint).isoformat() == s.date_hint
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"{s.name}: date_hint {s.date_hint!r} is not YYYY-MM-DD")
    planner = _Planner(sources)
    for si, src in enumerate(sources):
        planner.plan_source(si, src)
    return planner.finish(existing_paths)


def render_note(note: PlannedNote, archive_link: str | Mapping[str, str]) -> str:
    """The file text: frontmatter, body, and a back-link to the archived original.

    ``archive_link`` is the archive note (``archive/MEMORY-2024-05-01``) for every source,
    or a mapping from source name to archive note.
    """
    fm = dict(note.frontmatter)
    ordered = {k: fm.pop(k) for k in FIELD_ORDER if k in fm} | dict(sorted(fm.items()))
    if isinstance(ordered.get("date"), str):
        with contextlib.suppress(ValueError):  # a date object dumps as an unquoted ISO date
            ordered["date"] = _dt.date.fromisoformat(str(ordered["date"]))
    head = yaml.safe_dump(
        ordered, sort_keys=False, allow_unicode=True, default_flow_style=None, width=1 << 30
    )
    ranges: dict[str, list[tuple[int, int]]] = {}
    for name, a, b in note.segments:
        ranges.setdefault(name, []).append((a, b))
    refs = []
    for name, rs in ranges.items():
        target = archive_link if isinstance(archive_link, str) else archive_link.get(name)
        if not target or re.search(r"[\[\]|#^\n]", target):
            raise ValueError(f"no usable archive link for {name!r}: {target!r}")
        alias = re.sub(r"[\[\]|#^]", " ", name)
        spans = [f"{a}–{b}" if a != b else str(a) for a, b in rs[:8]]
        more = f" and {len(rs) - 8} more" if len(rs) > 8 else ""
        word = "line" if len(rs) == 1 and rs[0][0] == rs[0][1] else "lines"
        refs.append(f"[[{target.removesuffix('.md')}|{alias}]] {word} {', '.join(spans)}{more}")
    back = "; ".join(refs) or "a migrated dump"
    return f"---\n{head}---\n\n{note.body}\n\n---\n*Migrated from {back}.*\n"
