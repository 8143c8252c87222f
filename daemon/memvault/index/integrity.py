"""SQLite's ``quick_check`` on open, once per change of the file memvault did not make.

Damage to index.db or cache.db (even a page an open never reads) is found on open by
``PRAGMA quick_check``, which reads the whole file: 0.7 s for index.db and 0.3 s for
cache.db at 100,000 notes, paid by every command run without a daemon (issue 27).
A file memvault itself closed, unchanged since, need not be read again: at its close
(the last connection's: SQLite has folded the WAL back in and removed it) each open
writes the file's stamp (device, inode, size, mtime and ctime in ns) beside it,
``NAME.checked``, when the file there is the one it opened and nothing but its own
writes changed it meanwhile (``Guard.only_mine``, ``record``: a backup restored by a
rename or copied over it in place while it was open is no file this process read); an
open that may trust it (``trusting``: a process that is no daemon) and finds the
file's stamp the same skips the check. Anything else that writes the file (a copy
over it, a truncation, another program, a kill mid-write: no stamp written) changes
its stamp and the next open checks it: the stamp holds the file's ctime too, which no
program can set (``cp -p``, ``rsync -a --inplace`` or ``touch -r`` put back a size and
an mtime: a torn backup copied over the file kept both). What the stamp cannot see is
damage that leaves the file's metadata alone (a failing disk): a daemon checks at every
start, whatever the stamp says, and a query that meets damage (SQLite's "malformed",
"not a database") under a ``Guard`` forgets the stamp and says ``IndexCorrupt``, so the
next open checks the file and rebuilds it (it said ``sqlite3.DatabaseError``, and so
did every command after it, until a daemon started). A stamp file that is not a plain
file (a FIFO waited forever for a writer, a link to /dev/zero read without end) is
no stamp; at most ``_STAMP_BYTES`` of it are read.

A write the stamp misses needs the same size and a ctime in the same clock tick as a
stat of memvault's (the close's, or ``Guard``'s around a write). On Linux 6.13 and later
a file's times after a stat are fine-grained (a write after a stat always changed the
ctime here: 2,000 of 2,000, 6.18); on an older kernel the tick is 1 to 10 ms, and only a
program writing the file in place in those very milliseconds could land in it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from memvault.errors import IndexCorrupt, StorageError

_STAMP_BYTES = 256  # a stamp is ~80 bytes: what is longer is no stamp
_NO_WAIT = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)


def stamp(path: Path) -> str | None:
    """The file at ``path`` as its stamp; None when there is none, or its WAL holds
    pages (the file alone is not the database then)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    try:
        if os.stat(f"{path}-wal").st_size:
            return None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    return f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}\n"


def _stamp_file(path: Path) -> Path:
    return path.with_name(f"{path.name}.checked")


def _written(path: Path) -> str | None:
    """The stamp written beside ``path``; None when there is none, or what is there is
    no plain file (read without waiting, without following a link) or no stamp."""
    try:
        fd = os.open(_stamp_file(path), _NO_WAIT)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, _STAMP_BYTES).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


def unchanged(path: Path) -> bool:
    """Whether ``path`` is as a memvault closed it last (its stamp the one written)."""
    now = stamp(path) if path.name != ":memory:" else None
    return now is not None and _written(path) == now


def check(conn: sqlite3.Connection) -> None:
    """SQLite's ``quick_check``: a failure is a ``DatabaseError`` (the open's caller says
    damage: ``opening_error``)."""
    row = conn.execute("PRAGMA quick_check").fetchone()
    if row is None or row[0] != "ok":
        raise sqlite3.DatabaseError(f"integrity check failed: {row[0] if row else 'no answer'}")


def _file_stat(path: Path) -> tuple[int, int, int, int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def identity(path: Path) -> tuple[int, int] | None:
    """The file at ``path`` as (device, inode); None when there is none (or in memory)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def record(path: Path, opened: tuple[int, int] | None) -> None:
    """After the close of ``path``: its stamp written (atomically), when the file alone
    is the database, is the file this process opened (``opened``: its ``identity`` then)
    and the stamp differs from the one there (nothing written else). A file put in its
    place meanwhile (a backup restored by a rename, as ``rsync -a`` and ``tar`` do) was
    never read by this process: stamped at its close, it was trusted unchecked."""
    if path.name == ":memory:" or (now := stamp(path)) is None:
        return
    if not os.access(path, os.W_OK):  # another user's (read, never written): theirs to stamp
        return
    if opened is None or now.split()[:2] != [str(n) for n in opened]:
        return
    if _written(path) == now:
        return
    target = _stamp_file(path)
    temp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        temp.write_text(now, encoding="ascii")
        os.replace(temp, target)
    except OSError:  # a read-only folder: the next open checks, as before
        with contextlib.suppress(OSError):
            temp.unlink()


def forget(path: Path) -> None:
    """``path`` is being deleted (damaged): its stamp goes with it."""
    with contextlib.suppress(OSError):
        _stamp_file(path).unlink()


def damage(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying the file is damaged (not busy, full, read-only)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return (
        isinstance(exc, sqlite3.DatabaseError)
        and code is not None
        and code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    )


def full(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying the disk is full (SQLITE_FULL)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.OperationalError) and code == sqlite3.SQLITE_FULL


class Guard:
    """A database's lock (``with``, as the lock itself), which notes the damage SQLite
    reports under it: the file's stamp is forgotten and not written again at its close
    (``damaged``), and the error is ``IndexCorrupt`` naming the file, as an open's. A
    file trusted on its stamp is read without a check: what damage it holds is met here."""

    def __init__(self, lock: threading.Lock | threading.RLock, path: Path) -> None:
        self._lock = lock
        self.path = path
        self.damaged = False
        self._seen: tuple[int, int, int, int, int] | None = None
        self._foreign = False
        self._frozen: tuple[object, ...] | None = None  # read as a file no one writes

    def frozen(self) -> None:
        """Before an ``immutable=1`` open (index/sqlite_open.py: another user's file, no
        writer had it open): the file and its -wal as found. SQLite trusts such a file
        never to change and keeps its pages; its owner's memvault writing it meanwhile
        (a -wal made, a checkpoint into the file) left it answering from old pages mixed
        with new ones: wrong hits, or "malformed". Each use after such a change is
        refused (``__enter__``); damage met on it is no damage of the file's."""
        self._frozen = (_file_stat(self.path), _file_stat(Path(f"{self.path}-wal")))

    def _changed_under(self) -> StorageError | None:
        now = (_file_stat(self.path), _file_stat(Path(f"{self.path}-wal")))
        if self._frozen is None or now == self._frozen:
            return None
        return StorageError(
            f"{self.path} changed under this read (its owner's memvault wrote it; this "
            "user reads it as a file no one writes): run it again (nothing was deleted)"
        )

    @contextlib.contextmanager
    def closing(self) -> Iterator[Guard]:
        """The lock, for the close (an index changed under a read is closed all the same)."""
        with self._lock:
            yield self

    def opened(self) -> None:
        """The file as this process has it open, the open's own writes done: what its
        close may stamp while nothing but its own writes (``writing``) changed it."""
        self._seen, self._foreign = _file_stat(self.path), False

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Around a write of this process (under the lock). In WAL mode the file itself
        changes only at a checkpoint, which a commit of this process may run: a change
        found before the write is another writer's (another memvault's checkpoint, a
        ``cp`` of a backup over the file in place); the file after it is this process's."""
        if _file_stat(self.path) != self._seen:
            self._foreign = True
        try:
            yield
        finally:
            self._seen = _file_stat(self.path)

    def closed(
        self, opened: tuple[int, int] | None, mine: bool, failed: sqlite3.Error | None
    ) -> None:
        """After the close of the file: its stamp written (``record``) when nothing but
        this process's writes changed it (``mine``, asked before the close's own
        checkpoint) and no damage was met; damage the close met (its ``PRAGMA optimize``)
        forgets the stamp, as a query's does."""
        if self._frozen is not None:
            return  # another user's file: neither its stamp written nor forgotten here
        if failed is not None and damage(failed):
            self.damaged = True
            if self.path.name != ":memory:":
                forget(self.path)
        elif mine and not self.damaged:
            record(self.path, opened)

    def only_mine(self) -> bool:
        """Whether nothing but this process's writes changed the file since it opened it:
        what its close may stamp. A backup copied over the file in place while it was
        open (``cp``, ``cat >``: the inode kept) was stamped at the close, never read."""
        return not self._foreign and self._seen is not None and _file_stat(self.path) == self._seen

    def __enter__(self) -> Guard:
        self._lock.acquire()
        if self._frozen is not None and (changed := self._changed_under()) is not None:
            self._lock.release()
            raise changed
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._lock.release()
        if exc is not None:
            self.met(exc)
            if full(exc):  # a write under the lock: SQLite rolled it back, nothing kept
                raise StorageError(
                    f"{self.path}: the disk is full ({exc}); this write was not kept, "
                    "nothing was deleted: free some space and run it again"
                ) from exc

    @contextlib.contextmanager
    def apart(self) -> Iterator[None]:
        """Around a use of the file on a connection of its own, without the lock (an older
        index's conversion, ``PendingQueue._converted``): damage met there is said as
        under the lock (``met``)."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            self.met(exc)
            raise

    def met(self, exc: BaseException) -> None:
        """Damage met in the file: ``IndexCorrupt``, its stamp forgotten (another user's
        file read as no one writes it: ``StorageError``); other errors go on as they are."""
        if damage(exc) and self._frozen is not None:
            raise self._changed_under() or StorageError(
                f"{self.path}: {exc}; this user cannot write it: its owner's next memvault "
                "checks it (nothing was deleted)"
            ) from exc
        if damage(exc):
            self.damaged = True
            if self.path.name != ":memory:":
                forget(self.path)
            raise IndexCorrupt(
                f"{self.path}: {exc}; the next open checks it and rebuilds it from the vault",
                str(self.path),
            ) from exc
