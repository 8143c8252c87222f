"""What a call costs when the vault is opened for it (the MCP server without a daemon)
against one kept open (a daemon, the memory tool's door), on the same vault.

    MEMVAULT_INDEX_MODEL=hash python bench/open_per_call.py VAULT [--runs 4]

Opened per call: ``Vault.open(mode=...)`` then the call, closed, as ``mcp_server.Calls``
does: a search (``"query"``), a get (``"read"``), a log line (``"write"``). Kept: one
``Vault.open`` and the search alone, then the search after a structure sync (what a
kept vault would need to see the files' changes). Wall seconds of each run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))

from memvault.api import Vault
from memvault.index.embedder import HashEmbedder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--runs", type=int, default=4)
    a = ap.parse_args()
    emb = HashEmbedder()
    ask = "project planning"
    calls = {
        "query": lambda v: v.search(ask),
        "read": lambda v: v.get(v.search(ask)[0].path),
        "write": lambda v: v.log("open_per_call probe"),
    }
    for mode, op in calls.items():
        times = []
        for _ in range(a.runs):
            t = time.perf_counter()
            with Vault.open(a.vault, mode=mode, embedder=emb) as v:  # type: ignore[arg-type]
                op(v)
            times.append(time.perf_counter() - t)
        print(f"opened per call, {mode}: median {statistics.median(times):.3f} s {times}")
    with Vault.open(a.vault, mode="write", embedder=emb) as v:
        v.search(ask)  # the vector index opened once
        for name, op in (
            ("search", lambda: v.search(ask)),
            ("sync + search", lambda: (v.sync(vectors=False), v.search(ask))),
        ):
            times = []
            for _ in range(a.runs):
                t = time.perf_counter()
                op()
                times.append(time.perf_counter() - t)
            print(f"kept open, {name}: median {statistics.median(times):.3f} s {times}")


if __name__ == "__main__":
    main()
