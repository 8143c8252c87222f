"""The copies a file sync tool leaves beside a note it could not merge.

Syncthing names one ``ana.sync-conflict-20261205-101010-ABCDEFG.md``; Dropbox ``ana
(Ana's MacBook's conflicted copy 2026-12-05).md`` (or ``(Case Conflict)``,
``(Selective Sync Conflict)``); Nextcloud ``ana (conflicted copy 2026-12-05
101010).md``; ownCloud ``ana_conflict-20261205-101010.md``. Each holds the other
machine's version of the note: never a note of its own (one person listed twice in
MEMORY.md, every hit twice in search), but words the person has not merged yet, so
a scan reports it (``VaultFS.scan``: ``status`` lists it) instead of passing it by.
Editors' leftovers (``.orig``, ``~``) are passed by too. iCloud's ``ana 2.md`` and
OneDrive's ``ana-LAPTOP.md`` are names a person gives notes too: they stay notes.
"""

from __future__ import annotations

import re

_MARK = (
    r"\.sync-conflict-[^./]*"  # Syncthing
    r"|\s*\([^()/]*\bconflicted copy\b[^()/]*\)"  # Dropbox, Nextcloud
    r"|\s*\((?:case |selective sync )?conflict[^()/]*\)"  # Dropbox (and older tools)
    r"|_conflict-\d{8}-\d{6}"  # ownCloud
)
CONFLICT_COPY = re.compile(rf"(?:{_MARK})|\.orig$|~$", re.IGNORECASE)
_MARK_RX = re.compile(_MARK, re.IGNORECASE)


def is_conflict_copy(name: str) -> bool:
    """Whether a file name is a sync tool's conflict copy or an editor's leftover."""
    return CONFLICT_COPY.search(name) is not None


def original_of(rel: str) -> str | None:
    """The note a sync tool's conflict copy ``rel`` is a copy of (``people/ana.md``), or
    None when ``rel`` is not one."""
    folder, _, name = rel.rpartition("/")
    found = _MARK_RX.search(name)
    if found is None:
        return None
    original = name[: found.start()] + name[found.end() :]
    return f"{folder}/{original}" if folder else original


def conflict_reason(rel: str) -> str | None:
    """What ``status`` says of the conflict copy ``rel`` (None: not one)."""
    original = original_of(rel)
    if original is None:
        return None
    return (
        f"not indexed: a sync tool's conflict copy of {original} (another machine's "
        "version): merge what it adds into that note, then delete it"
    )
