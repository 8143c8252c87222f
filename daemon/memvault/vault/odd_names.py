"""File names a scan cannot take for notes: not UTF-8, or holding what no vault path may
(a backslash, a percent-encoded separator: ``paths.normalize_rel``), which every read and
write of the note would refuse. Such a file is skipped with its reason — listed by
``status`` until it is renamed — never counted as a note created on every sync."""

from __future__ import annotations

from memvault.errors import UnsafePath
from memvault.vault.paths import NOT_UTF8, is_utf8, normalize_rel


def refused_name(name: str) -> str | None:
    """Why the file or folder ``name`` (or a vault path) cannot be a note's, else None."""
    if not is_utf8(name):
        return NOT_UTF8
    if "\\" in name or "%" in name:  # the rest of normalize_rel's rules the scan keeps
        try:
            normalize_rel(name)
        except UnsafePath as exc:
            return f"{exc} (rename it to have it indexed)"
    return None
