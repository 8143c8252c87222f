"""One memory interface for every adapter, and the one place that decides where a
call goes.

``Memory`` is what the CLI and the MCP server may ask of a vault; both ``Vault``
(the vault opened in this process) and ``DaemonClient`` (a running daemon)
satisfy it, and ``tests/test_memory.py`` fails if their signatures drift apart.

``open_memory(root, mode)`` picks one:

- a daemon serves the vault (``runfile.running``: it holds the writer lock): a
  ``"write"`` always goes to it, however busy it is — it is the one writer, and
  an in-process writer could only fail on its lock; a read goes to it when it
  answers ``/health`` within ``ANSWER_TIMEOUT`` (its model is loaded), else the
  index is read here as it is (read-only);
- otherwise the vault is opened here. ``"write"`` takes the writer lock, waiting (bounded,
  saying so) for another short-lived writer to let go (then ``LockHeld``). ``"read"``
  takes it too when it is free and syncs first, so answers are true to the files; when another process holds it, the
  index is read as it is (read-only). ``"peek"`` reads the index as it is,
  without the lock and without a sync (``status``). A vault that was never
  indexed is only ever peeked at by a read: nothing is written into it (``get``
  and the link check read the files; ``search`` and ``context`` say that it is
  not indexed yet).

The sync here is the structure lane only (DESIGN.md, "Two lanes"): MEMORY.md,
links and keyword search are current, and the model is never loaded for it.
New chunks' vectors stay pending — searched by keywords meanwhile, marked
``pending`` in hits — until ``memvault sync`` or a daemon embeds them; a
``"query"`` (which loads the model for its own vector anyway) first embeds a
few pending chunks itself (``QUERY_CATCH_UP``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from memvault.core.report import Context, Hit, NoteText, SyncReport, WriteResult

if TYPE_CHECKING:
    from memvault.index.embedder import Embedder

Mode = Literal["query", "read", "write", "peek"]
# A query (search, context) opened here embeds this many pending chunks at most before
# it answers — a note just written by `memvault add` is then found by meaning (a second
# or less); more than that (a migration's thousands) is left to `memvault sync` or a
# daemon, and the query answers from keywords for those, marking them ``pending``.
QUERY_CATCH_UP = 64


class Memory(Protocol):
    """The operations an adapter uses, with ``Vault``'s names and result types."""

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
    ) -> list[Hit]: ...

    def context(self, query: str, budget: int | None = None, **filters: Any) -> Context: ...

    def get(self, path: str, lines: str | None = None, heading: str | None = None) -> NoteText: ...

    def related(self, path: str, k: int = 10, exclude: Sequence[str] = ()) -> list[Hit]: ...

    def add(
        self,
        category: str,
        title: str,
        *,
        summary: str | None = None,
        fields: Mapping[str, str] | None = None,
        body: str | None = None,
        update: bool = False,
    ) -> WriteResult: ...

    def log(self, text: str) -> WriteResult: ...

    def status(self) -> dict[str, Any]: ...

    def sync(self, paths: Iterable[str] | None = None) -> SyncReport: ...

    def close(self) -> None: ...


@contextmanager
def open_memory(
    root: Path,
    mode: Mode = "read",
    *,
    embedder: Callable[[], Embedder] | None = None,
    progress: Callable[[Any], None] | None = None,
) -> Iterator[Memory]:
    """The running daemon's client, or the vault opened in this process (module doc).

    ``embedder`` gives the model to use in this process — called only for a
    ``"query"`` when no daemon serves the vault — so a long-lived caller (the MCP
    server) loads it once for many calls; ``progress`` sees the sync run first.
    """
    from memvault.client import ANSWER_TIMEOUT, DaemonClient

    client = DaemonClient.running(root)
    if client is not None and (mode == "write" or client.healthy(ANSWER_TIMEOUT)):
        with client:
            yield client
        return

    from memvault.api import Vault
    from memvault.config import STATE_DIR
    from memvault.errors import LockHeld

    # A vault never indexed is read as it is: a read creates no index (nor .memvault/).
    # A daemon that does not answer a read: read here, never competing for its lock.
    never_indexed = not (root / STATE_DIR / "index.db").exists()
    writable = client is None and (
        mode == "write" or (mode in ("read", "query") and not never_indexed)
    )
    model = embedder() if embedder is not None and mode == "query" else None  # others: no model
    try:
        # a write waits (bounded) for another short-lived writer; a read reads as it is
        wait = None if mode == "write" else 0.0
        vault = Vault.open(root, read_only=not writable, embedder=model, wait=wait)
    except LockHeld:
        if mode == "write":
            raise
        writable = False
        vault = Vault.open(root, read_only=True, embedder=model)
    if vault.daemon is not None:  # a daemon started meanwhile: it serves the calls
        vault.close()
        with vault.daemon as started:
            yield started
        return
    with vault:
        if writable:  # the structure only: MEMORY.md, links, keyword search; never the model
            vault.sync(progress=progress, vectors=False)
            if mode == "query" and 0 < vault.pending_vectors()[0] <= QUERY_CATCH_UP:
                vault.embed_pending()
        yield vault


__all__ = ["QUERY_CATCH_UP", "Memory", "Mode", "open_memory"]
