"""The engine's lock: re-entrant, and its holder can step aside for those waiting.

A full reconcile of a big vault is minutes of work in bounded batches. Holding
one plain lock for all of it made a person's save (a watcher batch, an HTTP
write) wait for the whole of it. ``TurnLock`` counts the threads waiting for
it, so that between two batches the reconcile can ``step_aside``: release the
lock, let every thread waiting at that moment take its turn, and take it back.
Python's locks hand nothing over on release (the releasing thread usually wins
the race to re-acquire), hence the count and the wait for it to drop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

STEP_ASIDE_SECONDS = 2.0  # the longest a reconcile waits for others at one step


class TurnLock:
    """A re-entrant lock whose holder can let the threads waiting for it go first."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._waiting = 0  # threads blocked in ``acquire``

    def acquire(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return
            self._waiting += 1
            try:
                while self._owner is not None:
                    self._cond.wait()
            finally:
                self._waiting -= 1
                self._cond.notify_all()  # a holder stepping aside watches the count
            self._owner, self._depth = me, 1

    def release(self) -> None:
        with self._cond:
            if self._owner != threading.get_ident():
                raise RuntimeError("release of a TurnLock this thread does not hold")
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._cond.notify_all()

    def __enter__(self) -> TurnLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @property
    def waiting(self) -> int:
        return self._waiting

    @property
    def held_once(self) -> bool:
        """Whether this thread holds it, once (``step_aside`` would release it)."""
        return self._owner == threading.get_ident() and self._depth == 1

    def step_aside(
        self, during: Callable[[], None] | None = None, limit: float = STEP_ASIDE_SECONDS
    ) -> bool:
        """Held once by this thread: release it, run ``during`` (outside the lock), let
        the threads waiting for it have their turns (for up to ``limit`` seconds: a
        stream of them does not stop the holder for good), then take it back.

        Held more than once (a caller up the stack counts on it), nothing is released:
        ``during`` runs with the lock held. Returns whether the lock was released."""
        me = threading.get_ident()
        with self._cond:
            if self._owner != me:
                raise RuntimeError("step_aside of a TurnLock this thread does not hold")
            released = self._depth == 1
            if released:
                self._owner, self._depth = None, 0
                self._cond.notify_all()
        try:
            if during is not None:
                during()
        finally:
            if released:
                self._take_back(time.monotonic() + limit)
        return released

    def _take_back(self, deadline: float) -> None:
        me = threading.get_ident()
        with self._cond:
            # those waiting now go first: until none waits and none holds it (or time is up)
            while self._waiting or self._owner is not None:
                left = deadline - time.monotonic()
                if left <= 0 and self._owner is None:
                    break
                self._cond.wait(left if left > 0 else None)
            self._owner, self._depth = me, 1


__all__ = ["STEP_ASIDE_SECONDS", "TurnLock"]
