"""A careless agent's year, compressed: one note appended to through the memory tool
every turn, measured as it grows (bench/RESULTS.md, "a year of an agent's writes").

    python bench/agent_year.py                      # hash embedder, up to 10,000 lines
    python bench/agent_year.py --lines 100,10000,25000 --model real

For each size the note is written to that many lines (as if appended to so far), the
vault synced, then ``--appends`` memory-tool ``insert`` commands add a line each at its
end, in this process (the engine a daemon runs): per-append wall time (median, p95),
this process's CPU per append, the note's bytes, what status says (``long_notes``) and
the answer's last line.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINE = "- turn {i}: the user asked about deploy window {w} and prefers tabs, ticket PAY-{i}\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", default="100,1000,10000")
    ap.add_argument("--appends", type=int, default=10)
    ap.add_argument("--model", default="hash", help="hash, or real (the bundled model)")
    args = ap.parse_args()
    if args.model == "hash":
        os.environ["MEMVAULT_INDEX_MODEL"] = "hash"
    sys.path.insert(0, str(ROOT / "daemon"))
    from memvault import Vault

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        vault = Vault.open(root, create=True)
        note = root / "notes.md"
        print("lines   bytes      median ms  p95 ms  cpu ms/append  long_notes  answer")
        for n in (int(x) for x in args.lines.split(",")):
            note.write_text(
                "# Notes\n\n" + "".join(LINE.format(i=i, w=i % 97) for i in range(n)),
                encoding="utf-8",
            )
            vault.sync()
            walls, cpu0 = [], time.process_time()
            answer = ""
            for k in range(args.appends):
                t = time.perf_counter()
                answer = vault.memory_tool(
                    {
                        "command": "insert",
                        "path": "/memories/notes.md",
                        "insert_line": n + 2 + k,
                        "insert_text": LINE.format(i=n + k, w=k).rstrip("\n"),
                    }
                )
                walls.append(time.perf_counter() - t)
            cpu = (time.process_time() - cpu0) / args.appends
            walls.sort()
            long = vault.status()["long_notes"]["count"]
            print(
                f"{n:<7} {note.stat().st_size:<10,} {statistics.median(walls) * 1e3:<10.1f} "
                f"{walls[int(len(walls) * 0.95) - 1] * 1e3:<7.1f} {cpu * 1e3:<14.1f} "
                f"{long:<11} {answer.splitlines()[-1][:60]}",
                flush=True,
            )
        vault.close()


if __name__ == "__main__":
    main()
