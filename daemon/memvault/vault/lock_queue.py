"""The line of processes waiting for a vault's writer lock: first come, first served.

A process that finds the lock held and will wait for it (``WriterLock.acquire`` with a
wait) takes a ticket: a file in ``.memvault/lock.queue/`` named by a number one above
the highest there (made with ``O_EXCL``: two at once get two numbers), which it keeps
``flock``-ed while it waits and touches at each try. It tries the lock only when no
live waiter holds a lower number; any other opener (one that does not wait, or has no
ticket yet) tries it only when no one waits. On taking the lock, or giving up, it
removes its ticket. So a process letting go and wanting the lock again (the memory
tool between two commands, a CLI write in a loop) goes behind those already waiting.

The line only orders the tries: the ``flock`` on ``.memvault/lock`` is still what lets
one writer in, so whatever goes wrong with the line makes a waiter race for the lock
as before, never two writers:

- a waiter that died (even ``kill -9``) lets go of its ticket's flock with its
  process: the next to look finds the ticket unlocked and removes it;
- a waiter that hangs (stopped, a debugger) keeps its flock but no longer touches its
  ticket: one whose file has not changed for ``HUNG`` seconds of the looker's own
  clock is passed over (any change counts); a looker new to a ticket (an opener that
  does not wait, a daemon starting with 2 s, the holder asking who waits: none has
  watched it that long) takes its mtime's age by its own wall clock as time it already
  watched it, so a ticket stopped long ago is passed over at once, not after HUNG
  seconds of each looker's (a clock behind the file system's by more than ``HUNG``
  only makes a live ticket look hung at first sight: a race, never two writers);
- a child forked by a waiter shares its ticket's flock but does not touch it: passed
  over once its parent is gone, removed when the child ends;
- a read-only ``.memvault/`` or a full disk: no ticket is made, the waiter races;
- the numbers are ordered by the folder's listing, not by any clock.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

QUEUE_DIR = "lock.queue"
# How long a live waiter's ticket may stay untouched (it touches it every 50 ms) before
# the others pass it over: stopped, or not run for that long by a loaded machine.
HUNG = 3.0


@dataclass(frozen=True, slots=True)
class Ticket:
    """A live waiter's place: its number and its file's mtime (``st_mtime_ns``)."""

    number: int
    beat: int


@dataclass(frozen=True, slots=True)
class Seen:
    """A ticket's mtime as one looker last saw it, and since when (its own monotonic clock)."""

    beat: int
    since: float


def waiting_ahead(
    mine: int | None,
    tickets: Iterable[Ticket],
    seen: Mapping[int, Seen],
    now: float,
    hung: float = HUNG,
    wall_ns: int | None = None,
) -> tuple[bool, dict[int, Seen]]:
    """Whether a live waiter that is not hung holds a number below ``mine`` (None: any
    number, for an opener without a ticket), and what was seen of those tickets now.
    ``wall_ns`` (``time_ns`` now): a ticket new to this looker is as old as its mtime
    says (the module doc), else it is seen as touched now."""
    ahead = False
    looked: dict[int, Seen] = {}
    for ticket in tickets:
        if mine is not None and ticket.number >= mine:
            continue
        before = seen.get(ticket.number)
        if before is None and wall_ns is not None:  # new to this looker: untouched since
            before = Seen(ticket.beat, now - max(0.0, (wall_ns - ticket.beat) / 1e9))
        elif before is None or before.beat != ticket.beat:  # new to this looker, or touched
            before = Seen(ticket.beat, now)
        looked[ticket.number] = before
        if now - before.since < hung:
            ahead = True
    return ahead, looked


def _numbers(folder: Path) -> list[int]:
    try:
        names = os.listdir(folder)
    except OSError:  # no line yet (or none can be read): no one waits in it
        return []
    return sorted(int(n) for n in names if n.isascii() and n.isdigit() and len(n) < 19)


def _same_file(fd: int, path: Path) -> bool:
    with contextlib.suppress(OSError):
        held, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
        return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)
    return False


def _live(path: Path) -> Ticket | None:
    """The ticket at ``path`` if its waiter lives (its flock held); a dead one's file is
    removed."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # its waiter holds it: alive
            return Ticket(int(path.name), st.st_mtime_ns)
        if _same_file(fd, path):  # not a new ticket made at the same number meanwhile
            with contextlib.suppress(OSError):
                path.unlink()
        return None
    finally:
        os.close(fd)


class LockQueue:
    """This process's place in the line for the writer lock kept in ``state`` (the
    module doc): ``my_turn`` before each try, ``join`` once it waits, ``beat`` at each
    try after, ``leave`` when done."""

    def __init__(self, state: Path) -> None:
        self.folder = state / QUEUE_DIR
        self.number: int | None = None
        self._fd: int | None = None
        self._seen: dict[int, Seen] = {}

    def my_turn(self) -> bool:
        """Whether no live waiter waits ahead of this one (without a ticket: at all)."""
        numbers = [n for n in _numbers(self.folder) if n != self.number]
        if self.number is not None:
            numbers = [n for n in numbers if n < self.number]
        tickets = [t for n in numbers if (t := _live(self.folder / str(n))) is not None]
        ahead, self._seen = waiting_ahead(
            self.number, tickets, self._seen, time.monotonic(), wall_ns=time.time_ns()
        )
        return not ahead

    def waiting(self) -> bool:
        """Whether a live waiter is in line (the lock's holder asks: it has no ticket)."""
        return not LockQueue(self.folder.parent).my_turn()

    def join(self) -> None:
        """Take a ticket after the last one (none on a read-only or full disk)."""
        import fcntl

        if self._fd is not None:
            return
        try:
            self.folder.mkdir(exist_ok=True)
        except OSError:
            return
        number = max(_numbers(self.folder), default=0) + 1
        for _ in range(64):
            path = self.folder / str(number)
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            except FileExistsError:
                number += 1
                continue
            except OSError:
                return
            try:  # a looker may hold it a moment, taking it for a dead one's: next number
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if _same_file(fd, path):
                    self._fd, self.number = fd, number
                    return
            except OSError:
                pass
            os.close(fd)
            number += 1

    def beat(self) -> None:
        """Show this waiter lives (touch its ticket); a ticket gone (``.memvault/``
        cleaned) is taken again, last."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.utime(self._fd)
        if not _same_file(self._fd, self.folder / str(self.number)):
            os.close(self._fd)
            self._fd = self.number = None
            self.join()

    def leave(self) -> None:
        """Remove this waiter's ticket (it has the lock, or gave up)."""
        if self._fd is None:
            return
        path = self.folder / str(self.number)
        if _same_file(self._fd, path):
            with contextlib.suppress(OSError):
                path.unlink()
        os.close(self._fd)
        self._fd = self.number = None


__all__ = ["HUNG", "QUEUE_DIR", "LockQueue", "Seen", "Ticket", "waiting_ahead"]
