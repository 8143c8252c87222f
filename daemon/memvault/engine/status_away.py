"""How a vault stands while its index does not answer: the PostgreSQL server stopped or
restarting, the network stalled (docs/TEAM.md, "Faults"). What the files say (notes on
disk, MEMORY.md against its budget), where the index lives and why it does not answer;
a daemon adds what it does meanwhile (its retries, the changes that wait, when it last
synced). A field test's ``memvault status`` during an outage printed the error alone
and exited 6 through the daemon (HTTP 503), 7 without one: nothing of what the daemon
was doing, that it would retry, or what it had indexed.

The dict has the keys ``describe`` gives (a program reading ``/status`` finds each one),
``None`` where only the index knows (chunks, links), and ``index.unreachable``: why. The
same for a team's index a newer memvault writes (``index.too_new``): its tables are not
read here, and status names the versions instead of refusing as every read does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memvault.config import VaultConfig
from memvault.core.results import LinkProblem
from memvault.engine.status import SKIPPED_LISTED, describe, memory_file
from memvault.errors import IndexTooNew, IndexUnavailable, MemvaultError
from memvault.index.seam import recently_away
from memvault.index.store import Store
from memvault.vault.files import Scan, VaultFS


def describe_or_away(
    config: VaultConfig,
    fs: VaultFS,
    store: Store,
    count_tokens: Callable[[str], int],
    link_problems: Callable[[Scan, frozenset[str]], Sequence[LinkProblem]],
    last_sync_at: float | None,
) -> dict[str, Any]:
    """``status.describe``; while the index's server does not answer, ``describe_away``
    (the rest of the store's errors, a table dropped by hand, are raised as before)."""
    where = where_away(config, writer=not getattr(store, "read_only", True))
    away = recently_away(store)  # not asked again behind calls that wait out a stall
    if away is not None:
        return describe_away(config, fs, count_tokens, where, away, last_sync_at)
    try:
        return describe(config, fs, store, count_tokens, link_problems, last_sync_at)
    except IndexUnavailable as exc:
        return describe_away(config, fs, count_tokens, where, str(exc), last_sync_at)
    except IndexTooNew as exc:  # its writer upgraded past this memvault
        return describe_away(config, fs, count_tokens, where, exc, last_sync_at)


def describe_away(
    config: VaultConfig,
    fs: VaultFS,
    count_tokens: Callable[[str], int],
    where: dict[str, Any],
    error: str | IndexTooNew,
    last_sync_at: float | None,
) -> dict[str, Any]:
    """The status dict of a vault whose index does not answer: ``error`` says why,
    ``where`` where it lives (``where_away``). An ``IndexTooNew``: the index answers, but
    a newer memvault writes it, whose tables this one does not read (``index.too_new``:
    the message, the index's schema version and this memvault's; ``unreachable`` None)."""
    newer = error if isinstance(error, IndexTooNew) else None
    scan = fs.scan()
    folders = Counter(p.split("/", 1)[0] if "/" in p else "(root)" for p in scan.notes)
    skipped = [{"path": s.path, "reason": s.reason} for s in scan.skipped]
    memory = memory_file(config, count_tokens)
    memory.update(kept_out=[], hidden_before=[])  # the index keeps these
    return {
        "vault": str(config.root),
        "notes": len(scan.notes),  # on disk: the index's count is not known
        "folders": dict(sorted(folders.items())),
        "ignored": dict(sorted((scan.ignored or {}).items())),
        "ignore_patterns": list(config.vault.ignore),
        "skipped": len(skipped),
        "skipped_files": skipped[:SKIPPED_LISTED],
        "problems": [],  # kept in the index
        "memory": memory,
        "links": {
            "unresolved": None,
            "ambiguous": None,
            "alias_only": None,
            "missing_anchor": None,
            "unchecked": None,
        },
        "index": {
            "unreachable": None if newer else error,
            **(
                {"too_new": {"error": str(newer), "version": newer.version, "ours": newer.ours}}
                if newer
                else {}
            ),
            "chunks": None,
            "embedded": None,
            "model": None,
            "size_bytes": 0,
            "matches_disk": None,
            "relink_pending": 0,
            "relink_waiting": [],
            "pending": [],
            "pending_count": None,
            "vectors_pending": None,
            "where": where,
        },
        "last_sync": None,
        "last_sync_at": last_sync_at,  # this process's last sync that went through
        "last_change_at": None,
    }


def where_away(config: VaultConfig, writer: bool) -> dict[str, Any]:
    """Where an index that does not answer lives (never the password), and this
    process's part: ``writer`` (it holds, or takes again, the lock) or ``reader``."""
    from memvault.index.pg_conn import redact
    from memvault.index.seam import pg_schema_of

    return {
        "store": "postgres",
        "dsn": redact(config.index.dsn),
        "schema": pg_schema_of(config),
        "role": "writer" if writer else "reader",
        "writer": None,  # the server would say
    }


def unopened_status(root: Path | VaultConfig, error: MemvaultError) -> dict[str, Any]:
    """``status`` of a vault opened by no process here (no daemon) whose index does not
    answer (or is a newer memvault's, ``IndexTooNew``): what the files say, and why the
    index is not read."""

    def no_tokenizer(text: str) -> int:
        raise MemvaultError("the model's tokenizer is not loaded for this")

    config = VaultConfig.load(root) if isinstance(root, Path) else root
    v = config.vault
    fs = VaultFS(config.root, v.ignore, v.max_note_bytes, quiet_ms=v.quiet_ms)
    why = error if isinstance(error, IndexTooNew) else str(error)
    return describe_away(config, fs, no_tokenizer, where_away(config, False), why, None)


__all__ = ["describe_away", "describe_or_away", "unopened_status", "where_away"]
