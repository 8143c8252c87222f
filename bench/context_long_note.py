"""A context of a big budget from one long note: ``core.context.assemble``'s time with
N lines of one note among its pieces (a 10 MB log asked with a budget of 40,000 tokens:
thousands of its lines). Quadratic work shows as a ratio near 4 a doubling of N.

    PYTHONPATH=CODE/daemon python bench/context_long_note.py --runs 5
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time

from memvault.core.context import Piece, assemble

WORD = re.compile(r"\w+|[^\w\s]")


def count(text: str) -> int:
    return len(WORD.findall(text))


def pieces(n: int) -> list[Piece]:
    out = [
        Piece(
            "logs/big.md",
            (i // 10) * 10_000 + i % 10,
            (),
            (i // 10) * 20 + i % 10 + 1,
            (i // 10) * 20 + i % 10 + 1,
            f"{i:06d} deployed service s{i % 97} to region r{i % 13} after review by p{i % 31}",
        )
        for i in range(n)
    ]
    random.Random(n).shuffle(out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="500,1000,2000,4000")
    args = ap.parse_args()
    previous = None
    for n in (int(s) for s in args.sizes.split(",")):
        given = pieces(n)
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            ctx = assemble("q", 100_000, count, "", given)
            times.append(time.perf_counter() - started)
        median = statistics.median(times)
        ratio = f"{median / previous:.1f}x the size before" if previous else "baseline"
        print(f"{n} lines: median {median:.3f} s ({ratio}); {len(ctx.sources)} in")
        previous = median


if __name__ == "__main__":
    main()
