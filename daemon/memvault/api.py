"""The public Python API: ``Vault``.

    from memvault import Vault
    with Vault.open("~/memory") as vault:      # the writer lock, or the running daemon
        report = vault.sync()
        hits = vault.search("database schema", k=10, folder="decisions")
        ctx = vault.context("What did we decide about the database schema?", budget=2000)

One writer per vault. ``Vault.open`` decides once where the calls go and holds
that one backend (``memvault.backends``): by default it takes the writer lock, or,
when a daemon holds it (``memvault up``, ``memvault daemon start``), opens the vault
through that daemon, as the CLI does: writes (``sync``, ``add``, ``log``) must go
to the one writer, and reads go there too (its model is loaded, its index
current); what the daemon does not serve (``links_check``, ``count_tokens``) is
read here from the index as it is, without the lock. Another holder that is not a
daemon (a CLI sync, a migration) is ``LockHeld``. ``mode`` says what the caller
means to do (``"read"``, ``"query"``: sync first when the lock is free, else read
the index as it is; ``"peek"``: the index as it is) — the CLI and the MCP server
open every call this way. ``read_only=True`` opens in this process without the
lock and never through a daemon; writes then raise.

Each method checks the vault is open, validates its arguments once into a value
(``Filters``, a ``NoteRequest``) and hands it to the backend.

Only ``memvault init``/``up``/``migrate`` (or ``create=True``) make a folder a
vault; opening a folder without ``.memvault/`` is ``VaultNotFound``.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from memvault.backends import (
    Backend,
    DaemonBackend,
    LocalBackend,
    Mode,
    Moves,
    OnProgress,
    Paths,
    TooNewBackend,
    open_backend,
)
from memvault.config import CONFIG_FILE, VaultConfig
from memvault.core.closing import Closes
from memvault.core.ranking import Filters, parse_day
from memvault.core.results import (
    Context,
    Hit,
    LinkProblem,
    NoteRequest,
    NoteText,
    SyncReport,
    WriteResult,
)
from memvault.errors import BadRequest, MemvaultError, VaultNotFound, checking_request
from memvault.vault.lock import LOCK_FILE, WriterLock, is_vault, misplaced

if TYPE_CHECKING:
    from memvault.client import DaemonClient
    from memvault.engine import Engine, Progress
    from memvault.engine.changed_here import ChangedHere
    from memvault.index.embedder import Embedder


class FilterArgs(TypedDict, total=False):
    """The filters ``search`` and ``context`` take (``make_filters`` checks them)."""

    folder: str | None  # a folder and its subfolders, e.g. "decisions"
    tags: Sequence[str] | str | None  # every tag must be present
    since: str | None  # YYYY-MM-DD: notes dated on or after
    until: str | None  # YYYY-MM-DD: notes dated on or before
    where: Mapping[str, str] | None  # frontmatter field = value
    path: str | None  # a glob over the note path


class Vault(Closes):
    """One memory vault, and the one backend its calls go to (this process, or its daemon)."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._closed = False

    @staticmethod
    def check_folder(path: str | Path) -> None:
        """``VaultNotFound`` (saying which command makes it one) unless ``path`` is a
        vault's folder: what ``open`` checks first, for a tool made now and opened later
        (``VaultMemoryTool``), whose developer, not its model, is to hear it."""
        root = Path(path).expanduser()
        try:
            is_dir = root.is_dir()
        except OSError as exc:  # a name too long, a symlink loop
            raise VaultNotFound(f"no vault at {str(root)[:80]}: {exc.strerror}") from None
        if not is_dir:
            raise VaultNotFound(
                misplaced(root)
                or f"no vault at {root}: not a folder (create one with `memvault init {shlex.quote(str(root))}`)"
            )
        if not is_vault(root):
            raise VaultNotFound(
                misplaced(root)
                or f"{root} is not a memvault vault (no .memvault/ folder): `memvault init {shlex.quote(str(root))}` "
                "or Vault.open(path, create=True) makes it one"
            )

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        mode: Mode = "write",
        read_only: bool = False,
        create: bool = False,
        through_daemon: bool = True,
        embedder: Embedder | Callable[[], Embedder] | None = None,
        progress: Callable[[Progress], None] | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        env: Mapping[str, str] | None = None,
        wait: float | None = None,
        reader: bool = False,
        on_wait: Callable[[str], None] | None = None,
        lets_go: bool = False,
    ) -> Vault:
        """Open the vault at ``path``: take the writer lock, or go through the daemon that
        holds it (module docstring; ``through_daemon=False``: ``LockHeld`` instead, for
        the daemon itself). ``create=True`` first makes the folder a vault, as
        ``memvault init`` does (no notes; nothing overwritten). ``embedder``: the model,
        or how to load it (called on the engine's first use of one here); ``progress`` sees the
        sync a ``"read"`` or ``"query"`` runs first. ``wait``: how long a
        write waits for another short-lived writer to let go of the lock (None:
        ``MEMVAULT_LOCK_WAIT`` of ``env`` (the process environment without one), else
        ``vault.lock.LOCK_WAIT``; a read waits only ``backends.LETS_GO``, and only for a
        holder keeping the vault for speed, which lets go when asked: ``lets_go``; a
        daemon starting waits ``LETS_GO`` for any); ``on_wait`` is told
        once that it waits, and for whom (None: a warning on the ``memvault`` log, which
        is stderr in the CLI). ``reader``: the
        daemon's — an index in PostgreSQL written from another machine is served
        read-only (writes get ``LockHeld`` naming its writer) instead of refused.
        ``lets_go``: the caller closes this vault when another process asks for its lock
        (``lock_wanted``), as memvault/door.py does; a read elsewhere then waits for it
        (up to ``backends.LETS_GO``), and for no other holder."""
        root = Path(path).expanduser()
        if create:
            from memvault.vault.template import init_vault

            init_vault(root)
        cls.check_folder(root)
        config = VaultConfig.load(root, env=env, overrides=overrides)
        if read_only:
            mode, through_daemon = "peek", False
        return cls(
            open_backend(
                config,
                mode,
                through_daemon=through_daemon,
                embedder=embedder,
                progress=progress,
                wait=wait,
                env=env,
                reader=reader,
                on_wait=on_wait,
                lets_go=lets_go,
            )
        )

    @property
    def root(self) -> Path:
        return self._backend.root

    @property
    def config(self) -> VaultConfig:
        return self._backend.config

    @property
    def engine(self) -> Engine:
        """The engine over this vault's index here (through a daemon: the index as it is,
        read-only, opened on first use)."""
        self._not_closed()
        return self._backend.engine

    @property
    def daemon(self) -> DaemonClient | None:
        """The running daemon this vault's operations go to, if any."""
        backend = self._backend
        return backend.client if isinstance(backend, DaemonBackend) else None

    @property
    def writes_here(self) -> bool:
        """Whether this process writes the vault's index (it holds its writer lock):
        opened here, not read-only (nor a reader of a team's index, nor one of a newer
        memvault's)."""
        return isinstance(self._backend, LocalBackend) and self._backend.writable

    @property
    def stale(self) -> str | None:
        """Which notes this vault's answers miss, said when a read (``"read"``,
        ``"query"``) answers from the index as it is because the process keeping the
        vault between its calls did not let go of it within ``backends.LETS_GO`` while
        the files differ from the index (also a warning on the ``memvault`` log); after
        each search or context, through a reader daemon (or in it), the notes saved in this
        copy that the team's index lacks or holds otherwise (engine/changed_here); None
        otherwise. An agent is told it (an MCP tool result's ``note``): no stderr reaches it.
        Each thread reads the note of its own last search or context (the open's before
        one): two threads searching at once read each other's no more."""
        return self._backend.stale

    def check_changes_here(self) -> ChangedHere:
        """A reader daemon's: the notes its watcher sees change in this copy (returned, for
        the watcher to fill: ``ChangedHere.noted``), and those git says its upstream lacks
        as they are here (``gitstate.not_pushed``), which each search and context then
        checks against the team's index, saying in ``stale`` (and the log) those it lacks
        or holds older (engine/changed_here)."""
        from memvault.engine.changed_here import ChangedHere
        from memvault.vault.gitstate import not_pushed

        changed = self._backend.changed_here = ChangedHere()
        # before it started: git knows them; not those memvault ignores (a template,
        # Obsidian's .trash/, a conflict copy), which no index ever holds: the watcher's
        # mapper drops them, and git's were named at every search
        changed.noted(p for p in not_pushed(self.root) or () if not self.is_ignored(p))
        return changed

    def lock_wanted(self, since_ns: int) -> bool:
        """Whether another process waits for this vault's writer lock (vault/lock_queue.py),
        or found it held after ``since_ns`` (``time.time_ns()``; vault/lock.py
        ``WANTED_FILE``): a caller keeping the vault open between its uses only for speed
        closes it then."""
        return WriterLock(self.config.state_dir / LOCK_FILE).wanted_since(since_ns)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._backend.close()

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""
        return self._closed

    def _not_closed(self) -> None:
        # a closed vault's index is closed (sqlite3.ProgrammingError) and its lock let go
        # (a write was "read-only"): say what happened instead
        if self._closed:
            raise MemvaultError(
                f"this Vault ({self.root}) is closed: open it again with Vault.open "
                "(a `with Vault.open(...)` block closes it at its end)"
            )

    def freshen(self, mode: Mode, paths: Paths = None, moves: Moves = ()) -> SyncReport | None:
        """Make a vault kept open between calls answer a ``mode`` call as one opened for
        it would (``Vault.open(path, mode=mode)``): here with the writer lock, a
        ``"read"`` or ``"query"`` first syncs the structure (a person's edit since is
        found), and a query embeds a few pending chunks; anything else: nothing.
        ``paths``: all that changed since the index was last true to the files, as a
        watcher saw (``moves``: the renames among them; ``[]``: nothing), else all. The
        report of the sync run, if one ran."""
        self._not_closed()
        return self._backend.freshen(mode, None, paths, moves)

    def ground_lost(self) -> tuple[str, bool] | None:
        """Why this writer can no longer go on, and whether the vault folder is still there
        (only its writer lock went: ``.memvault/`` removed), or None. The vault folder
        moved, renamed or deleted, or its writer lock deleted, while it was open."""
        return self._backend.ground_lost()

    def settings_changed(self) -> bool:
        """Whether ``.memvault/config.toml`` is no longer the text this vault's settings
        were read from (a person's edit, a ``git pull``): a caller keeping the vault open
        between its uses opens it again, as a daemon starts again on the new settings."""
        try:
            now: bytes | None = (self.config.state_dir / CONFIG_FILE).read_bytes()
        except FileNotFoundError:
            now = None
        except OSError:  # cannot tell now (a network mount's hiccup): the open's stand
            return False
        return now != self.config.source

    def _writable(self) -> None:
        self._not_closed()
        if not self._backend.writable:
            raise self._backend.refusal()

    def _here(self) -> Engine:
        """The engine of the vault opened in this process."""
        self._not_closed()
        if not isinstance(self._backend, LocalBackend):
            raise MemvaultError(
                f"{self.root} is served by its daemon, which does this itself: "
                "open it with Vault.open(path, through_daemon=False) once the daemon is stopped"
            )
        return self._backend.engine

    # -- operations --------------------------------------------------------------------

    def sync(
        self,
        paths: Paths = None,
        progress: OnProgress = None,
        *,
        vectors: bool = True,
        moves: Moves = (),
    ) -> SyncReport:
        """Reconcile the index and MEMORY.md with the files (all, or just ``paths``).

        MEMORY.md, links and keyword search are current when the structure is; with
        ``vectors=False`` new chunks' vectors are left pending (searched by keywords
        meanwhile) for a later sync or the daemon's vector lane. Through a daemon,
        ``progress`` sees the daemon's sync progress while it runs. ``moves``: renames
        a watcher saw, (old, new) vault paths in order, followed as renames whatever the
        files became after (in this process; a daemon's own watcher sees its own)."""
        self._writable()
        return self._backend.sync(paths, progress, vectors, moves)

    def search(
        self,
        query: str,
        k: int | None = None,
        *,
        group: bool = False,
        **filters: Unpack[FilterArgs],
    ) -> list[Hit]:
        """Hybrid (BM25 + vector) search; filters narrow it to folders, tags, dates, fields
        (``FilterArgs``); ``group``: at most one hit per note."""
        self._not_closed()
        return self._backend.search(query, k, make_filters(**filters), group)

    def context(
        self, query: str, budget: int | None = None, **filters: Unpack[FilterArgs]
    ) -> Context:
        """MEMORY.md, then the lines of the best notes that answer it, cited, within
        ``budget`` tokens; filtered as ``search`` is."""
        self._not_closed()
        return self._backend.context(query, budget, make_filters(**filters))

    def get(self, path: str, lines: str | None = None, heading: str | None = None) -> NoteText:
        """A note, one section of it, or a line range (``lines="10:20"``). An empty
        ``heading`` or ``lines`` is a caller's mistake (``BadRequest``), never the
        whole note."""
        self._not_closed()
        for name, value in (("heading", heading), ("lines", lines)):
            if value is not None and not value.strip():
                raise BadRequest(
                    f"{name} is empty: give the {name} to read, or leave {name} out "
                    "for the whole note"
                )
        return self._backend.get(path, lines, heading)

    def related(self, path: str, k: int = 10, exclude: Sequence[str] = ()) -> list[Hit]:
        """Notes most like ``path`` (the "related notes" pane), none from the ``exclude``
        folders."""
        self._not_closed()
        return self._backend.related(path, k, exclude)

    def add(
        self,
        category: str,
        title: str,
        *,
        summary: str | None = None,
        fields: Mapping[str, str] | None = None,
        body: str | None = None,
        update: bool = False,
        section: str | None = None,
    ) -> WriteResult:
        """Create a note from the vault's template; MEMORY.md and the index follow at once.
        An existing note changes only with ``update`` or ``section``; ``logs`` is the
        day's log, which takes no ``body`` (``ValueError``: ``log`` adds its entries)."""
        self._writable()
        note = NoteRequest(
            category, title, summary, dict(fields) if fields else None, body, update, section
        )
        return self._backend.add(note)

    def log(self, text: str) -> WriteResult:
        """Add a timestamped line to today's log (after the day's last entry)."""
        self._writable()
        return self._backend.log(text)

    def memory_tool(self, command: Mapping[str, Any]) -> str:
        """Run one command of Claude's memory tool (``{"command": "view", "path":
        "/memories"}``, as the Messages API sends it; ``/memories`` is the vault) and
        return its text; a refusal is ``MemoryToolError`` with the tool's error text.
        Writes go to the one writer (the daemon, when one runs) and are compare-and-swap;
        MEMORY.md, links and the index are current when it returns."""
        self._not_closed()
        if not (isinstance(command, Mapping) and command.get("command") == "view"):
            self._writable()
        return self._backend.memory_tool(command)

    def links_check(self) -> list[LinkProblem]:
        """Unresolved, ambiguous and alias-only links, with file and line."""
        self._not_closed()
        return self._backend.links_check()

    def status(self) -> dict[str, Any]:
        """What is indexed, how big MEMORY.md is against its budget, what is stale (and,
        through a daemon, the daemon's own state under ``"daemon"``)."""
        self._not_closed()
        return self._backend.status()

    # -- for the daemon and the tools around it ----------------------------------------

    def pending_vectors(self) -> tuple[int, float | None]:
        """Chunks waiting for their vectors, and since when the oldest has (unix time)."""
        return self.engine.pending_vectors()

    def warm_up(self) -> None:
        """Load the embedding model and open the vector index now, not on first use."""
        self.engine.warm_up()

    def subscribe(self, listener: Callable[[SyncReport], None]) -> None:
        """Call ``listener`` with the report of every sync that changed something."""
        if isinstance(self._backend, TooNewBackend):  # nothing syncs here: none to hear
            return
        self._here().subscribe(listener)

    def unsubscribe(self, listener: Callable[[SyncReport], None]) -> None:
        if isinstance(self._backend, LocalBackend):
            self._backend.engine.unsubscribe(listener)

    def is_ignored(self, rel: str) -> bool:
        """Whether memvault ignores this vault-relative path (dot-folders, conflict copies...)."""
        return self.engine.fs.is_ignored(rel)

    def is_ours(self, rel: str) -> bool:
        """Whether the note at ``rel`` is the very file memvault's last swap there put in
        place, as written (``VaultFS.swapped``); the daemon's watcher drops the events
        of its own swaps by it."""
        return self.engine.fs.swapped(rel)

    def save(self) -> None:
        """Save the vector index if it changed (the daemon does this when idle)."""
        self._here().save()

    def count_tokens(self, text: str) -> int:
        """Word pieces of the embedding model in ``text`` (the unit of every budget)."""
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
    with checking_request():
        since = parse_day(since, "since") if since else None
        until = parse_day(until, "until") if until else None
    return Filters(
        folder=folder.strip("/") if folder else None,
        tags=tuple(t.lstrip("#") for t in tags or () if t),
        since=since,
        until=until,
        where=dict(where) if where else None,
        path=path or None,
    )


__all__ = ["FilterArgs", "Mode", "Vault", "make_filters"]
