"""Context latency of this checkout against another (e.g. main), in one run.

    git worktree add --detach /tmp/ctx-main main
    python bench/context_latency.py --other /tmp/ctx-main --convs 0,3 --memo /tmp/memo.pkl

Each side runs in its own process (its own ``memvault`` package), in the order
other, this, this, other, so load from other jobs falls on both sides. A side
writes the kit's vault of each LoCoMo dev conversation, syncs it (embeddings
from ``--memo``, as written by ``locomo_eval.py --memo``, so indexing does not
dominate), then asks every question at 1,000 and 2,000 tokens with the query
embedded for real on every call (the memo is emptied first), timing each
``context`` call whole. Prints each side's p50 / p90 in ms and the p50 ratio of
each pair (this / other).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def side(root: Path, convs: list[int], memo: Path | None) -> dict[str, float]:
    """Run in a child process whose memvault is ``root``'s."""
    sys.path.insert(0, str(root / "daemon"))
    sys.path.insert(0, str(root / "bench"))
    import locomo_eval as le  # the checkout's own: its kit path and MemoEmbedder
    from memvault.api import Vault
    from memvault.config import IndexSettings
    from memvault.index.embedder import make_embedder

    kit = le.locomo_kit
    embedder = le.MemoEmbedder(make_embedder(IndexSettings()))
    memos = pickle.loads(memo.read_bytes()) if memo and memo.is_file() else {}
    stored = memos.get(embedder.model_id, {}) if isinstance(memos, dict) else {}
    data = kit.load(le.KIT / "locomo10_dev.json")
    times: list[float] = []
    for index in convs:
        with tempfile.TemporaryDirectory() as tmp:
            vault_root = Path(tmp) / "vault"
            kit.build_vault(data[index], vault_root)
            embedder.memo = dict(stored)
            (vault_root / ".memvault").mkdir(exist_ok=True)  # a vault: the kit's files only
            with Vault.open(vault_root, embedder=embedder) as vault:
                vault.sync()
                questions = [q["question"] for q in kit.questions(data[index])]
                vault.engine.context(questions[0], budget=1000)  # warm
                for question in questions:
                    for budget in (1000, 2000):
                        embedder.memo = {}  # the query is embedded for real
                        started = time.perf_counter()
                        vault.engine.context(question, budget=budget)
                        times.append(1000 * (time.perf_counter() - started))
    return {
        "calls": len(times),
        "p50": round(statistics.median(times), 1),
        "p90": round(sorted(times)[int(0.9 * len(times))], 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--other", type=Path, required=True, help="the other checkout (root)")
    parser.add_argument("--convs", default="0,3")
    parser.add_argument("--memo", type=Path)
    parser.add_argument("--side", type=Path, help=argparse.SUPPRESS)  # child process
    args = parser.parse_args()
    convs = [int(c) for c in args.convs.split(",")]
    if args.side:
        print(json.dumps(side(args.side, convs, args.memo)))
        return 0
    this = HERE.parents[1]
    runs: list[tuple[str, dict[str, float]]] = []
    for name, root in (
        ("other", args.other),
        ("this", this),
        ("this", this),
        ("other", args.other),
    ):
        cmd = [sys.executable, str(HERE), "--other", str(args.other), "--convs", args.convs]
        cmd += ["--side", str(root)] + (["--memo", str(args.memo)] if args.memo else [])
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=dict(os.environ))
        result = json.loads(out.stdout.strip().splitlines()[-1])
        runs.append((name, result))
        print(json.dumps({"side": name, "root": str(root), **result}), flush=True)
    pairs = [(runs[1][1]["p50"], runs[0][1]["p50"]), (runs[2][1]["p50"], runs[3][1]["p50"])]
    print(json.dumps({"p50_ratio_this_over_other": [round(a / b, 2) for a, b in pairs]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
