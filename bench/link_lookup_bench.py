"""A `memvault add` with no daemon: CPU of its link part and of the whole process, two
codes alternated on their own copies of an indexed vault (issue 27, branch links59).

    python bench/link_lookup_bench.py --runs 5 \\
        --code main=/tmp/links59-main/daemon:/tmp/links59-v10k-main \\
        --code branch=/tmp/links59-br/daemon:/tmp/links59-v10k-br

Each code gets its own copy (an index a newer code upgraded is refused by an older one).
Each run is a fresh process (`python -c`, the hash embedder) that opens the vault for a
write and adds one note with three links (a note's path, a name, a target nowhere), as
`memvault add` does. "links": the CPU spent inside the link lookups (``LinkIndex``
built and asked, ``Catalogue.link_index*`` / ``link_lookup``, ``StoredLinks``), counted
once when nested; "add": the CPU of ``Vault.add``; "process": the child's user+sys CPU
(``os.times``, imports included). Medians per code.
The first run of each code on a vault upgraded by it (the branch: schema 18 -> 19) is
also timed apart: what a user pays once.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

# the child's CPU inside the functions ``timed`` wraps, counted once when nested
TIMER = r"""
import json, sys, time
from memvault.api import Vault
from memvault.core import wikilinks
from memvault.engine import catalogue
spent = [0.0]
depth = [0]
def timed(fn):
    def wrapper(*a, **kw):
        depth[0] += 1
        t = time.process_time() if depth[0] == 1 else None
        try:
            return fn(*a, **kw)
        finally:
            depth[0] -= 1
            if t is not None:
                spent[0] += time.process_time() - t
    return wrapper
"""
CHILD = (
    TIMER
    + r"""
targets = [(wikilinks.LinkIndex, n) for n in ("__init__", "resolve", "__contains__", "with_files")]
targets += [(catalogue.Catalogue, n) for n in ("link_index", "link_index_with", "link_lookup")]
try:
    from memvault.engine import stored_links
    targets += [(stored_links.StoredLinks, n) for n in
                ("__init__", "resolve", "__contains__", "aliases_of", "index_for")]
except ImportError:
    pass
for cls, name in targets:
    if hasattr(cls, name):
        setattr(cls, name, timed(getattr(cls, name)))
t0 = time.process_time()
v = Vault.open(sys.argv[1], mode="write")
opened = time.process_time() - t0
t1 = time.process_time()
r = v.add("projects", title=sys.argv[2], summary="A note [[people/n000001]] links.",
          body="Body with [[decisions/n002562]] and [[nowhere-x]].")
added = time.process_time() - t1
v.close()
print(json.dumps({"links": spent[0], "add": added, "open": opened}))
"""
)


def run(code: str, vault: str, title: str) -> dict[str, float]:
    return run_child(CHILD, code, vault, title)


def run_child(script: str, code: str, *argv: str) -> dict[str, float]:
    """``script`` in a fresh Python on ``code`` (the hash embedder): the JSON of its last
    line, and its wall time."""
    env = {**os.environ, "PYTHONPATH": code, "MEMVAULT_INDEX_MODEL": "hash"}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", script, *argv], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode:
        raise SystemExit(f"{code} failed:\n{proc.stderr[-3000:]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    got["wall"] = time.perf_counter() - start
    return dict(got)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", action="append", required=True, help="name=PYTHONPATH:VAULT")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    alternate(
        args.code,
        args.runs,
        lambda name, code, vault, i: run(
            code, vault, f"Bench note links59 {name} {i} {time.time_ns()}"
        ),
    )


def alternate(
    specs: list[str], runs: int, one: Callable[[str, str, str, int], dict[str, float]]
) -> None:
    """``one(name, code, vault, i)`` for each code (``name=PYTHONPATH:VAULT``), alternated,
    ``runs`` + 1 times (the first apart); each run's child CPU added; medians printed."""
    codes = [(c.split("=", 1)[0], *c.split("=", 1)[1].split(":", 1)) for c in specs]
    first: dict[str, dict[str, float]] = {}
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in codes}
    for i in range(runs + 1):
        for name, code, vault in codes if i % 2 == 0 else reversed(codes):
            before = os.times()
            got = one(name, code, vault, i)
            after = os.times()
            got["process"] = (after.children_user - before.children_user) + (
                after.children_system - before.children_system
            )
            if i == 0:
                first[name] = got  # an upgrade, the file cache warmed: apart
            else:
                results[name].append(got)
            print(name, i, {k: round(v, 3) for k, v in got.items()}, flush=True)
    print("\nfirst run of each (upgrade if any):")
    for name, got in first.items():
        print(f"  {name}: {json.dumps({k: round(v, 3) for k, v in got.items()})}")
    print(f"\nmedians of {runs} alternated runs (CPU s; wall s):")
    for name, rows in results.items():
        med = {k: round(statistics.median(r[k] for r in rows), 3) for k in rows[0]}
        print(f"  {name}: {json.dumps(med)}")


if __name__ == "__main__":
    main()
