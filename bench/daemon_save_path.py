"""A save on a daemon's path (its rows held in memory): CPU per save, code against code.

    python bench/daemon_save_path.py --notes 10000 --saves 40 \\
        --code base=/work/wt-old --code branch=.

Each ``--code NAME=CHECKOUT`` runs in a process of its own (``PYTHONPATH=CHECKOUT/daemon``,
hash embedder) on its own copy of one generated vault (the same seed: the same files),
indexed once first. The process builds the ``Engine`` a daemon builds (``daemon=True``:
the Linker keeps MEMORY.md's lists from the catalogue's rows), reads every row, then
saves ``--saves`` times: a note of people/ given a new summary and ``updated`` date (it
tops Key People: MEMORY.md and people/people.md change), ``Engine.sync(paths=[it])``
with no vectors, as the watcher's quiet period hands a daemon one path. Timed: the
process's CPU (``time.process_time``) and wall per save, medians, after 5 saves unmeasured.
Rounds alternate the codes (``--rounds``) so both share the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import json, sys, time
from pathlib import Path
from memvault.config import VaultConfig
from memvault.engine.engine import Engine
from memvault.index.embedder_hash import HashEmbedder
root, saves = Path(sys.argv[1]), int(sys.argv[2])
engine = Engine(VaultConfig(root=root), HashEmbedder(), daemon=True)
engine.sync(vectors=False)
engine.catalogue.notes()
cpu, wall = [], []
for i in range(saves + 5):
    rel = f"people/p{i % 50:03}.md"
    (root / rel).write_text(
        f"---\ntitle: Person {i % 50}\nsummary: said {i}\nupdated: 2027-01-{1 + i % 28:02}\n"
        f"date: 2025-01-01\n---\n# Person\n\nAbout them, time {i}.\n", "utf-8")
    c0, w0 = time.process_time(), time.perf_counter()
    engine.sync(paths=[rel], vectors=False)
    c1, w1 = time.process_time(), time.perf_counter()
    if i >= 5:
        cpu.append(c1 - c0); wall.append(w1 - w0)
engine.close()
print(json.dumps({"cpu": cpu, "wall": wall}))
"""


def _vault(root: Path, notes: int) -> None:
    rng = random.Random(27)
    folders = ["people", "projects", "decisions", "logs", "topics", ""]
    (root / ".memvault").mkdir(parents=True)
    for i in range(notes):
        folder = "people" if i < 50 else rng.choice(folders)
        name = f"p{i:03}.md" if i < 50 else f"n{i:05}.md"
        rel = f"{folder}/{name}" if folder else name
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        words = " ".join(f"w{rng.randrange(4000)}" for _ in range(rng.randrange(40, 200)))
        day = f"2025-{1 + rng.randrange(12):02}-{1 + rng.randrange(28):02}"
        (root / rel).write_text(
            f"---\ntitle: Note {i}\nsummary: about {i}\ndate: {day}\n---\n# Note {i}\n\n{words}\n",
            "utf-8",
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--saves", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--code", action="append", required=True, help="NAME=CHECKOUT")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="daemon-save-"))
    try:
        _vault(work / "vault", args.notes)
        runs: dict[str, dict[str, list[float]]] = {}
        for _ in range(args.rounds):
            for spec in args.code:
                name, checkout = spec.split("=", 1)
                copy = work / f"vault-{name}"
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(work / "vault", copy)
                env = dict(os.environ, PYTHONPATH=str(Path(checkout).resolve() / "daemon"))
                env["MEMVAULT_INDEX_MODEL"] = "hash"
                out = subprocess.run(
                    [sys.executable, "-c", _CHILD, str(copy), str(args.saves)],
                    env=env, capture_output=True, text=True, check=True,
                )  # fmt: skip
                got = json.loads(out.stdout.strip().splitlines()[-1])
                run = runs.setdefault(name, {"cpu": [], "wall": []})
                run["cpu"] += got["cpu"]
                run["wall"] += got["wall"]
        first = args.code[0].split("=", 1)[0]
        base = statistics.median(runs[first]["cpu"])
        for name, run in runs.items():
            cpu, wall = statistics.median(run["cpu"]), statistics.median(run["wall"])
            print(
                f"{name}: {args.notes} notes, {len(run['cpu'])} saves: CPU median "
                f"{cpu * 1000:.1f} ms, wall {wall * 1000:.1f} ms; CPU {cpu / base:.2f}x {first}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
