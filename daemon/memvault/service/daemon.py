"""The daemon's life cycle: lock, reconcile, watch, serve, and shut down cleanly.

``Daemon`` owns one open ``Vault`` (so the writer lock), a ``Watcher`` (the
start-up reconcile is its first batch, then events, the periodic reconcile
and the idle save) and an HTTP server (uvicorn on loopback, in a thread).
``.memvault/daemon.json`` says where it listens and holds the token; it is
written 0600 from the first byte and removed at a clean exit, *before* the
lock is released, so a successor's file is never deleted by its predecessor
(``runfile``). Starting, stopping and asking after a daemon from another
process is ``interfaces.daemon_control``'s.

A reader daemon (docs/TEAM.md): on a vault whose index is in PostgreSQL and whose
writer (its advisory lock) is another machine's, the vault opens read-only
(``Vault.open(reader=True)``: this folder's lock held, so it is the daemon that runs
here) and the daemon only serves: no vector lane, no local index, a watcher on native
file events that syncs nothing, noting the notes saved here (engine/changed_here; none
where those events are not to be had: ``Watcher.watch_changes_here``); a write through
it is ``LockHeld`` naming the writer. It stays a reader when the
writer leaves (a restart finds the lock free and is the writer).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import selectors
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault import __version__
from memvault.config import CONFIG_FILE, VaultConfig
from memvault.errors import MemvaultError
from memvault.index.seam import recently_away
from memvault.service.config_watch import CHANGED as CONFIG_CHANGED
from memvault.service.config_watch import ConfigWatch
from memvault.service.daemon_log import configure_logging
from memvault.service.http_server import HttpServer
from memvault.vault import runfile
from memvault.vault.gitstate import git_busy
from memvault.vault.lock import say_stopping

if TYPE_CHECKING:  # the engine, watchdog and uvicorn load only when a daemon runs
    from memvault.api import Vault
    from memvault.core.results import SyncReport
    from memvault.engine.indexer import Progress
    from memvault.index.embedder import Embedder

log = logging.getLogger("memvault.service")
# daemon.json on a file system that keeps no permissions (an exFAT or FAT disk): _write_runfile
OPEN_TOKEN = (
    "%s is readable by every user of this machine: the file system holding the vault "
    "keeps no permissions (exFAT, FAT, a Windows drive in WSL mounted without `metadata`), "
    "so the HTTP API's access token in it is open to them; on a shared machine keep the "
    "vault on a disk that does (APFS, NTFS, ext4)"
)

STOP_SECONDS = 3.0  # for the batch in flight at SIGTERM (exit within 5 s in all)
PROGRESS_EVENT_SECONDS = 0.25  # /events gets indexing progress at most this often
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
GROUND_SECONDS = 2.0  # how often the daemon checks that its vault and its lock are still there
# exit code when they are not: EX_TEMPFAIL, which a service manager restarts (the unit's
# RestartPreventExitStatus=1 3): a new daemon rebuilds .memvault/, or finds no vault (3)
EXIT_GROUND_LOST = 75


class SignalWait:
    """The main thread's wait for SIGTERM/SIGINT, or for ``wake()`` from any thread.

    The kernel hands a signal sent to the process to any of its threads that does
    not block it: uvicorn's, the watcher's, a BLAS or hnswlib worker. CPython's C
    handler then only flags it for the main thread, which, asleep in a lock's wait,
    never looks: the SIGTERM is lost and the daemon runs on (CI saw it 30 s later).
    The C handler also writes the signal's number to the wakeup fd from whichever
    thread took it, so the main thread sleeps on that fd (a selector: epoll, so any
    fd number) and reads the number itself. Main thread only (``set_wakeup_fd``'s rule).
    """

    def __init__(self) -> None:
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self._previous = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        self.received: str | None = None  # the stop signal's name, once one came

    def wake(self) -> None:
        """End ``wait`` (safe from any thread, and after ``close``)."""
        with contextlib.suppress(OSError):
            self._writer.send(b"\0")

    def wait(
        self,
        done: threading.Event,
        tick: Callable[[], None] | None = None,
        every: float | None = None,
    ) -> None:
        """Until ``done`` is set, or a stop signal comes (which sets it); ``tick`` every
        ``every`` seconds meanwhile (with neither, it sleeps until then)."""
        stops = {int(s) for s in STOP_SIGNALS}
        with selectors.DefaultSelector() as selector:
            selector.register(self._reader, selectors.EVENT_READ)
            while not done.is_set():
                if not selector.select(every):
                    if tick is not None:
                        tick()
                    continue
                with contextlib.suppress(BlockingIOError):
                    got = stops.intersection(self._reader.recv(4096))
                    if got:
                        self.received = signal.Signals(min(got)).name
                        done.set()

    def close(self) -> None:
        signal.set_wakeup_fd(self._previous)
        self._reader.close()
        self._writer.close()


# -- the daemon ------------------------------------------------------------------------------------


class Daemon:
    """One running daemon over an open ``Vault`` (which it closes at shutdown): writable,
    or a reader's (the module doc)."""

    def __init__(self, vault: Vault, *, port: int | None = None, initial_reconcile: bool = True):
        from memvault.service import heap
        from memvault.service.vector_lane import VectorLane
        from memvault.service.watcher import Watcher, WatchHooks, WatchSettings

        heap.configure()  # big buffers unmapped when freed (heap.py)
        self.vault = vault
        self.config: VaultConfig = vault.config
        # config.toml's text: a change said, and started again on (_new_settings); put
        # back if .memvault/ is deleted under the daemon (start_afresh)
        self.config_watch = ConfigWatch(self.config.state_dir / CONFIG_FILE, self.config.source)
        # the index's writer is elsewhere: serve reads only (the vector lane is made but
        # never started; the watcher notes the paths changed here: engine/changed_here)
        self.reader = vault.engine.read_only
        self.changed_here = vault.check_changes_here() if self.reader else None
        settings = self.config.daemon
        self.port_setting = settings.port if port is None else port
        self.initial_reconcile = initial_reconcile
        self.token = secrets.token_urlsafe(32)
        self.pid = os.getpid()
        self.started_at = time.time()
        self._started_mono = time.monotonic()
        self.state = "starting"
        self.progress: dict[str, Any] | None = None  # the sync in flight (structure lane)
        self.vector_progress: dict[str, Any] | None = None  # the vector lane's last step
        self.model_state = "not loaded"  # loading | ready | failed
        self._last_progress_log = 0.0
        self._last_progress_nudge = 0.0
        # called with every progress (both lanes): `up`'s bar in the foreground
        self.progress_listeners: list[Callable[[Any], None]] = []
        # the start-up reconcile has ended (a reader runs none)
        self.first_index_done = not initial_reconcile or self.reader
        self.stop_signal: str | None = None  # the name of the signal that stopped it
        self._stop = threading.Event()
        self._signals: SignalWait | None = None  # while run() waits in the main thread
        self._closed = False
        self.exit_code = 0
        self.restart = False  # the ground lost, the vault folder still there: start afresh
        self.afresh = ""  # why, when not the ground lost (config.toml's new settings)
        self._settings_wrong = ""  # why config.toml's new settings wait, as last said
        self._ground_lost = False  # at the last check
        self._tick_error = ""  # the index's failure the last tick logged
        self.server: HttpServer | None = None
        self.app: Any = None
        self.watcher = Watcher(
            vault.root,
            self._sync if self.changed_here is None else self.changed_here.noted,
            is_ignored=vault.is_ignored,
            is_ours=vault.is_ours,
            settings=WatchSettings(
                quiet_ms=self.config.vault.quiet_ms,
                observer=settings.observer,
                reconcile_seconds=settings.reconcile_seconds,
                idle_save_seconds=min(5.0, float(settings.save_seconds)),
            ),
            hooks=WatchHooks(
                save=vault.engine.save_when_due,  # not the whole vector index per save
                on_progress=self._on_progress,
                after_first=None if self.reader else self._start_vectors,
                on_change=self._nudge,
                after_bulk=self._after_bulk,
            ),
        )
        # The vector lane starts once the start-up reconcile is done (MEMORY.md never
        # waits for the model), then follows every sync that queued new chunks.
        self.vectors = VectorLane(
            vault,
            on_progress=self._on_progress,
            on_model=self._model_state,
            on_error=self.watcher.record_error,
            on_idle=self._nudge,  # else /events says so only at its next look, 1 s later
            structure_busy=lambda: self.watcher.lag_seconds() is not None,
            model_idle_seconds=settings.model_idle_seconds,
        )
        vault.subscribe(lambda report: self.vectors.wake())
        if not self.reader:  # a write whose sync failed (PostgreSQL away): retried
            vault.engine.unindexed = lambda path: self.watcher.queue.put([path])

    @classmethod
    def open(
        cls,
        root: str | Path,
        *,
        embedder: Embedder | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        port: int | None = None,
    ) -> Daemon:
        """Open the vault (taking the writer lock: ``LockHeld`` if it is taken; a reader
        of an index in PostgreSQL written elsewhere: the module doc)."""
        from memvault.api import Vault

        vault = Vault.open(
            root, through_daemon=False, embedder=embedder, overrides=overrides, reader=True
        )
        return cls(vault, port=port)

    @property
    def json_path(self) -> Path:
        return runfile.daemon_file(self.vault.root)

    def start(self) -> None:
        """Serve first (so `daemon start` sees it up at once), then watch and reconcile."""
        from memvault.service.http_api import create_app

        runfile.remove_stale_temp_files(self.vault.root)
        try:
            self.app = create_app(
                self.vault,
                self.token,
                self.info,
                port=lambda: self.server.port if self.server else None,
                sync_now=self.sync_requested,
            )
            self.server = HttpServer(self.app, self.config.daemon.host, self.port_setting)
            self.server.start()
            _write_runfile(self.vault.root, self.runfile_info())
            if self.reader:  # serving the shared index; the paths changed here noted
                self.state = "reading"
                self.watcher.watch_changes_here()  # native events only, never fatal
            else:
                self.state = "indexing" if self.initial_reconcile else "watching"
                self.watcher.start(initial_reconcile=self.initial_reconcile)
        except BaseException:
            self.shutdown()
            raise
        log.info(
            "memvault daemon %s for %s on %s (pid %d)%s",
            __version__,
            self.vault.root,
            self.runfile_info().url,
            self.pid,
            f", {self.writer_elsewhere()}" if self.reader else "",
        )

    def writer_elsewhere(self) -> str:
        """A reader's words for where the writer is (what its writes are told)."""
        from memvault.index.pg_store import PgStore

        store = self.vault.engine.store
        return str(store.refusal(daemon=True)) if isinstance(store, PgStore) else ""

    def runfile_info(self) -> runfile.DaemonInfo:
        """What daemon.json says about this daemon (once it listens)."""
        assert self.server is not None
        return runfile.DaemonInfo(
            self.pid, self.server.host, self.server.port, self.token, self.started_at, __version__
        )

    def _sync(
        self,
        paths: list[str] | None,
        progress: Callable[[Progress], None],
        *,
        moves: Sequence[tuple[str, str]],
    ) -> SyncReport:
        # a batch let through mid-reconcile leaves the reconcile's progress and state
        let_through = self.watcher.lets_through()
        try:  # the structure lane; the vector lane follows in its own thread
            return self.vault.sync(paths, progress=progress, vectors=False, moves=moves)
        finally:
            if not let_through:
                self.progress = None
                if self.state == "indexing":
                    self.state = "watching"

    def sync_requested(self, paths: list[str] | None, vectors: bool) -> Any:
        """A ``POST /sync``: its progress (both stages) shows as the daemon's, in
        ``/status`` and ``/events``, where ``Vault.sync(progress=...)`` reads it."""
        try:
            return self.vault.sync(
                paths, progress=lambda p: self._on_progress(p, requested=True), vectors=vectors
            )
        finally:
            self.progress = None
            self._nudge()

    def _after_bulk(self) -> None:
        """Once the vault is quiet after bulk work: the caches kept between syncs read
        again in one go (``Engine.compact_caches``), then the freed memory given back."""
        from memvault.service import heap

        try:
            if not self.reader:
                self.vault.engine.compact_caches()
        finally:
            heap.trim()

    def _nudge(self) -> None:
        """Tell /events clients that what ``info()`` shows may have changed."""
        hub = getattr(getattr(self.app, "state", None), "hub", None)
        if hub is not None:
            hub.nudge()

    def _start_vectors(self) -> None:
        """After the start-up reconcile: load the model and embed what is pending."""
        self.first_index_done = True
        self.vectors.start()
        self.vectors.wake()

    def _model_state(self, state: str) -> None:
        self.model_state = state
        self._nudge()

    def _on_progress(self, p: Any, requested: bool = False) -> None:
        progress = {"done": p.done, "total": p.total, "embedded": p.embedded, "stage": p.stage}
        for listener in list(self.progress_listeners):
            listener(p)
        if p.stage == "vectors" and not requested:
            self.vector_progress = progress
        else:
            self.progress = progress
        now = time.monotonic()
        if now - self._last_progress_nudge >= PROGRESS_EVENT_SECONDS or p.done == p.total:
            self._last_progress_nudge = now
            self._nudge()
        if p.total >= 200 and (now - self._last_progress_log >= 5 or p.done == p.total):
            self._last_progress_log = now
            what = "chunks given vectors" if p.stage == "vectors" else "notes"
            log.info("indexing: %d/%d %s, %d chunks embedded", p.done, p.total, what, p.embedded)

    def info(self) -> dict[str, Any]:
        """The daemon's part of /status."""
        state = self.state
        progress = self.progress  # the sync in flight (structure lane)
        vectors = self.vectors.info()
        lane = self.vector_progress if self.vectors.busy else None
        vectors["progress"] = lane
        big = [p for p in (progress, lane) if p and p["total"] >= 50]
        if state == "watching" and big:
            state = "indexing"
        server = self.server
        hub = getattr(getattr(self.app, "state", None), "hub", None)
        due = state == "watching" and self.watcher.lag_seconds() is None and memory_due_now(self)
        return {
            "state": state,
            "role": "reader" if self.reader else "writer",
            "pid": self.pid,
            "version": __version__,
            "host": server.host if server else None,
            "port": server.port if server else None,
            "started_at": self.started_at,
            "uptime_seconds": round(time.monotonic() - self._started_mono, 3),
            "progress": progress,
            "model": self.model_state,
            "vectors": vectors,
            "events_clients": hub.clients if hub is not None else 0,
            "config_changed": self.config_watch.changed,  # not yet started again on
            "memory_due": due,  # idle, but MEMORY.md not in line: the next tick queues it
            **self.watcher.info(),
        }

    def request_stop(self, *args: object) -> None:
        """Ask ``run`` to shut down; safe from a signal handler or any thread."""
        if args and isinstance(args[0], int) and self.stop_signal is None:  # a handler's
            self.stop_signal = signal.Signals(args[0]).name
        self._stop.set()
        waiting = self._signals
        if waiting is not None:
            waiting.wake()

    def run(self, on_started: Callable[[Daemon], None] | None = None) -> int:
        """Start, wait for SIGTERM/SIGINT (or ``request_stop``, or the ground lost:
        ``check_ground``), shut down; return the exit code (0, or ``EXIT_GROUND_LOST``)."""
        previous: dict[signal.Signals, Any] = {}
        if threading.current_thread() is threading.main_thread():
            self._signals = SignalWait()
            for sig in STOP_SIGNALS:
                previous[sig] = signal.signal(sig, self.request_stop)
        try:
            self.start()
            if on_started is not None:
                on_started(self)
            if self._signals is not None:
                self._signals.wait(self._stop, self._tick, GROUND_SECONDS)
                self.stop_signal = self.stop_signal or self._signals.received
            else:
                while not self._stop.wait(GROUND_SECONDS):
                    self._tick()
            log.info("memvault daemon stopping")
        finally:
            self.shutdown()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if self._signals is not None:
                self._signals.close()
                self._signals = None
        return self.exit_code

    def _tick(self) -> None:
        self.check_ground()
        if self.config_watch.check():
            log.warning(CONFIG_CHANGED)
        elif self.config_watch.due() and not self._stop.is_set():
            self._new_settings()
        # a writer: PostgreSQL's lock taken again when lost with its session (docs/TEAM.md),
        # its files' commit once HEAD moved (engine/clone_guard), a folder note to `git add`
        # (folder_staging), MEMORY.md after git; a reader: its writer's schema version, which
        # another machine's upgrade changes (pg_writer.follow_writer)
        store, newer = self.vault.engine.store, None
        held, moved = (getattr(store, n, None) for n in ("hold_writer_lock", "mark_files_if_moved"))
        steps = [held, moved, self.vault.engine.linker.staging.retry, self.memory_catch_up]
        try:
            if self.reader:
                newer = getattr(store, "follow_writer", lambda: None)()
            for step in [] if self.reader else steps:
                if step is not None:
                    step()
        except MemvaultError as exc:  # the server down or restarting, the lock another's:
            # no end (a writer exited at pg_ctl stop); said once, the next tick looks again
            if str(exc) != self._tick_error:
                log.warning("the index: %s", exc)
            self._tick_error = str(exc)
        else:
            if self._tick_error and self.watcher.batches_failed:
                # the server back: the syncs that failed meanwhile now, not after the
                # rest of their back-off (up to 60 s; a field test waited 45 s)
                self.watcher.queue.retry_after(0)
                self.watcher.queue.wake()
            self._tick_error = ""
        if newer:  # its writer's schema is newer than this code: refused, as at a start
            self._exit(7, newer)

    def _exit(self, code: int, why: str) -> None:
        log.error("memvault daemon stopping: %s", why)
        self.exit_code = code
        self.request_stop()

    def _new_settings(self) -> None:
        """config.toml's settings changed under the daemon (config_watch): start again
        on them (the same command, this process), once they load and git is done."""
        if git_busy(self.vault.root):
            return  # a merge may take it back; CHANGED said it waits for git
        wrong = self.config_watch.usable(self.vault.root)
        if wrong:  # said once a reason (a text that does not load waits for a change)
            if wrong != self._settings_wrong:
                log.warning("config.toml changed, but the daemon keeps its settings: %s", wrong)
            self._settings_wrong = wrong
            return
        log.warning("config.toml changed: the daemon starts again on the new settings")
        self.restart, self.afresh = True, "config.toml changed: on its new settings"
        self.request_stop()

    def memory_catch_up(self) -> None:
        """MEMORY.md waited for git (mid rebase/merge: nothing tracked is written then):
        once git is done (``memory_due``), queue it, so it is brought up even when
        finishing the rebase changed no note the watcher would see (issue 21 item 10)."""
        if memory_due(self):
            self.watcher.queue.put([self.vault.config.memory.file])

    def check_ground(self) -> None:
        """Stop when the vault folder or the writer lock is gone from under the daemon.

        A vault folder renamed (Obsidian's "Manage vaults"), moved or deleted, or
        ``.memvault/`` deleted: the daemon would go on answering for an index of files
        it cannot see, and, its lock gone with the folder, a second daemon could start
        on the vault beside it. It says why and exits ``EXIT_GROUND_LOST``; ``restart``
        when the folder is still there (the CLI starts it again, rebuilding ``.memvault/``).
        """
        lost = self.vault.ground_lost()
        was_lost, self._ground_lost = self._ground_lost, lost is not None
        if lost is None or not was_lost or self._stop.is_set():
            return  # only when lost at two checks in a row (2 s apart), not a moment
        # only the lock (and .memvault/) went: a fresh start (``restart``) rebuilds
        reason, self.restart = lost
        self._exit(EXIT_GROUND_LOST, reason + ("; starting afresh" if self.restart else ""))

    def shutdown(self) -> bool:
        """Remove daemon.json, stop serving and watching, save, release the lock.

        False when the batch in flight could not finish in time (a model still
        loading, say): the vault is then left open for the process exit to drop,
        which is as safe as a kill -9 — the next start reconciles.
        """
        if self._closed:
            return True
        self._closed = True
        self.state = "stopping"
        # Said stopping (daemon status; a daemon starting waits), then no longer found:
        # a call opened from now on waits for the lock this daemon lets go at the end,
        # where one that found daemon.json got "cannot reach the daemon" (a field test)
        say_stopping(self.config.state_dir)
        runfile.remove_if_ours(self.vault.root, self.pid, self.token)
        if self.app is not None:
            self.app.state.close()  # ends /events streams so the server can stop
        if self.server is not None:
            self.server.stop(timeout=1.5)
        started = time.monotonic()
        finished = self.vectors.stop(timeout=STOP_SECONDS)
        left = max(0.5, STOP_SECONDS - (time.monotonic() - started))
        finished = self.watcher.stop(timeout=left) and finished
        if not finished:
            log.warning("memvault daemon stopped without waiting for the sync in flight")
            return False
        self.vault.close()
        log.info("memvault daemon stopped")
        return True


def memory_due(d: Daemon) -> bool:
    """Whether MEMORY.md is out of line with the index, due at the catch-up's next tick: not
    while git or its stash holds it, a reconcile runs or a refused folder note's retry waits."""
    from memvault.engine.linker import memory_due as out_of_line

    return not d.watcher.reconciling and out_of_line(d.vault.engine.linker)


def memory_due_now(d: Daemon) -> bool:
    """``memory_due`` as /status and /events say it, which never raise: while the index
    does not answer (found away a moment ago: not asked again, as the vector lane's info)
    not due, as the catch-up cannot run then either. It raised into ``info``: an idle
    daemon's /events was cut and /status was HTTP 503 once PostgreSQL went away."""
    if recently_away(d.vault.engine.store) is not None:
        return False
    try:
        return memory_due(d)
    except MemvaultError:
        return False


AFRESH_ENV = "_MEMVAULT_STARTED_AFRESH"  # why, for the new process's log (the old went)


def start_afresh(root: Path, config: ConfigWatch | None = None, why: str = "") -> None:
    """``.memvault/`` was deleted under the daemon (its lock with it): run the same
    command again in this process (same pid), which takes a new lock and rebuilds the
    index, rather than leave the vault unwatched (or, under a service manager, refused
    as "not a vault"). config.toml, gone with the folder, is put back as the daemon
    last saw it (``config``): the new process runs on the person's settings, not the
    defaults. ``why``: another reason, for the new log (config.toml's settings changed
    under the daemon: nothing was deleted). Raises ``OSError`` if that cannot be done."""
    from memvault.config import STATE_DIR
    from memvault.vault.state_dir import ensure_state_dir

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    ensure_state_dir(root / STATE_DIR)
    restored = config is not None and config.restore()
    lost = ".memvault/ was deleted under the daemon" + (
        "; config.toml put back as the daemon last saw it" if restored else ""
    )
    os.environ[AFRESH_ENV] = why or f"{lost}; the index is built again"
    os.execv(sys.executable, sys.orig_argv)


def said_afresh() -> None:
    """Log why this process started afresh (``start_afresh``), once."""
    reason = os.environ.pop(AFRESH_ENV, None)
    if reason:
        log.warning("memvault daemon started afresh: %s", reason)


def _write_runfile(root: Path, info: runfile.DaemonInfo) -> None:
    """daemon.json written, and the log told when its token is open to every user."""
    if not runfile.write(root, info):
        log.warning(OPEN_TOKEN, runfile.daemon_file(root))


__all__ = ["Daemon", "HttpServer", "SignalWait", "configure_logging"]
