"""File names a scan cannot take for notes: not UTF-8, holding what no vault path may (a
backslash, a percent-encoded separator: ``paths.normalize_rel``), or past the system's
path limit (a folder tree too deep), which every read and write of the note would refuse.
Such a file is skipped with its reason — listed by ``status`` until it is renamed —
never counted as a note created on every sync, nor failing the sync of the others."""

from __future__ import annotations

import os

from memvault.errors import UnsafePath
from memvault.vault.paths import MAX_PATH_BYTES, NOT_UTF8, PATH_MAX, is_utf8, normalize_rel


def refused_name(name: str, root: str | None = None) -> str | None:
    """Why the file or folder ``name`` (or a vault path, in the vault at ``root``) cannot
    be a note's, else None."""
    if not is_utf8(name):
        return NOT_UTF8
    if root is not None and len(os.fsencode(os.path.join(root, name))) >= PATH_MAX:
        return (
            f"the path is too long for the system ({len(os.fsencode(name)):,} bytes in the "
            "vault): move it nearer the vault's root to have it indexed"
        )
    long = len(name.encode("utf-8")) > MAX_PATH_BYTES
    if "\\" in name or "%" in name or long:  # the rest of normalize_rel's rules the scan keeps
        try:
            normalize_rel(name)
        except UnsafePath as exc:
            return f"{exc} (rename it to have it indexed)"
    return None
