"""The daemon's vector lane: a thread that gives pending chunks their vectors.

The structure lane (the watcher's syncs, the HTTP writes) writes rows, FTS and
MEMORY.md at once and queues new chunks; this thread loads the model (after
the start-up reconcile, never before it) and then works the queue in bounded
steps (``Engine.embed_pending(steps=1)``), each a fraction of a second of model
time, so a 5 MB note being embedded never holds back a note saved meanwhile:
the model runs outside the engine's lock. Between steps it yields to the
structure lane: while a batch of changes is queued or being synced it waits
(up to ``YIELD_SECONDS``, so a vault that never stops changing still gets its
vectors), so on a laptop's two cores a save's sync does not share them with
the model. Woken by every sync that changed
something; a step that fails is logged, shown in status, and retried with
back-off. Stopping lets the step in flight finish (or abandons it: the queue
is in the store, and the next start takes it up). A model nothing has used for
``model_idle_seconds`` is let go (``Embedding.release_model``) and its memory given
back; the next search or step loads it again.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memvault.errors import IndexUnavailable
from memvault.index.seam import recently_away
from memvault.service import heap

if TYPE_CHECKING:
    from memvault.api import Vault

log = logging.getLogger("memvault.service")

RETRY_SECONDS = (2.0, 10.0, 60.0)  # back-off after a failing step
SAVE_EVERY = 30.0  # seconds between saves of the vector index during a long catch-up
YIELD_SECONDS = 2.0  # longest wait for the structure lane before a step goes anyway
YIELD_POLL = 0.02
BULK_CHUNKS = 1000  # a catch-up of this many chunks or more ends with heap.trim
MAX_WAIT = 86_400.0  # the longest single wait (a day): model_idle_seconds may be longer


class VectorLane:
    """One thread, owned by the daemon, with ``start``/``wake``/``stop``."""

    def __init__(
        self,
        vault: Vault,
        *,
        on_progress: Callable[[Any], None] | None = None,
        on_model: Callable[[str], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        on_idle: Callable[[], None] | None = None,
        structure_busy: Callable[[], bool] | None = None,
        model_idle_seconds: float = 0.0,
    ) -> None:
        self.vault = vault
        self._model_idle = model_idle_seconds  # 0: the model is kept loaded
        self._structure_busy = structure_busy  # changes queued or being synced
        self._on_progress = on_progress
        self._on_model = on_model  # "loading" | "ready" | "failed"
        self._on_error = on_error
        self._on_idle = on_idle  # told when a catch-up ends (/events says idle at once)
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memvault-vectors", daemon=True)
        self.busy = False
        self.embedded = 0  # chunks the model embedded since start
        self.last_error: str | None = None
        self._failures = 0

    def start(self) -> None:
        # a model loaded again by a search may be another one (the ONNX backend unusable
        # now): its re-embed of every chunk is this lane's work, at once
        self.vault.engine.embedding.on_requeue = self.wake
        self._thread.start()

    def wake(self) -> None:
        """There may be new work (a sync queued chunks)."""
        self._wake.set()

    def stop(self, timeout: float) -> bool:
        """Stop after the step in flight; False if it did not finish within ``timeout``."""
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def info(self) -> dict[str, Any]:
        """The lane's part of /status: how many chunks wait, and for how long."""
        pending: int | None = None
        since: float | None = None
        try:  # the index's server away (a moment ago: not asked again): /status says why
            if recently_away(self.vault.engine.store) is None:
                pending, since = self.vault.pending_vectors()
        except IndexUnavailable:
            pass
        return {
            "pending": pending,
            "lag_seconds": round(time.time() - since, 3) if pending and since else None,
            "busy": self.busy,
            "embedded": self.embedded,
            "last_error": self.last_error,
            "model_loaded": self.vault.engine.embedding.loaded,
            # its process's restarts (a child stopped, silent or killed: child_watch.py)
            "model_process": self.vault.engine.embedding.process_info(),
        }

    # -- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        if not self._load_model():
            return
        while not self._stopping.is_set():
            try:
                self._turn()
            except Exception as exc:  # never the lane's end: said (status), tried again
                self._error(f"the vector lane failed: {exc}")
                self._stopping.wait(RETRY_SECONDS[-1])

    def _turn(self) -> None:
        """Wait for work, then catch up; or, the model unused long enough, let it go."""
        if not self._wake.wait(self._until_release()) and not self._pending():
            self._release_model()  # never with work waiting
            return
        self._wake.clear()
        if not self._stopping.is_set():
            self._catch_up()

    def _until_release(self) -> float | None:
        """How long to wait for work before looking whether the model can be let go:
        until it has been unused for ``model_idle_seconds`` (a search uses it too);
        when it is not loaded, that long again (a search may load it meanwhile). Never
        past what a wait can take (``threading.TIMEOUT_MAX``)."""
        if self._model_idle <= 0:
            return None
        unused = self.vault.engine.embedding.unused_for()
        return min(max(1.0, self._model_idle - (unused or 0.0)), MAX_WAIT)

    def _pending(self) -> bool:
        """Whether chunks wait for vectors (a wake missed, or work nobody woke us for)."""
        try:
            return self.vault.pending_vectors()[0] > 0
        except Exception:  # the index unreachable: the next catch-up says why
            return False

    def _release_model(self) -> None:
        if self.vault.engine.embedding.release_model(self._model_idle):
            heap.trim()  # the session's arena and weights: back to the system
            log.info("embedding model let go after %.0f s unused", self._model_idle)

    def _load_model(self) -> bool:
        """Load the model first thing (so the first query does not wait for it), after
        the start-up reconcile: the watcher starts this thread once that is done."""
        started = time.monotonic()
        self._model("loading")
        try:
            self.vault.warm_up()
        except Exception as exc:
            self._model("failed")
            self._error(f"loading the embedding model failed: {exc}")
            return False
        self._model("ready")
        log.info("model ready in %.1f s", time.monotonic() - started)
        return True

    def _catch_up(self) -> None:
        last_save = time.monotonic()
        caught_up = made = 0  # this catch-up's chunks indexed, and embedded by the model
        self.busy = True
        try:
            while not self._stopping.is_set():
                self._yield_to_structure()
                try:
                    embedded, indexed = self.vault.engine.embed_pending(
                        self._progress_since(caught_up, made),
                        steps=1,
                        stop=self._stopping.is_set,
                    )
                except Exception as exc:
                    self._error(f"embedding failed: {exc}")
                    delay = RETRY_SECONDS[min(self._failures, len(RETRY_SECONDS)) - 1]
                    self._stopping.wait(delay)
                    continue
                self._failures, self.last_error = 0, None
                self.embedded += embedded
                made += embedded
                if not indexed:
                    break  # nothing (more) pending
                caught_up += indexed
                if time.monotonic() - last_save >= SAVE_EVERY:
                    self._save()
                    last_save = time.monotonic()
            self._save(when_due=True)  # one note's vectors: not the whole index each time
            if caught_up >= BULK_CHUNKS:
                heap.trim()  # the steps' arrays and texts are freed: give the pages back
        finally:
            self.busy = False
            if self._on_idle is not None:
                self._on_idle()

    def _progress_since(self, done: int, embedded: int) -> Callable[[Any], None] | None:
        """A step's progress as the catch-up's: each step counts from zero, so the
        chunks given vectors before it (``done``) and embedded by the model
        (``embedded``) in this catch-up are added: '5,000/40,000 chunks given vectors', not '32/...'."""
        tell = self._on_progress
        if tell is None:
            return None
        before = embedded

        def progress(p: Any) -> None:
            tell(
                dataclasses.replace(
                    p, done=done + p.done, total=done + p.total, embedded=before + p.embedded
                )
            )

        return progress

    def _save(self, when_due: bool = False) -> None:
        """The vectors to disk (``when_due``: if enough changed since the last save,
        ``Engine.save_when_due``); a save that fails (the disk full, a file made
        read-only) is said and left for the next catch-up or the daemon's stop, never
        the end of the lane: the vectors stay in memory, and a crash before the next
        save is repaired on open from the embedding cache."""
        try:
            if when_due:
                self.vault.engine.save_when_due()
            else:
                self.vault.save()
        except Exception as exc:
            self._error(f"saving the vectors failed: {exc}")

    def _yield_to_structure(self) -> None:
        """Let the structure lane's batch in flight (or due) go first."""
        busy = self._structure_busy
        if busy is None:
            return
        deadline = time.monotonic() + YIELD_SECONDS
        while busy() and time.monotonic() < deadline and not self._stopping.is_set():
            self._stopping.wait(YIELD_POLL)

    def _model(self, state: str) -> None:
        if self._on_model is not None:
            self._on_model(state)

    def _error(self, message: str) -> None:
        self._failures += 1
        self.last_error = message
        log.warning("%s", message)
        if self._on_error is not None:
            self._on_error(message)


__all__ = ["VectorLane"]
