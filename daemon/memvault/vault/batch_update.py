"""Many notes updated at once (a relink after a rename): ``VaultFS.update_texts``.

Each file is atomic and compare-and-swap as alone, but made durable a batch at a time
(``Swapper.swap_many``: two flushes a batch, not two fsyncs a file; a relink of 6,000
notes spent ~45 s in fsync). A note that conflicts, is busy or fails goes through
``VaultFS.update_text`` alone (redone on the person's version, waiting for a save in
progress). Busy notes wait together: ``wait`` seconds (``busy_wait`` by default) in all,
not each (20 notes held open cost every relink 20 s; a field test). A note that would
not change as read but is being written (open for writing elsewhere, saved moments ago)
is one of those: what it will hold is not known yet.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from memvault.core.text import Decoded, NotText, decode, encode, sha256_bytes
from memvault.errors import NoteNotFound, UnsafePath, WriteConflict
from memvault.vault.paths import folder_names, named_in
from memvault.vault.swap import Swapper, Unlinker, read_settled

Change = Callable[[str], str]


class VaultFS(Protocol):
    """What of ``vault.files.VaultFS`` a batch uses."""

    busy_wait: float

    def check_root(self) -> None: ...
    def target(self, rel: str, listed: dict[str, set[str]] | None = None) -> Path: ...
    @property
    def swapper(self) -> Swapper: ...
    def update_text(
        self, rel: str, change: Change, attempts: int = 50, *, busy_until: float | None = None
    ) -> tuple[bool, str]: ...


def update_texts(
    fs: VaultFS, changes: Mapping[str, Change], batch: int = 256, wait: float | None = None
) -> dict[str, bool | Exception]:
    """For each note, whether it was written, or the ``NoteNotFound``, ``NotText``,
    ``WriteConflict``, ``UnsafePath`` or ``PermissionError`` (a folder read-only to us)
    that ``update_text`` raised for it (any other error is raised)."""
    fs.check_root()
    out: dict[str, bool | Exception] = {}
    items = list(changes.items())
    unlinker = Unlinker()  # the displaced versions go while the next batch is made
    until = time.monotonic() + (fs.busy_wait if wait is None else wait)
    try:
        for start in range(0, len(items), batch):
            alone = _batch(fs, items[start : start + batch], out, unlinker)
            for rel in alone:
                try:
                    out[rel] = fs.update_text(rel, changes[rel], busy_until=until)[0]
                except (NoteNotFound, NotText, WriteConflict, UnsafePath, PermissionError) as exc:
                    # a note its folder (or file) keeps from us holds up no other;
                    out[rel] = exc  # anything else (the disk full) fails the call
    finally:
        unlinker.join()  # none is left when the call returns
    return out


def _batch(
    fs: VaultFS,
    items: list[tuple[str, Change]],
    out: dict[str, bool | Exception],
    unlinker: Unlinker,
) -> list[str]:
    """One batch swapped together; the notes left to be tried alone."""
    ready: list[tuple[str, Path, bytes, bytes]] = []
    alone: list[str] = []
    listed: dict[str, set[str]] = {}  # (a disk that folds case: each folder listed once)
    for rel, change in items:
        try:
            path = fs.target(rel, listed)
            base = read_settled(path)
            decoded = decode(base)
            data = encode(Decoded(change(decoded.text), decoded.bom))
        except Exception:  # update_text, alone, raises it as it should
            alone.append(rel)
            continue
        if data != base:
            ready.append((rel, path, base, data))
        elif fs.swapper.busy(path) is not None:  # being written: not known yet
            alone.append(rel)
        else:
            out[rel] = False
    displaced: list[Path] = []
    try:
        done = fs.swapper.swap_many(
            [(path, data, sha256_bytes(base)) for _, path, base, data in ready],
            displaced,
            _still_spelt() if listed else None,  # (listed: a disk that folds case)
        )
    finally:  # a swap_many that raised after a swap leaves no old version behind
        unlinker.unlink_all(displaced)
    for (rel, *_), result in zip(ready, done, strict=True):
        if isinstance(result, tuple) and result[0]:
            out[rel] = True
        else:
            alone.append(rel)
    return alone


def _still_spelt() -> Callable[[Path], bool]:
    """Whether a note's name is still listed in its folder as spelt, each folder listed
    once, when first asked: after the batch's reads and flush, just before its swaps.
    The listing its reads took is older by the whole batch (a field test: a person's
    ``mv Note1.md note1.md`` while the batch read the notes after it, and the swap onto
    ``Note1.md`` named it back, where on ext4 the old name is gone: ``NoteNotFound``)."""
    listed: dict[str, set[str]] = {}

    def still(path: Path) -> bool:
        folder, name = os.path.split(path)
        names = folder_names(listed, folder)
        return names is None or named_in(names, name)

    return still
