"""The notes a reader daemon's clone changed since it started, against the team's index
(docs/TEAM.md).

A clone's note saved here reaches the shared index only once the writer's machine has it
(git: commit and push here, pull there). While a writer runs, a search on the clone
missed such a note and said nothing (``unkept.say_unkept`` names them only while no
writer runs: its scan of the whole vault costs ~0.8 s a search at 100,000 notes). A
reader daemon's watcher names the paths that changed here (``noted``); a search or
context looks up just those in the index (one query) and hashes those of another size
or time (``status.differing``): a cost that follows the changes, not the vault. A path
the index holds as this copy does, or one deleted here (its hits are marked already:
``this_copy``), is forgotten; it is named again when it changes again. Edits made
before the daemon started are known by git (``gitstate.not_pushed``, once, at its
start).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from memvault.core.changes import Seen
from memvault.core.results import SyncReport
from memvault.core.wikilinks import key
from memvault.engine.status import differing
from memvault.engine.this_copy import indexed_as
from memvault.errors import UnsafePath
from memvault.vault.paths import is_note

log = logging.getLogger("memvault")
Moves = Sequence[tuple[str, str]]

NAMED = 5  # notes the note names (then: "and N more")
KEPT = 10_000  # paths kept at most (a bulk copy past that: the oldest forgotten first)


class ChangedHere:
    """Paths of notes changed in this copy since the daemon started, thread-safe."""

    def __init__(self) -> None:
        self._paths: dict[str, None] = {}  # insertion-ordered: the oldest dropped first
        self._lock = threading.Lock()
        self._said: str | None = None  # the last note logged (said again once it changes)
        self._filled: threading.Event | None = None  # a look under way (``noted_by``)
        self._late: str | None = None  # what is said when that look did not answer

    def noted(
        self, paths: Iterable[str] | None, progress: Any = None, *, moves: Moves = ()
    ) -> SyncReport:
        """A reader daemon watcher's batch, in place of a sync (``Watcher``'s ``sync``):
        vault-relative paths and renames (a folder's stands for its notes, which are not
        looked for: a pull or a bulk move, not a person's save; None, the watcher's full
        reconcile: nothing named)."""
        with self._lock:
            for path in [*(paths or ()), *(new for _, new in moves)]:
                if is_note(path):
                    self._paths.pop(path, None)
                    self._paths[path] = None
            while len(self._paths) > KEPT:
                del self._paths[next(iter(self._paths))]
        return SyncReport()

    def noted_by(self, look: Callable[[], Iterable[str] | None], late: str) -> None:
        """``noted`` of what ``look`` answers, run in a thread from now (git's look at a
        query's open: beside the search, not before it); ``say`` waits for it, and says
        ``late`` when it answered None (not in time). A search with no daemon paid git's
        look before it began (~1.4 s at 100,000 notes on a loaded machine)."""
        self._filled = filled = threading.Event()

        def fill() -> None:
            try:
                paths = look()
                if paths is None:
                    self._late = late
                else:
                    self.noted(paths)
            except Exception:  # (a bug: said, and the search answers without it)
                log.exception("listing this copy's changes failed")
            finally:
                filled.set()

        threading.Thread(target=fill, name="memvault-changed-here", daemon=True).start()

    def __len__(self) -> int:
        return len(self._paths)

    def say(self, engine: Any) -> str | None:
        """What a search's answer misses of this copy's changes (None: nothing), and
        the advice; logged once for each new note."""
        if self._filled is not None:
            self._filled.wait()  # (the look bounds itself: ``noted_by``)
            if self._late is not None:
                if self._said != self._late:
                    log.warning(self._late)
                    self._said = self._late
                return self._late
        with self._lock:
            paths = list(self._paths)
        if not paths:
            return None
        fs, store = engine.fs, engine.store
        seen: dict[str, Seen] = {}
        for path in paths:
            try:  # a symlink leading out of the vault: no note (the scan skips it)
                fs.path(path)
                now = fs.stat(path)
            except (UnsafePath, OSError):
                now = None
            if now is not None:
                seen[path] = now
        known = store.known(list(seen))
        here = in_another_case(engine, [p for p in seen if p not in known])
        if here:  # the index's note, here in another case alone: as the index names it
            known = {**known, **store.known(list(here))}
            indexed = {h: i for i, h in here.items()}
            seen = {indexed.get(p, p): now for p, now in seen.items()}
        missed = [p for p in seen if p not in known]
        changed = differing(fs, known, seen, [p for p in seen if p in known], True, here)
        kept = {here.get(p, p) for p in [*missed, *changed]}  # (as noted)
        with self._lock:  # the index holds them as here, or gone here: forgotten
            for path in paths:
                if path not in kept:
                    self._paths.pop(path, None)
        if not kept:
            return None
        said = lacking(sorted(missed), sorted(changed), store.writer())
        if said != self._said:
            log.warning(said)
            self._said = said
        return said


def in_another_case(engine: Any, paths: list[str]) -> dict[str, str]:
    """Of ``paths`` (notes here the index lacks as spelt), those it holds in another
    case alone (``wikilinks.key``): index path -> path here. A rename of case alone on a
    Mac's disk (Obsidian's; the watcher names the new name) is one git there never sees
    nor carries: the writer keeps git's spelling, and the file here is that note. Paths
    in ASCII are looked up in the index by one query (``spelt_otherwise``), others in the
    catalogue (which loads every note's name once)."""
    out: dict[str, str] = {}
    lookup = getattr(engine.store, "spelt_otherwise", None)
    if lookup is not None and paths and all(p.isascii() for p in paths):
        keyed: dict[str, list[str]] = {}
        for indexed in lookup(paths):
            keyed.setdefault(key(indexed), []).append(indexed)
        for path in paths:
            found = keyed.get(key(path), [])
            # (several: twins of one name but for case; none is guessed, as indexed_as)
            if len(found) == 1 and found[0] != path and _one_file(engine.fs, found[0]):
                out[found[0]] = path
        return out
    for path in paths:
        indexed = indexed_as(engine.catalogue, path)
        # (on ext4 two notes, the new one here, when the index's is here as spelt too)
        if indexed is not None and _one_file(engine.fs, indexed):
            out[indexed] = path
    return out


def _one_file(fs: Any, indexed: str) -> bool:
    """Whether the index's ``indexed`` is not here as spelt (its folder's listing: a disk
    that folds case opens a file under any case, and FUSE's exFAT gives each name an
    inode of its own): on ext4 ``People/Ana.md`` beside ``people/ana.md`` is a note of
    its own, even a copy of it."""
    try:
        there = fs.path(indexed)
        return there.name not in os.listdir(there.parent)
    except (FileNotFoundError, NotADirectoryError):
        return True  # its folder not here as spelt either
    except (OSError, UnsafePath):
        return False


def notes_said(groups: Iterable[tuple[str, Sequence[str]]]) -> list[str]:
    """Each group of notes (what they are, their paths) as a note names it, ``2 notes of
    this copy (a.md, b.md)``, the first ``NAMED`` then "and N more"; none for an empty
    one (here and ``unkept.say_unkept``)."""
    return [
        f"{len(paths)} note{'s' if len(paths) != 1 else ''} {what} ({', '.join(paths[:NAMED])}"
        + (f" and {len(paths) - NAMED} more" if len(paths) > NAMED else "")
        + ")"
        for what, paths in groups
        if paths
    ]


def lacking(missed: list[str], changed: list[str], writer: tuple[str, int, float] | None) -> str:
    """The note: which notes the index lacks or holds older, and what brings them there."""
    lacks = notes_said(
        (("of this copy", missed), ("changed here (it holds an older copy)", changed))
    )
    them, has = ("it", "has it") if len(missed) + len(changed) == 1 else ("them", "has them")
    who = (
        f"its writer ({writer[0]}) indexes {them} once its copy {has}"
        if writer is not None
        else f"no writer runs now; `memvault up` on the writer's machine indexes {them} once "
        f"its copy {has}"
    )
    return (
        f"this answer is from the team's index, which lacks {' and '.join(lacks)}: {who} "
        "(git: commit and push here, pull there)"
    )


__all__ = ["ChangedHere", "in_another_case", "lacking", "notes_said"]
