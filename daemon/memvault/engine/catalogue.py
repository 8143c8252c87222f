"""The catalogue: what is in the vault, as readers and writers both need it.

It owns the two caches every collaborator shares, so each has one owner:

- the note rows by path (title, summary, tags, frontmatter, dates...), read
  from the store once and then kept current row by row: a sync says which
  paths changed (``changed``), and the next reader refreshes only those, so
  an edit never makes the next search re-read every note;
- the link index (every note and attachment, with aliases) that resolves a
  link the way Obsidian does; rebuilt only when files come or go
  (``files_changed``). Attachments come from the store's manifest.

On a read-only store (a PostgreSQL reader: its writer syncs on another machine) no
local sync says what changed: both caches are dropped when the writer's
``last_sync_at`` (set by each sync that changed something) is not the one they were
read at, checked at most every ``SHARED_CHECK_SECONDS`` (one one-row query).

The rows are kept compact (``kept_row``): a daemon holds one per note for its life
(~2.3 KB each as read, ~1 KB kept: issue 27). They carry no headings and no warnings
(no reader of the catalogue needs them; ``Store.note`` has them); the strings many
notes share (kind, folder, dates, tags, frontmatter keys) are one object each, and
frontmatter values equal to the title, summary or date are those objects. After bulk
work the daemon lets them go and has them read again in one go (``forget``): what a
long sync re-read sat among its freed remains, keeping pymalloc's arenas from being
released.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from memvault.core import compose
from memvault.core.wikilinks import LinkIndex, address_parts, link_name
from memvault.engine.stored_links import LinkLookup, StoredLinks, resolver_of
from memvault.errors import AmbiguousNote
from memvault.index.rows import NoteRow
from memvault.index.store import Store

ADD_ONE_BY_ONE = 64  # new notes joining the link index one row read each; more: rebuilt
LOG_KEPT = 4096  # paths of re-read rows kept for ``changes_since``; past it: start over
SHARED_CHECK_SECONDS = 0.5  # a reader sees the writer's changes this soon after them
READ_PAGE = 1000  # rows read at once


class Catalogue:
    """Note rows and the link index, derived from the store and kept current."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.RLock()
        self._rows: dict[str, NoteRow] | None = None
        self._dirty: set[str] = set()  # paths whose rows changed since ``_rows`` was read
        # the paths whose rows ``notes`` re-read (or dropped) since the rows were read whole
        # (``_epoch`` counts those reads): what changed since a caller last looked
        self._log: list[str] = []
        self._epoch = 0
        # every path marked changed while no row is read (a process that is no daemon):
        # what its MEMORY.md update asks of its writes (``lean_changes``)
        self._lean_log: list[str] = []
        self._links: LinkIndex | None = None
        self._stamp: str | None = None  # the writer's last_sync_at the caches were read at
        self._checked = -SHARED_CHECK_SECONDS  # when it was last looked at (monotonic)
        # each note's title and file name as ``compose.name_key`` spells them (``titled``,
        # ``named_like``), kept current with the rows from the first read naming no note
        self._keys: dict[str, tuple[str, str]] = {}
        self._keys_mark: tuple[int, int] | None = None

    def _follow_writer(self) -> None:
        """A read-only store's writer is elsewhere: drop both caches when it has synced
        a change since they were read (at most one look every SHARED_CHECK_SECONDS)."""
        if not self._store.read_only:
            return  # this process writes: its own syncs say what changed
        now = time.monotonic()
        if now - self._checked < SHARED_CHECK_SECONDS:
            return
        self._checked = now
        stamp = self._store.meta("last_sync_at")
        if stamp != self._stamp:
            self._stamp = stamp
            self._rows = None
            self._dirty.clear()
            self._links = None

    # -- note rows ---------------------------------------------------------------------

    def notes(self) -> dict[str, NoteRow]:
        """Rows of the indexed notes (not MEMORY.md, folder notes or skipped files) by path."""
        with self._lock:
            self._follow_writer()
            if self._rows is None:
                self._dirty.clear()
                self._rows = self._read_rows()
                self._epoch, self._log, self._lean_log = self._epoch + 1, [], []
            elif self._dirty:
                for path in self._dirty:
                    row = self._store.note(path)
                    if row is not None and row.kind == "note":
                        self._rows[path] = kept_row(row)
                    else:
                        self._rows.pop(path, None)
                if len(self._log) + len(self._dirty) > LOG_KEPT:
                    self._epoch, self._log = self._epoch + 1, []
                else:
                    self._log += self._dirty
                self._dirty.clear()
            return self._rows

    def titles(self, folder: str | None = None) -> list[tuple[str, str]]:
        """Every note's path and title: from the rows once read, else the store's two
        columns (a write's name lookup with no daemon makes no row); ``folder``: at
        least those under it in any case (``Store.note_titles``: the store reads only
        those of its top folder)."""
        with self._lock:
            self._follow_writer()
            if self._rows is not None:
                return [(p, row.title) for p, row in self.notes().items()]
        return self._store.note_titles(folder)

    def all_among(self, paths: Collection[str]) -> bool:
        """Whether every note of the index is one of ``paths`` (a first sync's), counted
        no further than ``paths`` when no row is read."""
        with self._lock:
            self._follow_writer()
            if self._rows is not None:
                rows = self.notes()
                return len(paths) >= len(rows) and all(p in paths for p in rows)
        if self._store.notes_past(len(paths)):
            return False
        return all(p in paths for p in self._store.note_paths())

    def holds_rows(self) -> bool:
        """Whether every row is read (``notes`` then costs the changed rows alone)."""
        with self._lock:
            self._follow_writer()
            return self._rows is not None

    def _read_rows(self) -> dict[str, NoteRow]:
        """Every note's row, kept (``kept_row``); read a page at a time, so what reading
        them leaves to free is a page's, not the vault's, among the rows kept."""
        rows: dict[str, NoteRow] = {}
        after = None
        while True:
            page = self._store.notes("note", after=after, limit=READ_PAGE, outline=False)
            for row in page:
                rows[row.path] = kept_row(row)
            if len(page) < READ_PAGE:
                return rows
            after = page[-1].path

    def forget(self) -> None:
        """Let the rows and the link index go: whichever comes next reads them again, in
        one go (``Engine.compact_caches``, after bulk work: the module doc)."""
        with self._lock:
            self._rows = None
            self._keys, self._keys_mark = {}, None
            self._dirty.clear()
            self._links = None
            # changes_since, lean_changes: look at every row
            self._epoch, self._log, self._lean_log = self._epoch + 1, [], []

    def changes_since(
        self, mark: tuple[int, int] | None
    ) -> tuple[dict[str, NoteRow], list[str] | None, tuple[int, int]]:
        """The rows (``notes``), the paths whose rows may have changed or gone since
        ``mark`` (None: not known, look at every row), and the mark of now."""
        with self._lock:
            rows = self.notes()
            now = (self._epoch, len(self._log))
            if mark is None or mark[0] != self._epoch:
                return rows, None, now
            return rows, self._log[mark[1] :], now

    def rows_of(self, paths: Iterable[str]) -> dict[str, NoteRow]:
        """The rows ``notes`` has of ``paths``: from the rows kept once they are read,
        else each read alone, so a search of a vault whose rows nobody read yet (the CLI
        without a daemon, on 100,000 notes) reads its hits' rows, not every note's."""
        with self._lock:
            self._follow_writer()
            if self._rows is not None:
                rows = self.notes()
                return {p: rows[p] for p in paths if p in rows}
        out: dict[str, NoteRow] = {}
        for path in dict.fromkeys(paths):
            row = self._store.note(path)
            if row is not None and row.kind == "note":
                out[path] = kept_row(row)
        return out

    def files_under(self, folder: str) -> list[str]:
        """Every file the index knows in ``folder`` and its subfolders: notes, folder
        notes, skipped files and attachments (paths only: no note's row is read)."""
        return [p for p in self._files()[0] if p.startswith(f"{folder}/")]

    def linking(
        self, paths: Iterable[str], also: Collection[str] = ()
    ) -> dict[str, list[tuple[str, str]]]:
        """The notes (index notes, none of ``paths``; and the files ``also`` names, such
        as MEMORY.md) with a link stored as leading to one of ``paths``, and those links'
        (target, kind: ``wiki`` or ``markdown``)."""
        gone = set(paths)
        found = self._store.sources_linking(gone, ()) - gone
        sources = [*self.rows_of(sorted(found)), *sorted(found & set(also))]
        return {
            s: list(
                dict.fromkeys(
                    (r.target, r.kind) for r in self._store.links(s) if r.resolved in gone
                )
            )
            for s in sources
        }

    def note(self, path: str) -> NoteRow | None:
        """One row, whatever its kind (an index note or a skipped file too); a row of
        the catalogue's own has no headings nor warnings (``kept_row``). Read alone
        while no caller has read every row (``rows_of``: a `memvault get` without a
        daemon read 100,000 rows for one title, 3 s)."""
        with self._lock:
            self._follow_writer()
            if self._rows is not None:
                return self.notes().get(path) or self._store.note(path)
        return self._store.note(path)

    def changed(self, paths: Iterable[str]) -> None:
        """These paths' rows were written or deleted: re-read them on the next ``notes``."""
        paths = list(paths)
        self._mark(paths, paths)

    def _mark(self, paths: Collection[str], listed: Iterable[str]) -> None:
        """``paths`` to re-read; of them, ``listed`` in the lean log (while no row is read)."""
        with self._lock:
            self._dirty.update(paths)
            if self._rows is None:
                self._lean_log += listed

    def lean_changes(
        self, mark: tuple[int, int] | None
    ) -> tuple[list[str] | None, tuple[int, int]]:
        """The paths marked changed since ``mark`` while no row was read (None: not known,
        rows were read or let go since: a change then is in no log), and the mark of now."""
        with self._lock:
            now = (self._epoch, len(self._lean_log))
            if mark is None or mark[0] != self._epoch:
                return None, now
            return self._lean_log[mark[1] :], now

    @contextmanager
    def changing(self, paths: Iterable[str], *, written: bool = False) -> Iterator[None]:
        """These paths' rows are being written or deleted (a transaction in the block):
        marked changed before it and again once it is over. A reader in between (a
        search re-reading a marked row, every row read again after ``forget``) may read
        a row before its commit lands; the second mark has it read again after (review
        of stop 32: the catalogue kept a note's old title until the note changed again).

        ``written``: the block writes these rows whole (the indexer's ``put_note``), no row
        of them changed before it. While no row is read (a process that is no daemon), the
        lean log then gets, once the block is over, only the paths whose row changed in
        what a folder note shows of it (``Store.listing_keys``: listed or not, its line,
        its place): a `memvault log` appending to the day's note rendered the logs folder
        note's every line again to find it unchanged (12,439 lines, 0.06 s of CPU at
        100,000 notes). A block that fails marks them all, as does one not ``written`` (a
        rename's rows are moved before the block that marks them: engine._apply)."""
        paths = set(paths)
        with self._lock:
            lean = written and self._rows is None
            before = self._store.listing_keys(sorted(paths)) if lean else None
        self._mark(paths, () if before is not None else paths)
        listed: Collection[str] = paths
        done = False
        try:
            yield
            done = True
        finally:
            try:
                if before is not None and done:
                    after = self._store.listing_keys(sorted(paths))
                    listed = [p for p in sorted(paths) if before.get(p) != after.get(p)]
            finally:
                self._mark(paths, listed)

    # -- files and links ------------------------------------------------------------------

    def files_changed(self) -> None:
        """Notes or attachments came, went or moved: the link index is rebuilt on its
        next use."""
        with self._lock:
            self._links = None

    def aliases_written(self, rows: Iterable[NoteRow]) -> None:
        """These rows are being written: if one's aliases are not those the link index
        was built with (a person gave a note an alias, or took one away), the index is
        rebuilt on its next use."""
        with self._lock:
            if self._links is not None and any(
                tuple(row.aliases) != self._links.aliases_of(row.path) for row in rows
            ):
                self._links = None

    def files_added(self, paths: Iterable[str]) -> None:
        """Notes came (and nothing went): added to the link index as it is, when none of
        them has aliases (else it is rebuilt on its next use, as ``files_changed``); many
        at once (a first sync, a pull), it is rebuilt: one query, not one a note."""
        with self._lock:
            added = list(paths)
            if self._links is None:
                return
            # those the index has already (built from the store after their commit: the
            # indexer's second look at links an alias can change) need nothing
            added = [p for p in added if p not in self._links]
            if not added:
                return
            if len(added) > ADD_ONE_BY_ONE:
                self._links = None
                return
            rows = [self._store.note(p) for p in added]
            if any(row is None or row.aliases for row in rows):
                self._links = None
                return
            self._links = self._links.with_files(row.path for row in rows if row)

    def _files(self) -> tuple[list[str], dict[str, tuple[str, ...]]]:
        """Every indexed note and attachment, and the notes' aliases."""
        paths, aliases = self._store.paths_and_aliases()
        return paths + self._store.attachment_paths(), aliases

    def holds_link_index(self) -> bool:
        """Whether the link index is built (``link_index`` then costs nothing)."""
        with self._lock:
            self._follow_writer()
            return self._links is not None

    def link_index(self) -> LinkIndex:
        """Every file of the vault for link resolution (rebuilt only when files change)."""
        with self._lock:
            self._follow_writer()
            if self._links is None:
                self._links = LinkIndex(*self._files())
            return self._links

    def link_lookup(self, extra: Iterable[str] = (), *, many: bool = False) -> LinkLookup:
        """What resolves a sync's links, ``extra`` among the files: the link index when held
        (a daemon) or ``many`` (one map is cheaper than a query a link), else the store's
        link keys (``StoredLinks``: no map of every file for a `memvault add`'s links)."""
        if many or self.holds_link_index():
            return self.link_index_with(extra)
        return StoredLinks(self._store, extra)

    def link_index_with(self, extra: Iterable[str]) -> LinkIndex:
        """The link index with ``extra`` among its files (notes not in the store yet: a
        sync's, about to be indexed): the cached one grown by a few, else built anew (a
        first sync's 100,000 paths, in one sort rather than one insort each)."""
        idx = self.link_index()
        more = [p for p in extra if p not in idx]
        if len(more) <= ADD_ONE_BY_ONE:
            return idx.with_files(more) if more else idx
        files, aliases = self._files()
        return LinkIndex(files + more, aliases)

    def link_index_before(self, moves: Mapping[str, str]) -> LinkIndex:
        """The link index as it was before ``moves`` (old -> new) happened: each moved
        file back at its old path, aliases with it (to finish a relink a kill cut short)."""
        back = {new: old for old, new in moves.items()}
        files, aliases = self._files()
        return LinkIndex(
            [back.get(p, p) for p in files], {back.get(p, p): a for p, a in aliases.items()}
        )

    def linked(self, address: str) -> tuple[str, str | None] | None:
        """The note ``[[address]]`` leads to from the vault's root, and the section it
        names, for a read naming no file: MEMORY.md's ``people/ana`` (no ``.md``), another
        case, a name only one note has, an address pasted whole from a context
        (``[[people/ana#Role|Ana]]``: its section). Not an alias: a read must name its
        note. A name several notes have is ``AmbiguousNote``, naming them (none is
        guessed, as ``links check`` says of such a link)."""
        if (parts := address_parts(address)) is None:
            return None
        target = parts[0].strip("/")
        # the map when held, else the store's link keys: a `memvault get` with no daemon
        # built the map of every file and read every row for one note (issue 27)
        res = self.link_lookup().resolve(target, "")
        found = res.verdict == "resolved" and res.path and self.rows_of([res.path])
        if found and res.path:
            return res.path, parts[1]
        named = [p for p in res.candidates if link_name(p) == link_name(target)]  # no aliases
        titled = self.titled(target) if not named else []
        if len(named) > 1 or len(titled) > 1:
            raise ambiguous(target, named or titled)
        return (titled[0], parts[1]) if titled else None

    def titled(self, name: str) -> list[str]:
        """The notes whose title (or file name) is ``name`` (``folder/name`` for those
        in that folder) under any spelling —
        case, punctuation, accents (``Ana Lopez`` finds ``people/ana-lópez.md`` titled
        "Ana López", as Obsidian's quick switcher does), sorted."""
        folder, _, base = name.removesuffix(".md").rpartition("/")
        if not (want := compose.name_key(base)):
            return []
        return sorted(
            path
            for path, keys in self._name_keys()
            if want in keys
            and (not folder or path.rpartition("/")[0].casefold() == folder.casefold())
        )

    def named_like(self, name: str) -> list[str]:
        """The notes whose title or file name has a word starting as ``name`` does
        (spelt as ``titled`` spells: ``ana`` finds ``people/ana-pérez.md``; ``perez``
        too), sorted: what a read naming no note may have meant. An address
        (``[[ana#Role|Ana]]``) by its note's name, as ``linked`` reads it."""
        target = parts[0] if (parts := address_parts(name)) is not None else name
        want = compose.name_key(target.removesuffix(".md").rpartition("/")[2])
        if len(want) < 2:  # a letter: every other note
            return []
        inside = f"-{want}"
        return sorted(
            path
            for path, keys in self._name_keys()
            if any(key.startswith(want) or inside in key for key in keys)
        )

    def _name_keys(self) -> list[tuple[str, tuple[str, str]]]:
        """Each note's title and file name as ``compose.name_key`` spells them, from the
        rows, those changed since the last call spelt again (``changes_since``): a read
        naming no note, at 10,000 notes, spelt 20,000 names (160 ms) each time. A copy:
        another thread's call may change them meanwhile."""
        with self._lock:
            rows, changed, self._keys_mark = self.changes_since(self._keys_mark)
            if changed is None:
                self._keys = {path: _keys_of(path, row) for path, row in rows.items()}
            else:
                for path in changed:
                    row = rows.get(path)
                    if row is None:
                        self._keys.pop(path, None)
                    else:
                        self._keys[path] = _keys_of(path, row)
            return list(self._keys.items())

    def resolver(self, source: str, extra: Iterable[str] = ()) -> Callable[[str], str | None]:
        """``target -> path`` for links written in ``source`` (aliases count; None if not).
        ``extra``: files on disk not in the store yet (a reconcile in flight)."""
        extra = list(extra)
        return resolver_of(self.link_lookup(extra, many=len(extra) > ADD_ONE_BY_ONE), source)


SHOWN_CANDIDATES = 10  # an ambiguous name's message lists this many of its notes


def ambiguous(name: str, paths: Iterable[str]) -> AmbiguousNote:
    """The error for ``name``, which each of ``paths`` (several) has."""
    found = tuple(sorted(paths))
    listed = ", ".join(found[:SHOWN_CANDIDATES])
    more = f" and {len(found) - SHOWN_CANDIDATES} more" if len(found) > SHOWN_CANDIDATES else ""
    return AmbiguousNote(
        f"{name} is ambiguous: {len(found)} notes have that name ({listed}{more}); "
        "ask for one by its path",
        found,
    )


def kept_row(row: NoteRow) -> NoteRow:
    """``row`` as the catalogue keeps it (the module doc): without headings and warnings,
    its shared strings one object each."""
    shared = {v: v for v in (row.title, row.summary, row.date) if v}
    # the constructor, not dataclasses.replace (which looks the fields up each call)
    return NoteRow(
        path=row.path,
        size=row.size,
        mtime_ns=row.mtime_ns,
        sha256=row.sha256,
        kind=sys.intern(row.kind),
        skip_reason=row.skip_reason,
        title=row.title,
        summary=row.summary,
        category=sys.intern(row.category),
        date=_interned(row.date),
        updated=_interned(row.updated),
        tags=tuple(sys.intern(t) for t in row.tags),
        aliases=row.aliases or (),
        frontmatter=_kept_value(row.frontmatter, shared) if row.frontmatter else {},
        lines=row.lines,
    )


_SHORT = 40  # frontmatter strings up to this long are interned (tags, statuses, dates)


def _interned(value: str | None) -> str | None:
    return None if value is None else sys.intern(value)


def _kept_value(value: Any, shared: dict[str, str]) -> Any:
    if isinstance(value, str):
        got = shared.get(value)
        if got is not None:
            return got
        return sys.intern(value) if len(value) <= _SHORT else value
    if isinstance(value, dict):
        return {sys.intern(k): _kept_value(v, shared) for k, v in value.items()}
    if isinstance(value, list):
        return [_kept_value(v, shared) for v in value]
    return value


def _keys_of(path: str, row: NoteRow) -> tuple[str, str]:
    """A note's title and file name as ``compose.name_key`` spells them."""
    return compose.name_key(row.title or ""), compose.name_key(path.rsplit("/", 1)[-1][:-3])


__all__ = ["Catalogue", "kept_row"]
