"""A save of a note a Mac named (NFD) at the vault's top, as a daemon syncs it.

    python bench/nfd_save.py --vault /tmp/s51/v10k --copy /tmp/small53-nfd \\
        --code base=/work/main --code branch=.

Each ``--code NAME=CHECKOUT`` runs in a process of its own (``PYTHONPATH=CHECKOUT/daemon``,
hash embedder) on its own copy of ``--vault`` (indexed already, or indexed once first),
with two notes added at its top: ``Café.md`` in NFD (a Mac's) and ``Plain.md``. The
process builds the ``Engine`` a daemon builds (``daemon=True``) and saves each note in
turn ``--saves`` times: the path the daemon's watcher names for the save
(``watch_queue.PathMapper`` of that checkout: ``""`` is a full reconcile) handed to
``Engine.sync`` as the watcher does (``paths=None`` for ``""``), no vectors. Timed: the
process's CPU (``time.process_time``) and wall per save, medians, after 3 of each
unmeasured; the plain note's save is the baseline in the same process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

_CHILD = r"""
import json, sys, time, unicodedata
from pathlib import Path
from memvault.config import VaultConfig
from memvault.engine.engine import Engine
from memvault.index.embedder_hash import HashEmbedder
from memvault.service.watch_queue import PathMapper
root, saves = Path(sys.argv[1]), int(sys.argv[2])
nfd = unicodedata.normalize("NFD", "Café.md")
engine = Engine(VaultConfig(root=root), HashEmbedder(), daemon=True)
mapper = PathMapper(root, engine.fs.is_ignored)
for name in (nfd, "Plain.md"):
    (root / name).write_text("# A note\n\nwritten first\n", "utf-8")
engine.sync(vectors=False)
engine.catalogue.notes()
out = {}
for name, key in ((nfd, "nfd"), ("Plain.md", "plain")):
    cpu, wall, mapped = [], [], None
    for i in range(saves + 3):
        (root / name).write_text(f"# A note\n\nsaved {i}\n", "utf-8")
        c0, w0 = time.process_time(), time.perf_counter()
        mapped = mapper(str(Path(mapper.root) / name))
        engine.sync(paths=None if mapped == "" else [mapped], vectors=False)
        c1, w1 = time.process_time(), time.perf_counter()
        if i >= 3:
            cpu.append(c1 - c0); wall.append(w1 - w0)
    out[key] = {"cpu": cpu, "wall": wall, "synced": mapped}
engine.close()
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", required=True, help="a vault to copy (never written)")
    ap.add_argument("--copy", required=True, help="where the copies go")
    ap.add_argument("--saves", type=int, default=15)
    ap.add_argument("--code", action="append", required=True, help="NAME=CHECKOUT")
    args = ap.parse_args()
    work = Path(args.copy)
    work.mkdir(parents=True, exist_ok=True)
    for spec in args.code:
        name, checkout = spec.split("=", 1)
        copy = work / f"vault-{name}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(args.vault, copy, symlinks=True)
        (copy / ".memvault" / "lock").unlink(missing_ok=True)
        env = dict(os.environ, PYTHONPATH=str(Path(checkout).resolve() / "daemon"))
        env["MEMVAULT_INDEX_MODEL"] = "hash"
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, str(copy), str(args.saves)],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        got = json.loads(out.stdout.strip().splitlines()[-1])
        plain = statistics.median(got["plain"]["cpu"])
        for key in ("plain", "nfd"):
            run = got[key]
            cpu, wall = statistics.median(run["cpu"]), statistics.median(run["wall"])
            print(
                f"{name} {key} ({run['synced']!r} synced): {len(run['cpu'])} saves: CPU median "
                f"{cpu * 1000:.1f} ms, wall {wall * 1000:.1f} ms; CPU {cpu / plain:.2f}x plain"
            )
        shutil.rmtree(copy, ignore_errors=True)


if __name__ == "__main__":
    main()
