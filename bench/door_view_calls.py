"""Claude's memory tool's ``view`` on a vault the door keeps (memvault/door.py): the wall
and CPU of each of a session's first views, for code trees in alternated runs (a ratio
in one run, not a remembered number).

    python bench/door_view_calls.py VAULT CODE [CODE ...] [--runs 3] [--views 4]

Each run is a fresh process per code (``PYTHONPATH=CODE/daemon``, the hash embedder)
making a ``VaultMemoryTool`` on VAULT and timing ``--views`` views of ``/memories``
(the first opens the vault). The vault's index is written to: use a copy. Prints JSON
lines, then each view's medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
from memvault.integrations.anthropic import VaultMemoryTool
tool, out = VaultMemoryTool(sys.argv[1]), []
for _ in range(int(sys.argv[2])):
    w, c = time.perf_counter(), time.process_time()
    tool.call({"command": "view", "path": "/memories"})
    out.append((time.perf_counter() - w, time.process_time() - c))
tool.close()
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("vault")
    parser.add_argument("codes", nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--views", type=int, default=4)
    args = parser.parse_args()
    results: dict[str, list[list[list[float]]]] = {c: [] for c in args.codes}
    for run in range(args.runs):
        for code in args.codes if run % 2 == 0 else reversed(args.codes):
            env = {**os.environ, "PYTHONPATH": f"{code}/daemon", "MEMVAULT_INDEX_MODEL": "hash"}
            done = subprocess.run(
                [sys.executable, "-c", CHILD, args.vault, str(args.views)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            got = json.loads(done.stdout.strip().splitlines()[-1])
            results[code].append(got)
            print(json.dumps({"run": run, "code": code, "views": got}))
    for code, runs in results.items():
        views = [
            [round(statistics.median(r[i][k] for r in runs), 3) for k in (0, 1)]
            for i in range(args.views)
        ]
        print(code, "each view (wall s, CPU s medians):", json.dumps(views))


if __name__ == "__main__":
    main()
