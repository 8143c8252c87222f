"""What a write costs when MEMORY.md holds an agent's own long index (field test 57).

Claude Code's auto memory keeps its index in MEMORY.md, one line a topic outside
memvault's markers (``- [Topic 7](topic-7.md) — hook``). A write that adds a line to
one of memvault's sections above them moves every one of those links to another line.
This builds a vault whose MEMORY.md has ``--lines`` such lines, indexes it once (hash
embedder), then runs ``memvault add projects ...`` (no daemon: a process each) ``--runs``
times for this checkout's code and for ``--baseline`` (default /work/main), alternately,
each on its own copy of the vault, and prints the median wall and CPU time of each.

    python bench/agent_index_write.py --lines 20000 --runs 5
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def run(code: Path, vault: Path, *args: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``python -m memvault`` process on ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code / "daemon"), "MEMVAULT_INDEX_MODEL": "hash"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "memvault", *args, "--vault", str(vault)],
        env=env,
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", type=Path, default=Path("/work/main"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="agent-index-") as tmp:
        seed = Path(tmp) / "seed"
        env = {**os.environ, "PYTHONPATH": str(HERE / "daemon"), "MEMVAULT_INDEX_MODEL": "hash"}
        subprocess.run(
            [sys.executable, "-m", "memvault", "init", str(seed)],
            env=env,
            check=True,
            capture_output=True,
        )
        memory = seed / "MEMORY.md"
        lines = "".join(f"- [Topic {i}](topic-{i}.md) — lesson {i}\n" for i in range(a.lines))
        memory.write_text(memory.read_text(encoding="utf-8") + "\n## Agent\n" + lines, "utf-8")
        codes = {"this": HERE, "baseline": a.baseline}
        vaults = {}
        for name, code in codes.items():
            vaults[name] = Path(tmp) / name
            shutil.copytree(seed, vaults[name])
            run(code, vaults[name], "sync")
        got: dict[str, list[tuple[float, float]]] = {name: [] for name in codes}
        for i in range(a.runs):
            for name, code in codes.items():
                got[name].append(
                    run(code, vaults[name], "add", "projects", f"P{i}", "--summary", "s")
                )
        for name, rows in got.items():
            wall = statistics.median(w for w, _ in rows)
            cpu = statistics.median(c for _, c in rows)
            print(f"{name:9} ({codes[name]}): add median {wall:.2f} s wall, {cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
