"""`status` and `links check` on a vault: the scan and the links check, timed.

    python bench/status_bench.py --notes 20000 --code main=/tmp/old --code branch=.
    python bench/status_bench.py --vault DIR --code main=/tmp/old --code branch=.

Each code (``NAME=CHECKOUT``, run with ``PYTHONPATH=CHECKOUT/daemon``) indexes its own
copy of one generated vault of N tiny notes (hash embedder), or reads the indexed
vault ``--vault`` (``scale_bench.generate`` and a sync: both only read it, so the codes
share it; they must share its index schema), then times ``Vault.status()`` and
``Vault.links_check()`` in a fresh process: ``--calls`` calls of each after one to
warm, the codes alternating round by round. Prints the medians per code (CPU seconds
of the process, wall seconds) and their ratio to the first code.
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

CHILD = r"""
import json, os, sys, time
from memvault.api import Vault
v = Vault.open(sys.argv[1], create=True)
if sys.argv[2] == "index":
    v.sync()
    sys.exit(0)
out = {}
for name, call in (("status", v.status), ("links check", v.links_check)):
    call()
    out[name] = []
    for _ in range(int(sys.argv[2])):
        t, c = time.perf_counter(), time.process_time()
        call()
        out[name].append((time.perf_counter() - t, time.process_time() - c))
print(json.dumps(out))
"""


def make_vault(root: Path, n: int) -> None:
    for i in range(n):
        folder = root / ("decisions" if i % 2 else "people")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{i:06}.md").write_text(
            f"# Note {i}\n\nabout thing {i}, see [[n{(i * 7) % n:06}]] and [[missing {i % 50}]].\n"
        )


def run(code: Path, vault: Path, arg: str) -> str:
    env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash", PYTHONPATH=str(code / "daemon"))
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(vault), arg],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--notes", type=int, default=20000)
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT (repeatable)")
    ap.add_argument("--rounds", type=int, default=3, help="processes a code, alternating")
    ap.add_argument("--calls", type=int, default=3, help="timed status calls a process")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--vault", type=Path, help="an indexed vault to read (no copies)")
    args = ap.parse_args()
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.code]
    vaults = {}
    if args.vault:
        vaults = {name: args.vault.resolve() for name, _ in codes}
    else:
        work = args.workdir or Path(tempfile.mkdtemp(prefix="status-bench-"))
        source = work / "source"
        if not source.exists():
            make_vault(source, args.notes)
        for name, code in codes:
            vaults[name] = work / name
            if not vaults[name].exists():
                shutil.copytree(source, vaults[name])
                run(code, vaults[name], "index")
    times: dict[tuple[str, str], list[list[float]]] = {}
    for r in range(args.rounds):
        order = codes if r % 2 == 0 else codes[::-1]
        for name, code in order:
            for call, got in json.loads(run(code, vaults[name], str(args.calls))).items():
                times.setdefault((call, name), []).extend(got)
    for call in ("status", "links check"):
        base = statistics.median(c for _, c in times[(call, codes[0][0])])
        for name, _ in codes:
            cpu = statistics.median(c for _, c in times[(call, name)])
            wall = statistics.median(w for w, _ in times[(call, name)])
            n = len(times[(call, name)])
            print(
                f"{call}, {name}: CPU {cpu:.3f} s, wall {wall:.3f} s (medians of {n}), CPU {cpu / base:.2f}x"
            )


if __name__ == "__main__":
    main()
