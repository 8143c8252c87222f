"""How a vault stands: what is indexed, MEMORY.md against its budget, links, what is
stale. ``describe`` reads and never writes; the engine hands it what it needs."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from memvault.config import VaultConfig
from memvault.core.changes import Seen, suspects
from memvault.core.report import LinkProblem
from memvault.errors import MemvaultError
from memvault.index.store import Store
from memvault.vault.files import VaultFS
from memvault.vault.state import load_decisions

STATE_FILES = ("index.db", "index.db-wal", "cache.db", "cache.db-wal", "vectors.bin")


def describe(
    config: VaultConfig,
    fs: VaultFS,
    store: Store,
    count_tokens: Callable[[str], int],
    problems: Sequence[LinkProblem],
    last_sync_at: float | None,
) -> dict[str, Any]:
    """The status dict that ``memvault status``, ``/status`` and MCP report."""
    scan = fs.scan()
    known = store.manifest()
    seen = {p: Seen(s.size, s.mtime_ns) for p, s in scan.notes.items()}
    pending = suspects(known, seen) + sorted(set(known) - set(seen))
    # moves whose links a killed sync had not finished re-targeting (the next sync does)
    relinking = store.pending_relink()
    counts = store.counts()
    last = store.meta("last_sync")
    model = store.meta("model_id")
    state = config.state_dir
    size = sum((state / n).stat().st_size for n in STATE_FILES if (state / n).exists())
    return {
        "vault": str(config.root),
        "notes": counts["notes"],
        "folders": store.folder_counts(),
        "skipped": counts["skipped"],
        "memory": _memory(config, store, count_tokens),
        "links": {
            "unresolved": sum(1 for p in problems if p.verdict == "unresolved"),
            "ambiguous": sum(1 for p in problems if p.verdict == "ambiguous"),
            "alias_only": sum(1 for p in problems if p.verdict == "alias"),
            "missing_anchor": sum(1 for p in problems if p.verdict == "anchor"),
        },
        "index": {
            "chunks": counts["chunks"],
            "embedded": store.cache_count(model) if model else 0,
            "model": model,
            "size_bytes": size,
            "matches_disk": not pending and not relinking,
            "relink_pending": len(relinking),
            "pending": pending[:50],
            "pending_count": len(pending),
        },
        "last_sync": json.loads(last) if last else None,
        # when a sync last ran (this process), and when one last changed something
        "last_sync_at": last_sync_at or float(store.meta("last_sync_at") or 0) or None,
        "last_change_at": float(store.meta("last_sync_at") or 0) or None,
    }


def _memory(
    config: VaultConfig, store: Store, count_tokens: Callable[[str], int]
) -> dict[str, Any]:
    cfg = config.memory
    path = config.root / cfg.file
    memory: dict[str, Any] = {"file": cfg.file, "exists": path.is_file()}
    if path.is_file():
        text = path.read_text(encoding="utf-8-sig", errors="replace")
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        try:
            tokens: int | None = count_tokens(text)
        except MemvaultError:
            tokens = None  # the configured model's tokenizer is not available
        memory.update(
            lines=lines,
            tokens=tokens,
            max_lines=cfg.max_lines,
            max_tokens=cfg.max_tokens,
            over_budget=lines > cfg.max_lines or (tokens or 0) > cfg.max_tokens,
        )
    memory["sections_missing"] = json.loads(store.meta("sections_missing") or "[]")
    decisions = load_decisions(config.state_dir)
    memory["hidden"] = {k: list(v) for k, v in decisions.hidden.items()} if decisions else {}
    return memory
