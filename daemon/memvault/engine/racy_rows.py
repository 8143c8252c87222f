"""Racily clean rows: git's "racy git" (Documentation/technical/racy-git.txt).

A note is taken for unchanged when its size and mtime are what its row recorded
(``changes.suspects``). A file system keeps mtimes to a tick (exFAT through exfat-fuse
and HFS+ to 1 s, FAT to 2 s, ext4 and tmpfs one jiffy of the kernel's coarse clock),
so a note saved, synced, and saved again at the same size within that tick keeps its
(size, mtime): trusted, the second save was missed for good (by every later sync, the
daemon, ``status``), until the note changed again.

So a row is trusted only when its mtime is older than the moment the sync that wrote it
began looking at the files by more than ``WINDOW_NS`` (the coarsest tick, FAT's). A row
written closer than that is racy: its path is kept in the index's meta (``KEY``, a JSON
list; it survives the process, so a cold CLI command, the daemon and a team's writer
see it alike), and each look at it hashes the file again, as a suspect, until a look
finds the same content with its mtime older than the window: then it is trusted and
leaves the list. The stored mtime_ns is never changed (MEMORY.md's orders and "updated"
read it); nothing is written while the list stays as it was (an idle sync of old notes
reads one meta row and writes nothing).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping

from memvault.core.changes import Known, Seen
from memvault.core.results import SyncReport
from memvault.index.store import Store
from memvault.vault.files import VaultFS

KEY = "racy_rows"
WINDOW_NS = 2_000_000_000  # FAT's 2 s: the coarsest tick of a file system a vault is on
_MANY = 64  # rows past which the written rows are read in one manifest, not one by one


def recorded(store: Store) -> frozenset[str]:
    """The paths whose rows are racy, as the index keeps them."""
    raw = store.meta(KEY)
    if not raw:
        return frozenset()
    try:
        paths = json.loads(raw)
    except ValueError:
        paths = None
    if not isinstance(paths, list):  # not ours: hash nothing more, trust nothing less
        return frozenset()
    return frozenset(p for p in paths if isinstance(p, str))


def changed(
    fs: VaultFS, racy: Collection[str], known: Mapping[str, Known], seen: Mapping[str, Seen]
) -> list[str]:
    """Of the racy paths whose file has its row's size and mtime, those whose content
    differs from the row's (each hashed): what a look that reads only the changed notes
    (``link_check``) reads of them."""
    same = [
        p
        for p in sorted(racy)
        if (k := known.get(p)) is not None
        and (s := seen.get(p)) is not None
        and (k.size, k.mtime_ns) == (s.size, s.mtime_ns)
    ]
    hashes = fs.hashes(same) if same else {}
    return [p for p in same if hashes.get(p) != known[p].sha256]


def is_racy(mtime_ns: int, looked_ns: int) -> bool:
    """A row of this mtime, written by a sync that began looking at ``looked_ns``, is
    not to be trusted yet (a later save within the file system's tick keeps it)."""
    return mtime_ns >= looked_ns - WINDOW_NS


def settled(
    racy: Collection[str],
    looked_ns: int,
    checked: Mapping[str, Seen],
    written: Mapping[str, int | None],
) -> frozenset[str]:
    """The racy paths after a sync that began looking at ``looked_ns``: those it hashed
    again and found the same (``checked``: as seen) leave when their mtime is now old
    enough; the rows it wrote (``written``: path -> the row's mtime, None when the row
    is gone) are racy or not by their own mtime."""
    out = set(racy)
    for path, now in checked.items():
        if not is_racy(now.mtime_ns, looked_ns):
            out.discard(path)
    for path, mtime_ns in written.items():
        if mtime_ns is not None and is_racy(mtime_ns, looked_ns):
            out.add(path)
        else:
            out.discard(path)
    return frozenset(out)


def written_paths(report: SyncReport, touched: Collection[str], memory: str) -> set[str]:
    """The note rows a sync wrote or dropped (by the report and its touched notes)."""
    out = {*report.created, *report.modified, *report.deleted, *touched}
    out.update(p for move in report.moved for p in move)
    out.update(report.relinked, report.folder_notes_written)
    out.update(s.path for s in report.skipped)  # (a skipped file's row keeps its stat too)
    if report.memory_written:
        out.add(memory)
    return out


def settle(
    store: Store,
    looked_ns: int,
    checked: Mapping[str, Seen],
    written: Collection[str],
) -> None:
    """Keep the racy paths after a sync (``settled``); nothing written when they are
    the same. ``written``: the paths whose rows the sync wrote or dropped.

    The list is read again here, not taken from the sync's start: a long sync steps
    aside between its batches (``Applier.long_syncs``) and a save let in meanwhile kept
    its own racy row, which this sync knows nothing of. For the same reason a path it
    hashed again (``checked``) leaves only while its row is still the one it checked."""
    if not checked and not written:
        return
    paths = {*written, *checked}
    if len(paths) > _MANY:
        rows = store.manifest().rows
        stats = {p: ((rows[p][1], rows[p][2]) if p in rows else None) for p in paths}
    else:
        stats = {p: ((r.size, r.mtime_ns) if (r := store.note(p)) else None) for p in paths}
    mtimes = {p: (s[1] if (s := stats[p]) else None) for p in written}
    still = {p: now for p, now in checked.items() if stats[p] == (now.size, now.mtime_ns)}
    racy = recorded(store)
    after = settled(racy, looked_ns, still, mtimes)
    if after != racy and not store.read_only:
        store.set_meta(KEY, json.dumps(sorted(after), ensure_ascii=False))
