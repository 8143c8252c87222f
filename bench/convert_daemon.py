"""A real daemon converting an older index (no ``auto_vacuum``, its free pages past a
fifth) in its start-up reconcile, while a client asks ``POST /search`` every 0.1 s: how
long each search waited, and when the conversion was done (issue 27, branch perf58).

    python bench/convert_daemon.py CODE VAULT WORKDIR [--noconv]

``VAULT`` (indexed, hash embedder) is copied to ``WORKDIR`` and its index made older by
hand (a VACUUM with ``auto_vacuum`` NONE, then 60 MB of rows written and deleted);
``--noconv`` leaves it as it is (the control: the daemon's first query alone). Prints
one JSON line: the searches, the slowest four (seconds waited, asked at), the first's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path


def make_older(index: Path) -> None:
    conn = sqlite3.connect(index, isolation_level=None)
    try:
        conn.execute("PRAGMA auto_vacuum = NONE")
        conn.execute("VACUUM")
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES(?, ?)",
            [(f"junk {n}", "j" * 4000) for n in range(15000)],
        )
        conn.execute("COMMIT")
        conn.execute("DELETE FROM meta WHERE key LIKE 'junk %'")
    finally:
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("code", type=Path)
    ap.add_argument("vault", type=Path)
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--noconv", action="store_true")
    ap.add_argument("--seconds", type=float, default=25)
    args = ap.parse_args()
    work = args.workdir
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(args.vault, work, symlinks=True)
    index = work / ".memvault" / "index.db"
    if not args.noconv:
        make_older(index)
    env = dict(os.environ, PYTHONPATH=str(args.code / "daemon"), MEMVAULT_INDEX_MODEL="hash")
    sys.path.insert(0, str(args.code / "daemon"))
    from memvault.client import DaemonClient

    started = time.monotonic()
    with open(work.parent / f"{work.name}.log", "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memvault", "daemon", "run", "--vault", str(work)],
            env=env,
            stdout=log,
            stderr=log,
        )
        try:
            client = None
            while client is None and time.monotonic() - started < 60:
                client = DaemonClient.running(work)
                time.sleep(0.05)
            assert client is not None, "no daemon"
            waits: list[tuple[float, float]] = []
            converted = None
            end = time.monotonic() + args.seconds
            while time.monotonic() < end:
                asked = time.monotonic()
                client.search("alpha beta", 5)
                waits.append((round(time.monotonic() - asked, 2), round(asked - started, 2)))
                if converted is None:
                    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as check:
                        if check.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:
                            converted = round(time.monotonic() - started, 2)
                time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(30)
    print(
        json.dumps(
            {
                "code": str(args.code),
                "searches": len(waits),
                "slowest": sorted(waits, reverse=True)[:4],
                "first": waits[0],
                "mode_2_seen_at_s": converted,
            }
        )
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
