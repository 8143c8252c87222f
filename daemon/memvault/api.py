"""The public Python API: ``Vault``.

    from memvault import Vault
    with Vault.open("~/memory") as vault:      # the writer lock, or the running daemon
        report = vault.sync()
        hits = vault.search("database schema", k=10, folder="decisions")
        ctx = vault.context("What did we decide about the database schema?", budget=2000)

One writer per vault. ``Vault.open`` takes the writer lock; when a daemon holds it
(``memvault up``, ``memvault daemon start``), the vault is opened through that
daemon instead, as the CLI does: writes (``sync``, ``add``, ``log``) must go to the
one writer, and reads go there too (its model is loaded, its index current); what
the daemon does not serve (``links_check``, ``count_tokens``) is read here, without
the lock. Another holder that is not a daemon (a CLI sync, a migration) is
``LockHeld``. ``read_only=True`` opens in this process without the lock; writes
then raise.

Only ``memvault init``/``up``/``migrate`` (or ``create=True``) make a folder a
vault; opening a folder without ``.memvault/`` is ``VaultNotFound``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from memvault.client import DaemonClient
from memvault.config import VaultConfig
from memvault.core.ranking import Filters, parse_day
from memvault.core.report import Context, Hit, LinkProblem, NoteText, SyncReport, WriteResult
from memvault.engine import Engine, Progress
from memvault.errors import LockHeld, MemvaultError, VaultNotFound
from memvault.index.embedder import Embedder
from memvault.vault import runfile
from memvault.vault.lock import WriterLock, is_vault, lock_wait, misplaced


class Vault:
    """One memory vault, opened in this process."""

    def __init__(
        self, engine: Engine, lock: WriterLock | None, daemon: DaemonClient | None = None
    ) -> None:
        self.engine = engine
        self._lock = lock
        self.daemon = daemon  # the running daemon this vault's operations go to, if any
        self._closed = False

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        read_only: bool = False,
        create: bool = False,
        through_daemon: bool = True,
        embedder: Embedder | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        env: Mapping[str, str] | None = None,
        wait: float | None = None,
    ) -> Vault:
        """Open the vault at ``path``: take the writer lock, or go through the daemon that
        holds it (module docstring; ``through_daemon=False``: ``LockHeld`` instead, for
        the daemon itself). ``create=True`` first makes the folder a vault, as
        ``memvault init`` does (no notes; nothing overwritten). ``wait``: how long to wait
        for another short-lived writer to let go of the lock (None: ``MEMVAULT_LOCK_WAIT``,
        else ``vault.lock.LOCK_WAIT``; the daemon never waits)."""
        root = Path(path).expanduser()
        if create:
            from memvault.vault.template import init_vault

            init_vault(root)
        try:
            is_dir = root.is_dir()
        except OSError as exc:  # a name too long, a symlink loop
            raise VaultNotFound(f"no vault at {str(root)[:80]}: {exc.strerror}") from None
        if not is_dir:
            raise VaultNotFound(
                misplaced(root)
                or f"no vault at {root}: not a folder (create one with `memvault init {root}`)"
            )
        if not is_vault(root):
            raise VaultNotFound(
                misplaced(root)
                or f"{root} is not a memvault vault (no .memvault/ folder): `memvault init {root}` "
                "or Vault.open(path, create=True) makes it one"
            )
        config = VaultConfig.load(root, env=env, overrides=overrides)
        lock = None
        daemon = None
        if not read_only:
            lock = WriterLock(config.state_dir / "lock")
            try:  # another short-lived writer: wait for it (bounded); a daemon: go through it
                lock.acquire(
                    (lock_wait(env) if wait is None else wait) if through_daemon else 0.0,
                    give_up=lambda: runfile.running(root) is not None,
                )
            except LockHeld:
                info = runfile.running(root) if through_daemon else None
                if info is None:
                    raise  # a short-lived writer (a sync, a migration), not a daemon
                lock, daemon = None, DaemonClient.of(info)
        try:
            engine = Engine(config, embedder, read_only=lock is None)
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        return cls(engine, lock, daemon)

    @property
    def root(self) -> Path:
        return self.engine.root

    @property
    def config(self) -> VaultConfig:
        return self.engine.config

    def __enter__(self) -> Vault:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.engine.close()
        finally:
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def _not_closed(self) -> None:
        # a closed vault's index is closed (sqlite3.ProgrammingError) and its lock let go
        # (a write was "read-only"): say what happened instead
        if self._closed:
            raise MemvaultError(
                f"this Vault ({self.root}) is closed: open it again with Vault.open "
                "(a `with Vault.open(...)` block closes it at its end)"
            )

    def ground_lost(self) -> tuple[str, bool] | None:
        """Why this writer can no longer go on, and whether the vault folder is still there
        (only its writer lock went: ``.memvault/`` removed), or None. The vault folder
        moved, renamed or deleted, or its writer lock deleted, while it was open."""
        try:
            self.engine.fs.check_root()
        except VaultNotFound as exc:
            return str(exc), False
        if self._lock is not None and not self._lock.intact():
            return (
                f"{self._lock.path} was deleted or replaced (.memvault/ removed?): another "
                "process could take the vault's writer lock while this one still writes",
                True,
            )
        return None

    def _writable(self) -> None:
        self._not_closed()
        if self._lock is None and self.daemon is None:
            raise MemvaultError("this vault was opened read-only")

    # -- operations --------------------------------------------------------------------

    def sync(
        self,
        paths: Iterable[str] | None = None,
        progress: Callable[[Progress], None] | None = None,
        *,
        vectors: bool = True,
    ) -> SyncReport:
        """Reconcile the index and MEMORY.md with the files (all, or just ``paths``).

        MEMORY.md, links and keyword search are current when the structure is; with
        ``vectors=False`` new chunks' vectors are left pending (searched by keywords
        meanwhile) for a later sync, ``embed_pending`` or the daemon."""
        self._writable()
        if self.daemon is not None:
            return self.daemon.sync(paths, vectors=vectors)
        return self.engine.sync(paths, progress, vectors=vectors)

    def search(
        self,
        query: str,
        k: int | None = None,
        *,
        folder: str | None = None,
        tags: Sequence[str] | str | None = None,
        since: str | None = None,
        until: str | None = None,
        where: Mapping[str, str] | None = None,
        path: str | None = None,
        group: bool = False,
    ) -> list[Hit]:
        """Hybrid (BM25 + vector) search; filters narrow it to folders, tags, dates, fields."""
        self._not_closed()
        filters = make_filters(folder, tags, since, until, where, path)
        if self.daemon is not None:
            return self.daemon.search(
                query,
                k,
                folder=folder,
                tags=tags,
                since=since,
                until=until,
                where=where,
                path=path,
                group=group,
            )
        return self.engine.search(query, k, filters, group=group)

    def context(self, query: str, budget: int | None = None, **filters: Any) -> Context:
        """MEMORY.md, then the lines of the best notes that answer it, cited, within ``budget`` tokens."""
        self._not_closed()
        checked = make_filters(**filters)
        if self.daemon is not None:
            return self.daemon.context(query, budget, **filters)
        return self.engine.context(query, budget, checked)

    def get(self, path: str, lines: str | None = None, heading: str | None = None) -> NoteText:
        """A note, one section of it, or a line range (``lines="10:20"``)."""
        self._not_closed()
        if self.daemon is not None:
            return self.daemon.get(path, lines=lines, heading=heading)
        return self.engine.get(path, lines=lines, heading=heading)

    def related(self, path: str, k: int = 10, exclude: Sequence[str] = ()) -> list[Hit]:
        """Notes most like ``path`` (the "related notes" pane), none from the ``exclude``
        folders."""
        self._not_closed()
        if self.daemon is not None:
            return self.daemon.related(path, k, exclude)
        return self.engine.related(path, k, exclude)

    def add(
        self,
        category: str,
        title: str,
        *,
        summary: str | None = None,
        fields: Mapping[str, str] | None = None,
        body: str | None = None,
        update: bool = False,
    ) -> WriteResult:
        """Create a note from the vault's template; MEMORY.md and the index follow at once."""
        self._writable()
        if self.daemon is not None:
            return self.daemon.add(
                category, title, summary=summary, fields=fields, body=body, update=update
            )
        return self.engine.add_note(
            category, title, summary=summary, fields=fields, body=body, update=update
        )

    def log(self, text: str) -> WriteResult:
        """Add a timestamped line to today's log (after the day's last entry)."""
        self._writable()
        if self.daemon is not None:
            return self.daemon.log(text)
        return self.engine.append_log(text)

    def links_check(self) -> list[LinkProblem]:
        """Unresolved, ambiguous and alias-only links, with file and line."""
        self._not_closed()
        return self.engine.link_problems()

    def status(self) -> dict[str, Any]:
        """What is indexed, how big MEMORY.md is against its budget, what is stale (and,
        through a daemon, the daemon's own state under ``"daemon"``)."""
        self._not_closed()
        if self.daemon is not None:
            return self.daemon.status()
        return self.engine.status()

    # -- for the daemon and the tools around it ----------------------------------------

    def embed_pending(
        self,
        progress: Callable[[Progress], None] | None = None,
        *,
        steps: int | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> tuple[int, int]:
        """Give pending chunks their vectors (all, or ``steps`` bounded steps); returns
        (chunks the model embedded, chunks indexed)."""
        self._writable()
        return self.engine.embed_pending(progress, steps=steps, stop=stop)

    def pending_vectors(self) -> tuple[int, float | None]:
        """Chunks waiting for their vectors, and since when the oldest has (unix time)."""
        self._not_closed()
        return self.engine.pending_vectors()

    def warm_up(self) -> None:
        """Load the embedding model and open the vector index now, not on first use."""
        self._not_closed()
        self.engine.warm_up()

    def subscribe(self, listener: Callable[[SyncReport], None]) -> None:
        """Call ``listener`` with the report of every sync that changed something."""
        self._not_closed()
        self.engine.subscribe(listener)

    def unsubscribe(self, listener: Callable[[SyncReport], None]) -> None:
        self.engine.unsubscribe(listener)

    def is_ignored(self, rel: str) -> bool:
        """Whether memvault ignores this vault-relative path (dot-folders, conflict copies...)."""
        self._not_closed()
        return self.engine.fs.is_ignored(rel)

    def save(self) -> None:
        """Save the vector index if it changed (the daemon does this when idle)."""
        self._not_closed()
        self.engine.save()

    def count_tokens(self, text: str) -> int:
        """Word pieces of the embedding model in ``text`` (the unit of every budget)."""
        self._not_closed()
        return self.engine.count_tokens(text)


def make_filters(
    folder: str | None = None,
    tags: Sequence[str] | str | None = None,
    since: str | None = None,
    until: str | None = None,
    where: Mapping[str, str] | None = None,
    path: str | None = None,
) -> Filters:
    """Validate search filters from any interface into one ``Filters``."""
    if isinstance(tags, str):
        tags = [tags]
    return Filters(
        folder=folder.strip("/") if folder else None,
        tags=tuple(t.lstrip("#") for t in tags or () if t),
        since=parse_day(since, "since") if since else None,
        until=parse_day(until, "until") if until else None,
        where=dict(where) if where else None,
        path=path or None,
    )


__all__ = ["Vault", "make_filters"]
