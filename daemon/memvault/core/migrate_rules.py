"""Recognisers for ``memvault migrate`` (pure): dates, decisions, names, slugs.

Split out of ``migrate.py`` so the planner reads as a planner; every rule here
is a small function or a regular expression, table-tested in
tests/test_core_migrate.py.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from operator import attrgetter

SLUG_MAX, TITLE_MAX = 60, 80
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec"
_MON = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE_CORE = (
    r"(?:(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|mon|tues?|wed|thu|thurs|fri|sat|sun)"
    r"\.?,?\s+)?[\[(]?"
    r"(?:(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})"
    rf"|(?P<mon1>{_MON})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y1>\d{{4}})"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<mon2>{_MON}),?\s+(?P<y2>\d{{4}}))"
    r"(?:(?:T|\s+at\s+|\s+|,\s*)\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s*[ap]\.?m\.?)?"
    r"(?:\s*(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}))?)?[\])]?"
)
_DATE_END = r"(?=$|[\s:,;.|)\]—–-])"
_HEAD_DATE = re.compile(_DATE_CORE + _DATE_END, re.I)
# a heading's date last, set apart by a dash, a colon, a bar or brackets ("Session 3 —
# 2024-01-10", "Standup (2024-01-10)"): not one a sentence ends on ("Standup on …")
_TAIL_DATE = re.compile(r"(?:\s[—–-]\s*|\s*[:|]\s*|\s+(?=[\[(]))" + _DATE_CORE + r"\s*$", re.I)
_LINE_DATE = re.compile(
    r"(?:[-*+]\s+)?(?:\*\*|__)?" + _DATE_CORE + r"(?:\*\*|__)?" + _DATE_END, re.I
)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_TITLE_STRIP = " \t:,;.|()[]—–-"
_DECISION = re.compile(r"\bdecided\b|\bwe\s+chose\b|\bdecision\s*(?::|：|\s[—–-]\s)", re.I)
_ADR = re.compile(r"\bADR(?:[- ]?\d+)?\b")
_NEGATED = re.compile(r"(?:\bnot|\bnever|n['’]t|\bto\s+be)\s+(?:\w+\s+){0,2}decided\b", re.I)
_DECISION_LEAD = re.compile(
    r"^(?:decision\s*(?::|：|[—–-])\s*"
    r"|(?:we\s+)?(?:have\s+)?decided\b\s*:?\s*(?:to\s+|that\s+|on\s+)?)",
    re.I,
)
_ENTRY_PREFIX = re.compile(r"^\s*(?:>\s*)*(?:(?:[-*+]|\d{1,9}[.)])\s+)?(?:\[[ xX]\]\s+)?")
_TIME_PREFIX = re.compile(
    r"^\[?\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?\]?\s*(?:[:—–|-]\s*)?", re.I
)
_SEP = r"\s*(?::|/|>|\||\s[—–-]\s)\s*(?P<name>.+)"
_PROJECT = re.compile(r"projects?" + _SEP + r"|(?P<name2>.+?)\s*[(\[]\s*project\s*[)\]]", re.I)
_PERSON_PREFIX = re.compile(r"(?:people|person|contacts?)" + _SEP, re.I)
_PAREN_TAIL = re.compile(r"\s*[(\[][^)\]]*[)\]]\s*$")
_ROLE_TAIL = re.compile(r"\s+[—–-]\s+.*$|:\s.*$")
_MENTION = re.compile(r"([A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+) (?=([A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+)\b)")
_WIKILINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_LEADING_SYMBOLS = re.compile(r"^[^\w(\[]+")
_PLAIN = re.compile(r"[^\W\d_][\w.'()&+/# -]*[\w.)]|[^\W\d_]")  # safe as a plain YAML scalar
_YAML_WORDS = frozenset(("y", "n", "yes", "no", "true", "false", "on", "off", "null"))
_SENTENCE = re.compile(r"(.+?[.!?])(?=\s|$)")
_NON_WORD, _PUNCT, _LINK_UNSAFE = (
    re.compile(r"[\W_]+"),
    re.compile(r"[^\w\s]"),
    re.compile(r"[\[\]|#^]"),
)
_LINK_PREFIX = "- Decision: [["
_PATH = attrgetter("path")
_CONTAINER_NAMES = {
    "people": "people|persons|team|team members|contacts|colleagues|whos who",
    "projects": "projects|active projects|current projects|project list",
    "decisions": "decisions|decision log|decision records|key decisions|adr|adrs"
    "|architecture decisions|architecture decision records",
}
_CONTAINERS = {n: kind for kind, names in _CONTAINER_NAMES.items() for n in names.split("|")}
# Headings about the user themself: their standing facts and preferences go to one person
# note, ``people/me.md``, which MEMORY.md's Key People lists (an inbox note it never links).
_USER_HEADINGS = frozenset(
    [
        "about me",
        "about the user",
        "about user",
        "me",
        "myself",
        "user",
        "the user",
        "user profile",
        "profile",
        "who i am",
        "personal info",
        "personal information",
        "preferences",
        "my preferences",
        "user preferences",
        "personal preferences",
        "standing preferences",
        "standing instructions",
        "likes and dislikes",
        "how i work",
        "working with me",
        "how to work with me",
    ]
)
USER_NOTE, USER_TITLE = "me", "Me"
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
    follow up lunch dinner
    prefers prefer likes like dislikes loves hates wants needs uses avoids never always
    usually often works lives speaks knows owns leads manages runs reports joined left
    moved wrote said says thinks"""
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())
_PARTICLES = frozenset(("van", "von", "de", "da", "del", "der", "di", "du", "la", "le", "al"))
_NOT_NAME_SUFFIXES = ("tion", "sion", "ment", "ness", "ity", "ogy", "ics", "ware", "ing")
_RESERVED = frozenset(("con", "prn", "aux", "nul", "com1", "com2", "com3", "lpt1", "lpt2"))


def _clean(raw: str) -> str:
    """Heading text without emphasis, code ticks, wikilink brackets, leading emoji."""
    s = raw.replace("**", "").replace("__", "").replace("`", "")
    s = _WIKILINK.sub(r"\1", s) if "[[" in s else s
    return " ".join(_LEADING_SYMBOLS.sub("", s).strip(" \t*_:").split())


def _match_date(m: re.Match[str]) -> str | None:
    if m["y"]:
        y, mo, d = m["y"], int(m["m"]), m["d"]
    else:
        y, mon, d = (m["y1"], m["mon1"], m["d1"]) if m["y1"] else (m["y2"], m["mon2"], m["d2"])
        mo = _MONTHS.index(mon[:3].lower()) // 4 + 1  # "jan feb ...": 4 characters a month
    try:
        return _dt.date(int(y), mo, int(d)).isoformat() if 1900 <= int(y) <= 2199 else None
    except ValueError:
        return None


def _reads_as_decision(text: str) -> bool:
    low = text.lower()
    if not ("decided" in low or "chose" in low or "decision" in low or "ADR" in text):
        return False  # the common case, cheaply
    s = text.replace("*", "").strip()
    found = _DECISION.search(s) or _ADR.search(s)
    return bool(found and not _NEGATED.search(s) and not s.rstrip(" _").endswith("?"))


def _first_sentence(s: str) -> str:
    m = _SENTENCE.match(s)
    return m[1] if m else s


def _shorten(s: str, n: int) -> str:
    if len(s) <= n:
        return s
    cut = s[: n - 1]
    if (space := cut.rfind(" ")) > n // 2:
        cut = cut[:space]
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
    s = _NON_WORD.sub("-", s).strip("-")
    if limit and len(s) > limit:  # cut at a word boundary when there is one
        cut = s[: limit + 1].rfind("-")
        s = s[: cut if cut > limit // 2 else limit].rstrip("-")
    s = s or "untitled"
    return s + "-note" if s in _RESERVED else s


def _namelike(text: str, lo: int, hi: int) -> bool:
    words = text.split()
    if not lo <= len(words) <= hi:
        return False
    for n, w in enumerate(words):
        folded = w.casefold()
        if folded in _NOT_NAMES or (len(w) >= 6 and folded.endswith(_NOT_NAME_SUFFIXES)):
            return False
        if n and w in _PARTICLES:
            continue
        if not (w[0].isupper() and all(c.isalpha() or c in "'’-." for c in w)):
            return False
        if sum(c.isalpha() for c in w) > 1 and w.isupper():
            return False
    return True


def _is_pair_name(text: str) -> bool:
    return _namelike(text, 2, 2)


def _person_name(text: str, liberal: bool, level: int) -> tuple[str | None, bool]:
    """(the name a heading gives a person, whether only its shape says so)."""
    m = _PERSON_PREFIX.fullmatch(text)
    name = _ROLE_TAIL.sub("", _PAREN_TAIL.sub("", m["name"] if m else text)).strip()
    if m or liberal:
        return (name if _namelike(name, 1, 4) else None), False
    return (name, True) if level >= 2 and _namelike(name, 2, 3) else (None, False)


def _project_name(text: str, in_container: bool) -> str | None:
    m = _PROJECT.fullmatch(text)
    if not m and not in_container:
        return None
    name = (m["name"] or m["name2"]) if m else text
    return _PAREN_TAIL.sub("", name).strip() or name.strip() or None


def link_line(path: str, title: str) -> str:
    """The line that stands in a body where the decision at ``path`` was taken out."""
    alias = " ".join(_LINK_UNSAFE.sub(" ", title).split())
    return f"{_LINK_PREFIX}{path.removesuffix('.md')}|{alias}]]"


_PROJECT_STATE = re.compile(r"\((paused|on hold|done|completed|finished|archived)\)", re.IGNORECASE)
# a "Status:" line of the project's own text: "- Status: paused.", "**Status**: done"
_STATUS_LINE = re.compile(
    r"[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)?status(?:\*\*|__)?[ \t]*(?::|=|[—–-])(?:\*\*|__)?"
    r"[ \t]*(?:\*\*|__)?([A-Za-z][A-Za-z -]*)",
    re.IGNORECASE,
)
_PAUSED = frozenset(("paused", "on hold", "on-hold", "blocked", "parked", "stalled", "waiting"))
_DONE = frozenset(
    (
        "done",
        "completed",
        "complete",
        "finished",
        "archived",
        "shipped",
        "cancelled",
        "canceled",
        "closed",
        "dropped",
        "abandoned",
    )
)


def _state_word(word: str) -> str | None:
    w = " ".join(word.lower().split())
    if w in _PAUSED:
        return "paused"
    if w in _DONE:
        return "done"
    return None


def _project_status(heading: str, body: tuple[str, ...] | list[str] = ()) -> str:
    """``active``, unless the project's heading says ``(paused)`` or ``(done)``, or a
    ``Status:`` line of its own text (before its first subheading) says it is paused
    (on hold, blocked...) or done (completed, shipped, cancelled...)."""
    m = _PROJECT_STATE.search(heading)
    if m is not None:
        return "paused" if m.group(1).lower() in ("paused", "on hold") else "done"
    for line in body:
        if line.lstrip().startswith("#"):
            break  # a subheading: its status lines are about something else
        if (s := _STATUS_LINE.match(line)) is not None:
            words = s.group(1).split()
            found = (_state_word(" ".join(words[:n])) for n in (len(words), 2, 1))
            return next((f for f in found if f), "active")
    return "active"
