"""(last manifest, disk scan) -> ChangeSet, in two pure steps.

1. ``suspects``: paths that are new, or whose size or mtime differ from the
   manifest. Only these get hashed (the size+mtime fast path).
2. ``diff``: with those hashes, what was created, modified, deleted, moved.
   A path that vanished and a new path with the same content hash is a move,
   so renames made while nothing was running are still followed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Known:
    """What the index recorded of a file."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Seen:
    """What a scan saw of a file."""

    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class ChangeSet:
    created: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    moved: tuple[tuple[str, str], ...] = ()  # (old, new)
    touched: tuple[str, ...] = ()  # stat changed, content did not

    def __bool__(self) -> bool:
        return bool(self.created or self.modified or self.deleted or self.moved)

    @property
    def paths(self) -> set[str]:
        """Every path this change set names (old and new sides of moves)."""
        out = set(self.created) | set(self.modified) | set(self.deleted) | set(self.touched)
        for old, new in self.moved:
            out |= {old, new}
        return out


def suspects(known: Mapping[str, Known], seen: Mapping[str, Seen]) -> list[str]:
    """Paths whose content must be hashed to know whether they changed."""
    out = []
    for path, now in seen.items():
        before = known.get(path)
        if before is None or before.size != now.size or before.mtime_ns != now.mtime_ns:
            out.append(path)
    return sorted(out)


def diff(
    known: Mapping[str, Known],
    seen: Mapping[str, Seen],
    hashes: Mapping[str, str],
    scope: Collection[str] | None = None,
) -> ChangeSet:
    """The change set. ``hashes`` holds the sha256 of every suspect path.

    ``scope`` limits the comparison to some paths (a watcher batch); by
    default every path known or seen is compared.
    """
    paths = set(known) | set(seen) if scope is None else set(scope)
    gone = sorted(p for p in paths if p in known and p not in seen)
    new = sorted(p for p in paths if p in seen and p not in known)
    modified: list[str] = []
    touched: list[str] = []
    for p in sorted(paths):
        if p in known and p in seen and p in hashes:
            (modified if hashes[p] != known[p].sha256 else touched).append(p)

    by_hash: dict[str, list[str]] = {}
    for p in gone:
        by_hash.setdefault(known[p].sha256, []).append(p)
    moved: list[tuple[str, str]] = []
    created: list[str] = []
    for p in new:
        sha = hashes.get(p)
        olds = by_hash.get(sha, []) if sha else []
        if not olds:
            created.append(p)
            continue
        # identical content vanished from several places: pair the same name first
        name = posixpath.basename(p).casefold()
        best = next((o for o in olds if posixpath.basename(o).casefold() == name), olds[0])
        olds.remove(best)
        moved.append((best, p))
    moved_from = {old for old, _ in moved}
    deleted = [p for p in gone if p not in moved_from]
    return ChangeSet(tuple(created), tuple(modified), tuple(deleted), tuple(moved), tuple(touched))
