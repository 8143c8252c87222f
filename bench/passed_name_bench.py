"""A batch whose only rename is of a name nobody indexed: a note made as ``Untitled``
and named a moment later, another note linking the first name meanwhile.

    python bench/passed_name_bench.py --vault DIR --code main=/tmp/old --code branch=.

Each code (``NAME=CHECKOUT``) syncs its own copy of the indexed vault ``DIR`` (a
``scale_bench.generate`` vault, hash embedder), warms the link index as a daemon holds
it, then times ``--saves`` such batches (``Vault.sync(moves=...)`` as the watcher hands
the kernel's rename on, with the batch's paths), the codes alternating run by run. Prints the medians (the
first batch of a run left out: it warms the rest) and their ratio to the first code.
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
from pathlib import Path
from memvault.api import Vault
work, saves = Path(sys.argv[1]), int(sys.argv[2])
linking = sorted((work / "people").glob("*.md"))[3]
out = []
with Vault.open(work) as v:
    v.sync(); v.engine.catalogue.link_index()
    for i in range(saves):
        (work / f"projects/Untitled{i}.md").write_text("# Plan\n\nThe plan.\n")
        with open(linking, "a") as fh:
            fh.write(f"\nSee [[Untitled{i}]].\n")
        os.rename(work / f"projects/Untitled{i}.md", work / f"projects/Roadmap{i}.md")
        names = [f"projects/Untitled{i}.md", f"projects/Roadmap{i}.md"]
        paths = [*names, str(linking.relative_to(work))]  # the batch's paths, as the watcher's
        t = time.perf_counter()
        r = v.sync(paths=paths, moves=[tuple(names)], vectors=False)
        out.append(time.perf_counter() - t)
        assert r.relinked, "the link did not follow"
print(json.dumps(out[1:]))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT (repeatable)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--saves", type=int, default=7)
    args = ap.parse_args()
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.code]
    work = Path(tempfile.mkdtemp(prefix="passed-bench-")) / "v"
    times: dict[str, list[float]] = {name: [] for name, _ in codes}
    for r in range(args.runs):
        for name, code in codes if r % 2 == 0 else codes[::-1]:
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(args.vault, work)
            env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash", PYTHONPATH=str(code / "daemon"))
            cmd = [sys.executable, "-c", CHILD, str(work), str(args.saves)]
            got = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
            times[name] += json.loads(got.stdout)
    shutil.rmtree(work.parent, ignore_errors=True)
    base = statistics.median(times[codes[0][0]])
    for name, _ in codes:
        med = statistics.median(times[name])
        print(
            f"{name}: median {med * 1000:.0f} ms over {len(times[name])} batches, {med / base:.2f}x"
        )


if __name__ == "__main__":
    main()
