"""A fact copied into N notes beside distinct notes: how many distinct answers the first
page of a search holds (bench/RESULTS.md "Ten copies of one fact").

    PYTHONPATH=CODE/daemon python bench/copies_probe.py --copies 10,100,500 [--model real]

Each run makes a vault of ``--copies`` notes ``fact-N.md`` holding one sentence word for
word (as 500 memory-tool creates of /memories/fact-N.md made them) and 40 notes each
saying something else about deploys, syncs it, and asks a few questions. Printed per
question: the hits, the distinct texts among them, the distinct notes' hits, and the
``copies`` the first hit says (0 where the code has no such field).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

FACT = "The deploy window is Tuesday 10:00 UTC.\n"
SERVICES = ["payments", "ledger", "search", "billing", "auth", "mail", "maps", "chat"]
QUESTIONS = ["deploy window", "when can we deploy?", "deploy window for payments"]


def make(root: Path, copies: int) -> None:
    for i in range(1, copies + 1):
        (root / f"fact-{i}.md").write_text(FACT, encoding="utf-8")
    days = ["Monday", "Wednesday", "Thursday", "Friday", "Saturday"]
    for i in range(40):
        svc = SERVICES[i % len(SERVICES)]
        day = days[i % len(days)]
        (root / f"deploys-{i}.md").write_text(
            f"# Deploys of {svc} {i}\n\nThe {svc} team deploys on {day} after review {i}; "
            f"its deploy window closes at {8 + i % 9}:00 and release {i} waits for it.\n",
            encoding="utf-8",
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", default="10,100,500")
    ap.add_argument("--model", default="hash", choices=["hash", "real"])
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    if args.model == "hash":
        os.environ["MEMVAULT_INDEX_MODEL"] = "hash"
    from memvault import Vault

    print(f"code: {Vault.__module__} from {sys.modules['memvault'].__file__}")
    for n in (int(x) for x in args.copies.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "v"
            root.mkdir()
            make(root, n)
            with Vault.open(root, create=True) as vault:
                vault.sync()
                for q in QUESTIONS:
                    vault.search(q, args.k)  # warm
                    times = []
                    for _ in range(5):
                        t = time.perf_counter()
                        hits = vault.search(q, args.k)
                        times.append(time.perf_counter() - t)
                    texts = {" ".join(h.text.split()).casefold() for h in hits}
                    others = sum(1 for h in hits if not h.path.startswith("fact-"))
                    first = getattr(hits[0], "copies", 0) if hits else 0
                    print(
                        f"copies {n:>4}  {q!r:32} hits {len(hits):>2}  distinct texts "
                        f"{len(texts):>2}  other notes {others:>2}  first hit's copies "
                        f"{first:>3}  median {statistics.median(times) * 1000:.1f} ms"
                    )


if __name__ == "__main__":
    main()
