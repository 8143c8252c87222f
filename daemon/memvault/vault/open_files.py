"""Is a file open for writing in another process? And a note opened to read, refused
when it is no regular file (``open_to_read``).

memvault must never swap its version of a note in while someone still holds the
old one open for writing: a shell's ``... > MEMORY.md``, an editor or a sync tool
writing in pieces would go on writing into a file that is no longer there.

How to tell, cheapest and most exact first (Linux):

1. a read lease (``fcntl F_SETLEASE F_RDLCK``) on a descriptor opened read-only:
   the kernel grants it only when no process at all has the file open for
   writing (it counts every open file description with write access, whoever's),
   so EAGAIN means "a writer holds it". ~5 µs, one open and two fcntl calls; the
   lease is released at once. A lease needs the caller to own the file (or
   CAP_LEASE) and a filesystem that supports leases;
2. otherwise the ``/proc/<pid>/fd`` links of every process we may read, and
   their ``fdinfo`` flags (O_WRONLY / O_RDWR): milliseconds per thousand open
   files on the machine, and blind to other users' processes;
3. elsewhere (no /proc): unknown (``None``); the caller's quiet period and the
   check after its swap are what is left.

Should a writer open the file during the microseconds the lease is held, the
kernel signals the lease holder; the signal is set to SIGURG, which is ignored
unless a handler is installed (the default, SIGIO, would end the process).
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import stat
from pathlib import Path
from typing import BinaryIO

_F_SETSIG = getattr(fcntl, "F_SETSIG", 10)
_F_SETLEASE = getattr(fcntl, "F_SETLEASE", None)
_WRITE_MODES = (os.O_WRONLY, os.O_RDWR)


def open_for_writing(path: str | Path) -> bool | None:
    """True if some process holds ``path`` open for writing, False if none does,
    None when this system cannot tell. A missing file has no writers."""
    if _F_SETLEASE is None:
        return _scan_proc(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        return False
    except BlockingIOError:  # another process holds a write lease on it: busy
        return True
    except OSError:
        return _scan_proc(path)
    try:
        try:
            fcntl.fcntl(fd, _F_SETSIG, signal.SIGURG)
            fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
        except OSError as exc:
            if exc.errno == errno.EAGAIN:
                return True
            return _scan_proc(path)  # EACCES: not our file; EINVAL: no leases here
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)
        return False
    finally:
        os.close(fd)


def _scan_proc(path: str | Path) -> bool | None:
    """Look through /proc for a descriptor of ``path`` opened for writing."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    key = (st.st_dev, st.st_ino)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        folder = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(folder)
        except OSError:  # gone, or not ours to read
            continue
        for fd in fds:
            try:
                link = os.stat(f"{folder}/{fd}")
            except OSError:
                continue
            if (link.st_dev, link.st_ino) == key and _writable(pid, fd):
                return True
    return False


def _writable(pid: str, fd: str) -> bool:
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("flags:"):
                    return (int(line.split()[1], 8) & os.O_ACCMODE) in _WRITE_MODES
    except (OSError, ValueError):
        pass
    return False


class NotAFile(OSError):
    """A path that is no regular file nor folder: a FIFO, a socket, a device."""


def open_to_read(path: Path | str) -> BinaryIO:
    """``path`` opened to read, as ``open(path, "rb")`` but never waiting: a FIFO named
    ``note.md`` would block the reader (a ``get``, a memory-tool ``view``) until some
    process wrote to it, forever; a device would read without end. Such a path is
    ``NotAFile``; a folder ``IsADirectoryError``, as ``open`` says it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once, unread
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        if not stat.S_ISREG(mode):
            raise NotAFile(errno.EINVAL, "not a regular file", str(path))
        return os.fdopen(fd, "rb")  # (O_NONBLOCK means nothing to a regular file)
    except BaseException:
        os.close(fd)
        raise


__all__ = ["NotAFile", "open_for_writing", "open_to_read"]
