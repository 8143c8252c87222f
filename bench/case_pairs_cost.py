"""What pairing an index path missing here with its file here in another case alone
(core/changes.case_pairs, as_indexed) adds to a team reader's search with no writer
(engine/unkept.say_unkept) and to status's count, at 100,000 notes of which none is renamed:
timed against the set difference the note already makes (``set(seen) - set(known)``).
Pure functions on real Seen records; run: PYTHONPATH=daemon python bench/case_pairs_cost.py"""

from __future__ import annotations

import statistics
import time

from memvault.core.changes import Known, Seen, as_indexed, case_pairs

N, RUNS = 100_000, 9


def _median(fn: object) -> float:
    times = []
    for _ in range(RUNS):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    paths = [f"Folder{i % 100}/Note {i}.md" for i in range(N)]
    seen = {p: Seen(100 + i, i) for i, p in enumerate(paths)}
    known = {p: Known(100 + i, i, "") for i, p in enumerate(paths)}
    base = _median(lambda: sorted(set(seen) - set(known)))
    added = _median(lambda: as_indexed(seen, case_pairs(seen, known)))
    print(f"{N} notes, none renamed, median of {RUNS}:")
    print(f"  set(seen) - set(known): {base:.1f} ms")
    print(f"  case_pairs + as_indexed: {added:.1f} ms ({added / base:.2f}x)")


if __name__ == "__main__":
    main()
