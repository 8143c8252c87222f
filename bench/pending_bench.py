"""The vector lane's bookkeeping: pending_state() with N chunks queued, old query vs new.

    python bench/pending_bench.py            # 40k and 170k pending (the issue's range)

Both on the same index.db: the old statement (``SELECT COUNT(*), MIN(since) FROM
pending`` scanning the queue, texts and all: ``NOT INDEXED``) and today's
``Store.pending_state()`` (the count kept by triggers, the oldest through the index
on ``since``). Medians of 20 calls.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from memvault.index.store import Store  # noqa: E402

OLD = "SELECT COUNT(*), MIN(since) FROM pending NOT INDEXED"  # what pending_state ran


def median_ms(fn, runs: int = 20) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    rng = random.Random(1)
    for n in (40_000, 170_000):
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "index.db", Path(tmp) / "cache.db")
            text = " ".join(f"w{rng.randrange(5000)}" for _ in range(180))  # ~1 KB, as a chunk
            with store.transaction() as conn:
                store.add_pending(conn, ((i, f"{i:064x}", text) for i in range(1, n + 1)), 1.0)
            old = median_ms(lambda db=store._db: db.execute(OLD).fetchone())
            new = median_ms(store.pending_state)
            assert store.pending_state()[0] == n
            print(f"{n} pending: old {old:.1f} ms, new {new:.3f} ms, {old / new:.0f}x")
            store.close()


if __name__ == "__main__":
    main()
