"""Links and the index files: relinking after moves (``relink_notes``), MEMORY.md and
folder notes, the link check.

``Linker`` writes only through ``VaultFS``'s compare-and-swap; it reports which
files it wrote, and the engine has them re-indexed.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memvault.core import memory_md
from memvault.core.conflicts import left_as_git_wrote_it
from memvault.core.folder_merge import folded
from memvault.core.linkcheck import link_format
from memvault.core.memory_order import SectionRule, in_folder
from memvault.core.relink import moved_names, relink_note
from memvault.core.results import LinkProblem
from memvault.core.text import NotText
from memvault.core.wikilinks import LinkFormat, LinkIndex, find_links
from memvault.engine import link_check
from memvault.engine.folder_failures import FolderFailures
from memvault.engine.folder_staging import MadeStaging
from memvault.engine.folders import on_disk
from memvault.engine.memory_listing import MemoryListing, Refreshed, sections_moved_away
from memvault.engine.memory_stored import FolderNotesKept, StoredListing
from memvault.engine.relink_notes import Relinking, relink
from memvault.engine.stash_hold import StashHold
from memvault.errors import NoteExists, NoteNotFound, UnsafePath, WriteConflict
from memvault.vault.gitstate import (
    git_busy,
    git_removed,
    git_stamp,
    nested_repo,
)

if TYPE_CHECKING:
    from memvault.config import VaultConfig
    from memvault.engine.catalogue import Catalogue
    from memvault.index.store import Store
    from memvault.vault.files import Scan, VaultFS

log = logging.getLogger("memvault")

# MEMORY.md deleted where a file made again would be untracked in git (a pull or
# `git rm` took it out of git's index): made again, it would stop the next pull or
# checkout that brings one back, whatever its bytes (docs/MEMORY.md, "Git")
GIT_REMOVED = (
    "not there, and not in git's index (a pull, a checkout or `git rm` removed it): "
    "memvault does not make it again, where it would be an untracked file in the way of "
    "the pull or checkout that brings it back; `memvault init` makes a new one"
)


@dataclass(frozen=True, slots=True)
class MemoryWritten:
    """What one MEMORY.md update did."""

    memory: bool = False  # MEMORY.md was written
    folder_notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # links left as they were (a name no link can hold)
    # MEMORY.md, left holding git's conflict markers with links to the files moved: they
    # wait in the relink journal, as a note's do (relink_notes), until it is resolved
    waiting: tuple[str, ...] = ()


class Linker:
    """Keeps links true and MEMORY.md (with its folder notes) in line with the catalogue."""

    def __init__(
        self,
        config: VaultConfig,
        fs: VaultFS,
        store: Store,
        catalogue: Catalogue,
        *,
        lean: bool = False,
    ):
        self.config = config
        # a process that is no daemon: MEMORY.md's lists read from the store's lean
        # columns while nobody read every row (``_refresh``)
        self._lean = lean
        self.fs = fs
        self.store = store
        self.catalogue = catalogue
        self._listing = MemoryListing(config.memory.sections)
        # with no row read: MEMORY.md's lists read from the index's kept keys (``_refresh``)
        self._stored = StoredListing(store, config.memory.sections)
        self._source: MemoryListing | StoredListing = self._listing
        self._lean_mark = catalogue.lean_changes(None)[1]  # what lean_changes said last
        self._last_owned: dict[str, tuple[str, ...]] | None = None
        self._folder_seen: dict[str, tuple[int, int]] = {}  # folder note -> (size, mtime)
        # folders whose notes changed since their folder note was last brought up to date
        # (an update that stopped early, MEMORY.md busy, leaves them due for the next)
        self._folders_due: set[str] = set()
        self.failures = FolderFailures()  # folder notes the disk refused: due, retried
        self._persons: dict[str, tuple[tuple[int, int], bool]] = {}
        self._kept = FolderNotesKept(store, config.memory.sections)
        seen = self._kept.load() if lean else None
        if lean and seen is None:  # not known to be in line: every folder note is due
            self._folders_due = {r.folder for r in config.memory.sections}
        elif seen is not None:  # as memvault wrote them (with their markers)
            self._folder_seen = dict(seen)
            self._persons = {p: (stat, False) for p, stat in seen.items()}
        self._seen_rows: tuple[int, int] | None = None  # the catalogue's mark at the last look
        # git's files (gitstate.git_stamp) when a sync began reading the disk, and at the
        # last MEMORY.md update: git changing the tree in between is found (_git_moved)
        self._git_at: tuple[int, ...] | None = None
        self._git_seen = git_stamp(fs.root)
        self.waits_for_git = False  # this sync's update waited: git changed the tree under it
        self.stash = StashHold(fs.root, store)  # what waits for `git stash pop`
        self.staging = MadeStaging(fs.root, store, config.memory.sections)  # to `git add`

    # -- relinking after moves -----------------------------------------------------------------

    def relink(
        self,
        moves: Mapping[str, str],
        before: LinkIndex,
        after: LinkIndex,
        changed: Collection[str] = (),
        passed: Sequence[tuple[str, str]] = (),
        only: Collection[str] | None = None,
    ) -> Relinking:
        """Re-target the links to moved files (``relink_notes.relink``), in the vault's
        ``newLinkFormat``."""
        where = (self.fs, self.store, self.config.memory.file, self.link_format())
        return relink(*where, moves, before, after, changed, passed, only)

    def link_format(self) -> LinkFormat:
        """How Obsidian writes new links in this vault (``.obsidian/app.json``), read
        afresh each time: a change in Obsidian's settings applies at once."""
        return link_format(self.fs.obsidian_app_json())

    # -- MEMORY.md -----------------------------------------------------------------------------

    def update_memory(
        self,
        moves: dict[str, str],
        before: LinkIndex | None,
        after: LinkIndex | None,
        pending: frozenset[str] = frozenset(),
        *,
        whole: bool = True,
    ) -> MemoryWritten:
        """Recompute MEMORY.md and the folder notes; write them (CAS) only if they change.

        ``pending``: notes on disk that a reconcile in flight has not indexed yet. The
        update is then provisional (core.memory_md says what it keeps); the folder notes
        of their folders wait, and MEMORY.md is not marked in line with the index.
        While git is mid rebase/merge/cherry-pick/revert nothing is written (the tree is
        git's): MEMORY.md stays marked out of line, and the next sync brings it up.
        So it does when git changed the tree under the sync (``_git_moved``; ``whole``:
        the sync read every file, not a batch of paths)."""
        cfg = self.config.memory
        rel = cfg.file
        # left for git below: its links to the files moved wait in the relink journal, as
        # a note's do. Not waiting, the journal was dropped: after a conflicted pop taken
        # with `git checkout --theirs && git add`, the stash held MEMORY.md and the side
        # kept linked a renamed note's old name for good
        relinked = (rel,) if moves and before is not None and after is not None else ()
        busy = git_busy(self.fs.root)
        if busy:
            self.store.set_meta("memory_synced", "")
            return MemoryWritten(
                warnings=(
                    f"git is in the middle of {busy}: {rel} and the folder notes wait "
                    "until it is done",
                ),
                waiting=relinked,
            )
        paths = {r.folder: p for r in cfg.sections if (p := memory_md.folder_note_path(r.folder))}
        held = self.stash.waits([rel, *paths.values()])
        if rel in held:  # the person's words in the stash: the pop would be refused
            self.store.set_meta("memory_synced", "")
            self.stash.hold(True)
            return MemoryWritten(
                warnings=(
                    f"the newest git stash changes {rel}: it and the folder notes wait for "
                    "`git stash pop` (10 minutes at most), which a write now would stop",
                ),
                waiting=relinked,
            )
        self.stash.hold(False)
        self.waits_for_git = self._git_moved(whole)
        if self.waits_for_git:  # brought up by the next sync (the daemon queues one)
            self.store.set_meta("memory_synced", "")
            log.debug("git changed the files as memvault read them: %s waits", rel)
            return MemoryWritten(waiting=relinked)
        self._stage(self.staging.retry)  # those kept while the person had theirs staged
        refreshed = self._refresh(lean=self._lean)
        self._folders_due |= refreshed.changed_folders
        notes = refreshed.notes
        listings = {rule.name: self._source.listing(rule) for rule in cfg.sections}
        # a folder note in a submodule would be a change in another repository
        elsewhere = {f: repo for f, p in paths.items() if (repo := nested_repo(self.fs.root, p))}
        unlinked = {
            f: p
            for f, p in paths.items()
            if f in elsewhere or _persons_note(self.fs, self._persons, p)
        }
        resolve = self.catalogue.resolver(rel, pending)
        owned = self.store.owned_lines()

        rewrite = None
        left: set[tuple[str, str]] = set()
        if moves and before is not None and after is not None:
            fmt = self.link_format()

            def rewrite(text: str) -> str:
                return _relink_in_style(text, rel, before, after, moves, fmt, left)

        results: list[memory_md.MemoryUpdate] = []
        links_wait: list[str] = []

        def change(text: str | None) -> str:
            if text is not None and (why := left_as_git_wrote_it(text)):
                if rewrite is not None and rewrite(text) != text:
                    links_wait.append(rel)  # the side a person takes has the old links
                raise memory_md.MarkerError(why)  # a `git stash pop` that conflicted: theirs
            update = memory_md.update_memory(
                text,
                notes,
                cfg.sections,
                owned,
                resolve=resolve,
                rewrite=rewrite,
                unlinked_folders=set(unlinked),
                pending=pending,
                listings=listings,
                lines=self._source.lines(),
            )
            results.append(update)
            return update.text

        removed = False  # MEMORY.md gone and git's to bring back: not made again
        try:
            if self.fs.stat(rel) is None:
                text = change(None)
                removed = git_removed(self.fs.root, rel)
                if not removed:
                    self.fs.create(rel, text)
                written = not removed
            else:
                written, _ = self.fs.update_text(rel, change)
        except (memory_md.MarkerError, WriteConflict, NotText, UnsafePath, PermissionError) as exc:
            folder_written: list[str] = []
            if isinstance(exc, WriteConflict):  # busy (a program holds it open): redo soon
                self.store.set_meta("memory_synced", "")
            elif isinstance(exc, memory_md.MarkerError):
                # the folder notes list their folders whatever MEMORY.md holds: brought up
                # to date as they would be (they lagged their notes until it was resolved)
                overflow = memory_md.update_memory(
                    None,
                    notes,
                    cfg.sections,
                    resolve=resolve,
                    unlinked_folders=set(unlinked),
                    pending=pending,
                    listings=listings,
                    lines=self._source.lines(),
                ).overflow
                folder_written, _ = self._folder_notes_due(overflow, unlinked, pending, held)
                if not pending:  # nothing to do until the person saves it, a change any
                    # sync sees (the catch-up synced it every 2 s), but a refused folder note
                    self.store.set_meta("memory_synced", "" if self.failures.folders() else "1")
            self._keep_problems([(rel, f"left untouched: {exc}", "memory")])
            said = f"{rel}: its links to moved files wait until its conflicts are resolved"
            return MemoryWritten(
                folder_notes=tuple(folder_written),
                problems=(f"{rel} left untouched: {exc}", *self.failures.said()),
                warnings=(said,) if links_wait else (),
                waiting=tuple(links_wait),
            )
        update = results[-1]
        problems = [GIT_REMOVED] if removed else list(update.problems)
        problems += sections_moved_away(
            self.store, cfg.sections, listings, moves, lambda f: on_disk(self.fs.root, f) == f
        )
        if not removed and update.owned != self._last_owned:
            self.store.add_owned_lines(update.owned)
            self._last_owned = update.owned
        kept_out = json.dumps(self._source.kept_out())
        if (self.store.meta("memory_kept_out") or "[]") != kept_out:
            self.store.set_meta("memory_kept_out", kept_out)
        folder_written, skip = self._folder_notes_due(update.overflow, unlinked, pending, held)
        self._keep_problems([(rel, p, "note") for p in problems])
        if not pending:  # provisional: not in line; a folder note refused: the next tries
            self.store.set_meta("memory_synced", "" if self.failures.folders() else "1")
        if (
            skip <= set(unlinked)  # none skipped, none refused (FolderFailures)
            and not pending
            and self._kept.in_line(self.fs, update, unlinked, self._folder_seen)
        ):
            self._kept.save(self._folder_seen)
        warnings = _update_warnings(rel, left, unlinked, elsewhere, update.overflow)
        problems += self.failures.said()
        return MemoryWritten(written, tuple(folder_written), tuple(problems), warnings)

    def _folder_notes_due(
        self,
        overflow: Mapping[str, int],
        unlinked: Mapping[str, str],
        pending: frozenset[str],
        held: Collection[str],
    ) -> tuple[list[str], set[str]]:
        """Bring the folder notes due up to date (``_update_folder_notes``), but those of
        a person's note or a submodule (``unlinked``), of a folder a reconcile has not
        all indexed yet (``pending``) or held for ``git stash pop`` (``held``): what it
        wrote, and the folders it skipped or failed to write (each stays due)."""
        skip = set(unlinked) | {
            r.folder
            for r in self.config.memory.sections
            if memory_md.waits_for(r.folder, pending)
            or memory_md.folder_note_path(r.folder) in held
        }
        written = self._update_folder_notes(overflow, frozenset(self._folders_due), skip)
        skip |= self.failures.left()  # one whose note the disk refused stays due
        self._folders_due &= skip  # and so does a folder waiting mid-reconcile
        return written, skip

    def _stage(self, stage: Callable[[], object]) -> None:
        """Run ``stage`` (a ``git add`` of memvault's own): its change of git's index is
        no change of git's under the next sync (``_git_moved``)."""
        before = git_stamp(self.fs.root)
        if stage() and before == self._git_seen:
            self._git_seen = git_stamp(self.fs.root)

    def look_at_git(self) -> None:
        """What git's files are at (``git_stamp``) as a sync begins to read the disk."""
        self._git_at = git_stamp(self.fs.root)
        self.waits_for_git = False

    def _git_moved(self, whole: bool) -> bool:
        """Whether git changed the tree (a checkout, a reset, a pull, a stash) since what
        this sync read could know of it: while it read, or, for a batch of paths, since
        the last update. A field test: the watcher's batch, cut while a checkout was
        still writing, held part of the notes it brought; git done by the time the sync
        wrote, MEMORY.md and a folder note were written for part of the branch, and the
        next `git checkout` was refused over them. The rest of git's changes are in the
        next batch, whose update writes. An update no sync looked before (a relink
        resumed) is not asked."""
        now = git_stamp(self.fs.root)
        at, self._git_at = self._git_at, None
        if at is None:
            return False
        seen, self._git_seen = self._git_seen, now
        return now is not None and (at != now or (not whole and seen != now))

    def warm(self) -> None:
        """Build what a MEMORY.md update keeps between updates (the sorted lists, the
        catalogue's rows, the link index) before the first update needs them."""
        self._folders_due |= self._refresh().changed_folders
        self.catalogue.link_index()

    def forget_kept(self) -> None:
        """Let MEMORY.md's lists go (after bulk work, before the catalogue's rows are read
        again: ``Engine.compact_caches``); every folder note is due (brought up to date
        at the next update, written only where it changes)."""
        self._listing = MemoryListing(self.config.memory.sections)
        self._seen_rows = None

    def rebuild_kept(self) -> None:
        """Build MEMORY.md's lists afresh from the catalogue's rows (after bulk work, once
        the catalogue is read again: ``Engine.compact_caches``); folders whose notes
        differ from what was listed (every one, after ``forget_kept``) are due for their
        folder note, as on a refresh."""
        self._folders_due |= self._listing.rebuild(self.catalogue.notes())

    def _refresh(self, *, lean: bool = False) -> Refreshed:
        """The sorted lists brought in line with the rows that changed since the last look
        (the catalogue's log: a save looks at its own notes, not at every row); ``lean``,
        while the catalogue holds no rows and the lists never followed them: read from
        the keys the index keeps with the rows (``StoredListing``), no row made (a CLI
        write: 2.4 s of rows, then 1.4 s sorting them, at 100,000 notes, bench/RESULTS.md),
        the folders due those of the notes this process changed."""
        if (
            lean
            and self._seen_rows is None
            and not self.catalogue.holds_rows()
            and self.store.keys_ours()  # else another Python's keys: every row sorted
        ):
            self._source = self._stored
            paths, self._lean_mark = self.catalogue.lean_changes(self._lean_mark)
            folders = _folders_of(self.config.memory.sections, paths)
            return Refreshed(self._stored.notes(), folders)
        self._source = self._listing
        rows, changed, self._seen_rows = self.catalogue.changes_since(self._seen_rows)
        return self._listing.refresh(rows, changed)

    def rows_changing(self) -> None:
        """Note rows are about to change (``Applier.apply``): until an update brings the
        folder notes in line again, no process takes them as in line (a kill between)."""
        self._kept.clear()

    def _keep_problems(self, problems: list[tuple[str, str, str]]) -> None:
        """Keep MEMORY.md's problems, and the folder notes the disk refused, until the
        next update (written only when they change: an idle sync writes nothing)."""
        value = json.dumps(problems + self.failures.problems())
        if (self.store.meta("memory_problems") or "[]") != value:
            self.store.set_meta("memory_problems", value)

    def _update_folder_notes(
        self, overflow: Mapping[str, int], changed: frozenset[str], skip: set[str]
    ) -> list[str]:
        """Create or update the folder notes memvault keeps, never a person's note (nor,
        mid-reconcile, one whose folder is not all indexed: ``skip``). A folder note is
        read and rendered again only when a note of its folder changed or the file did
        (a person's edit, git): a save elsewhere costs it a stat."""
        written = []
        for rule in self.config.memory.sections:
            path = memory_md.folder_note_path(rule.folder)
            if not path:
                continue  # the vault root has no folder note
            st = self.fs.stat(path)
            self.failures.done(rule.folder)  # (failed again below, if it fails again)
            if rule.folder in skip or (rule.folder not in overflow and st is None):
                continue
            if (
                st is not None
                and rule.folder not in changed
                and self._folder_seen.get(path) == (st.size, st.mtime_ns)
            ):
                continue
            # the folder note lists every note of the folder, whatever the filter
            lines = self._source.folder_lines(rule)
            name = rule.folder.rsplit("/", 1)[-1]  # "All 9 notes", not "All 9 Tagebuch"
            label = name if name.casefold() == rule.name else "notes"
            try:
                if st is None:
                    self.fs.create(
                        path, memory_md.render_folder_note(None, rule.folder, lines, label)
                    )
                    written.append(path)
                    # another clone may make the same note: untracked, it would stop
                    # the pull that brings that one (docs/MEMORY.md, "Git")
                    self._stage(functools.partial(self.staging.made, path))
                else:
                    changed_now, _ = self.fs.update_text(
                        path, functools.partial(_render_folder, rule.folder, lines, label)
                    )
                    if changed_now:
                        written.append(path)
            except (memory_md.MarkerError, WriteConflict, NotText, UnsafePath) as exc:
                log.warning("%s left untouched: %s", path, exc)  # a person's save: due again
                continue
            except (OSError, NoteExists) as exc:  # the disk full, EACCES, EIO, a folder
                self.failures.failed(rule.folder, path, exc)  # stays due (review 55)
                continue
            now = self.fs.stat(path)
            if now is not None:
                self._folder_seen[path] = (now.size, now.mtime_ns)
                # memvault's own, with its markers: not read again to ask whose it is
                self._persons[path] = ((now.size, now.mtime_ns), False)
        return written

    # -- links -----------------------------------------------------------------------------------

    def link_problems(
        self, include_alias: bool = True, scan: Scan | None = None, **how: Any
    ) -> list[LinkProblem]:
        """The vault's link problems (``engine/link_check.py``; ``how``: its keywords)."""
        return link_check.link_problems(self.fs, self.store, include_alias, scan, **how)


def _persons_note(fs: VaultFS, persons: dict[str, tuple[tuple[int, int], bool]], path: str) -> bool:
    """A note at a folder note's path that memvault may not write into: it holds no
    folder markers (a person wrote it; memvault's own always has them). ``persons``:
    what was found, by the file's size and mtime."""
    st = fs.stat(path)
    if st is None:
        return False
    seen = (st.size, st.mtime_ns)
    known = persons.get(path)
    if known is not None and known[0] == seen:
        return known[1]
    try:
        theirs = not memory_md.is_managed_folder_note(fs.read(path).decoded.text)
    except (NoteNotFound, NotText, OSError):
        theirs = True
    persons[path] = (seen, theirs)
    return theirs


def _update_warnings(
    rel: str,
    left: set[tuple[str, str]],
    unlinked: dict[str, str],
    elsewhere: dict[str, str],
    overflow: Collection[str],
) -> tuple[str, ...]:
    """What an update of MEMORY.md says it left: links it could not rewrite, folders
    listed in no folder note (a person's note of that name, a submodule's folder)."""
    warnings = [f"{rel}: a link to {raw!r} was left as it is: {why}" for raw, why in sorted(left)]
    warnings += [
        f"{path} is a note of yours, so memvault does not list the {folder}/ folder in "
        "it (MEMORY.md says how many more there are); put the lines "
        f"'<!-- memvault:begin {memory_md.FOLDER_SECTION} -->' and "
        f"'<!-- memvault:end {memory_md.FOLDER_SECTION} -->' in it to have the list kept there"
        for folder, path in sorted(unlinked.items())
        if folder in overflow and folder not in elsewhere
    ]
    warnings += [
        f"{folder}/ is in {repo}/, a git repository of its own (a submodule): memvault "
        f"makes no folder note there (MEMORY.md says how many more notes {folder}/ has)"
        for folder, repo in sorted(elsewhere.items())
        if folder in overflow
    ]
    return tuple(warnings)


def _folders_of(rules: Sequence[SectionRule], paths: Sequence[str] | None) -> frozenset[str]:
    """The rules' folders holding one of ``paths`` (None: not known, every one)."""
    return frozenset(
        r.folder for r in rules if paths is None or any(in_folder(p, r.folder) for p in paths)
    )


def _render_folder(folder: str, lines: Sequence[str], label: str, text: str) -> str:
    if why := left_as_git_wrote_it(text):  # a `git stash pop` that conflicted: theirs
        raise memory_md.MarkerError(why)
    text = folded(text)  # two clones' lists merged line by line: one again
    if not memory_md.is_managed_folder_note(text):
        # its markers were taken out since it was looked at: a person's note now
        raise memory_md.MarkerError("no memvault folder markers: a note of yours now")
    return memory_md.render_folder_note(text, folder, lines, label)


def _relink_in_style(
    text: str,
    rel: str,
    before: LinkIndex,
    after: LinkIndex,
    moves: Mapping[str, str],
    fmt: LinkFormat,
    left: set[tuple[str, str]],
) -> str:
    """Re-target MEMORY.md's links after a move in the person's style, line by line: a
    line whose links name vault paths (``[[people/tom]]``, as memvault's own lines do)
    gets vault paths again; any other, the vault's ``newLinkFormat``."""
    # MEMORY.md does not move: only links with a moved file's name can lead elsewhere
    names = moved_names(moves)
    short = relink_note(text, rel, rel, before, after, dict(moves), fmt, names)
    left.update(short.skipped)
    if fmt == "absolute" or short.text == text:
        return short.text
    full = relink_note(text, rel, rel, before, after, dict(moves), "absolute", names)
    old, a, b = text.split("\n"), short.text.split("\n"), full.text.split("\n")
    if not len(old) == len(a) == len(b):
        return short.text
    by_path = [any("/" in link.target for link in find_links(line)) for line in old]
    return "\n".join(y if path else x for x, y, path in zip(a, b, by_path, strict=True))


def memory_due(linker: Linker) -> bool:
    """Whether MEMORY.md is out of line with the index (an update git or its stash held:
    ``Linker.update_memory``) and nothing holds it now: not while git or its stash does,
    nor while a refused folder note's retry waits. A sync of no paths brings it up
    (``Applier``): the daemon's catch-up, a kept vault's call (``Backend.freshen``)."""
    synced = linker.store.meta("memory_synced") or linker.failures.wait()
    return not synced and git_busy(linker.fs.root) is None and not linker.stash.quiet()
