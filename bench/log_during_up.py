"""A `memvault log` while `memvault up` first indexes a big folder (issue 24 item 8).

Makes NOTES people notes, starts `up` (hash embedder), runs `memvault log` as soon as
the index exists, and says how long the log took, how many notes were indexed when it
returned, and when the first index was done.

    python bench/log_during_up.py [--notes 6000] [--code DIR]   # DIR: a checkout's root
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def indexed(root: Path) -> int:
    with sqlite3.connect(f"file:{root}/.memvault/index.db?mode=ro", uri=True) as db:
        return int(db.execute("SELECT COUNT(*) FROM notes WHERE kind = 'note'").fetchone()[0])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=6000)
    ap.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[1])
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(PYTHONPATH=str(args.code / "daemon"), MEMVAULT_INDEX_MODEL="hash")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "many"
        (root / "people").mkdir(parents=True)
        for i in range(args.notes):
            (root / "people" / f"p{i:05}.md").write_text(
                f"---\ntitle: Person {i}\n---\n# Person {i}\n\nParagraph about topic {i}.\n"
            )
        memvault = [sys.executable, "-m", "memvault"]
        up = subprocess.Popen(
            [*memvault, "up", str(root), "--port", "0"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        started = time.monotonic()
        try:
            while not (root / ".memvault" / "index.db").exists():
                time.sleep(0.02)
            t0 = time.monotonic()
            logged = subprocess.run(
                [*memvault, "log", "x", "--vault", str(root)], env=env, capture_output=True
            )
            took, then = time.monotonic() - t0, indexed(root)
            while indexed(root) < args.notes + 1:
                time.sleep(0.1)
            first = time.monotonic() - started
        finally:
            up.send_signal(signal.SIGTERM)
            up.wait(60)
    print(
        f"log exit {logged.returncode} in {took:.1f} s; {then:,}/{args.notes:,} notes indexed "
        f"when it returned; the structure of the first index done {first:.1f} s after up began"
    )


if __name__ == "__main__":
    main()
