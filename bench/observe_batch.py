"""A watcher's batch looked at (``engine.observe``): N notes of one folder saved and N
named that are gone, timed per code, on ext4 (``--where``: the folder the vaults are
made in; an exFAT mount there times a disk that folds case).

    python bench/observe_batch.py --notes 3000 --code base=/tmp/base --code new=.

Each code (``NAME=CHECKOUT``, run with ``PYTHONPATH=CHECKOUT/daemon``) indexes its own
vault of N tiny notes in ``people/`` (hash embedder), then, in that process, times
``observe`` of the 2N paths (``--calls`` calls after one to warm), the codes alternating
round by round. Prints the medians per code (wall and CPU seconds) and their ratio to
the first code.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
from memvault.api import Vault
from memvault.engine.observe import observe
v = Vault.open(sys.argv[1], create=True)
n = int(sys.argv[3])
if sys.argv[2] == "index":
    v.sync()
    sys.exit(0)
e = v.engine
paths = [f"people/n{i:06}.md" for i in range(n)] + [f"people/gone{i:06}.md" for i in range(n)]
observe(e.fs, e.store, e.attachments, paths)
out = []
for _ in range(int(sys.argv[2])):
    t, c = time.perf_counter(), time.process_time()
    observe(e.fs, e.store, e.attachments, paths)
    out.append((time.perf_counter() - t, time.process_time() - c))
v.close()
print(json.dumps(out))
"""


def run(code: Path, vault: Path, arg: str, n: int) -> str:
    env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash", PYTHONPATH=str(code / "daemon"))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(vault), arg, str(n)],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        sys.exit(done.stderr)
    return done.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=3000)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--where", default=None)
    ap.add_argument("--code", action="append", required=True)
    a = ap.parse_args()
    codes = [(n, Path(p).resolve()) for n, p in (c.split("=", 1) for c in a.code)]
    base = Path(tempfile.mkdtemp(prefix="observe-bench-", dir=a.where))
    vaults = {}
    for name, code in codes:
        root = vaults[name] = base / f"vault{name.capitalize()}"
        (root / "people").mkdir(parents=True)
        for i in range(a.notes):
            (root / "people" / f"n{i:06}.md").write_text(f"# Note {i}\n\nabout {i}.\n")
        run(code, root, "index", a.notes)
    times: dict[str, list[tuple[float, float]]] = {n: [] for n, _ in codes}
    for _ in range(a.rounds):
        for name, code in codes:
            times[name] += json.loads(run(code, vaults[name], str(a.calls), a.notes))
    first = None
    for name, _ in codes:
        wall = statistics.median(t for t, _ in times[name])
        cpu = statistics.median(c for _, c in times[name])
        first = first or (wall, cpu)
        print(
            f"{name}: observe of {2 * a.notes} paths: wall {wall * 1000:.1f} ms "
            f"({wall / first[0]:.2f}x), cpu {cpu * 1000:.1f} ms ({cpu / first[1]:.2f}x)"
        )


if __name__ == "__main__":
    main()
