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
vault to write. Written once (``Swapper.swap``, the compare-and-swap of a note: a
person's edit meanwhile is kept and the line added again on it), nothing written when
the line is there; a git folder this user cannot write, and an exclude file the person
made read-only, are left alone. A symlinked exclude (a dotfiles manager's) is written
where it leads, the link kept, and the file keeps its mode. A relink calls it again (a
``git init`` while the daemon runs: the Obsidian git plugin's "initialize a new repo").
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from memvault.core.text import sha256_bytes
from memvault.errors import WriteConflict
from memvault.vault.gitstate import common_dir, git_dir
from memvault.vault.swap import TEMP_MARK, Swapper

log = logging.getLogger(__name__)

PATTERN = f"*{TEMP_MARK}*"  # no slash: at any depth; `*` takes a leading dot in git
COMMENT = "# memvault: a note's write in progress (its temp file)"


def exclude_file(root: Path) -> Path | None:
    """The ``info/exclude`` of the repository the vault is in (None outside git)."""
    gdir = git_dir(root)
    return None if gdir is None else common_dir(gdir) / "info" / "exclude"


def keep_temps_out(root: Path) -> bool:
    """Add ``PATTERN`` to the repository's ``info/exclude`` unless it is there; True if
    it was written. Never raises: a note's write goes on whatever git's folder is."""
    try:
        path = exclude_file(root)
        if path is None:
            return False
        # a symlink (a dotfiles manager's shared exclude): its file written, the link kept
        path = Path(os.path.realpath(path))
        path.parent.mkdir(exist_ok=True)  # (info/ alone: never a git folder that is not)
        swapper = Swapper(quiet_ms=0)  # vault/swap.py's compare-and-swap, its mode kept
        for _ in range(3):  # the person's edit landed between the read and the swap: again
            try:
                before: bytes | None = path.read_bytes()
            except FileNotFoundError:
                before = None
            text = before or b""
            # git's reading: lines split at \n, a \r and trailing spaces dropped
            if PATTERN.encode() in (line.rstrip(b"\r ") for line in text.split(b"\n")):
                return False
            if text and not text.endswith(b"\n"):
                text += b"\n"
            ours = f"{COMMENT}\n{PATTERN}\n".encode()
            expected = None if before is None else sha256_bytes(before)
            if swapper.swap(path, text + ours, expected)[0]:  # read-only: PermissionError
                return True
    except (OSError, ValueError, WriteConflict) as exc:  # a git folder closed to us, a
        # read-only disk or file, one being saved, a broken one (a NUL in its commondir)
        log.debug("cannot keep memvault's temp files out of git (%s): %s", root, exc)
    return False


__all__ = ["PATTERN", "exclude_file", "keep_temps_out"]
