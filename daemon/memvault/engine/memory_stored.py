"""What MEMORY.md's sections and the folder notes list, read from the index, for a process
that holds no note rows (the CLI, the Python API, the MCP server without a daemon).

Each note's place in every order is kept with its row (``schema.ORDER_COLUMNS``,
computed once per note when its row is written: ``memory_order.stored_keys``), indexed
by folder. A section reads its folder's first notes in order, a page at a time, as far
as its walk goes (``memory_order.first_notes``), and counts the rest in SQL; a filter
reads the notes whose frontmatter names its field, and keeps those it matches. Sorting
every note of the vault afresh for one write took 1.4 s of a 2.2 s `memvault add` at
100,000 notes (bench/RESULTS.md). A folder note is every note of its folder, read in
order when it is due. What it answers is ``MemoryListing``'s (a daemon's, from its
rows): a fresh index of the same files lists the same notes in the same order
(tests/test_oneshot_writes.py).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from importlib import metadata
from typing import TYPE_CHECKING

from memvault.core import memory_md, memory_order
from memvault.core.memory_order import (
    ROLE_FOLDERS,
    UNWRITABLE,
    CatalogueEntry,
    Listing,
    SectionRule,
    first_notes,
    folder_counts,
    keys_made,
    matches,
)

if TYPE_CHECKING:
    from memvault.index.store import Store
    from memvault.vault.files import VaultFS

_FIRST_PAGE = 32  # notes read at once at first; each page after, four times more


class StoredListing:
    """MEMORY.md's lists answered by the index's kept keys (``MemoryListing``'s methods)."""

    def __init__(self, store: Store, rules: Sequence[SectionRule]):
        self.store = store
        self.rules = tuple(rules)
        self._notes = _Notes(store)

    def notes(self) -> Mapping[str, CatalogueEntry]:
        """The index notes by path, each read when asked for."""
        return self._notes

    def listing(self, rule: SectionRule) -> Listing:
        """The rule's top ``limit`` notes and how many it selects in all (the root's:
        and the other top-level folders, ``memory_order.listing``)."""
        order = _order(rule.order)
        folders = self._other_folders() if not rule.folder.strip("/") else ()
        if not rule.filter:
            top, alike = first_notes(rule, self._walk(rule.folder, order))
            return Listing(top, self.store.listed_count(rule.folder), folders, alike)
        # the notes naming the filter's first field (a superset), matched as a daemon does
        name = json.dumps(next(iter(rule.filter)), ensure_ascii=False)[1:-1]
        named = self.store.ordered_notes(rule.folder, order, having=name)
        chosen = [e for _, e in named if matches(e, rule.filter)]
        top, alike = first_notes(rule, chosen)
        return Listing(top, len(chosen), folders, alike)

    def _walk(self, folder: str, order: str) -> Iterator[CatalogueEntry]:
        """The notes of ``folder`` MEMORY.md may list, in ``order``, read a page at a time."""
        after, size = None, _FIRST_PAGE
        while True:
            page = self.store.ordered_notes(folder, order, after=after, limit=size)
            for _, entry in page:
                self._notes.known[entry.path] = entry
                yield entry
            if len(page) < size:
                return
            after, size = page[-1][0], size * 4

    def _other_folders(self) -> tuple[tuple[str, int], ...]:
        """The top-level folders no rule lists and their notes (``memory_order.other_folder``),
        the biggest first."""
        ruled = [r.folder.strip("/") for r in self.rules if r.folder.strip("/")]
        tops = sorted({f for f in ruled if "/" not in f})
        counts = self.store.listed_by_folder(tops)
        deeper = {f for f in ruled if "/" in f and f.split("/", 1)[0] not in tops}
        for folder in deeper:  # a deeper rule's notes are not counted in their top folder
            if not any(folder.startswith(other + "/") for other in deeper):
                top = folder.split("/", 1)[0]
                if top in counts:
                    counts[top] -= self.store.listed_count(folder)
        return folder_counts(
            {
                f: n
                for f, n in counts.items()
                if not UNWRITABLE.search(f) and f.casefold() not in ROLE_FOLDERS
            }
        )

    def folder_lines(self, rule: SectionRule) -> list[str]:
        """Every note of the rule's folder (whatever the filter), in its order: the entry
        lines."""
        rows = self.store.folder_lines_of(rule.folder, _order(rule.order))
        return [memory_md.entry_line(CatalogueEntry(p, t, s)) for p, t, s in rows]

    def kept_out(self) -> list[str]:
        """The notes saying ``memory-index: false`` (``memory_md.keeps_out``), sorted."""
        return sorted(self.store.kept_out_paths())

    def lines(self) -> None:
        """No lines kept: each is written from its note (``memory_md.entry_line``)."""
        return None


class FolderNotesKept:
    """What an update that brought every folder note in line with the index saved of
    them (meta ``folder_notes``: each one's size and mtime as memvault wrote it, and the
    sections they follow, and which memvault wrote them), for the next process with no
    row: no folder note is due but those whose notes it changes, or whose file changed
    since (a person, git), or all of them when another memvault reads them. Cleared
    before note rows change (a kill before the update, an update stopped early: every
    folder note due for the next)."""

    def __init__(self, store: Store, rules: Sequence[SectionRule]):
        self.store = store
        self.rules = tuple(rules)
        # the sections as the folder notes follow them (their folders, orders, names), the
        # memvault that wrote them and the keys it ordered them by: another renders them
        # its own way (entry_line), another Python orders them by its Unicode tables
        # (``keys_made``: a name of U+1E030 first or last), as a fresh index of its own
        # would, so each is due once after an upgrade or a rekey (``note_order.rekey``);
        # and the form of their links (``memory_order.LINKS_FORM``: ``[[Plan ]]`` for a
        # person's ``Plan .md`` became ``[[Plan .md]]``), which no version number follows
        # (a checkout's is "", an install from git keeps pyproject's)
        made = (_version(), keys_made(), memory_order.LINKS_FORM)
        self._rules = json.dumps([*made, *((r.name, r.folder, r.order) for r in rules)])
        self._saved: dict[str, tuple[int, int]] | None = None

    def load(self) -> dict[str, tuple[int, int]] | None:
        """The folder notes as saved; None: not known to be in line."""
        saved = json.loads(self.store.meta("folder_notes") or "{}")
        if saved.get("rules") != self._rules:
            return None
        self._saved = {p: (int(size), int(mtime)) for p, (size, mtime) in saved["seen"].items()}
        return dict(self._saved)

    def clear(self) -> None:
        if self._saved is not None or self.store.meta("folder_notes"):
            self.store.set_meta("folder_notes", "")
        self._saved = None

    def save(self, seen: Mapping[str, tuple[int, int]]) -> None:
        if self._saved != seen:
            kept = {p: list(stat) for p, stat in seen.items()}
            self.store.set_meta("folder_notes", json.dumps({"rules": self._rules, "seen": kept}))
            self._saved = dict(seen)

    def in_line(
        self,
        fs: VaultFS,
        update: memory_md.MemoryUpdate,
        unlinked: Collection[str],
        seen: Mapping[str, tuple[int, int]],
    ) -> bool:
        """Whether every folder note memvault keeps is as it wrote it last (``seen``), or
        not there and not to be made: none left untouched by this update (refused)."""
        for rule in self.rules:
            path = memory_md.folder_note_path(rule.folder)
            if not path or rule.folder in unlinked:
                continue
            st = fs.stat(path)
            if (st is None and rule.folder in update.overflow) or (
                st is not None and seen.get(path) != (st.size, st.mtime_ns)
            ):
                return False
        return True


class _Notes(Mapping[str, CatalogueEntry]):
    """The index notes by path, each read from the store when first asked for (MEMORY.md's
    update asks for the notes its lines name, and those its sections list)."""

    def __init__(self, store: Store):
        self._store = store
        self.known: dict[str, CatalogueEntry | None] = {}

    def __getitem__(self, path: str) -> CatalogueEntry:
        if path not in self.known:
            self.known[path] = self._store.listing_entry(path)
        got = self.known[path]
        if got is None:
            raise KeyError(path)
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._store.note_paths())

    def __len__(self) -> int:
        return len(self._store.note_paths())


def _version() -> str:
    """The installed memvault's version (its package's metadata: memvault's own package
    would import this module back); "" when it is not installed (run from a checkout)."""
    try:
        return metadata.version("memvault")
    except metadata.PackageNotFoundError:
        return ""


def _order(order: str) -> str:
    return "updated" if order == "mtime" else order


__all__ = ["FolderNotesKept", "StoredListing"]
