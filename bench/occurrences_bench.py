"""str_replace of an old_str found many times: the SDK's reference against memvault's.

    python bench/occurrences_bench.py

A 229 KB note of 16,000 lines holding ``w`` 48,000 times; ``str_replace`` of ``w``
is refused by both ("Multiple occurrences ..."). Medians of 3 alternated runs: the
reference's whole ``call`` (its read, then a loop that counts the lines before each
occurrence from the start), memvault's ``core.memory_tool.replace_once`` (one pass,
the first 100 line numbers listed), and the answers' lengths.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))

from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import (
    BetaLocalFilesystemMemoryTool,
)

from memvault.core.memory_tool import Refusal, replace_once


def main() -> None:
    text = "".join(f"line {i} www\n" for i in range(16000))
    ref = BetaLocalFilesystemMemoryTool(tempfile.mkdtemp(prefix="occurrences-"))
    ref.call({"command": "create", "path": "/memories/a.md", "file_text": text})
    command = {"command": "str_replace", "path": "/memories/a.md", "old_str": "w", "new_str": "x"}
    r: list[float] = []
    m: list[float] = []
    rl = ml = 0
    for _ in range(3):
        t = time.perf_counter()
        try:
            ref.call(command)
        except ToolError as e:
            rl = len(str(e))
        r.append(time.perf_counter() - t)
        t = time.perf_counter()
        try:
            replace_once(text, "w", "x", "/memories/a.md")
        except Refusal as e:
            ml = len(str(e))
        m.append(time.perf_counter() - t)
    rm, mm = statistics.median(r), statistics.median(m)
    print(f"reference {rm:.2f} s ({rl} chars), memvault {mm:.3f} s ({ml} chars), {rm / mm:.0f}x")


if __name__ == "__main__":
    main()
