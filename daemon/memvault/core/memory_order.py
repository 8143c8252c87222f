"""Which notes a MEMORY.md section lists, and in what order (pure).

Order is computed from what git keeps — frontmatter dates, a date in the file name,
titles and paths — never from file times: a fresh clone of the same files orders
them the same way. Each note's key is computed once (``sort_key``); the Linker
keeps it between updates, so a save re-sorts nothing but the note it changed.

A note says itself that it stays out of MEMORY.md: ``memory-index: false`` in its
frontmatter (``keeps_out``). It is still indexed, searched and listed in its folder
note; only MEMORY.md's sections leave it out.

The vault root's section also names the other top-level folders, those no section
lists (``other_folder``), with how many notes each holds, the biggest first
(``folder_counts``): a vault of a person's own folders (``Plugins/``, ``Archive/``)
showed an agent 2 of its 173 notes and nothing of where the rest were.
"""

from __future__ import annotations

import functools
import posixpath
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memvault.core.memory_copies import description, fold
from memvault.core.text import trim_proof

_ISO_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")
_NAME_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")
# "mtime" is read as "updated" (with the same fallbacks): file times are not in git
ORDERS = ("date", "updated", "mtime", "title")
KEEP_OUT_FIELD = "memory-index"
_KEEP_OUT_VALUES = frozenset({"false", "no", "off", "0", "hide", "hidden", "exclude", "never"})
# a stamp sorts newest first and a path ascending in one ascending sort: each character
# of the stamp is mirrored, and a terminator above them all makes a longer stamp
# ("2024-03-12") come before its prefix ("2024-03")
_MIRROR = {c: 0x10FFFF - c for c in range(32, 127)}
_END = "\U0010ffff"


@dataclass(frozen=True, slots=True)
class SectionRule:
    """One managed section of MEMORY.md (configured in ``memory.sections``).
    ``folder = ""`` is the vault root: notes outside every folder."""

    name: str
    title: str
    folder: str
    filter: Mapping[str, str] = field(default_factory=dict)
    order: str = "date"  # one of ORDERS
    limit: int = 10


FOLDER_LINES = 8  # the other top-level folders the root's section names (+ "N more folders")


# the form of MEMORY.md's and the folder notes' links to notes (``CatalogueEntry.link``),
# changed when a link they wrote led elsewhere: 2, ``[[Plan ]]`` for ``Plan .md`` (Obsidian
# reads it trimmed) is ``[[Plan .md]]``. After a change, MEMORY.md is rewritten once on the
# next start (``status.keep_memory_settings``) and every folder note is due once
# (``memory_stored.FolderNotesKept``: a process with no daemon kept them as they were)
LINKS_FORM = 2


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """What MEMORY.md needs to know of one note."""

    path: str
    title: str
    summary: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    mtime_ns: int = 0  # not used for order (git does not keep it); kept for callers

    @property
    def link(self) -> str:
        """The target of MEMORY.md's link to it: its path, ``.md`` left out unless
        Obsidian would read the link as another name (``Plan .md``: ``trim_proof``)."""
        return trim_proof(
            self.path[:-3] if self.path.lower().endswith(".md") else self.path, self.path
        )


@dataclass(frozen=True, slots=True)
class Listing:
    """What one section lists: the first ``limit`` notes of its rule, and how many
    notes the rule selects in all (the rest is the "N more")."""

    top: tuple[CatalogueEntry, ...]
    total: int
    # the root's section: the other top-level folders and their notes, biggest first
    folders: tuple[tuple[str, int], ...] = ()
    # per note of ``top``, the notes saying the same the walk passed (core/memory_copies)
    alike: tuple[int, ...] = ()


def in_folder(path: str, folder: str) -> bool:
    """Whether ``path`` is under ``folder`` (``""``: a note at the vault root)."""
    folder = folder.strip("/")
    if not folder:
        return "/" not in path
    return path.startswith(folder + "/")


def other_folder(path: str, rules: Sequence[SectionRule]) -> str | None:
    """The top-level folder of a note no section's folder holds; None for a note at
    the root or in a section's folder."""
    if "/" not in path or any(r.folder.strip("/") and in_folder(path, r.folder) for r in rules):
        return None
    folder = path.split("/", 1)[0]
    # a name no line can hold (a line break, a control character) is not named; nor a
    # folder memvault makes, whose section a person removed from memory.sections: it
    # stays out of MEMORY.md, as they asked
    if UNWRITABLE.search(folder) or folder.casefold() in ROLE_FOLDERS:
        return None
    return folder


def counted_folder(entry: CatalogueEntry, rules: Sequence[SectionRule]) -> str | None:
    """The folder the root's section counts ``entry`` in (``other_folder``); None for a
    note it does not count (one that keeps itself out of MEMORY.md too)."""
    return None if keeps_out(entry) else other_folder(entry.path, rules)


# what no line of MEMORY.md can hold: a line break, a control character
UNWRITABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
ROLE_FOLDERS = frozenset({"people", "projects", "decisions", "logs"})  # memvault's four


def bare(text: str) -> str:
    """``text``'s letters without their marks and in their usual width (Ä as A, É as E,
    Ｆ as F), as an alphabet orders them with no locale: by code point, Ärger.md came
    after Zeit.md and Élodie after Zoë. Scripts with no such letters (Chinese, Korean)
    keep code point order; a text of ASCII is itself."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


_RUN = re.compile(r"([0-9]+)")
_DIGIT = re.compile(r"[0-9]")
# ASCII's space, punctuation and symbols in the order Intl.Collator's root collation
# (ICU) gives them, all before the digits and letters: "note_a" before "note1" and
# "a~b" before "ab", where code points put "_" after the digits and "~" after the
# letters (tests/test_core_memory_md.py compares with Node's Intl.Collator). Each is
# read as a control character below the digits; a name holds none of its own.
_ICU_ASCII = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PUNCTUATION = str.maketrans({c: chr(1 + i) for i, c in enumerate(_ICU_ASCII)})


def collation(text: str) -> str:
    """``text`` as Obsidian's file explorer orders names, for a plain ascending sort: its
    "File name (A to Z)" compares with ``Intl.Collator(undefined, {numeric: true,
    sensitivity: "base"})`` (as plugins that sort as it does, custom-sort's
    ``standardObsidian``, Bartender's ``alphabetical``, write it), so a number in a name
    is its value (topic-2 before topic-10), and case and accents are set aside (``bare``,
    casefolded); ASCII's punctuation in the collator's order (``_PUNCTUATION``). Code
    point order otherwise, no locale."""
    plain = (text.lower() if text.isascii() else bare(text).casefold()).translate(_PUNCTUATION)
    if _DIGIT.search(plain) is None:
        return plain
    parts = _RUN.split(plain)  # text, number, text, ...: a loop, not a callback a match
    parts[1::2] = map(_number, parts[1::2])
    return "".join(parts)


@functools.lru_cache(maxsize=4096)  # a vault's numbers repeat: its years, months, days
def _number(run: str) -> str:
    digits = run.lstrip("0") or "0"
    return f"{len(digits):03d}{digits}"  # its length first: 2 before 10, 007 as 7


def _path_order(path: str) -> str:
    """A path's place: ``collation``, then the path itself to part the rest (a path that
    is its own collation: itself)."""
    key = collation(path)
    return path if key == path else key + "\x00" + path


def folder_counts(counts: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    """The folders holding notes, the biggest first, then by name (``collation``)."""
    held = [(f, n) for f, n in counts.items() if n > 0]
    return tuple(sorted(held, key=lambda fn: (-fn[1], collation(fn[0]), fn[0])))


def keeps_out(entry: CatalogueEntry) -> bool:
    """The note asks to stay out of MEMORY.md (``memory-index: false``)."""
    value = entry.fields.get(KEEP_OUT_FIELD)
    if value is None:
        return False
    if isinstance(value, bool):
        return not value
    return str(value).strip().casefold() in _KEEP_OUT_VALUES


def is_marker_name(name: str) -> bool:
    """Whether ``name`` is a section's word as MEMORY.md's markers hold it: letters and
    digits of any script with their combining marks (the vowel signs of a Hindi or a
    Tamil word, लोग: no letters to ``str.isalnum`` or to a pattern's ``\\w``), - and _."""
    return bool(name) and all(
        c.isalnum() or c in "-_" or unicodedata.category(c)[0] == "M" for c in name
    )


def is_section_name(name: str) -> bool:
    """A section's name config.toml takes: a marker's word with a letter or a digit."""
    return is_marker_name(name) and any(c.isalnum() for c in name)


def matches(entry: CatalogueEntry, wanted: Mapping[str, str]) -> bool:
    return all(field_says(entry.fields, name, value) for name, value in wanted.items())


def field_says(fields: Mapping[str, Any], name: str, value: str) -> bool:
    """Whether the frontmatter field ``name`` says ``value``, as a section's filter reads
    it: case and spaces aside, or one item of a list property so."""
    have = fields.get(name)
    values = have if isinstance(have, list) else [have]
    return any(v is not None and str(v).strip().casefold() == value.casefold() for v in values)


def _date_of(entry: CatalogueEntry, name: str) -> str:
    value = entry.fields.get(name)
    if value is not None:
        m = _ISO_DATE.match(str(value).strip())
        if m:
            return str(value).strip()
    if name == "date":
        m = _NAME_DATE.search(posixpath.basename(entry.path))
        if m:
            return m.group(1)
    return ""


def sort_key(entry: CatalogueEntry, order: str) -> tuple[str, str]:
    """The note's place in ``order``, ascending: newest first (by ``date``, or
    ``updated`` then ``date``), then by path; for ``title``: title, then path (titles
    and paths as Obsidian's file explorer orders names: ``collation``)."""
    if order == "title":
        return (collation(entry.title), entry.path)  # (the path only parts equal titles)
    fallbacks = ("date",) if order == "date" else ("updated", "date")
    stamp = next((d for d in (_date_of(entry, f) for f in fallbacks) if d), "")
    return (stamp.translate(_MIRROR) + _END, _path_order(entry.path))


ORDERS_KEPT = ("date", "updated", "title")  # the orders whose keys the index keeps
# ``stored_keys``' algorithm: one more when ``sort_key``, ``collation`` or the packing
# change how any note's key reads (tests/test_memory_order_stored.py pins it)
KEYS_ALGORITHM = 1


def keys_made() -> str:
    """What this process's ``stored_keys`` are computed under: ``KEYS_ALGORITHM`` and
    the version of Python's Unicode tables (``collation``'s casefold and NFKD: Python
    3.11's Unicode 14.0 keeps U+1E030, a Cyrillic modifier letter, as itself, after
    every Cyrillic letter; 3.12's 15.0 reads it as а, first). An index records it with
    its keys (``note_order.KEYS_MADE``); a writer of another computes them all again."""
    return f"{KEYS_ALGORITHM} unicode {unicodedata.unidata_version}"


def stored_keys(path: str, title: str, fields: Mapping[str, Any]) -> tuple[bytes, ...]:
    """The note's ``sort_key`` in each of ``ORDERS_KEPT`` as bytes whose plain byte order
    is the keys' order (an index keeps them: a write with no daemon reads a section's
    first notes in order, not every note sorted). Each string of a key in UTF-8 (its
    byte order is code point order), a NUL escaped as NUL 0xFF and ended by NUL NUL, so
    a string sorts before any longer one it begins. They depend on ``KEYS_ALGORITHM``
    and on Python's Unicode tables (``keys_made``), which the index records with them."""
    entry = CatalogueEntry(path, title, "", fields)
    return tuple(_packed(sort_key(entry, order)) for order in ORDERS_KEPT)


def _packed(parts: tuple[str, ...]) -> bytes:
    return b"".join(p.encode("utf-8").replace(b"\x00", b"\x00\xff") + b"\x00\x00" for p in parts)


_DIGITS = re.compile(r"\d+")


def copy_key(entry: CatalogueEntry) -> tuple[str, ...] | None:
    """What notes listed once share (core/memory_copies): the words of their line, their
    folder, their title but for its numbers (fact-1, fact-10) and their date (a day's log
    is each day's own); None for a line of a link alone, and for a note saying it names
    one person or one project (``type: person``, ``type: project``: memvault's
    templates) in any section. People and projects are never copies (``folds``)."""
    said = description(entry)
    if not said or _names_one(entry):
        return None
    title = _DIGITS.sub("#", entry.title).casefold()
    return (said.casefold(), posixpath.dirname(entry.path), title, _date_of(entry, "date"))


PEOPLE = "people"  # the section (and memvault's folder) of notes that each name someone
PERSON = "person"  # the type: of a note that names someone, wherever it is
# the sections (and memvault's folders) whose notes each name one thing, and the type: of
# such a note wherever it is: people and projects
ONE_EACH = {PEOPLE: PERSON, "projects": "project"}
_ONE_TYPES = frozenset(ONE_EACH.values())


def _names_one(entry: CatalogueEntry) -> bool:
    """A note of ``type: person`` or ``type: project``, or whose list of types holds one
    (a section of people or projects named otherwise, ``team`` or ``Équipe``, in a
    folder of its own name: two of them are two people, two projects)."""
    kind = entry.fields.get("type")
    kinds = kind if isinstance(kind, list) else [kind]  # a list property: as ``matches`` reads it
    return any(isinstance(k, str) and k.strip().casefold() in _ONE_TYPES for k in kinds)


def folds(rule: SectionRule) -> bool:
    """Whether the section lists copies once. Not the people or projects section, nor a
    section of a folder so named: a note there names one person, one agent or one
    project, and two of them are two whatever their notes say ("Agent 1" and "Agent 2"
    of one template's summary, made the same day; "New 3" and "New 20"; "Sprint 1" and
    "Sprint 2", each "A two-week sprint"). Copies are an agent's one fact saved again
    and again, which its memory tool writes as topics, decisions, notes of its own."""
    last = posixpath.basename(rule.folder.strip("/")).casefold()
    return rule.name.casefold() not in ONE_EACH and last not in ONE_EACH


def _own(entry: CatalogueEntry) -> None:
    return None  # a note's own key: listed whatever the notes above it say


def first_notes(
    rule: SectionRule, ordered: Iterable[CatalogueEntry]
) -> tuple[tuple[CatalogueEntry, ...], tuple[int, ...]]:
    """The notes ``rule``'s section lists of ``ordered`` (its notes in order), copies
    folded where the section ``folds``."""
    return fold(ordered, rule.limit, copy_key if folds(rule) else _own)


def sort_entries(entries: Sequence[CatalogueEntry], order: str) -> list[CatalogueEntry]:
    return sorted(entries, key=lambda e: sort_key(e, order))


def select(rule: SectionRule, catalogue: Sequence[CatalogueEntry]) -> list[CatalogueEntry]:
    """Every note the rule lists, in its order (before the limit)."""
    chosen = [
        e
        for e in catalogue
        if in_folder(e.path, rule.folder) and not keeps_out(e) and matches(e, rule.filter)
    ]
    return sort_entries(chosen, rule.order)


def listing(
    rule: SectionRule,
    ordered: Sequence[CatalogueEntry],
    *,
    presorted: bool,
    rules: Sequence[SectionRule] = (),
) -> Listing:
    """The rule's ``Listing`` from the folder's notes (``presorted``: already in the
    rule's order and all in its folder, as the Linker keeps them; else every note, and
    the root's section names the folders no rule of ``rules`` lists)."""
    if not presorted:
        chosen = select(rule, ordered)
        folders: tuple[tuple[str, int], ...] = ()
        if not rule.folder.strip("/") and rules:
            counts: dict[str, int] = {}
            for e in ordered:
                if (f := counted_folder(e, rules)) is not None:
                    counts[f] = counts.get(f, 0) + 1
            folders = folder_counts(counts)
        top, alike = first_notes(rule, chosen)
        return Listing(top, len(chosen), folders, alike)
    chosen = [e for e in ordered if not keeps_out(e) and matches(e, rule.filter)]
    top, alike = first_notes(rule, chosen)
    return Listing(top, len(chosen), alike=alike)


__all__ = [
    "FOLDER_LINES",
    "KEEP_OUT_FIELD",
    "KEYS_ALGORITHM",
    "ONE_EACH",
    "ORDERS",
    "ORDERS_KEPT",
    "PEOPLE",
    "UNWRITABLE",
    "CatalogueEntry",
    "Listing",
    "SectionRule",
    "collation",
    "copy_key",
    "counted_folder",
    "first_notes",
    "folder_counts",
    "folds",
    "in_folder",
    "keeps_out",
    "keys_made",
    "listing",
    "matches",
    "other_folder",
    "select",
    "sort_entries",
    "sort_key",
    "stored_keys",
]
