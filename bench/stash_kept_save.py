"""A save's MEMORY.md update with an applied stash kept newest, against none (rev54d).

    python bench/stash_kept_save.py --notes 1000 --saves 40 --rounds 3 \\
        --code main=/work/main --code branch=.

A stash kept in the list after `git stash apply` went through is held in the index meta
``git_stash_applied`` (engine/stash_hold); while it is the newest stash, each update of
MEMORY.md asks git what it changes and their blob ids in the files, git's index and HEAD
(vault/git_stash.newest_stash: ``unless_undone``), up to 4 git processes more. Timed:
the daemon's path from a save to MEMORY.md written, ``Engine.sync(paths=[it])`` in a
daemon's Engine (the watcher's quiet period, the same in both, left out), on one
generated vault in git (``--notes``), each mode in a process of its own on its own copy:
``none``, no stash; ``kept``, MEMORY.md's change (a line of the person's) stashed,
applied, seen applied by a sync. Each save gives a note of people/ a new summary and
date (it tops Key People: MEMORY.md changes, checked). Wall and CPU medians, after 5
saves unmeasured; rounds alternate the modes and the codes (``--code NAME=CHECKOUT``:
``PYTHONPATH=CHECKOUT/daemon``) so all share the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from daemon_save_path import _vault

_CHILD = r"""
import json, subprocess, sys, time
from pathlib import Path
from memvault.config import VaultConfig
from memvault.engine.engine import Engine
from memvault.index.embedder_hash import HashEmbedder
root, saves, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@b", "PATH": "/usr/bin:/bin"}
def git(*a):
    subprocess.run(["git", "-C", str(root), *a], check=True, capture_output=True, env=env)
engine = Engine(VaultConfig(root=root), HashEmbedder(), daemon=True)
engine.sync(vectors=False)
git("init", "-q", "-b", "main"); git("add", "-A"); git("commit", "-qm", "base")
mem = root / "MEMORY.md"
def save(i):
    rel = f"people/p{i % 50:03}.md"
    (root / rel).write_text(
        f"---\ntitle: Person {i % 50}\nsummary: said {i}\nupdated: 2027-{1 + i // 28:02}-{1 + i % 28:02}\n"
        f"date: 2025-01-01\n---\n# Person\n\nAbout them, time {i}.\n", "utf-8")
    return rel
if mode == "kept":
    mem.write_text(mem.read_text("utf-8") + "My words.\n", "utf-8")
    git("stash", "-q"); git("stash", "apply", "-q")
    engine.sync(paths=[save(999)], vectors=False)
    assert engine.store.meta("git_stash_applied"), "the apply not seen"
engine.sync(vectors=False)  # after git's own changes (a sync under them waits)
engine.catalogue.notes()
cpu, wall = [], []
for i in range(saves + 5):
    before = mem.read_bytes()
    rel = save(i)
    c0, w0 = time.process_time(), time.perf_counter()
    engine.sync(paths=[rel], vectors=False)
    c1, w1 = time.process_time(), time.perf_counter()
    if i >= 5:
        assert mem.read_bytes() != before, "MEMORY.md not written"
        cpu.append(c1 - c0); wall.append(w1 - w0)
assert mode != "kept" or b"My words." in mem.read_bytes()
engine.close()
print(json.dumps({"cpu": cpu, "wall": wall}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--saves", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--code", action="append", required=True, help="NAME=CHECKOUT")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="stash-kept-"))
    try:
        _vault(work / "vault", args.notes)
        runs: dict[str, dict[str, list[float]]] = {}
        for _ in range(args.rounds):
            for spec, mode in [(c, m) for c in args.code for m in ("none", "kept")]:
                name, checkout = spec.split("=", 1)
                copy = work / f"vault-{mode}"
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(work / "vault", copy)
                env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash")
                env["PYTHONPATH"] = str(Path(checkout).resolve() / "daemon")
                out = subprocess.run(
                    [sys.executable, "-c", _CHILD, str(copy), str(args.saves), mode],
                    env=env, capture_output=True, text=True, check=False,
                )  # fmt: skip
                if out.returncode:
                    sys.exit(out.stderr[-2000:])
                got = json.loads(out.stdout.strip().splitlines()[-1])
                run = runs.setdefault(f"{name} {mode}", {"cpu": [], "wall": []})
                run["cpu"] += got["cpu"]
                run["wall"] += got["wall"]
        for key, run in runs.items():
            base = statistics.median(runs[f"{key.split()[0]} none"]["wall"])
            cpu, wall = statistics.median(run["cpu"]), statistics.median(run["wall"])
            print(
                f"{key}: {args.notes} notes, {len(run['wall'])} saves: wall median "
                f"{wall * 1000:.1f} ms ({wall / base:.2f}x none), CPU {cpu * 1000:.1f} ms"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
