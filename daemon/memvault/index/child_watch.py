"""How long the model's process may take, whether it is stopped, and its restarts.

``onnx_run.ChildRun`` waits on its child's pipe against a ``Deadline``:

- the time a batch is given is scaled by the work sent (``reply_seconds``: a base
  for a session run's overhead and the machine's hiccups, plus an allowance per word
  piece ~25 times what the int8 model takes on one core of a 2-core machine, 0.2 ms at
  a chunk's 256 pieces: bench/RESULTS.md, "robust60"), so a 32-chunk batch on a
  machine loaded by a first index is never cut short, and a query's is still short;
- a child the kernel says is stopped (``SIGSTOP``, a debugger holding it, Ctrl-Z of
  its group) for ``STOPPED_MOST`` seconds in a row is given up on at once, not at the
  end of its time: it cannot answer until someone continues it;
- a write into its pipe waits against the same deadline (the request of a batch is
  ~130 KB, twice the pipe's 64 KB: to a stopped child it blocked for good);
- past its time, a child still working is waited for: one the kernel says ran (its CPU
  time grew) or is running or waiting on the disk within the last ``STALL`` seconds
  (a larger model configured, fp32, a machine loaded by a first index or swapping: the
  time is set for the default int8 model, and a healthy child killed twice left the
  vault without vectors, each batch killed again after the rest). One that did nothing
  for ``STALL`` seconds (asleep: a deadlock) is given up on; one still busy at
  ``WORKING_MOST`` times its time (spinning) too. Where /proc cannot say, its time is all.

A child given up on is killed and started again by the caller; ``Restarts`` keeps
what happened (how many, the last reason and when) for /status, and how long to rest
after a child failed twice in a row (``REST_FIRST`` doubling to ``REST_MOST``): a child
that keeps failing is not started again and again in a tight loop, by the vector lane's
retries or by every search.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

REPLY_BASE = 15.0  # seconds any batch is given (a query's ~0.01 s of model time)
REPLY_PER_PIECE = 0.005  # seconds per word piece sent, on top (the model: ~0.0002)
STOPPED_MOST = 5.0  # seconds a child may be seen stopped before it is killed
POLL = 0.5  # seconds between looks at the child's state while waiting on it
STALL = 5.0  # seconds past its time with no work done before a child is given up on
WORKING_MOST = 8.0  # times its time a child still working is waited for (spinning past it)
REST_FIRST = 5.0  # seconds no child is started after one failed twice in a row
REST_MOST = 300.0


def reply_seconds(rows: int, width: int) -> float:
    """The time a batch of ``rows`` x ``width`` word pieces is given to answer."""
    return REPLY_BASE + rows * width * REPLY_PER_PIECE


def stopped(pid: int) -> bool:
    """Whether the kernel says the process is stopped (``T``) or stopped by a tracer
    (``t``); False where /proc cannot say (another system, the process gone)."""
    seen = _look(pid)
    return seen is not None and seen[0] in (b"T", b"t")


def _look(pid: int) -> tuple[bytes, int] | None:
    """The process's state (``R``, ``S``, ``D``, ``T``...) and the CPU time it used, in
    clock ticks (its threads' too); None where /proc cannot say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # after "(comm) ": a name may hold ")"
    try:  # state is the 3rd field, utime and stime the 14th and 15th
        return fields[0], int(fields[11]) + int(fields[12])
    except (IndexError, ValueError):
        return None


class Deadline:
    """One wait on a child: ``seconds`` in all, or ``STOPPED_MOST`` of it stopped; past
    them, as long as it works (``STALL``), up to ``WORKING_MOST`` times them."""

    def __init__(self, pid: int, seconds: float, what: str) -> None:
        self.pid = pid
        self.seconds = seconds
        self.what = what  # said when it passes: "a batch of 32 x 256 word pieces"
        now = time.monotonic()
        self.until = now + seconds
        self.last = now + seconds * WORKING_MOST
        self._stopped_since: float | None = None
        self._worked_at = now  # when it was last seen working
        self._ticks: int | None = None  # its CPU time then

    def next_wait(self) -> float:
        """How long the next wait on the pipe may be (0: look at ``passed`` now)."""
        now = time.monotonic()
        left = self.until - now if now < self.until else self.last - now  # (past: working)
        return max(0.0, min(POLL, left))

    def passed(self) -> str | None:
        """Why the child is given up on now, or None while it may still answer."""
        now = time.monotonic()
        seen = _look(self.pid)
        state, ticks = seen if seen is not None else (b"", None)
        if state in (b"T", b"t"):
            if self._stopped_since is None:
                self._stopped_since = now
            elif now - self._stopped_since >= STOPPED_MOST:
                return f"stopped for {STOPPED_MOST:.0f} s (SIGSTOP or a debugger), killed"
        else:
            self._stopped_since = None
            ran = ticks is not None and self._ticks is not None and ticks > self._ticks
            if ran or state in (b"R", b"D"):  # its CPU time grew, or it runs, or reads
                self._worked_at = now
        self._ticks = ticks
        if now < self.until:
            return None
        if seen is None or now - self._worked_at >= STALL:
            return f"silent past its time ({self.seconds:.0f} s for {self.what}), killed"
        if now >= self.last:
            return (
                f"working past {WORKING_MOST:.0f} times its time ({self.seconds:.0f} s "
                f"for {self.what}), killed"
            )
        return None


@dataclass(frozen=True, slots=True)
class Restart:
    why: str
    at: float  # time.time()


class Restarts:
    """The model's process started again (the count, the last) and the rest after a
    child failed twice in a row; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.last: Restart | None = None
        self._rest = REST_FIRST
        self._resting_until = 0.0  # time.monotonic()

    def restarted(self, why: str) -> None:
        with self._lock:
            self.count += 1
            self.last = Restart(why, time.time())

    def failed(self) -> float:
        """A child failed twice in a row: no child is started for the seconds returned
        (each such failure doubles them, up to ``REST_MOST``)."""
        with self._lock:
            rest = self._rest
            self._resting_until = time.monotonic() + rest
            self._rest = min(rest * 2, REST_MOST)
            return rest

    def answered(self) -> None:
        """A batch was answered: the next failure rests ``REST_FIRST`` again."""
        if self._rest != REST_FIRST:
            with self._lock:
                self._rest = REST_FIRST

    def resting(self) -> float:
        """Seconds left before a child may be started again (0: it may)."""
        return max(0.0, self._resting_until - time.monotonic())

    def info(self) -> dict[str, object]:
        """/status's ``vectors.model_process``."""
        last = self.last
        return {
            "restarts": self.count,
            "last_restart": None if last is None else last.why,
            "last_restart_seconds_ago": None if last is None else round(time.time() - last.at, 1),
            "resting_seconds": round(self.resting(), 1) or None,
        }


__all__ = ["Deadline", "Restarts", "reply_seconds", "stopped"]
