"""A command in a process of its own, no daemon: `memvault search` and `context` on an
indexed vault, the whole process timed (its start, the index opened, the no-op sync it
runs first, the answer).

    python bench/oneshot_bench.py --vault DIR --code base=/tmp/old --code new=. --rounds 3
    python bench/oneshot_bench.py --vault DIR --code main=/tmp/main --code new=. --get decisions/n000001.md

Each code (``NAME=CHECKOUT``, run with ``PYTHONPATH=CHECKOUT/daemon``) runs each command
``--rounds`` times on the vault (``scale_bench.generate`` and a sync, hash embedder; the
codes share it, so they must share its index schema), the codes alternating. Prints
the medians per code (wall, CPU of the process: user + system, its peak RSS), their
ratio to the first code's, and whether every code printed the same answer. ``--get
PATH`` adds `memvault get PATH` (a read that needs no vector).
"""

from __future__ import annotations

import argparse
import os
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


def run(code: Path, vault: Path, argv: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, stdout) of one command in a process of its own."""
    env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash", PYTHONPATH=str(code / "daemon"))
    began = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "memvault", *argv, "--vault", str(vault)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    out = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - began
    if child.returncode:
        raise SystemExit(f"{argv} with {code} exited {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True, help="an indexed vault")
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT (repeatable)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--get", help="a note of the vault: `memvault get` it too")
    args = ap.parse_args()
    commands = dict(COMMANDS)
    if args.get:
        commands["get"] = ["get", args.get, "--json"]
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.code]
    vault = args.vault.resolve()
    times: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    answers: dict[tuple[str, str], set[str]] = {}
    for r in range(args.rounds):
        for name, code in codes if r % 2 == 0 else codes[::-1]:
            for command, argv in commands.items():
                wall, cpu, rss, out = run(code, vault, argv)
                times.setdefault((name, command), []).append((wall, cpu, rss))
                answers.setdefault((name, command), set()).add(out)
                print(
                    f"round {r + 1} {name} {command}: wall {wall:.2f} s, cpu {cpu:.2f} s, "
                    f"rss {rss:.0f} MB",
                    flush=True,
                )
    first = codes[0][0]
    print(
        "\n| command | code | wall (median) | wall / first code | CPU (median) "
        "| CPU / first code | peak RSS | runs |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for command in commands:
        base_wall = statistics.median(w for w, _, _ in times[(first, command)])
        base_cpu = statistics.median(c for _, c, _ in times[(first, command)])
        for name, _ in codes:
            got = times[(name, command)]
            wall = statistics.median(w for w, _, _ in got)
            cpu = statistics.median(c for _, c, _ in got)
            rss = statistics.median(m for _, _, m in got)
            print(
                f"| {command} | {name} | {wall:.2f} s | {wall / base_wall:.2f}x | {cpu:.2f} s "
                f"| {cpu / base_cpu:.2f}x | {rss:.0f} MB | {len(got)} |"
            )
    for command in commands:
        same = len(set.union(*(answers[(n, command)] for n, _ in codes))) == 1
        print(f"{command}: every code and round printed the same answer: {same}")


if __name__ == "__main__":
    main()
