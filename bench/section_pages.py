"""MEMORY.md's sections as a process with no note rows reads them from the index's kept
keys (``StoredListing.listing``: a section's first notes a page at a time, by date or
updated), and one page of 32 of each top folder in each order, per code, each code on
its own copy of a vault (the same notes, its own index.db), alternating round by round.

    python bench/section_pages.py --copy main=M --code main=/path/main \\
        --copy branch=B --code branch=. --rounds 7

Prints the medians per code (ms) and their ratio to the first code's. Reads only: each
copy must already be at its code's schema (open it with that code first).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

# run in the code's own process (its PYTHONPATH): the times of one round, as JSON
_ROUND = r"""
import json, sys, time
from pathlib import Path
from memvault.config import VaultConfig
from memvault.engine.memory_stored import StoredListing
from memvault.index.store import Store

root = Path(sys.argv[1])
config = VaultConfig.load(root)
state = root / ".memvault"
store = Store(state / "index.db", state / "cache.db")
out = {}
try:
    listing = StoredListing(store, config.memory.sections)
    for rule in config.memory.sections:
        began = time.perf_counter()
        listing.listing(rule)
        out[f"section {rule.name} ({rule.order})"] = time.perf_counter() - began
    folders = sorted({p.split("/", 1)[0] for p in store.note_paths() if "/" in p})
    for order in ("updated", "date"):
        began = time.perf_counter()
        for folder in folders:
            store.ordered_notes(folder, order, limit=32)
        out[f"a page of each folder by {order}"] = time.perf_counter() - began
finally:
    store.close()
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--copy", action="append", default=[], help="NAME=VAULT (repeatable)")
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT (repeatable)")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.code]
    copies = {c.split("=", 1)[0]: Path(c.split("=", 1)[1]).resolve() for c in args.copy}
    times: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        for name, code in codes if r % 2 == 0 else codes[::-1]:
            env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash", PYTHONPATH=str(code / "daemon"))
            done = subprocess.run(
                [sys.executable, "-c", _ROUND, str(copies[name])],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            for what, seconds in json.loads(done.stdout).items():
                times.setdefault((name, what), []).append(seconds)
    base = codes[0][0]
    whats = [w for n, w in times if n == base]
    print(f"medians of {args.rounds} rounds, ms (ratio to {base})")
    for what in whats:
        first = statistics.median(times[(base, what)])
        cells = [
            f"{name} {statistics.median(times[(name, what)]) * 1000:.2f} "
            f"({statistics.median(times[(name, what)]) / first:.2f}x)"
            for name, _ in codes
        ]
        print(f"{what:42} " + "  ".join(cells))


if __name__ == "__main__":
    main()
