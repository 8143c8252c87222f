"""What searching a note's description costs, and what the upgrade to index schema 3 costs.

    python bench/search_gaps_bench.py index                        # fresh indexing, this code
    python bench/search_gaps_bench.py upgrade --base /path/to/old  # an index built by older
                                                                   # code, opened by this one

The vault: 600 notes, a third each of
- decisions as `memvault add --summary` writes them (a summary, the template's
  empty headings),
- notes with a summary, aliases and tags and three sections of prose,
- notes with no frontmatter and three sections of prose.

The model's time is not what is measured here (it depends on the word pieces
embedded, which are counted): the embedder hashes its texts, while chunking counts
word pieces with the real MiniLM tokenizer. Reported: sync seconds (median of 3
runs), chunks, texts and word pieces given to the embedder, index.db bytes. Run
``index`` with each code (``PYTHONPATH``/``--root``) on the same machine, at once.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(os.environ.get("MEMVAULT_BENCH_ROOT", Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(ROOT / "daemon"))

from memvault.api import Vault  # noqa: E402
from memvault.index.embedder import HashEmbedder  # noqa: E402
from memvault.index.tokenizer import Tokenizer  # noqa: E402
from memvault.vault.template import init_vault  # noqa: E402

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
WORDS = """
    alpha beta gamma delta schema migration latency cache deploy review budget team
    search index vector postgres kafka billing mobile release incident owner roadmap
    metric customer contract design api token queue retry backoff timeout ledger
""".split()  # noqa: SIM905 - a word list reads best as text


class CountingEmbedder:
    """Hash vectors (no model time), the real tokenizer, and a count of what it embeds."""

    def __init__(self) -> None:
        self.inner = HashEmbedder()
        self.model_id = self.inner.model_id
        self.dim = self.inner.dim
        self.max_tokens = 254
        self.count_tokens = Tokenizer.for_model(MODEL).count
        self.texts = 0
        self.pieces = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += len(texts)
        self.pieces += sum(self.count_tokens(t) for t in texts)
        return self.inner.embed(texts)


def prose(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def build(root: Path, notes: int = 600) -> None:
    init_vault(root)
    rng = random.Random(7)
    for i in range(notes):
        kind = i % 3
        if kind == 0:
            text = (
                f'---\ntitle: "Decision {i}"\ntype: decision\nstatus: proposed\n'
                f'date: "2024-01-{1 + i % 28:02d}"\ndeciders: []\nsummary: {prose(rng, 12)}\n'
                f"tags: []\n---\n# Decision {i}\n\n## Context\n\n## Decision\n\n"
                "## Consequences\n\n## Status\n"
            )
            rel = f"decisions/d{i}.md"
        else:
            sections = "".join(f"## Part {j}\n\n{prose(rng, 60)}\n\n" for j in range(3))
            head = (
                f"---\nsummary: {prose(rng, 20)}\naliases: [N{i}]\ntags: [t{i % 7}, area/x]\n---\n"
                if kind == 1
                else ""
            )
            text = f"{head}# Note {i}\n\n{prose(rng, 30)}\n\n{sections}"
            rel = f"projects/p{i}.md"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def sync(root: Path) -> dict[str, float | int]:
    emb = CountingEmbedder()
    with Vault.open(root, embedder=emb) as vault:  # type: ignore[arg-type]
        t0 = time.perf_counter()
        report = vault.sync()
        seconds = time.perf_counter() - t0
        chunks = vault.engine.store.chunk_count()
    return {
        "seconds": round(seconds, 3),
        "modified": len(report.modified) + len(report.created),
        "chunks": chunks,
        "texts_embedded": emb.texts,
        "pieces_embedded": emb.pieces,
        "index_db_bytes": (root / ".memvault" / "index.db").stat().st_size,
    }


def median_of(runs: list[dict[str, float | int]]) -> dict[str, float | int]:
    out = dict(runs[0])
    out["seconds"] = round(statistics.median(float(r["seconds"]) for r in runs), 3)
    out["seconds_runs"] = [r["seconds"] for r in runs]  # type: ignore[assignment]
    return out


def index(runs: int) -> dict[str, object]:
    results = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "v"
            build(root)
            results.append(sync(root))
    return {"bench": "index", "root": str(ROOT), **median_of(results)}


def upgrade(base: Path, runs: int) -> dict[str, object]:
    """An index written by ``base`` (its own code, in a subprocess), then opened and
    synced by this code: the migration and the re-read it asks for."""
    results = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "v"
            env = {
                **os.environ,
                "MEMVAULT_BENCH_ROOT": str(base),
                "PYTHONPATH": str(base / "daemon"),
            }
            subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "build-and-sync", str(root)],
                check=True,
                env=env,
                stdout=subprocess.DEVNULL,
            )
            t0 = time.perf_counter()
            Vault.open(root, embedder=CountingEmbedder()).close()  # type: ignore[arg-type]
            opened = time.perf_counter() - t0
            first = sync(root)
            again = sync(root)
            results.append({**first, "open_seconds": round(opened, 3), "again": again["modified"]})
    out = median_of(results)
    out["open_seconds"] = round(statistics.median(float(r["open_seconds"]) for r in results), 3)
    return {"bench": "upgrade", "base": str(base), **out}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["index", "upgrade", "build-and-sync"])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--base", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.what == "build-and-sync":
        root = Path(args.path)
        build(root)
        print(json.dumps(sync(root)))
    elif args.what == "index":
        print(json.dumps(index(args.runs)))
    else:
        if args.base is None:
            parser.error("upgrade needs --base (a checkout of the older code)")
        print(json.dumps(upgrade(args.base.resolve(), args.runs)))


if __name__ == "__main__":
    main()
