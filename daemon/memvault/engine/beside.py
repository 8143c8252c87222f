"""The vector lane beside a long sync's structure lane (``Engine.sync(vectors=True)``).

A sync that gives its chunks their vectors before it returns (``memvault sync``,
``Vault.sync()``: a first index without a daemon) ran its two lanes one after the
other in one thread, so a laptop's second core idled through the structure lane.
``VectorsBeside`` runs vector-lane steps on a thread of their own while the
structure lane works. Each is ``Embedding.embed_pending``'s step, the daemon's vector
lane's: it takes the oldest pending chunks, embeds what the cache lacks outside
the engine's lock (onnxruntime, hnswlib and SQLite let go of the GIL), then takes
the lock to index them — given at the structure lane's pauses between its batches,
where it steps aside. The queue, the lock and what a kill leaves are the lane's
own: nothing here is a second copy of them. When the structure lane is done the
thread finishes the step in flight and stops (the lock stepped aside for it), and
the sync's own loop indexes what is still pending, as before.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memvault.engine.embedding import Embedding
    from memvault.engine.turns import TurnLock

BESIDE_BATCH = 256  # chunks a step beside the structure lane takes: about its batch
IDLE_SECONDS = 0.05  # nothing pending yet (the structure lane's first batch): look again


class VectorsBeside:
    """A context: vector-lane steps on a thread for as long as the ``with`` block runs.

    ``embedded`` and ``indexed`` count what its steps did (the model's texts, the
    chunks given their vectors). Entered by the engine's lock's holder, held once
    (so stepping aside at the end lets the thread finish its step); otherwise, or
    when ``enabled`` is false, it runs nothing."""

    def __init__(self, embedding: Embedding, lock: TurnLock, *, enabled: bool = True) -> None:
        self._embedding = embedding
        self._lock = lock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.enabled = enabled and lock.held_once
        self.embedded = 0
        self.indexed = 0
        self.error: BaseException | None = None

    def __enter__(self) -> VectorsBeside:
        if self.enabled:
            self._thread = threading.Thread(
                target=self._run, name="memvault-vectors-beside", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        # the thread may be waiting for the lock to index its step: let it have it
        self._lock.step_aside(thread.join)
        if self.error is not None and exc is None:
            raise self.error  # where the sync's own vector lane would have failed

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                step = self._embedding.embed_pending(self._lock, BESIDE_BATCH, add_outside=True)
                self.embedded += step.embedded
                self.indexed += step.indexed
                if not step.indexed and not step.remaining:
                    self._stop.wait(IDLE_SECONDS)
        except BaseException as exc:  # raised in the sync's thread, at its end
            self.error = exc


__all__ = ["BESIDE_BATCH", "VectorsBeside"]
