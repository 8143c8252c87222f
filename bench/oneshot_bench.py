"""A command in a process of its own, no daemon: `memvault search` and `context` on an
indexed vault, the whole process timed (its start, the index opened, the no-op sync it
runs first, the answer).

    python bench/oneshot_bench.py --vault DIR --code base=/tmp/old --code new=. --rounds 3

Each code (``NAME=CHECKOUT``, run with ``PYTHONPATH=CHECKOUT/daemon``) runs each command
``--rounds`` times on the vault (``scale_bench.generate`` and a sync, hash embedder; the
codes share it, so they must share its index schema), the codes alternating. Prints
the medians per code (wall, CPU of the process: user + system), their ratio to the
first code's, and whether every code printed the same answer.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = {
    "search": ["search", "budget planning for the ferry", "--k", "10", "--json"],
    "context": [
        "context",
        "What was decided about the ferry budget?",
        "--budget",
        "1000",
        "--json",
    ],
}


def run(code: Path, vault: Path, argv: list[str]) -> tuple[float, float, str]:
    env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash", PYTHONPATH=str(code / "daemon"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memvault", *argv, "--vault", str(vault)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True, help="an indexed vault")
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT (repeatable)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.code]
    vault = args.vault.resolve()
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    answers: dict[tuple[str, str], set[str]] = {}
    for r in range(args.rounds):
        for name, code in codes if r % 2 == 0 else codes[::-1]:
            for command, argv in COMMANDS.items():
                wall, cpu, out = run(code, vault, argv)
                times.setdefault((name, command), []).append((wall, cpu))
                answers.setdefault((name, command), set()).add(out)
                print(
                    f"round {r + 1} {name} {command}: wall {wall:.2f} s, cpu {cpu:.2f} s",
                    flush=True,
                )
    first = codes[0][0]
    print("\n| command | code | wall (median) | CPU (median) | CPU / first code | runs |")
    print("|---|---|---|---|---|---|")
    for command in COMMANDS:
        base_cpu = statistics.median(c for _, c in times[(first, command)])
        for name, _ in codes:
            got = times[(name, command)]
            wall = statistics.median(w for w, _ in got)
            cpu = statistics.median(c for _, c in got)
            print(
                f"| {command} | {name} | {wall:.2f} s | {cpu:.2f} s | {cpu / base_cpu:.2f}x | {len(got)} |"
            )
    for command in COMMANDS:
        same = len(set.union(*(answers[(n, command)] for n, _ in codes))) == 1
        print(f"{command}: every code and round printed the same answer: {same}")


if __name__ == "__main__":
    main()
