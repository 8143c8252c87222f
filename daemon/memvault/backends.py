"""Where a ``Vault``'s calls go: the one place that decides daemon or in-process.

``open_backend(root, config, mode)`` picks one backend, once, when the vault opens:

- a daemon serves the vault (``runfile.running``: it holds the writer lock): a
  ``"write"`` always goes to it, however busy it is — it is the one writer, and
  an in-process writer could only fail on its lock; a read (``"read"``,
  ``"query"``, ``"peek"``) goes to it when it answers ``/health`` within
  ``ANSWER_TIMEOUT`` (its model is loaded), else the index is read here as it is
  (read-only, never competing for its lock);
- otherwise the vault is opened here. ``"write"`` takes the writer lock (another
  holder is ``LockHeld``; a daemon that took it meanwhile serves the calls).
  ``"read"`` and ``"query"`` take it too when it is free and sync first, so
  answers are true to the files; when another process holds it, they wait up to
  ``LETS_GO`` for it (a holder keeping the vault only for speed, the MCP server
  or the memory tool between calls, lets go when asked), then read the index as
  it is (read-only). ``"peek"`` reads the index as it is, without the
  lock and without a sync. A vault that was never indexed is only ever peeked at
  by a read: nothing is written into it (``get`` and the link check read the
  files; ``search`` and ``context`` say that it is not indexed yet). A team's index
  in PostgreSQL is never synced by a read; with no writer holding it, a ``"query"``
  says which notes of this copy its answer misses (``say_unkept``); with one, each
  search and context names this clone's notes git says it changed that the index lacks
  or holds otherwise (``changed_by_git``).

The sync before a read is the structure lane only: MEMORY.md, links and keyword
search are current, and the model is never loaded for it. New chunks' vectors
stay pending — searched by keywords meanwhile, marked ``pending`` in hits — until
``memvault sync`` or a daemon embeds them; a ``"query"`` (which loads the model
for its own vector anyway) first embeds a few pending chunks itself
(``QUERY_CATCH_UP``).

Both backends take the values ``Vault`` checked (``Filters``, ``NoteRequest``):
``LocalBackend`` is the engine and the writer lock; ``DaemonBackend`` is the
daemon's HTTP client, with a read-only index opened here only for what the
daemon does not serve (the link check, token counts).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from memvault.client import ANSWER_TIMEOUT, DaemonClient, PerThread
from memvault.config import VaultConfig
from memvault.core.ranking import Filters
from memvault.core.results import (
    Context,
    Hit,
    LinkProblem,
    NoteRequest,
    NoteText,
    SyncReport,
    WriteResult,
)
from memvault.errors import DaemonError, IndexTooNew, LockHeld, MemvaultError, StorageError
from memvault.vault import runfile
from memvault.vault.lock import WriterLock, lock_wait
from memvault.vault.state_dir import cannot_write, unwritable

if TYPE_CHECKING:  # the engine (numpy, SQLite, hnswlib) is imported only to open one here:
    # a CLI call answered by the daemon never loads it
    from memvault.engine import Engine, Progress
    from memvault.engine.changed_here import ChangedHere
    from memvault.index.embedder import Embedder

Mode = Literal["write", "read", "query", "peek"]
Paths: TypeAlias = "Iterable[str] | None"  # vault-relative paths; None: every file
OnProgress: TypeAlias = "Callable[[Progress], None] | None"
Moves: TypeAlias = "Sequence[tuple[str, str]]"  # renames the file system reported: (old, new)
# A query (search, context) opened here embeds this many pending chunks at most before
# it answers — a note just written by `memvault add` is then found by meaning (a second
# or less); more than that (a migration's thousands) is left to `memvault sync` or a
# daemon, and the query answers from keywords for those, marking them ``pending``.
QUERY_CATCH_UP = 64
PROGRESS_POLL = 0.25  # a sync through the daemon reads its progress this often
# How long a read waits for the writer lock, and a daemon starting for one holder: a
# holder keeping it only for speed (``LETS_GO_FILE``) lets go when a process finds it held
# (vault/lock.py, ``WANTED_FILE``) within a fraction of this. A read waits only for such a
# holder; a daemon starting waits its turn (up to ``MEMVAULT_LOCK_WAIT``) behind agents
# taking turns and short writers, and is refused by one writer holding the lock this
# long without letting go (a `memvault sync`: the daemon would wait on it for minutes).
LETS_GO = 2.0

log = logging.getLogger("memvault")


class Backend:
    """What a ``Vault`` delegates to, with the values it checked: the reads both backends
    answer alike are written here once, for the engine here or the daemon's client."""

    root: Path
    config: VaultConfig
    writable: bool  # a write can go here (the lock held, or the daemon that holds it)
    # a read answering from the index as it is, beside a holder that did not let go in
    # time, while the files differ from it: which notes its answers miss (``say_missed``,
    # ``say_unkept``: said at the open, for every thread)
    opened_note: str | None = None
    # which notes this thread's last search or context misses (a reader daemon's
    # ``changed_here``, a daemon's ``note``); the open's note before one. Per thread: two
    # searches at once read each other's note (``PerThread``)
    stale = PerThread(fallback="opened_note")
    _target: Engine | DaemonClient  # what answers the reads

    @property
    def engine(self) -> Engine:
        raise NotImplementedError

    def sync(
        self, paths: Paths, progress: OnProgress, vectors: bool, moves: Moves = ()
    ) -> SyncReport:
        raise NotImplementedError

    def add(self, note: NoteRequest) -> WriteResult:
        raise NotImplementedError

    def log(self, text: str) -> WriteResult:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # a reader daemon's: the notes its clone changed, which a search or context checks
    # against the team's index and names in ``stale`` when it lacks them (changed_here)
    changed_here: ChangedHere | None = None

    def search(self, query: str, k: int | None, filters: Filters, group: bool) -> list[Hit]:
        hits = self._target.search(query, k, filters, group)
        self._check_changes()
        return hits

    def context(self, query: str, budget: int | None, filters: Filters) -> Context:
        found = self._target.context(query, budget, filters)
        self._check_changes()
        return found

    def _check_changes(self) -> None:
        if self.changed_here is not None:
            self.stale = self.changed_here.say(self.engine)

    def get(self, path: str, lines: str | None, heading: str | None) -> NoteText:
        return self._target.get(path, lines, heading)

    def related(self, path: str, k: int, exclude: Sequence[str]) -> list[Hit]:
        return self._target.related(path, k, exclude)

    def memory_tool(self, command: Mapping[str, Any]) -> str:
        return self._target.memory_tool(command)

    def status(self) -> dict[str, Any]:
        return self._target.status()

    def links_check(self) -> list[LinkProblem]:
        return self.engine.link_problems()  # the index here (the daemon does not serve it)

    def ground_lost(self) -> tuple[str, bool] | None:
        return None  # a daemon watches its own ground

    def freshen(
        self, mode: Mode, progress: OnProgress = None, paths: Paths = None, moves: Moves = ()
    ) -> SyncReport | None:
        """What a ``mode`` call needs first here (``LocalBackend``), and the report of the
        sync it ran (None: none); a daemon keeps its index current itself."""
        return None

    def refusal(self) -> MemvaultError:
        """The error a write gets when this backend is not ``writable``."""
        return MemvaultError("this vault was opened read-only")


class LocalBackend(Backend):
    """The vault opened in this process: its engine, and the writer lock unless read-only."""

    def __init__(self, engine: Engine, lock: WriterLock | None) -> None:
        self._target = self._engine = engine
        self._lock = lock
        self.root = engine.root
        self.config = engine.config
        # a reader daemon holds this folder's lock over a read-only index (PostgreSQL's
        # writer elsewhere): no writes
        self.writable = lock is not None and not engine.read_only

    @property
    def engine(self) -> Engine:
        return self._engine

    def refusal(self) -> MemvaultError:
        name_writer = getattr(self._engine.store, "refusal", None)  # PostgreSQL's reader
        if name_writer is None:
            return super().refusal()
        return name_writer(daemon=self._lock is not None)  # a reader daemon: its folder's

    def sync(
        self, paths: Paths, progress: OnProgress, vectors: bool, moves: Moves = ()
    ) -> SyncReport:
        if paths is None and vectors:  # bulk work asked for (`memvault sync`): an older
            self._engine.store.convert_old = True  # index's one VACUUM is its time too
        return self._engine.sync(paths, progress, vectors=vectors, moves=moves)

    def add(self, note: NoteRequest) -> WriteResult:
        return self._engine.add_note(note)

    def log(self, text: str) -> WriteResult:
        return self._engine.append_log(text)

    def freshen(
        self, mode: Mode, progress: OnProgress = None, paths: Paths = None, moves: Moves = ()
    ) -> SyncReport | None:
        """A ``"read"`` or ``"query"`` with the writer lock: the structure synced first
        (MEMORY.md, links, keyword search; never the model), and a query's few pending
        chunks embedded (``QUERY_CATCH_UP``): what each open for one does, and each call
        on a vault kept open between calls (memvault/door.py). ``paths``: only these
        changed since the index was last true to the files (a kept vault's watcher says
        so, ``moves`` the renames among them; ``[]``: none), else everything is synced;
        none, but MEMORY.md is due (git held it at the last sync, and is done): the sync
        of no paths that brings it up, as the daemon's catch-up."""
        if self._lock is None or mode not in ("read", "query"):
            return None
        report = None
        from memvault.engine.linker import memory_due

        if paths is None or paths or memory_due(self._engine.linker):
            report = self._engine.sync(paths, progress, vectors=False, moves=moves)
        if mode == "query" and 0 < self._engine.pending_vectors()[0] <= QUERY_CATCH_UP:
            self._engine.embed_pending()
        return report

    def ground_lost(self) -> tuple[str, bool] | None:
        from memvault.errors import VaultNotFound

        try:
            self._engine.fs.check_root()
        except VaultNotFound as exc:
            return str(exc), False
        if self._lock is not None and not self._lock.intact():
            return (
                f"{self._lock.path} was deleted or replaced (.memvault/ removed?): another "
                "process could take the vault's writer lock while this one still writes",
                True,
            )
        return None

    def close(self) -> None:
        try:
            self._engine.close()
        finally:
            if self._lock is not None:
                self._lock.release()
                self._lock = None


class DaemonBackend(Backend):
    """The daemon that serves the vault, over its HTTP API (``client``); the index is
    opened here, read-only and on first use, only for what the daemon does not serve."""

    writable = True  # the daemon is the one writer

    def __init__(
        self,
        client: DaemonClient,
        config: VaultConfig,
        embedder: Embedder | Callable[[], Embedder] | None = None,
    ) -> None:
        self._target = self.client = client
        self.root = config.root
        self.config = config
        self._embedder = embedder
        self._index: Engine | None = None
        self._index_lock = threading.Lock()

    @property
    def engine(self) -> Engine:
        """The vault's index as it is, read-only (opened on first use)."""
        with self._index_lock:
            if self._index is None:
                from memvault.engine import Engine

                self._index = Engine(self.config, self._embedder, read_only=True)
            return self._index

    def sync(
        self, paths: Paths, progress: OnProgress, vectors: bool, moves: Moves = ()
    ) -> SyncReport:
        """The daemon syncs; ``progress`` sees the daemon's sync progress meanwhile (read
        from its ``/status`` every ``PROGRESS_POLL`` seconds). ``moves`` are not sent: the
        daemon's own watcher saw the same renames."""
        paths = None if paths is None else list(paths)
        if progress is None:
            return self.client.sync(paths, vectors=vectors)
        answer: list[SyncReport] = []
        failure: list[BaseException] = []

        def request() -> None:
            try:
                answer.append(self.client.sync(paths, vectors=vectors))
            except BaseException as exc:  # handed to the caller below
                failure.append(exc)

        asking = threading.Thread(target=request, name="memvault-sync-request", daemon=True)
        asking.start()
        shown: dict[str, Any] | None = None
        while True:
            asking.join(PROGRESS_POLL)
            if not asking.is_alive():
                break
            try:
                now = (self.client.status(timeout=ANSWER_TIMEOUT).get("daemon") or {}).get(
                    "progress"
                )
            except DaemonError:
                continue  # busy: the next poll may answer
            if isinstance(now, dict) and now != shown:
                from memvault.engine import Progress

                shown = now
                progress(Progress(now["done"], now["total"], now["embedded"], now["stage"]))
        if failure:
            raise failure[0]
        return answer[0]

    def _check_changes(self) -> None:
        """What the daemon said its answer misses (a reader daemon's ``note``)."""
        self.stale = self.client.note
        if self.stale:
            log.warning(self.stale)

    def add(self, note: NoteRequest) -> WriteResult:
        return self.client.add(note)

    def log(self, text: str) -> WriteResult:
        return self.client.log(text)

    def close(self) -> None:
        with self._index_lock:
            if self._index is not None:
                self._index.close()
                self._index = None


class TooNewBackend(Backend):
    """A team's index of a newer memvault's schema (its writer upgraded), opened to read
    here: ``status`` answers what the files say and the versions (``status_away``); each
    other call is refused with ``IndexTooNew`` (upgrade memvault on this machine). The
    open was refused, and a process with no daemon (the CLI, a ``Vault``, the HTTP app)
    could not show even its status."""

    writable = False

    def __init__(self, config: VaultConfig, newer: IndexTooNew) -> None:
        self.root, self.config, self._newer = config.root, config, newer
        self._target = _Refusing(self.refusal)  # type: ignore[assignment]

    def refusal(self) -> IndexTooNew:
        return IndexTooNew(str(self._newer), self._newer.version, self._newer.ours)

    @property
    def engine(self) -> Engine:
        raise self.refusal()

    def status(self) -> dict[str, Any]:
        from memvault.engine.status_away import unopened_status

        return unopened_status(self.config, self._newer)

    def sync(
        self, paths: Paths, progress: OnProgress, vectors: bool, moves: Moves = ()
    ) -> SyncReport:
        raise self.refusal()

    def close(self) -> None:
        pass


class _Refusing:
    """What answers a ``TooNewBackend``'s reads (search, context, get, related, the
    memory tool): each refused with its error."""

    def __init__(self, refusal: Callable[[], MemvaultError]) -> None:
        self._refusal = refusal

    def __getattr__(self, name: str) -> Any:
        raise self._refusal()


def never_indexed(config: VaultConfig) -> bool:
    """No index of the vault here (none made yet, or PostgreSQL's): a read reads it as
    it is, and creates none (nor ``.memvault/``). A field test: the ``index.db`` an `index
    move --to postgres` leaves behind (or a colleague's from before the team) made a
    `memvault search` there the shared index's writer while no daemon wrote it, and its
    sync put that copy's uncommitted drafts in the team's index."""
    return config.index.store == "postgres" or not (config.state_dir / "index.db").exists()


def open_backend(
    config: VaultConfig,
    mode: Mode = "write",
    *,
    through_daemon: bool = True,
    embedder: Embedder | Callable[[], Embedder] | None = None,
    progress: Callable[[Progress], None] | None = None,
    wait: float | None = None,
    env: Mapping[str, str] | None = None,
    reader: bool = False,
    on_wait: Callable[[str], None] | None = None,
    lets_go: bool = False,
) -> Backend:
    """The backend for the vault ``config`` describes, by the rules of the module doc
    (``through_daemon=False``: never a daemon — for the daemon itself, and for reading
    the index here as it is). A write waits up to ``wait`` seconds (None:
    ``MEMVAULT_LOCK_WAIT`` of ``env``, the process environment without one) for another
    short-lived writer to let go, telling ``on_wait`` (``WriterLock.acquire``); a read
    up to ``LETS_GO`` (None; said at debug level only) for a holder keeping the vault
    only for speed, which said so (``lets_go``: this opener is one, memvault/door.py),
    and not at all for another. ``reader`` (a daemon's ``"write"``):
    when the index in PostgreSQL has its writer elsewhere, hold this folder's lock (a
    daemon runs here: ``runfile``) over the index read-only instead of ``LockHeld``."""
    root = config.root
    if config.index.dsn:  # a password in config.toml, which git carries: said once
        from memvault.index.seam import warn_password_in_file

        warn_password_in_file(config)
    client = DaemonClient.running(root) if through_daemon else None
    if client is not None and (mode == "write" or client.healthy(ANSWER_TIMEOUT)):
        return DaemonBackend(client, config, embedder)
    # A vault never indexed is read as it is: a read creates no index (nor .memvault/).
    # A daemon that does not answer a read: read here, never competing for its lock.
    unindexed = never_indexed(config)
    writable = client is None and (mode == "write" or (mode in ("read", "query") and not unindexed))
    # another user's index (0444): read as it is, never written, and its lock not asked
    # for: a read touched lock.wanted while the owner held it, a file of this user's there
    # that the owner's memvault could not touch again to ask its own holder to let go
    postgres = config.index.store == "postgres"
    closed = None if not writable or postgres else unwritable(config.state_dir)
    if closed is not None and mode == "write":
        raise StorageError(f"{cannot_write(closed)}; nothing was written")
    lock = None
    kept_by: int | None = None  # a read's holder that lets go when asked, and did not
    if writable and closed is None:
        lock = WriterLock(config.state_dir / "lock")
        held = lock  # (for the lambdas: ``lock`` is None once refused)

        def give_up() -> bool:  # a daemon: go through it
            return runfile.running(root) is not None

        if not through_daemon:  # a daemon starting: see LETS_GO
            holding: list[Any] = [None, 0.0]  # a holder that does not let go, since when

            def give_up() -> bool:
                if runfile.running(root) is not None:
                    return True
                pid = held.holder_pid()
                # a daemon stopping (daemon.json gone) lets go once saved: waited for
                if pid is None or held.holder_lets_go() or held.holder_stopping():
                    holding[0] = None
                    return False
                if pid != holding[0]:
                    holding[:] = [pid, time.monotonic()]
                return time.monotonic() - holding[1] >= LETS_GO

        if mode == "write":
            patience = lock_wait(env) if wait is None else wait
        else:  # a read waits only for a holder that lets go when asked (its answer is
            # true to the files then), not for a long writer: the index as it is then
            patience = LETS_GO if wait is None else wait
            on_wait = on_wait or log.debug  # no news: a read's answer comes either way

            def give_up() -> bool:
                # (not a holder letting go as this process looks: its lock file emptied)
                return runfile.running(root) is not None or held.holds_and_keeps()

        try:  # another short-lived writer: wait for it (bounded); a daemon: go through it
            lock.acquire(
                patience,
                give_up=give_up,
                on_wait=on_wait,
                lets_go=lets_go,
            )
        except LockHeld:
            lock = None
            if mode != "write" and held.holder_lets_go():  # it said so, and kept it
                kept_by = held.holder_pid()
            info = runfile.running(root) if through_daemon else None
            if info is not None:  # a daemon took the lock meanwhile: it serves the calls
                return DaemonBackend(DaemonClient.of(info), config, embedder)
            if mode == "write":
                raise  # a short-lived writer (a sync, a migration), not a daemon
        except OSError as exc:  # no lock file (.memvault/ read-only, the disk full)
            if mode == "write":
                raise StorageError(
                    f"{lock.path}: cannot open the writer's lock ({exc.strerror or exc}); "
                    "nothing was written"
                ) from None
            lock = None  # a read reads the index as it is
    from memvault.engine import Engine

    try:  # the index in PostgreSQL has a writer's lock of its own: the same wait rule
        engine = Engine(
            config,
            embedder,
            read_only=lock is None,
            writer_wait=(lock_wait(env) if wait is None else wait)
            if mode == "write" and (through_daemon or reader)
            else 0.0,
            daemon=mode == "write" and not through_daemon,
        )
    except LockHeld as held:
        # a daemon becomes a reader (keeping this folder's lock) only beside a daemon
        # of another machine; a short-lived CLI writer was waited for (then refused),
        # a daemon of this host (its own predecessor's lingering session) is refused
        keep = reader and mode == "write" and held.daemon_elsewhere
        if lock is not None and not keep:
            lock.release()
            lock = None
        if mode == "write" and not keep:
            raise
        # the index in PostgreSQL has its writer on another machine: read it as it is
        try:
            engine = Engine(config, embedder, read_only=True)
        except IndexTooNew as newer:
            if lock is not None:
                lock.release()
            if keep:  # a reader daemon does not start (exit 7)
                raise
            return TooNewBackend(config, newer)
        except BaseException:
            if lock is not None:
                lock.release()
            raise
    except IndexTooNew as newer:  # a read's (a writer's open refused: migrate says why)
        if lock is not None:
            lock.release()
        if mode == "write":
            raise
        return TooNewBackend(config, newer)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    # a daemon converts an older index (one VACUUM) beside its searches, which do not wait
    engine.store.convert_old = mode == "write" and not through_daemon and not engine.read_only
    if closed is not None:  # (said once the index opened: else its open says why not)
        log.warning("%s; this answer is from the index as it is", cannot_write(closed))
    backend = LocalBackend(engine, lock)
    try:
        backend.freshen(mode, progress)
        if kept_by is not None:
            from memvault.engine.unkept import say_missed

            backend.opened_note = say_missed(engine, kept_by, LETS_GO)
        elif mode == "query" and lock is None and engine.read_only:
            from memvault.engine.unkept import unkept_here

            backend.opened_note, backend.changed_here = unkept_here(engine)
    except BaseException:
        backend.close()
        raise
    return backend


__all__ = [
    "QUERY_CATCH_UP",
    "Backend",
    "DaemonBackend",
    "LocalBackend",
    "Mode",
    "open_backend",
]
