"""What the line-level context costs, against today's code in the same run.

    python bench/recall_cost.py                 # dev conversations 0-4
    python bench/recall_cost.py --convs 0,1

For each LoCoMo dev conversation the kit's vault is written twice and indexed
from scratch with the real bundled model (no embedding memo, no cache shared
between the two), once with the shipped defaults ("new") and once with the
context as it was before issue 10 ("today": whole chunks, no line vectors,
100 candidates), alternating which goes first. Then every question is asked of
both vaults at 1,000 and 2,000 tokens, alternating which answers first; each
``Vault.context`` call is timed whole (query embedding included).

Prints indexing seconds per side and their ratio, and the median / p90
milliseconds of a context call per side and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))
sys.path.insert(0, str(ROOT / "bench"))
KIT = ROOT.parent / "shared" / "bench" / "locomo"
sys.path.insert(0, str(KIT))

import locomo_kit  # noqa: E402

from locomo_eval import parse_convs  # noqa: E402
from memvault.api import Vault  # noqa: E402
from memvault.index.embedder import SentenceTransformerEmbedder  # noqa: E402

SIDES: dict[str, dict[str, dict[str, Any]]] = {
    "today": {
        "context": {"excerpts": False, "candidates": 100},
        "index": {"line_vectors": False},
    },
    "new": {},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--convs", default="", help="e.g. 0,1,2 (default: all of the dev split)")
    args = parser.parse_args(argv)
    convs = locomo_kit.load(KIT / "locomo10_dev.json")
    chosen = parse_convs(args.convs, len(convs))
    embedder = SentenceTransformerEmbedder()
    index_s = {side: 0.0 for side in SIDES}
    ms: dict[str, list[float]] = {side: [] for side in SIDES}
    with tempfile.TemporaryDirectory() as tmp:
        for n, ci in enumerate(chosen):
            conv = convs[ci]
            order = list(SIDES) if n % 2 == 0 else list(reversed(SIDES))
            vaults: dict[str, Vault] = {}
            for side in order:
                root = Path(tmp) / f"{ci}-{side}"
                locomo_kit.build_vault(conv, root)
                started = time.perf_counter()
                (root / ".memvault").mkdir(exist_ok=True)  # a vault: the kit's files only
                vault = Vault.open(root, embedder=embedder, overrides=SIDES[side])
                vault.sync()
                index_s[side] += time.perf_counter() - started
                vaults[side] = vault
            for i, q in enumerate(locomo_kit.questions(conv)):
                for budget in (1000, 2000):
                    for side in order if i % 2 == 0 else list(reversed(order)):
                        started = time.perf_counter()
                        vaults[side].context(q["question"], budget=budget)
                        ms[side].append(1000 * (time.perf_counter() - started))
            for vault in vaults.values():
                vault.close()
            print(f"conversation {ci} done", file=sys.stderr, flush=True)
    p50 = {side: statistics.median(v) for side, v in ms.items()}
    p90 = {side: statistics.quantiles(v, n=10)[-1] for side, v in ms.items()}
    result = {
        "convs": chosen,
        "index_seconds": {side: round(s, 1) for side, s in index_s.items()},
        "index_ratio": round(index_s["new"] / index_s["today"], 3),
        "context_ms_p50": {side: round(v, 1) for side, v in p50.items()},
        "context_ms_p90": {side: round(v, 1) for side, v in p90.items()},
        "context_p50_ratio": round(p50["new"] / p50["today"], 3),
        "calls_per_side": len(ms["new"]),
    }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
