"""memvault's own folder in a vault, ``.memvault/``, and the one file in it that is not
derived from the notes.

- ``ensure_state_dir`` creates the folder — wherever memvault creates it: a sync, the
  writer lock, ``daemon start`` — together with its ``.gitignore``, so ``git add -A``
  in a vault never commits the index (tens of MB, rebuilt from the notes anyway).
  The ignore file keeps the settings in git.
- ``.memvault/memory-decisions.json`` is retired: earlier versions kept there what they
  *inferred* a person had decided about MEMORY.md (entries "hidden", sections "deleted
  on purpose"), and every tool that rewrote MEMORY.md without a person (git, an
  editor's stale buffer, a lost index) was taken for one. A person's intent now travels
  with the notes (``memory-index: false`` in a note; ``memory.sections`` in the config;
  docs/MEMORY.md). memvault never writes the file; ``load_decisions`` reads an old one
  only so that ``status`` can name the notes it once hid.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memvault.config import STATE_DIR
from memvault.vault import libc

GITIGNORE = ".gitignore"
DECISIONS_FILE = "memory-decisions.json"
# Kept in step with vault-template/.memvault/.gitignore (a test checks).
GITIGNORE_TEXT = (
    "# memvault's index is derived from the notes: keep it out of git\n"
    "*\n"
    "!config.toml\n"
    "!.gitignore\n"
)


def ensure_state_dir(state: Path) -> Path:
    """Create ``.memvault/`` (``state``) if needed, with its ``.gitignore``; an ignore
    file a person changed is left as it is."""
    state.mkdir(parents=True, exist_ok=True)
    ignore = state / GITIGNORE
    if not ignore.exists():
        with contextlib.suppress(FileExistsError):
            fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(GITIGNORE_TEXT)
    return state


def state_dir_of(root: Path) -> Path:
    return Path(root) / STATE_DIR


@dataclass(frozen=True, slots=True)
class MemoryDecisions:
    """What an earlier version's decisions file says (read only, for ``status``)."""

    sections_seen: tuple[str, ...] = ()
    hidden: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # section -> notes


def load_decisions(state: Path) -> MemoryDecisions | None:
    """An earlier version's decisions file, or None when there is none (or it cannot be
    read as one)."""
    try:
        data = json.loads((state / DECISIONS_FILE).read_text(encoding="utf-8"))
        seen = tuple(str(s) for s in data.get("sections_seen", []))
        hidden = {str(k): tuple(str(p) for p in v) for k, v in dict(data.get("hidden", {})).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    return MemoryDecisions(seen, hidden)


def unwritable(state: Path) -> Path | None:
    """The first of ``.memvault/``'s databases, or the folder itself (where SQLite makes
    their ``-wal`` and ``-shm``), that this process cannot write: a vault indexed by
    another user (``index.db`` of mode 0444, not ours), a folder closed to us. Such an
    index is read as it is and never written (``backends.open_backend``): each write
    into it failed midway, a search's with a traceback. ``os.access`` is the kernel's
    rule for this user (root writes a 0444 file, and is answered so). A ``-wal`` or
    ``-shm`` of another user's beside our database (an older memvault's read of it as
    that user left them) is one too: SQLite wrote nothing through it, and a write
    failed midway, its note left unindexed (index/sqlite_open.py reads past it)."""
    for name in ("index.db", "cache.db"):
        for path in (state / name, state / f"{name}-wal", state / f"{name}-shm"):
            if _refused(path):
                return path
    if state.is_dir() and not os.access(state, os.W_OK | os.X_OK):
        return state
    return None


def _refused(path: Path) -> bool:
    """Whether ``path`` is there and this user cannot write it. A -wal another
    connection's close deleted between two looks is no file of another user's: it was
    reported as "cannot be written by this user (No such file or directory)", the write
    refused. On POSIX access(2)'s own errno says why it refused, one look: a file not
    there (ENOENT) is not refused. Elsewhere (os.access gives no errno) the same file,
    by inode and ctime, must be there before and after ``os.access`` said no: a -wal
    deleted and made again between the looks on the inode freed (ext4 gives it again at
    once) and within one tick of a coarse clock passes that check (3 of 60,000 looks
    against a deleting thread, Linux 6.18 ext4), so it is not used where errno is."""
    if _ACCESS is not None:
        if _ACCESS(os.fsencode(path), os.W_OK) == 0:
            return False
        return libc.last_errno() in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ETXTBSY)
    try:
        before = os.stat(path)
    except OSError:
        return False
    if os.access(path, os.W_OK):
        return False
    try:
        after = os.stat(path)
    except OSError:
        return False
    return (after.st_ino, after.st_ctime_ns) == (before.st_ino, before.st_ctime_ns)


_ACCESS = libc.function("access", "char_p", "int")


def cannot_write(path: Path) -> str:
    """One line on ``path`` (``unwritable``'s): what it is and what to do."""
    fix = f"chmod u+w{'' if path.is_file() else 'x'} {path}"
    try:
        st = path.stat()
    except OSError as exc:
        return f"{path} cannot be written by this user ({exc.strerror or exc})"
    mode = f"mode {st.st_mode & 0o777:o}"
    if st.st_uid == os.geteuid():
        return f"{path} cannot be written by this user ({mode}): make it writable ({fix})"
    return (
        f"{path} cannot be written by this user ({mode}, owner uid {st.st_uid}): run "
        f"memvault as its owner, or make it this user's (chown, then {fix})"
    )


__all__ = [
    "DECISIONS_FILE",
    "GITIGNORE_TEXT",
    "MemoryDecisions",
    "cannot_write",
    "ensure_state_dir",
    "load_decisions",
    "state_dir_of",
    "unwritable",
]
