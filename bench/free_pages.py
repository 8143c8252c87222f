"""index.db's free pages (issue 27): what a vault's ``.memvault/`` holds after bulk work,
and what giving the pages back costs.

    # a first sync, a 500-note folder deleted, a folder renamed (hash embedder), by each
    # code; .memvault/'s files and index.db's free pages after each (bench/store_bytes.py)
    python bench/free_pages.py life VAULT --code main=/tmp/old --code branch=. \\
        --delete projects/alpha --rename topics/ops=topics/operations --workdir /tmp/fp

    # the reclaim at scale: a copy of INDEX whose every chunk's text was queued and
    # embedded (a first index's queue, now free pages), given back by the branch's
    # reclaim (incremental_vacuum in steps) against one VACUUM (what an index made
    # without auto_vacuum takes), alternating, median of --runs; a reader and a writer on
    # other connections meanwhile (their longest wait)
    python bench/free_pages.py reclaim INDEX --runs 3 --workdir /tmp/fp

Run with the branch's code on PYTHONPATH; ``life`` runs each code in its own process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import store_bytes

SYNC = """
import json, sys, time
from memvault.api import Vault
t = time.perf_counter()
with Vault.open(sys.argv[1]) as v:
    r = v.sync()
print(json.dumps({"wall": time.perf_counter() - t, "summary": r.summary()}))
"""


def _sync(code: Path, root: Path) -> dict[str, Any]:
    env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash", PYTHONPATH=str(code / "daemon"))
    out = subprocess.run(
        [sys.executable, "-c", SYNC, str(root)], env=env, check=True, capture_output=True
    )
    return dict(json.loads(out.stdout.decode().strip().splitlines()[-1]))


def _state(root: Path) -> dict[str, Any]:
    m = store_bytes.measure(root)
    files = m["files"]
    index = m.get("index.db") or {}
    return {
        "notes_mb": round(m["notes_bytes"] / 1e6, 2),
        "index_db_mb": round(files.get("index.db", 0) / 1e6, 2),
        "free_mb": round(index.get("(free)", 0) / 1e6, 2),
        "wal_mb": round(files.get("index.db-wal", 0) / 1e6, 2),
        "cache_db_mb": round(files.get("cache.db", 0) / 1e6, 2),
        "memvault_mb": round(m["memvault_bytes"] / 1e6, 2),
        "x": m["memvault_x"],
    }


def life(args: argparse.Namespace) -> None:
    for spec in args.code:
        name, code = spec.split("=", 1)
        root = args.workdir / name
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(
            args.vault, root, ignore=shutil.ignore_patterns("*.db", "*.db-*", "*.bin", "lock")
        )
        steps = [("first sync", None)]
        if args.delete:
            steps.append((f"{args.delete} deleted", lambda r: shutil.rmtree(r / args.delete)))
        if args.rename:
            old, new = args.rename.split("=", 1)
            steps.append((f"{old} renamed", lambda r, o=old, n=new: (r / o).rename(r / n)))
        for label, change in steps:
            if change is not None:
                change(root)
            run = _sync(Path(code), root)
            print(json.dumps({"code": name, "step": label, **_state(root), **run}), flush=True)


def _queue_every_chunk(db: Path) -> int:
    """Every chunk's text into the queue, then out: the pages a first index's queue
    leaves free. Returns the free pages."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM pending")
        conn.execute(
            "INSERT INTO pending(label, sha, text, since) SELECT label, sha, text, 0 FROM chunks"
        )
        conn.execute("COMMIT")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM pending")
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    finally:
        conn.close()


class _Others:
    """A reader and a writer on their own connections (as other processes would be),
    each asking every 20 ms; their longest wait."""

    def __init__(self, db: Path) -> None:
        self.db, self.stop = db, threading.Event()
        self.waits: dict[str, float] = {"reader": 0.0, "writer": 0.0}
        self.threads = [threading.Thread(target=self._run, args=(k,)) for k in self.waits]

    def _run(self, kind: str) -> None:
        conn = sqlite3.connect(self.db, isolation_level=None, timeout=600)
        try:
            while not self.stop.is_set():
                t = time.perf_counter()
                if kind == "reader":
                    conn.execute("SELECT COUNT(*) FROM notes WHERE path >= 'p'").fetchone()
                else:
                    conn.execute("BEGIN IMMEDIATE")
                    conn.execute("COMMIT")
                self.waits[kind] = max(self.waits[kind], time.perf_counter() - t)
                time.sleep(0.02)
        finally:
            conn.close()

    def __enter__(self) -> _Others:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join()


def _one(start: Path, work: Path, how: str) -> dict[str, float]:
    from memvault.index.store import Store

    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(start, work)
    store = Store(work, work.with_name("cache.db"), trusting=True)
    try:
        with _Others(work) as others:
            cpu, t = time.process_time(), time.perf_counter()
            if how == "reclaim":
                store.reclaim()
            else:
                with store._lock:
                    store._db.execute("VACUUM")
            wall, cpu = time.perf_counter() - t, time.process_time() - cpu
        wal = Path(f"{work}-wal").stat().st_size
    finally:
        store.close()
    return {
        "wall": wall,
        "cpu": cpu,
        "reader_wait": others.waits["reader"],
        "writer_wait": others.waits["writer"],
        "wal_mb": wal / 1e6,
        "file_mb": work.stat().st_size / 1e6,
    }


def reclaim(args: argparse.Namespace) -> None:
    args.workdir.mkdir(parents=True, exist_ok=True)
    start = args.workdir / "start.db"
    src = sqlite3.connect(f"file:{args.index}?mode=ro", uri=True)
    dst = sqlite3.connect(start)
    src.backup(dst)  # the index as it is, its WAL included
    src.close()
    dst.close()
    from memvault.index.store import Store

    Store(start, args.workdir / "cache.db").close()  # upgraded to this code's schema once
    free = _queue_every_chunk(start)
    print(json.dumps({"start_mb": start.stat().st_size / 1e6, "free_mb": free * 4096 / 1e6}))
    runs: dict[str, list[dict[str, float]]] = {"reclaim": [], "VACUUM": []}
    for _ in range(args.runs):
        for how in runs:
            r = _one(start, args.workdir / "index.db", how)
            runs[how].append(r)
            print(json.dumps({"how": how, **{k: round(v, 3) for k, v in r.items()}}), flush=True)
    for how, rs in runs.items():
        med = {k: round(statistics.median(r[k] for r in rs), 3) for k in rs[0]}
        print(json.dumps({"median": how, **med}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("life")
    a.add_argument("vault", type=Path)
    a.add_argument("--code", action="append", required=True, help="NAME=PATH (holds daemon/)")
    a.add_argument("--delete", help="a folder of the vault deleted after the first sync")
    a.add_argument("--rename", help="OLD=NEW, a folder renamed after that")
    a.add_argument("--workdir", type=Path, required=True)
    b = sub.add_parser("reclaim")
    b.add_argument("index", type=Path)
    b.add_argument("--runs", type=int, default=3)
    b.add_argument("--workdir", type=Path, required=True)
    args = ap.parse_args()
    life(args) if args.cmd == "life" else reclaim(args)


if __name__ == "__main__":
    main()
