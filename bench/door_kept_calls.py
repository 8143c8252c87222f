"""A vault kept open by the door (memvault/door.py) between an agent's calls: the wall
and CPU of each ``"query"`` call, as the MCP server and the memory tool make it, for two
code trees in alternated runs (a ratio in one run, not a remembered number).

    python bench/door_kept_calls.py VAULT CODE_A CODE_B [--runs 3] [--calls 9]

Each run is a fresh process per code (``PYTHONPATH=CODE/daemon``, the hash embedder:
``MEMVAULT_INDEX_MODEL=hash``) that opens a ``VaultDoor`` on VAULT and times: the first
call (the open and its sync, and the watcher started as the vault is kept), the second
(the first kept call), then ``--calls`` calls with nothing changed and ``--calls`` calls
each after one note was appended to (``>>``, no wait before the call). CPU is the
process's (``time.process_time``: the observer's threads too). The vault is written to
(the appended lines and the index): use a copy. Prints JSON lines, then the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

CHILD = r"""
import json, os, sys, time
from pathlib import Path
from memvault.door import VaultDoor
root, calls = Path(sys.argv[1]), int(sys.argv[2])
notes = sorted(p for p in (root / "topics").rglob("*.md"))[:calls] or sorted(root.rglob("*.md"))[:calls]
door = VaultDoor(root, {})
def timed(word):
    w, c = time.perf_counter(), time.process_time()
    hits = door.run(lambda v: [h.path for h in v.search(word, k=10)], "query")
    return time.perf_counter() - w, time.process_time() - c, hits
out = {"first": timed("alpha")[:2], "second": timed("alpha")[:2], "same": [], "edited": []}
for _ in range(calls):
    out["same"].append(timed("alpha")[:2])
for i, path in enumerate(notes):
    word = f"doorbench{os.getpid()}x{i}"
    with path.open("a", encoding="utf-8") as f:
        f.write(f"\n{word}\n")
    wall, cpu, hits = timed(word)
    assert str(path.relative_to(root)) in hits, (word, hits)  # the edit found at once
    out["edited"].append((wall, cpu))
try:  # what starting the watcher alone costs (a code that has one)
    from memvault import door as door_module
    from memvault.service.door_watch import DoorWatch
    vault = door_module._TURNS[root.resolve()].kept[1]
    w, c = time.perf_counter(), time.process_time()
    watch = DoorWatch(vault)
    watch.start()
    out["watch_start"] = (time.perf_counter() - w, time.process_time() - c)
    watch.stop()
except ImportError:
    pass
door.close()
print(json.dumps(out))
"""


def child(vault: str, code: str, calls: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{code}/daemon", "MEMVAULT_INDEX_MODEL": "hash"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, vault, str(calls)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("vault")
    parser.add_argument("codes", nargs=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=9)
    args = parser.parse_args()
    results: dict[str, list[dict[str, Any]]] = {c: [] for c in args.codes}
    for run in range(args.runs):
        for code in args.codes if run % 2 == 0 else reversed(args.codes):
            started = time.perf_counter()
            got = child(args.vault, code, args.calls)
            results[code].append(got)
            print(json.dumps({"run": run, "code": code, "seconds": time.perf_counter() - started}))
    med = statistics.median
    for code, runs in results.items():
        row = {
            "first_call": [med(r["first"][k] for r in runs) for k in (0, 1)],
            "second_call": [med(r["second"][k] for r in runs) for k in (0, 1)],
            "kept_same": [med(x[k] for r in runs for x in r["same"]) for k in (0, 1)],
            "kept_edited": [med(x[k] for r in runs for x in r["edited"]) for k in (0, 1)],
        }
        if all("watch_start" in r for r in runs):
            row["watch_start"] = [med(r["watch_start"][k] for r in runs) for k in (0, 1)]
        print(
            code,
            "(wall s, CPU s medians):",
            json.dumps({k: [round(x, 4) for x in v] for k, v in row.items()}),
        )


if __name__ == "__main__":
    main()
