"""What a folder page's marks cost (``core/page_marks.py``): ``Marks.of`` over every entry of
the directory, on each page view, against the same page view without it, in one run.

    python bench/page_marks_bench.py                     # 100,000 notes in one folder
    python bench/page_marks_bench.py --notes 20000 --runs 9

A vault of ``--notes`` small notes in ``F/`` (plus 8 at the top level) is written under a
temporary folder and opened with the hash embedder, not synced: a page view reads the
folder from disk (``fs.scan``), sorts it newest first and reads the index's rows of the
40 notes shown only, so the index's rows are not what is timed (none: each summary is
empty). Timed, interleaved (with, without, with, ...), each the median of ``--runs``:

- ``view /memories/F`` (page 1) and ``view /memories/F`` with the ``view_range`` its
  page gives (``[41, M]``: checked), through ``VaultMemoryTool.call``;
- the same two with ``Marks.of`` made a constant and the list it reads not built (the
  page view without marks: its commands carry a wrong mark, its text is otherwise the
  same);
- ``Marks.of`` alone on the folder's paths.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from memvault.api import Vault  # noqa: E402
from memvault.core import memory_views as V  # noqa: E402
from memvault.core import page_marks  # noqa: E402
from memvault.index.embedder import HashEmbedder  # noqa: E402
from memvault.integrations.anthropic import VaultMemoryTool  # noqa: E402


def generate(root: Path, n: int) -> None:
    (root / ".memvault").mkdir(parents=True)
    (root / "F").mkdir()
    for i in range(n):
        path = root / "F" / f"2025-{1 + i % 12:02d}-{1 + i % 28:02d} note {i:06d}.md"
        path.write_text(f"# Note {i}\n\nbody {i}\n", encoding="utf-8")
        os.utime(path, ns=(10**18 + i * 10**6,) * 2)
    for i in range(8):
        (root / f"top{i}.md").write_text(f"# Top {i}\n", encoding="utf-8")


def timed(f: Callable[[], object]) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    real_of, real_numbering = page_marks.Marks.of, V._numbering
    with tempfile.TemporaryDirectory(prefix="page-marks-") as tmp:
        root = Path(tmp) / "vault"
        generate(root, args.notes)
        with Vault.open(root, embedder=HashEmbedder()) as vault:
            tool = VaultMemoryTool(vault)
            first = str(tool.call({"command": "view", "path": "/memories/F"}))
            (a, b) = re.findall(r"view_range \[(\d+), (\d+)\] for the next ones", first)[-1]
            page = {"command": "view", "path": "/memories/F", "view_range": [int(a), int(b)]}
            views = {"page 1": {"command": "view", "path": "/memories/F"}, "page 2": page}
            assert "(The entries" not in str(tool.call(page))

            def marks(on: bool) -> None:
                if on:
                    page_marks.Marks.of, V._numbering = real_of, real_numbering
                else:
                    page_marks.Marks.of = classmethod(lambda cls, rels: cls((0,)))  # type: ignore[method-assign,assignment]
                    V._numbering = lambda *a: []  # type: ignore[assignment]

            times: dict[tuple[str, bool], list[float]] = {}
            for _ in range(args.runs):
                for on in (True, False):
                    marks(on)
                    for name, command in views.items():
                        t = timed(lambda c=command: tool.call(c))  # type: ignore[misc]
                        times.setdefault((name, on), []).append(t)
            marks(True)
            rels = [p.relative_to(root).as_posix() for p in (root / "F").iterdir()]
            alone = [timed(lambda: real_of(rels)) for _ in range(args.runs)]
    print(f"{args.notes} notes in F/, median of {args.runs} (interleaved)")
    for name in views:
        with_ = statistics.median(times[(name, True)])
        without = statistics.median(times[(name, False)])
        print(
            f"  view F {name}: {with_ * 1000:.0f} ms with marks, {without * 1000:.0f} ms "
            f"without: ratio {with_ / without:.3f} (+{(with_ - without) * 1000:.0f} ms)"
        )
    print(f"  Marks.of alone on {len(rels)} paths: {statistics.median(alone) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
