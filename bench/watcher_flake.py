"""How often the watcher's random-sequence scenario ends unequal to a rebuild.

    python bench/watcher_flake.py --rounds 40 --seeds 8

Runs tests/test_watcher.py's random sequence of creates, edits, deletes, moves and
folder renames (real files, real watchdog, real engine) ``rounds`` times per seed,
and prints each failure's explanation and the count. A flake rate, measured:
one pytest run of seed 8 failed once on a loaded machine; this finds how often.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "daemon"), str(ROOT / "tests")]
# watchdog warns (harmlessly) when a folder moved away and back is watched again
warnings.filterwarnings("ignore", "Callback with id", RuntimeWarning)

import helpers  # noqa: E402
import test_watcher  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seeds", default="8", help="comma-separated")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    failures = 0
    for r in range(args.rounds):
        for seed in seeds:
            with tempfile.TemporaryDirectory() as tmp:
                w = test_watcher.start_watching(Path(tmp))
                try:
                    test_watcher._random_ops(random.Random(seed), w.root, 20)
                    w.settle()
                    ours = helpers.snapshot(w.vault)
                    rebuilt = helpers.rebuilt_snapshot(w.root, Path(tmp))
                    if ours != rebuilt:
                        failures += 1
                        print(f"round {r} seed {seed}:", test_watcher._explain(ours, rebuilt, w))
                finally:
                    w.watcher.stop()
                    w.vault.close()
    runs = args.rounds * len(seeds)
    print(json.dumps({"runs": runs, "failures": failures, "seeds": seeds}))


if __name__ == "__main__":
    main()
