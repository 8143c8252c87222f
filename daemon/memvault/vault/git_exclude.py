"""memvault's temp files kept out of git: one line in the repository's ``info/exclude``.

Every write swaps a note through a temp file beside it (``.<name>.memvault-tmp-<hex>``,
vault/swap.py); a relink after a rename holds hundreds of them at once, and the
versions its swaps displaced wait under those names until a thread deletes them. A
person's ``git add -A`` (an Obsidian git plugin commits so on a timer) meanwhile
committed them: the soak (bench/soak.py --clone, 35 minutes) found 3 in the history,
each added by a commit and removed by a later one, and pulled by the other clone. The
pattern goes into git's own per-clone ignore list (``info/exclude`` of the
repository's common folder, which a worktree shares): no file of the person's
changes and nothing is committed; each clone's memvault adds it when it opens the
vault to write. Written once (temp file and rename, the file read again first: a
person's edit meanwhile is kept and the line added again on it), nothing written when
the line is there; a git folder this user cannot write, and an exclude file the person
made read-only, are left alone. A symlinked exclude (a dotfiles manager's) is written
where it leads, the link kept, and the file keeps its mode. A relink calls it again (a
``git init`` while the daemon runs: the Obsidian git plugin's "initialize a new repo").
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
from pathlib import Path

from memvault.vault.gitstate import common_dir, git_dir
from memvault.vault.swap import TEMP_MARK

log = logging.getLogger(__name__)

PATTERN = f"*{TEMP_MARK}*"  # no slash: at any depth; `*` takes a leading dot in git
COMMENT = "# memvault: a note's write in progress (its temp file)"


def exclude_file(root: Path) -> Path | None:
    """The ``info/exclude`` of the repository the vault is in (None outside git)."""
    gdir = git_dir(root)
    return None if gdir is None else common_dir(gdir) / "info" / "exclude"


def keep_temps_out(root: Path) -> bool:
    """Add ``PATTERN`` to the repository's ``info/exclude`` unless it is there; True if
    it was written."""
    try:
        path = exclude_file(root)
        if path is None:
            return False
        # a symlink (a dotfiles manager's shared exclude): its file written, the link kept
        path = Path(os.path.realpath(path))
        for _ in range(3):  # the file changed between the read and the rename: again
            before = _read(path)
            if before is not None and PATTERN in before.splitlines():
                return False
            if before is not None and not os.stat(path).st_mode & 0o222:
                log.debug("%s is read-only: memvault's temp files not kept out of git", path)
                return False  # made read-only by the person: theirs as it is
            text = before or ""
            if text and not text.endswith("\n"):
                text += "\n"
            if _swap(path, before, f"{text}{COMMENT}\n{PATTERN}\n"):
                return True
    except (OSError, ValueError) as exc:  # a git folder closed to us, a read-only disk,
        # a broken one (a NUL in its commondir): git as it is, the write goes on
        log.debug("cannot keep memvault's temp files out of git (%s): %s", root, exc)
    return False


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return None


def _swap(path: Path, before: str | None, text: str) -> bool:
    """``text`` in place of ``path`` if it still holds ``before`` (None: no file)."""
    mode = None if before is None else stat.S_IMODE(os.stat(path).st_mode)
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_name(f".{path.name}{TEMP_MARK}{secrets.token_hex(4)}")
    try:
        tmp.write_bytes(text.encode("utf-8", errors="surrogateescape"))
        if mode is not None:
            os.chmod(tmp, mode)  # its mode kept (0600: the person's own)
        if _read(path) != before:
            return False
        os.replace(tmp, path)
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


__all__ = ["PATTERN", "exclude_file", "keep_temps_out"]
