"""Cold index throughput: the first `memvault sync` of a vault (real model), code against code.

    python bench/cold_index.py --vault /tmp/obsidian-help --code old=/tmp/old/daemon \
        --code new=daemon --rounds 3

Each round runs every code in turn (alternating, so the machine's load falls on all
of them alike) on a fresh copy of ``--vault``: `memvault init` (not timed), then
`memvault sync --json` in a process of its own, timed by wall clock and by the CPU the
process used (user + system, from the OS). Printed per run, then the median per code
and each code's median ratio to the first. The model is the vault's default (int8
ONNX all-MiniLM-L6-v2): what a person's first `memvault up` indexes with.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import store_bytes


def run_once(code: Path, vault: Path, work: Path) -> dict[str, float]:
    target = work / "vault"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(vault, target)
    env = {**os.environ, "PYTHONPATH": str(code)}
    env.pop("MEMVAULT_VAULT", None)
    subprocess.run(
        [sys.executable, "-m", "memvault", "init", str(target)],
        env=env,
        check=True,
        capture_output=True,
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memvault", "sync", "--vault", str(target), "--json"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report = json.loads(done.stdout)
    chunks = int(report.get("embedded_chunks", 0))
    notes = len(report.get("created", ()))
    size = store_bytes.measure(target)  # .memvault/ against the notes' bytes
    files = size["files"]
    assert isinstance(files, dict)
    return {
        "wall": wall,
        "cpu": cpu,
        "chunks": chunks,
        "notes": notes,
        "memvault_x": float(size["memvault_x"] or 0),  # type: ignore[arg-type]
        **{f"{k}_mb": v / 1e6 for k, v in files.items() if k.endswith((".db", ".bin"))},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--code", action="append", required=True, help="NAME=DIR (a daemon/ folder)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    codes = [(n, Path(d).resolve()) for n, d in (c.split("=", 1) for c in args.code)]
    runs: dict[str, list[dict[str, float]]] = {n: [] for n, _ in codes}
    with tempfile.TemporaryDirectory(prefix="cold-index-") as tmp:
        for r in range(args.rounds):
            order = codes if r % 2 == 0 else codes[::-1]
            for name, code in order:
                load = os.getloadavg()[0]
                row = run_once(code, args.vault, Path(tmp))
                runs[name].append(row)
                print(
                    f"round {r + 1} {name}: {row['notes']:.0f} notes, {row['chunks']:.0f} chunks, "
                    f"wall {row['wall']:.1f} s, CPU {row['cpu']:.1f} s, load {load:.1f}; "
                    f".memvault/ {row['memvault_x']:.2f}x the notes' bytes "
                    + ", ".join(f"{k} {v:.2f}" for k, v in row.items() if k.endswith("_mb")),
                    flush=True,
                )
    first = codes[0][0]
    medians = {
        n: {
            k: statistics.median(x[k] for x in rows)
            for k in ("wall", "cpu", "chunks", "memvault_x")
        }
        for n, rows in runs.items()
    }
    for name, m in medians.items():
        base = medians[first]
        print(
            f"{name}: median wall {m['wall']:.1f} s ({m['chunks'] / m['wall']:.1f} chunks/s), "
            f"CPU {m['cpu']:.1f} s ({m['chunks'] / m['cpu']:.1f} chunks/CPU s); "
            f"ratio to {first}: wall {m['wall'] / base['wall']:.2f}, CPU {m['cpu'] / base['cpu']:.2f}"
        )
    print(json.dumps(medians))


if __name__ == "__main__":
    main()
