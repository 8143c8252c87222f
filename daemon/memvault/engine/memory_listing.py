"""What MEMORY.md's sections and the folder notes list, kept between updates.

A save changes one note; re-sorting every note of the vault for it (and rendering
every folder note again) made a save's cost grow with the vault. ``MemoryListing``
keeps, per (folder, order), the folder's notes sorted by a key computed once per
note (``core.memory_order.sort_key``), and each note's entry line; an update looks
at which catalogue rows are new (by identity: the catalogue re-reads only changed
rows) and moves just those. What it answers is exactly what sorting afresh would:
a fresh index of the same files lists the same notes in the same order.
"""

from __future__ import annotations

import bisect
import json
import posixpath
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memvault.core import memory_md
from memvault.core.memory_order import (
    CatalogueEntry,
    Listing,
    SectionRule,
    counted_folder,
    first_notes,
    folder_counts,
    in_folder,
    matches,
)
from memvault.engine.folders import section_said
from memvault.index.rows import NoteRow
from memvault.vault.paths import is_note

if TYPE_CHECKING:
    from memvault.index.store import Store

_REBUILD_AT = 2_000  # changed notes past which sorting afresh is cheaper than moving them


@dataclass(frozen=True, slots=True)
class Refreshed:
    """One refresh: the notes, and the folders (of the rules) whose notes changed."""

    notes: Mapping[str, CatalogueEntry]
    changed_folders: frozenset[str]


class MemoryListing:
    """The sorted notes of each rule's folder, moved note by note as notes change."""

    def __init__(self, rules: Sequence[SectionRule]):
        self.rules = tuple(rules)
        self._rows: dict[str, NoteRow] = {}
        self._entries: dict[str, CatalogueEntry] = {}
        self._lines: dict[str, str] = {}
        self._out: set[str] = set()  # notes saying memory-index: false
        self._keys = {(r.folder, _order(r.order)) for r in self.rules}
        self._sorted: dict[tuple[str, str], list[tuple[tuple[str, str], str]]] = {}
        self._folder_lines: dict[tuple[str, str], list[str]] = {}  # in step with _sorted
        # a rule with a filter: the notes it selects (of its folder, matching, not kept
        # out), sorted, so its listing reads its first notes, not every note of the folder
        self._filtered = {_selects(r): r for r in self.rules if r.filter}
        self._selected: dict[_Selects, list[tuple[tuple[str, str], str]]] = {}
        # the notes of each top-level folder no rule lists (the root's section names them)
        self._others: dict[str, int] = {}
        self._built = False

    def refresh(
        self, rows: Mapping[str, NoteRow], changed: Sequence[str] | None = None
    ) -> Refreshed:
        """Bring the lists in line with the catalogue's ``rows``. ``changed``: the paths
        whose rows may have changed (or gone) since the last refresh, as the catalogue
        logs them; None: found by looking at every row (by identity)."""
        if changed is None or not self._built:
            changed = [p for p, row in rows.items() if self._rows.get(p) is not row]
            gone = (
                [p for p in self._rows if p not in rows]
                if len(self._rows) != len(rows) or (changed)
                else []
            )
        else:  # the same as the look at every row would find: a row no longer its own
            changed = [p for p in dict.fromkeys(changed) if self._rows.get(p) is not rows.get(p)]
            gone = []
        if not self._built or len(changed) + len(gone) > _REBUILD_AT:
            self._rebuild(rows)
            return Refreshed(self._entries, frozenset(f for f, _ in self._keys))
        folders: set[str] = set()
        for path in (*changed, *gone):
            old = self._entries.pop(path, None)
            self._lines.pop(path, None)
            self._out.discard(path)
            row = rows.get(path)
            new = _entry(row) if row is not None else None
            if row is None:
                self._rows.pop(path, None)
            else:
                self._rows[path] = row
            self._count_other(old, -1)
            self._count_other(new, 1)
            for folder, order in self._keys:
                if not in_folder(path, folder):
                    continue
                folders.add(folder)
                items = self._sorted[(folder, order)]
                lines = self._folder_lines[(folder, order)]
                if old is not None:
                    key = (memory_md.sort_key(old, order), path)
                    at = bisect.bisect_left(items, key)
                    if at < len(items) and items[at] == key:
                        del items[at]
                        del lines[at]
                if new is not None:
                    key = (memory_md.sort_key(new, order), path)
                    at = bisect.bisect_left(items, key)
                    items.insert(at, key)
                    lines.insert(at, memory_md.entry_line(new))
            for selects, rule in self._filtered.items():
                if not in_folder(path, rule.folder):
                    continue
                chosen = self._selected[selects]
                order = _order(rule.order)
                if old is not None:
                    key = (memory_md.sort_key(old, order), path)
                    at = bisect.bisect_left(chosen, key)
                    if at < len(chosen) and chosen[at] == key:
                        del chosen[at]
                if new is not None and _chosen(new, rule):
                    bisect.insort(chosen, (memory_md.sort_key(new, order), path))
            if new is not None:
                self._add(new)
        return Refreshed(self._entries, frozenset(folders))

    def rebuild(self, rows: Mapping[str, NoteRow]) -> frozenset[str]:
        """Sort afresh from ``rows`` (after bulk work: built in one go, the lists sit
        together in memory, not among the work's freed remains); the folders (of the
        rules) whose notes differ from what was listed before."""
        before = self._entries if self._built else None
        self._rebuild(rows)
        if before is None:
            return frozenset(f for f, _ in self._keys)
        differ = [p for p, e in self._entries.items() if before.get(p) != e]
        differ += [p for p in before if p not in self._entries]
        return frozenset(f for f, _ in self._keys if any(in_folder(p, f) for p in differ))

    def _rebuild(self, rows: Mapping[str, NoteRow]) -> None:
        self._rows = dict(rows)
        self._entries, self._lines, self._out = {}, {}, set()
        self._others = {}
        for entry in (_entry(row) for row in rows.values()):
            self._add(entry)
            self._count_other(entry, 1)
        for folder, order in self._keys:
            items = sorted(
                (memory_md.sort_key(e, order), e.path)
                for e in self._entries.values()
                if in_folder(e.path, folder)
            )
            self._sorted[(folder, order)] = items
            self._folder_lines[(folder, order)] = [self.line(p) for _, p in items]
        for selects, rule in self._filtered.items():
            self._selected[selects] = sorted(
                (memory_md.sort_key(e, _order(rule.order)), e.path)
                for e in self._entries.values()
                if in_folder(e.path, rule.folder) and _chosen(e, rule)
            )
        self._built = True

    def _add(self, entry: CatalogueEntry) -> None:
        self._entries[entry.path] = entry
        if memory_md.keeps_out(entry):
            self._out.add(entry.path)

    def _count_other(self, entry: CatalogueEntry | None, step: int) -> None:
        folder = None if entry is None else counted_folder(entry, self.rules)
        if folder is not None:
            left = self._others.get(folder, 0) + step
            if left > 0:
                self._others[folder] = left
            else:
                self._others.pop(folder, None)

    def line(self, path: str) -> str:
        """The entry line memvault writes for a note (computed once per version)."""
        got = self._lines.get(path)
        if got is None:
            got = self._lines[path] = memory_md.entry_line(self._entries[path])
        return got

    def kept_out(self) -> list[str]:
        """The notes saying ``memory-index: false`` (``memory_md.keeps_out``), sorted."""
        return sorted(self._out)

    def lines(self) -> Mapping[str, str]:
        return _Lines(self)

    def listing(self, rule: SectionRule) -> Listing:
        """The rule's top ``limit`` notes and how many it selects in all (the root's:
        and the other top-level folders, ``memory_order.listing``)."""
        items = self._sorted[(rule.folder, _order(rule.order))]
        folders = folder_counts(self._others) if not rule.folder.strip("/") else ()
        entries = self._entries
        if not rule.filter:
            total = len(items) - sum(1 for p in self._out if in_folder(p, rule.folder))
            # read as far as the walk goes: the first notes, and the copies among them
            listed = (entries[path] for _, path in items if path not in self._out)
            top, alike = first_notes(rule, listed)
            return Listing(top, total, folders, alike)
        chosen = self._selected[_selects(rule)]
        top, alike = first_notes(rule, (entries[path] for _, path in chosen))
        return Listing(top, len(chosen), folders, alike)

    def folder_lines(self, rule: SectionRule) -> Sequence[str]:
        """Every note of the rule's folder (whatever the filter), in its order: the entry
        lines, kept in step with the sorted notes (do not change the list)."""
        return self._folder_lines[(rule.folder, _order(rule.order))]


class _Lines(Mapping[str, str]):
    """``path -> entry line`` over a MemoryListing, computed on demand."""

    def __init__(self, owner: MemoryListing):
        self._owner = owner

    def __getitem__(self, path: str) -> str:
        if path not in self._owner._entries:
            raise KeyError(path)
        return self._owner.line(path)

    def __iter__(self) -> Iterator[str]:
        return iter(self._owner._entries)

    def __len__(self) -> int:
        return len(self._owner._entries)


def _order(order: str) -> str:
    return "updated" if order == "mtime" else order


_Selects = tuple[str, str, tuple[tuple[str, str], ...]]


def _selects(rule: SectionRule) -> _Selects:
    """What a filtered rule selects, as a key: its folder, order and filter."""
    return (rule.folder, _order(rule.order), tuple(sorted(rule.filter.items())))


def _chosen(entry: CatalogueEntry, rule: SectionRule) -> bool:
    """Whether a note of the rule's folder is one it lists (``memory_order.select``)."""
    return not memory_md.keeps_out(entry) and matches(entry, rule.filter)


def _entry(row: NoteRow) -> CatalogueEntry:
    return CatalogueEntry(row.path, row.title, row.summary, row.frontmatter, row.mtime_ns)


def sections_moved_away(
    store: Store,
    sections: Sequence[SectionRule],
    listings: Mapping[str, Listing],
    moves: Mapping[str, str],
    spelt_there: Callable[[str], bool],
) -> list[str]:
    """A section whose folder's notes all moved away (the folder renamed, ``People/``
    to ``Persons/`` or ``people/``) lists none of them while config.toml names the
    old folder: said on every update (``memvault status``), where they went followed
    as they move on, until the section lists notes again (its folder set anew, or
    notes back in it). A folder still there (``spelt_there``: as config.toml spells it)
    was not renamed: its notes were moved out (a person's only note dragged to the
    vault root), and config.toml is right as it is."""
    told: dict[str, list[str]] = json.loads(store.meta("memory_folders_moved") or "{}")
    now: dict[str, list[str]] = {}
    out = []
    for rule in sections:
        if not rule.folder or listings[rule.name].total or store.has_notes_under(rule.folder):
            continue  # listed, or its filter selects none of the notes still there
        if spelt_there(unicodedata.normalize("NFC", rule.folder.strip("/"))):
            continue  # (spelt so: a Mac finds people/ when it is People/ now)
        were = told.get(rule.folder, []) or [rule.folder]
        went = sorted(
            {
                posixpath.dirname(new)
                for old, new in moves.items()
                if is_note(old) and any(in_folder(old, f) for f in were)
            }
        )
        where = went or told.get(rule.folder, [])
        if where:
            now[rule.folder] = where
            went_to = ", ".join(f"{f}/" if f else "the vault root" for f in where)
            out.append(
                f"{section_said(rule.title, rule.folder)}whose notes moved to {went_to}: "
                "set its folder in .memvault/config.toml (a daemon reads it when restarted)"
            )
    if now != told:
        store.set_meta("memory_folders_moved", json.dumps(now))
    return out


__all__ = ["MemoryListing", "Refreshed", "sections_moved_away"]
