"""The newest git stash, as it concerns the files memvault writes (MEMORY.md, the folder
notes): whether they wait for its pop, and what the pop would stop over.

A stash changing MEMORY.md holds it for its pop (10 minutes at most): a write now would
stop the pop. Only in the worktree that made it (the stash list is the repository's).

A stash whose pop (or apply) conflicted stays in the list ("The stash entry is kept in
case you need it again"): to git's files it looks like one still to pop. It is one
already applied when git's index holds, at a path it changes, its version as the
conflict's third stage ("Stashed changes"): unmerged still, or, once resolved, in the
index's resolve-undo record (``git ls-files --resolve-undo``; kept by `git add`, `git
commit`, `git reset`; cleared by `git reset --hard`, which takes the pop back, and by a
switch of branch), and only while none of the paths it changes is as it was before it
(two stashes may hold the same MEMORY.md: the record of one's conflicted pop, the other
still to pop, its note untouched, was taken for the other's). One applied cleanly (`git
stash apply`, the entry kept; `--index`; or its changes since added or committed) holds
its version at every path it changes, in the file or in git's index (or, edited further
since, a change at each and its version at one). The caller may also
pass the stashes it saw so (``applied``): the index meta keeps the last one, for after
such a switch, or after memvault listed a note in the MEMORY.md a clean apply left
(``unless_undone``: kept at the HEAD it was seen at, until no path it changes holds a
change: `git reset --hard` took the apply back). Held for such a stash, MEMORY.md lagged
its notes, and status told the person to pop it again, a pop that conflicted again over
their resolution, or that a clean apply's changes stopped.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from memvault.vault.gitstate import common_dir, git_dir, run_git

# how long after a stash what it changes of memvault's waits for its pop: the usual
# stash, pull or switch, pop. Not longer: a stash forgotten, MEMORY.md would lag its notes
STASH_WAIT_SECONDS = 600.0
# the index meta's key for the newest stash a sync saw applied (``newest_stash``'s
# ``applied``): no pop to come, after a switch of branch cleared git's record too
STASH_APPLIED = "git_stash_applied"


@dataclass(frozen=True, slots=True)
class StashSeen:
    """The newest stash, as it concerns the vault paths asked about (``newest_stash``)."""

    made: float | None = None  # when (its reflog line's time); None: no stash
    here: bool = False  # made in this worktree, or git cannot say it was not
    stops: tuple[str, ...] = ()  # what `git stash pop` stops over (``stash_stops``)
    waits: tuple[str, ...] = ()  # what waits for the pop (``stash_waits``)
    commit: str = ""  # its commit id
    # popped (or applied) already, its entry kept: no pop to come
    applied: bool = False
    # one of ``unless_undone``, taken back: no path it changes holds a change
    undone: bool = False


def newest_stash(
    root: Path,
    rels: Sequence[str],
    now: float | None = None,
    *,
    stops: bool = True,
    applied: Collection[str] = (),
    unless_undone: Collection[str] = (),
) -> StashSeen:
    """The newest stash and the vault paths among ``rels`` (what memvault writes:
    MEMORY.md, folder notes) it concerns, git asked once for both questions (status asks
    both): what it changes (its first parent to it), and the blob ids of those files
    here and in git's index (``_blobs``).

    ``stops``: those the stash changes that changed since it was made, unlike git's
    index (memvault listed notes the stash left, a person's edit): ``git stash pop``
    stops over them.
    ``waits``: within ``STASH_WAIT_SECONDS`` of the stash, those it changes that have
    no unstaged change: memvault writing one now would be that change, and the pop
    is refused over it ("Your local changes ... would be overwritten by merge"), the
    person's words in the stash; as a merge's autostash (``MERGE_AUTOSTASH``) is
    waited for. Past the wait, ``stops`` says.

    Both only for a stash made in this worktree (``_made_here``): the stash list is
    the repository's, shared by its worktrees, and a stash made in another held this
    one's MEMORY.md 10 minutes, or had status tell it to pop the other's stash. None
    asked of git without a stash (its reflog, in the repository's common git folder).

    Neither for a stash applied already, the stash kept in the list (``_applied_now``:
    its pop conflicted, or it was applied cleanly; or one of ``applied``, the stashes
    the caller saw so; or one of ``unless_undone`` not taken back since, ``undone``)."""
    gdir = git_dir(root) if rels else None
    newest = _newest_stash(gdir) if gdir is not None else None
    if gdir is None or newest is None:
        return StashSeen()
    made, commit = newest
    recent = (time.time() if now is None else now) - made <= STASH_WAIT_SECONDS
    if commit in applied:
        return StashSeen(made, commit=commit, applied=True)
    if not (stops or recent or commit in unless_undone):
        return StashSeen(made, commit=commit)
    shown = _stash_changes(root, commit)
    if shown is None:
        return StashSeen(made, commit=commit)
    parent, changed = shown
    here = _made_here(gdir, made, parent)
    stashed = set(changed) & set(rels)
    if not here or not stashed:
        return StashSeen(made, here, commit=commit)
    # every path it changes, asked once: the file's blob id, git's index's (HEAD's: _Trees)
    hashed = _hashed(root, sorted(r for r in changed if (root / r).is_file()))
    # a file unmerged in git's index: a pop (or merge) stopped over it, its conflict to
    # resolve (status says so of MEMORY.md), not a pop to come over a checkout of it
    in_index, unmerged = _blobs(root, sorted(changed), None)
    trees = _Trees(root, changed, hashed, in_index, unmerged)
    undone = commit in unless_undone and trees.undone()  # a stash to pop again
    if (commit in unless_undone and not undone) or _applied_now(root, trees):
        return StashSeen(made, here, commit=commit, applied=True)
    hashed = {r: blob for r, blob in hashed.items() if r in stashed}
    # the pop stops over a local change, a file unlike git's index ("Your local changes
    # ... would be overwritten by merge"; `git checkout --` takes it back to the index).
    # Not HEAD: a staged change (`git stash --keep-index`, a conflict resolved and
    # added) is merged, and status said the pop would stop where it went through
    unlike_index = stashed - _same(hashed, in_index) - unmerged
    return StashSeen(
        made,
        here,
        tuple(sorted(unlike_index)) if stops else (),
        tuple(sorted(_same(hashed, in_index))) if recent else (),
        commit,
        undone=undone,
    )


def stash_stops(root: Path, rels: Sequence[str]) -> list[str]:
    """The vault paths among ``rels`` that ``git stash pop`` of the newest stash stops
    over (``newest_stash``: its ``stops``)."""
    return list(newest_stash(root, rels).stops)


def stash_waits(root: Path, rels: Sequence[str], now: float | None = None) -> list[str]:
    """The vault paths among ``rels`` that wait for ``git stash pop`` (``newest_stash``:
    its ``waits``)."""
    return list(newest_stash(root, rels, now, stops=False).waits)


# a reflog line: "<old id> <new id> <name> <<email>> <seconds> <zone>\t<message>"
_REFLOG_LINE = re.compile(rb"([0-9a-f]+) ([0-9a-f]+) .*?> (\d+) [+-]\d{4}(?:\t|$)")


def stash_made(root: Path) -> float | None:
    """When the newest stash was made (its reflog line's time), or None: no stash, outside
    git. Not the reflog file's mtime: ``git stash drop`` and a ``git stash pop`` that
    goes through rewrite the file without the stash they take, so a stash made an hour
    before seemed made that moment, and MEMORY.md waited 10 minutes more for it."""
    gdir = git_dir(root)
    newest = _newest_stash(gdir) if gdir is not None else None
    return None if newest is None else newest[0]


def newest_stash_commit(root: Path) -> str | None:
    """The newest stash's commit (its reflog's last line), or None: no stash, outside git."""
    gdir = git_dir(root)
    newest = _newest_stash(gdir) if gdir is not None else None
    return None if newest is None else newest[1]


def _newest_stash(gdir: Path) -> tuple[float, str] | None:
    """The newest stash's time and commit (the last line of its reflog), or None."""
    try:
        with open(common_dir(gdir) / "logs" / "refs" / "stash", "rb") as log:
            size = log.seek(0, os.SEEK_END)
            log.seek(max(0, size - 4096))  # the last line: the newest stash
            tail = log.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    except OSError:
        return None  # no stash
    found = _REFLOG_LINE.match(tail)
    return (float(found.group(3)), found.group(2).decode("ascii")) if found else None


# a stash's changes, by vault folder and commit (a commit never changes): one kept applied
# is asked again at every update of MEMORY.md while it is the newest stash
_CHANGES: dict[tuple[Path, str], tuple[str, dict[str, str]]] = {}


def _stash_changes(root: Path, commit: str) -> tuple[str, dict[str, str]] | None:
    """The stash ``commit``'s first parent (the HEAD it was made at) and the vault paths
    it changes from there (what ``git stash show`` names), each with its blob id in the
    stash (the zero id: a file it deletes), one git process the first time."""
    if (known := _CHANGES.get((root, commit))) is not None:
        return known[0], dict(known[1])
    shown = run_git(
        root,
        *("log", "-1", "-z", "--format=%P", "-m", "--first-parent", "--raw", "--no-abbrev"),
        *("--relative", "--no-renames", "--no-color", commit, "--"),
    )
    if shown is None or shown.returncode != 0:
        return None
    parents, _, raw = shown.stdout.partition(b"\0")
    if not parents.split():
        return None
    # ":<mode> <mode> <old id> <new id> <status>\0<path>\0" for each file
    fields = raw.lstrip(b"\n").decode("utf-8", "replace").split("\0")
    changed = {
        path: meta.split()[3]
        for meta, path in zip(fields[::2], fields[1::2], strict=False)
        if path and meta.startswith(":") and len(meta.split()) > 3
    }
    if len(_CHANGES) >= 16:
        _CHANGES.clear()
    made_at = parents.split()[0].decode("ascii")
    _CHANGES[(root, commit)] = (made_at, dict(changed))
    return made_at, changed


@dataclass(slots=True)
class _Trees:
    """The paths a stash changes (``changed``: path -> its blob id there, the zero id: a
    file it deletes) and their blob ids in the files, git's index and HEAD (absent: no
    file, or not in the index or HEAD; HEAD's asked of git once, when a file is as git's
    index has it: memvault's MEMORY.md, as it wrote it, is not)."""

    root: Path
    changed: dict[str, str]
    files: dict[str, str]
    index: dict[str, str]
    unmerged: set[str]
    _head: dict[str, str] | None = None

    def head(self) -> dict[str, str]:
        """The blob ids HEAD has at the paths the stash changes (one git process)."""
        if self._head is None:
            self._head = _blobs(self.root, sorted(self.changed), "HEAD")[0]
        return self._head

    def holds(self, rel: str) -> bool:
        """Whether the file or git's index holds the stash's version of ``rel``."""
        blob = self.changed[rel]
        if not blob.strip("0"):  # the stash deletes it
            return rel not in self.files and rel not in self.unmerged
        return blob in (self.files.get(rel), self.index.get(rel))

    def untouched(self, rel: str) -> bool:
        """Whether ``rel`` is as HEAD has it, in the file and git's index, and not as
        the stash has it: none of the stash's change there."""
        if rel in self.unmerged or self.holds(rel):
            return False
        if self.files.get(rel) != self.index.get(rel):
            return False
        return self.index.get(rel) == self.head().get(rel)

    def applied_cleanly(self) -> bool:
        """Whether every path the stash changes holds its version: `git stash apply`
        went through (or `--index`, or its changes added or committed since)."""
        return all(self.holds(rel) for rel in self.changed)

    def undone(self) -> bool:
        """Whether no path the stash changes holds a change: an apply taken back."""
        return all(self.untouched(rel) for rel in self.changed)


def _applied_now(root: Path, trees: _Trees) -> bool:
    """Whether the stash was applied already, its entry kept: cleanly (``_Trees.
    applied_cleanly``); or every path it changes holds a change and one its version (a
    clean apply, then a note of it edited further by hand: status told the person to
    `git checkout -- MEMORY.md && git stash pop`, a pop refused over that note); or with
    a conflict: git's index holds, at a path the stash
    changes, the stash's version as a conflict's third stage, "Stashed changes":
    unmerged (the pop stopped over it), or in the resolve-undo record of a conflict
    resolved since (``git add``, ``git checkout --theirs``, ``git reset``), and every
    other path it changes holds a change (its pop applied them; a stash of the same
    MEMORY.md still to pop, its note untouched, was taken for applied by the record of
    another's pop). One git process for the record; the whole index's conflicts and
    records, few (paths relative to the vault's folder, as ``changed``'s)."""
    if trees.applied_cleanly():
        return True
    if any(trees.untouched(rel) for rel in trees.changed):
        return False
    if any(trees.holds(rel) for rel in trees.changed):  # applied, then edited further
        return True
    listed = run_git(root, "ls-files", "-u", "--resolve-undo", "-z")  # mode id stage\tpath
    if listed is None or listed.returncode:
        return False
    for entry in listed.stdout.decode("utf-8", "replace").split("\0"):
        fields, _, path = entry.partition("\t")
        meta = fields.split()
        if len(meta) == 3 and meta[2] == "3" and trees.changed.get(path) == meta[1]:
            return True
    return False


def _made_here(gdir: Path, made: float, parent: str) -> bool:
    """Whether a stash made at ``made`` from the commit ``parent`` may have been made in
    this worktree: its HEAD was at ``parent`` then. git records no worktree in a stash,
    but its first parent is the HEAD of the worktree that made it, and each worktree's
    HEAD keeps its own reflog (``logs/HEAD`` in its git folder): the commits HEAD was at
    during the stash's second are read from it. Two worktrees at that same commit then
    are not told apart (both wait); a worktree keeping no reflog of HEAD
    (``core.logAllRefUpdates`` off from the start) cannot say, and waits."""
    held = _head_during(gdir / "logs" / "HEAD", int(made))
    return held is None or parent in held


def _head_during(log_path: Path, second: int) -> set[str] | None:
    """The commits a HEAD reflog says HEAD was at during ``second`` (the one before it,
    those it moved to then), read from the end; None without a reflog."""
    try:
        with open(log_path, "rb") as log:
            size = log.seek(0, os.SEEK_END)
            want = 1 << 16
            while True:
                start = max(0, size - want)
                log.seek(start)
                lines = log.read(size - start).split(b"\n")[1 if start else 0 :]
                entries = [m for line in lines if (m := _REFLOG_LINE.match(line))]
                if start == 0 or any(int(m.group(3)) < second for m in entries):
                    break
                want *= 4
    except OSError:
        return None
    if not entries:
        return None
    held: set[str] = set()
    for m in reversed(entries):
        if int(m.group(3)) < second:
            held.add(m.group(2).decode("ascii"))  # where it was as that second began
            return held
        if int(m.group(3)) == second:
            held.add(m.group(2).decode("ascii"))
    held.add(entries[0].group(1).decode("ascii"))  # before its first move (0s: no HEAD yet)
    return held


def _hashed(root: Path, rels: Sequence[str]) -> dict[str, str]:
    """The blob id each file at the vault paths ``rels`` would have in git (``git
    hash-object``, through its filters): one process for every question asked of them."""
    if not rels:
        return {}
    done = run_git(root, "hash-object", "--", *rels)
    if done is None or done.returncode:
        return {}
    ids = done.stdout.decode("ascii", "replace").split()
    return dict(zip(rels, ids, strict=False))


def _blobs(
    root: Path, paths: Collection[str], commit: str | None
) -> tuple[dict[str, str], set[str]]:
    """The blob ids git has at the vault paths ``paths``: in git's index (``commit``
    None; stage 0) or in ``commit``; and those unmerged in the index (a conflict's
    stages). Plumbing: ``git diff`` wrote the index back, under index.lock, when it
    found a file's stat changed and not its bytes, ``--no-optional-locks`` or not (git
    2.39), and a person's ``git add`` at that moment failed."""
    if not paths:
        return {}, set()
    here, there = ("--literal-pathspecs",), sorted(paths)
    if commit is None:
        listed = run_git(root, *here, "ls-files", "-s", "-z", "--", *there)  # mode id stage\tpath
    else:
        listed = run_git(root, *here, "ls-tree", "-z", commit, "--", *there)  # mode type id\tpath
    if listed is None or listed.returncode:
        return {}, set()
    kept: dict[str, str] = {}
    unmerged: set[str] = set()
    for entry in listed.stdout.decode("utf-8", "replace").split("\0"):
        fields, _, path = entry.partition("\t")
        if not path:
            continue
        if commit is None and fields.split()[2] != "0":
            unmerged.add(path)
        else:
            kept[path] = fields.split()[1 if commit is None else 2]
    return kept, unmerged


def _same(hashed: dict[str, str], kept: dict[str, str]) -> set[str]:
    """The paths whose file's blob id (``hashed``) is the one git has there (``kept``)."""
    return {r for r, blob in hashed.items() if kept.get(r) == blob}


__all__ = [
    "STASH_APPLIED",
    "STASH_WAIT_SECONDS",
    "StashSeen",
    "newest_stash",
    "newest_stash_commit",
    "stash_made",
    "stash_stops",
    "stash_waits",
]
