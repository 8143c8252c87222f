"""What waits while an older index.db (made without ``auto_vacuum``) is converted by its
one ``VACUUM`` (``PendingQueue._converted``): a search in the same process (the store's
lock, as the daemon's searches take it) and a command in another process opening the
index as a reader (``Store(trusting=True)`` and a read, every 0.2 s).

    PYTHONPATH=daemon python bench/convert_wait.py --kept-mb 240 --free-mb 120 \\
        --workdir /tmp/cw

Builds the index in ``--workdir`` (``--kept-mb`` of rows kept, ``--free-mb`` of queue
texts taken off: free pages), then converts it, printing the figures as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from memvault.index.store import Store


def build(d: Path, kept_mb: int, free_mb: int) -> None:
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    Store(d / "index.db", d / "cache.db").close()
    conn = sqlite3.connect(d / "index.db", isolation_level=None)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO meta(key, value) VALUES(?, ?)",
        [(f"kept {n}", f"v{n} " * 200) for n in range(kept_mb * 800)],
    )
    conn.execute("COMMIT")
    conn.execute("PRAGMA auto_vacuum = NONE")
    conn.execute("VACUUM")  # as an older memvault made it
    conn.close()
    store = Store(d / "index.db", d / "cache.db")
    with store.transaction() as c:
        texts = ((n, f"{n:064x}", f"text {n} " * 800) for n in range(1, free_mb * 150))
        store.add_pending(c, texts, 1.0)
    with store.transaction() as c:
        c.execute("DELETE FROM pending")
    store.close()


def reader(d: Path, seconds: float) -> None:
    end, worst, opens, errors = time.time() + seconds, 0.0, 0, []
    while time.time() < end:
        t = time.monotonic()
        try:
            s = Store(
                d / "index.db", d / "cache.db", trusting=True, upgrade_lock=contextlib.nullcontext
            )
            assert (s.meta("kept 5") or "").startswith("v5 ")
            s.close()
        except Exception as exc:  # what a reader would be told
            errors.append(repr(exc))
        worst, opens = max(worst, time.monotonic() - t), opens + 1
        time.sleep(0.2)
    print(json.dumps({"opens": opens, "worst_s": round(worst, 2), "errors": errors[:3]}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kept-mb", type=int, default=240)
    ap.add_argument("--free-mb", type=int, default=120)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--reader", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.reader:
        return reader(args.reader, 30)
    d = args.workdir / "index"
    build(d, args.kept_mb, args.free_mb)
    size = os.path.getsize(d / "index.db")
    other = subprocess.Popen(
        [sys.executable, __file__, "--workdir", str(args.workdir), "--reader", str(d)],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(1)
    store, waits = Store(d / "index.db", d / "cache.db"), []

    def search() -> None:
        for _ in range(100):
            t = time.monotonic()
            with store._lock:
                store._db.execute("SELECT value FROM meta WHERE key = 'kept 7'").fetchone()
            waits.append(time.monotonic() - t)
            time.sleep(0.1)

    beside = threading.Thread(target=search)
    beside.start()
    t = time.monotonic()
    given = store.reclaim()
    took = time.monotonic() - t
    beside.join()
    store.close()
    out, _ = other.communicate()
    print(
        json.dumps(
            {
                "index_mb_before": size >> 20,
                "index_mb_after": os.path.getsize(d / "index.db") >> 20,
                "pages_given": given,
                "vacuum_s": round(took, 2),
                "search_in_process_longest_wait_s": round(max(waits), 2),
                "reader_process": json.loads(out.strip().splitlines()[-1]),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
