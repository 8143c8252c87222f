"""What a ``get`` costs on a vault kept open (a daemon, the MCP server's kept vault) when
it names no note (an agent's guess: ``ana`` for ``people/ana-pérez.md``), or a note by
its title, against a ``get`` of a path, for the code of each ``--code`` checkout, the
checkouts alternating in one session (each in a process of its own, on the same vault).

    MEMVAULT_INDEX_MODEL=hash python bench/get_miss.py VAULT --code base=/tmp/base \\
        --code main=. [--rounds 3] [--calls 7]

Each round and code: a fresh process opens the vault once (``mode="read"``), reads one
note (the rows read), then times ``--calls`` gets of each kind; the median of each is
printed, and the medians over the rounds at the end. Nothing in the vault is written
but what a read's sync writes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

PROBE = r"""
import json, statistics, sys, time
from memvault.api import Vault
from memvault.errors import NoteNotFound
calls = int(sys.argv[2])
with Vault.open(sys.argv[1], mode="read") as v:
    hit = v.search("project")[0]
    v.get(hit.path)
    title = v.get(hit.path).title
    def timed(op):
        out = []
        for _ in range(calls):
            t = time.perf_counter()
            try:
                op()
            except NoteNotFound:
                pass
            out.append(time.perf_counter() - t)
        return out
    first = timed(lambda: v.get("zzqx"))[0]  # the first miss: what it builds, if anything
    print(json.dumps({
        "first miss": first,
        "miss": statistics.median(timed(lambda: v.get("zzqx"))),
        "miss, a word some names start with": statistics.median(timed(lambda: v.get("n0007"))),
        "by title": statistics.median(timed(lambda: v.get(title))),
        "by path": statistics.median(timed(lambda: v.get(hit.path))),
    }))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--code", action="append", required=True, help="NAME=CHECKOUT")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=7)
    a = ap.parse_args()
    codes = dict(c.split("=", 1) for c in a.code)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in codes}
    for round_ in range(a.rounds):
        for name, checkout in codes.items():
            env = {**os.environ, "PYTHONPATH": str(Path(checkout).resolve() / "daemon")}
            done = subprocess.run(
                [sys.executable, "-c", PROBE, str(a.vault), str(a.calls)],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
            row = json.loads(done.stdout)
            results[name].append(row)
            said = ", ".join(f"{k} {v * 1000:.1f}" for k, v in row.items())
            print(f"round {round_ + 1}, {name}: {said} (ms)")
    for name, rows in results.items():
        said = ", ".join(f"{k} {statistics.median(r[k] for r in rows) * 1000:.1f}" for k in rows[0])
        print(f"{name}, medians of {a.rounds} rounds: {said} (ms)")


if __name__ == "__main__":
    main()
