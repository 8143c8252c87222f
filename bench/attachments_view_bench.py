"""The memory tool's `view` of a folder of many attachments, code against code.

    python bench/attachments_view_bench.py --files 20000 --runs 3 \
        --code main=/work/main/daemon --code branch=daemon

Makes a vault under /tmp with ``imgs/`` holding ``--files`` images and five notes, then,
for each run, each code in turn (alternated) in a process of its own: the vault opened
in-process (hash embedder), synced, and ``view /memories/imgs`` timed 15 times; prints
each process's median and each code's median over the runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ONE = """
import statistics, sys, time
from pathlib import Path
from memvault.api import Vault
from memvault.index.embedder_hash import HashEmbedder
with Vault.open(Path(sys.argv[1]), embedder=HashEmbedder()) as v:
    v.sync()
    ts = []
    for _ in range(15):
        t = time.perf_counter()
        v.memory_tool({"command": "view", "path": "/memories/imgs"})
        ts.append(time.perf_counter() - t)
    print(statistics.median(ts))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--code", action="append", required=True, help="NAME=PYTHONPATH")
    args = parser.parse_args()
    codes = [c.split("=", 1) for c in args.code]
    root = Path(tempfile.mkdtemp(prefix="mt60-attachments-")) / "vault"
    (root / "imgs").mkdir(parents=True)
    (root / ".memvault").mkdir()
    for i in range(args.files):
        (root / "imgs" / f"i{i:05d}.png").write_bytes(b"\x89PNG")
    for i in range(5):
        (root / "imgs" / f"n{i}.md").write_text(f"# N{i}\n", encoding="utf-8")
    seen: dict[str, list[float]] = {name: [] for name, _ in codes}
    for run in range(args.runs):
        for name, path in codes:
            out = subprocess.run(
                [sys.executable, "-c", ONE, str(root)],
                env={"PYTHONPATH": str(Path(path).resolve()), "PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                check=True,
            )
            seen[name].append(float(out.stdout.strip().splitlines()[-1]))
            print(f"run {run + 1} {name}: {seen[name][-1]:.3f} s", flush=True)
    for name, times in seen.items():
        print(f"{name}: median {statistics.median(times):.3f} s over {len(times)} runs")


if __name__ == "__main__":
    main()
