"""What names and sentences in other scripts cost, per note, at scale.

    python bench/unicode_costs.py                          # this checkout
    PYTHONPATH=/other/daemon python bench/unicode_costs.py # another code, the same way

1. A folder of ``--names`` notes with Japanese names; 1,000 notes gone from it, each
   asked as an event's path is (``VaultFS.refusal`` and ``stat``): names of one Unicode
   form (メモ) and names a Mac spells otherwise (ガイド, NFC != NFD).
2. ``notes`` summary of a paragraph of ``--periods`` one-letter abbreviations and
   numbers ("z. 1. z. 1. ...").

Each timing is the median of three runs (process time), in a fresh temp folder.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def median_of(runs: int, fn) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--names", type=int, default=50_000)
    ap.add_argument("--periods", type=int, default=16_000)
    a = ap.parse_args()
    from memvault.core.notes import parse_note
    from memvault.vault.files import VaultFS

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = root / "人物"
        folder.mkdir()
        for i in range(a.names):
            (folder / f"メモ{i}.md").write_bytes(b"x")
        fs = VaultFS(root)
        fs.scan()
        for kind, stem in (("one form (メモ)", "消えた"), ("two forms (ガイド)", "ガイド消えた")):
            gone = [f"人物/{stem}{i}.md" for i in range(1000)]

            def ask(gone: list[str] = gone) -> None:
                for rel in gone:
                    fs.refusal(rel)
                    fs.stat(rel)

            print(f"1,000 gone notes, {kind}, folder of {a.names:,}: {median_of(3, ask):.3f} s")
    text = "Punkte " + "z. 1. " * (a.periods // 2) + "\n"
    cost = median_of(3, lambda: parse_note("n.md", text))
    print(f"a summary of {a.periods:,} periods ({len(text) // 1024} KB): {cost:.3f} s")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
