"""The steps of the no-op structure sync a read with no daemon runs first, timed in
one process: each open of the vault for a read (``open_backend(..., "read")``) syncs,
and the sync's steps are wrapped with a timer (for measuring only).

    MEMVAULT_INDEX_MODEL=hash PYTHONPATH=CODE/daemon python bench/sync_steps.py VAULT 5

Prints each step's median over the opens (observe: the scan; manifest: the index's
rows; compared: the change set) and the whole open's.
"""

from __future__ import annotations

import collections
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import memvault.engine.engine as engine_module
from memvault.backends import open_backend
from memvault.config import VaultConfig
from memvault.index.store import Store

TIMES: dict[str, list[float]] = collections.defaultdict(list)


def timed(owner: Any, name: str) -> None:
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            TIMES[name].append(time.perf_counter() - start)

    setattr(owner, name, wrapper)


def main() -> None:
    root, opens = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 5
    for name in ("observe", "to_hash", "compared"):
        timed(engine_module, name)
    timed(Store, "manifest")
    timed(engine_module.Engine, "sync")
    for _ in range(opens):
        config = VaultConfig.load(root)
        start = time.perf_counter()
        open_backend(config, "read", through_daemon=False).close()
        TIMES["open"].append(time.perf_counter() - start)
    for name, times in TIMES.items():
        print(f"{name:10s} median {statistics.median(times):.3f} s  ({len(times)})")


if __name__ == "__main__":
    main()
