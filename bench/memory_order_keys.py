"""The cost of MEMORY.md's order keys (core/memory_order.sort_key) for a vault's notes.

Each note's key is computed once per version of the note (engine/memory_listing keeps
it), so a daemon's start, a rebuild after bulk work and a first index pay one key per
note and per section rule of its folder, then a sort. Run against another checkout's
code with ``--code DIR`` (its ``daemon/`` is imported) to compare::

    python bench/memory_order_keys.py --notes 100000 [--code /tmp/base]

Prints the median of ``--runs`` runs of computing every key and sorting, in ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[1])
    args = ap.parse_args()
    sys.path.insert(0, str(args.code / "daemon"))
    from memvault.core.memory_order import CatalogueEntry, sort_key

    # a vault's mix: plain names, names with numbers (an agent's fact-12.md), dated logs,
    # capitals, accents
    names = ("fact-{i}", "Meeting notes {i}", "topic_{i}_draft", "Ärger-{i}", "plain")
    entries = [
        CatalogueEntry(f"notes/{names[i % 5].format(i=i)}-{i}.md", f"Note {i}", "", {}, 0)
        for i in range(args.notes)
    ]
    for order in ("updated", "title"):
        took = []
        for _ in range(args.runs):
            start = time.perf_counter()
            sorted((sort_key(e, order), e.path) for e in entries)
            took.append((time.perf_counter() - start) * 1000)
        print(f"{order}: {args.notes:,} notes, median {statistics.median(took):.0f} ms")


if __name__ == "__main__":
    main()
