"""``view /memories`` on a big vault: memvault's memory tool vs the SDK's reference.

    python bench/memory_tool_bench.py              # a generated vault of 5,000 notes
    python bench/memory_tool_bench.py --notes 3000

The vault: people/, projects/, decisions/, logs/ (MEMORY.md kept by a sync, as the
daemon keeps it), a few other folders and Claude Code-style topic files at the top
level. The same folder is given to the SDK's ``BetaLocalFilesystemMemoryTool`` (its
``memories/`` is a symlink to the vault). Reported for each tool's answer to
``{"command": "view", "path": "/memories"}``: lines, characters, word pieces of the
vault's model (memvault's unit of every budget, counted by its tokenizer) and
characters / 4 (a rough count in Claude's tokens).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from anthropic.lib.tools._beta_builtin_memory_tool import (  # noqa: E402
    BetaLocalFilesystemMemoryTool,
)

from memvault.api import Vault  # noqa: E402
from memvault.config import IndexSettings  # noqa: E402
from memvault.index.embedder import HashEmbedder, token_counter_for  # noqa: E402
from memvault.integrations.anthropic import VaultMemoryTool  # noqa: E402
from memvault.vault.template import init_vault  # noqa: E402

SHARES = {"people": 0.16, "projects": 0.08, "decisions": 0.3, "logs": 0.36, "research": 0.04,
          "meetings": 0.04}  # fmt: skip
TOPICS = 2  # per cent of the notes: topic files at the top level


def generate(root: Path, n: int) -> None:
    init_vault(root)
    rng = random.Random(7)
    made = 0
    for folder, share in SHARES.items():
        for i in range(int(n * share)):
            day = f"20{20 + i % 6}-{1 + i % 12:02d}-{1 + i % 28:02d}"
            name = f"{day}-{folder}-{i}" if folder in ("decisions", "logs") else f"{folder}-{i}"
            words = " ".join(rng.choice(["schema", "deploy", "review", "latency", "budget",
                                         "hiring", "roadmap", "incident"]) for _ in range(12))  # fmt: skip
            path = root / folder / f"{name}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                f"---\ntitle: {name}\ndate: {day}\nsummary: About {words[:60]}.\n---\n"
                f"# {name}\n\n{words}\n",
                encoding="utf-8",
            )
            made += 1
    for i in range(n - made):
        (root / f"topic-{i}.md").write_text(f"# Topic {i}\n\n- a lesson learned\n", "utf-8")


def measure(text: str, count: object) -> dict[str, int]:
    return {
        "lines": len(text.split("\n")),
        "chars": len(text),
        "word_pieces": count(text),  # type: ignore[operator]
        "chars_over_4": len(text) // 4,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        generate(root, args.notes)
        started = time.perf_counter()
        with Vault.open(root, embedder=HashEmbedder()) as v:
            v.sync(vectors=False)
            synced = time.perf_counter() - started
            notes = len(v.engine.store.manifest())
            tool = VaultMemoryTool(v)
            t0 = time.perf_counter()
            ours = str(tool.call({"command": "view", "path": "/memories"}))
            ours_s = time.perf_counter() - t0
        base = Path(tmp) / "reference"
        base.mkdir()
        (base / "memories").symlink_to(root)
        reference = BetaLocalFilesystemMemoryTool(str(base))
        t0 = time.perf_counter()
        theirs = str(reference.call({"command": "view", "path": "/memories"}))
        theirs_s = time.perf_counter() - t0
    count = token_counter_for(IndexSettings())
    a, b = measure(ours, count), measure(theirs, count)
    print(f"vault: {notes} files indexed ({args.notes} notes generated), synced in {synced:.1f} s")
    print(
        f"{'view /memories':<36}{'lines':>8}{'chars':>10}{'word pieces':>13}{'chars/4':>9}{'ms':>8}"
    )
    for name, m, s in (("memvault VaultMemoryTool", a, ours_s),
                       ("SDK BetaLocalFilesystemMemoryTool", b, theirs_s)):  # fmt: skip
        print(f"{name:<36}{m['lines']:>8}{m['chars']:>10}{m['word_pieces']:>13}"
              f"{m['chars_over_4']:>9}{s * 1000:>8.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
