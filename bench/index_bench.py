"""Index benchmarks (issue 4): throughput, update cost, no-op sync, query latency.

    python bench/index_bench.py all            # everything below, in order
    python bench/index_bench.py throughput     # cold indexing vs bare SentenceTransformer.encode
    python bench/index_bench.py update         # one edited paragraph in a 500-note vault
    python bench/index_bench.py noop           # a sync that finds nothing, 5,000 notes
    python bench/index_bench.py query          # search latency at 50,000 chunks

Medians, and ratios to a baseline measured in the same run: this machine is
shared and noisy. The 50,000-chunk vault is built once (real model, minutes)
and kept under bench/.work/ for later runs.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from memvault.api import Vault  # noqa: E402
from memvault.core.chunks import chunk_note  # noqa: E402
from memvault.core.notes import parse_note  # noqa: E402
from memvault.index.embedder import HashEmbedder, SentenceTransformerEmbedder  # noqa: E402

WORDS = """
    alpha beta gamma delta schema migration latency cache deploy review budget team
    search index vector postgres kafka billing mobile release incident owner roadmap
    metric customer contract design api token queue retry backoff timeout
""".split()  # noqa: SIM905 - a word list reads best as text
WORK = ROOT / "bench" / ".work"


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def make_notes(root: Path, count: int, paragraphs: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    for i in range(count):
        folder = ("projects", "decisions", "people", "logs")[i % 4]
        body = "\n\n".join(
            f"## Part {j}\n\n"
            + " ".join(sentence(rng, rng.randint(8, 20)) for _ in range(rng.randint(3, 6)))
            for j in range(paragraphs)
        )
        path = root / folder / f"note-{i:05}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntitle: Note {i}\nsummary: {sentence(rng, 8)}\ndate: 2024-01-{i % 28 + 1:02}\n"
            f"---\n# Note {i}\n\n{body}\n",
            encoding="utf-8",
        )
    (root / "MEMORY.md").write_text("# Memory Index\n", encoding="utf-8")


def _bare_rate(emb: SentenceTransformerEmbedder, texts: list[str], lines: list[str]) -> float:
    """Chunks/s of encoding the chunks' texts and their lines' (index.line_vectors), as sync does."""
    started = time.perf_counter()
    emb.embed(texts + lines)
    return len(texts) / (time.perf_counter() - started)


def _sync_rate(emb: SentenceTransformerEmbedder, root: Path) -> tuple[float, int]:
    started = time.perf_counter()
    with Vault.open(root, create=True, embedder=emb) as v:
        report = v.sync()
    return report.embedded_chunks / (time.perf_counter() - started), report.embedded_chunks


def throughput(emb: SentenceTransformerEmbedder, runs: int = 4) -> dict[str, Any]:
    """Chunks/s of a cold sync vs chunks/s of bare encode on the very same texts."""
    out: dict[str, list[float]] = {"sync": [], "bare": []}
    chunks = 0
    for run in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "v"
            make_notes(root, 120, 4, seed=run)
            # the exact texts the engine embeds, for the bare baseline
            with Vault.open(root, create=True, embedder=HashEmbedder(dim=emb.dim)) as probe:
                texts: list[str] = []
                lines: list[str] = []
                for path in sorted(root.rglob("note-*.md")):
                    note = parse_note(
                        path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")
                    )
                    settings = probe.config.index
                    cs = chunk_note(
                        note,
                        emb.count_tokens,
                        target_tokens=settings.chunk_target_tokens,
                        max_tokens=emb.max_tokens,
                        parts=settings.embed_context,
                    )
                    texts += probe.engine.embedding.texts_for(note, cs)
                    lines += probe.engine.embedding.line_texts(c.text for c in cs).values()
            chunk_texts = set(texts)
            lines = [t for t in dict.fromkeys(lines) if t not in chunk_texts]
            shutil.rmtree(root / ".memvault")
            # alternate which goes first, so a burst of load elsewhere hits both alike
            for which in ("sync", "bare") if run % 2 else ("bare", "sync"):
                if which == "bare":
                    out["bare"].append(_bare_rate(emb, texts, lines))
                else:
                    rate, chunks = _sync_rate(emb, root)
                    out["sync"].append(rate)
    sync, bare = statistics.median(out["sync"]), statistics.median(out["bare"])
    return {
        "chunks_per_run": chunks,
        "sync_chunks_per_s": round(sync, 1),
        "bare_encode_chunks_per_s": round(bare, 1),
        "ratio": round(sync / bare, 3),
        "runs": runs,
    }


def update_cost(emb: SentenceTransformerEmbedder, edits: int = 20) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        make_notes(root, 500, 3)
        with Vault.open(root, create=True, embedder=emb) as v:
            v.sync()
            times, embedded = [], []
            rng = random.Random(5)
            for i in range(edits):
                path = root / "projects" / f"note-{rng.randrange(0, 500, 4):05}.md"
                text = path.read_text(encoding="utf-8")
                path.write_text(
                    text.replace("## Part 1\n\n", f"## Part 1\n\nEdit {i} {sentence(rng, 6)} "),
                    encoding="utf-8",
                )
                started = time.perf_counter()
                report = v.sync(paths=[path.relative_to(root).as_posix()])
                times.append(time.perf_counter() - started)
                embedded.append(report.embedded_chunks)
    return {
        "notes": 500,
        "edits": edits,
        "median_seconds": round(statistics.median(times), 4),
        "p95_seconds": round(sorted(times)[int(0.95 * len(times)) - 1], 4),
        "median_chunks_embedded": statistics.median(embedded),
    }


def noop(runs: int = 7) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        make_notes(root, 5000, 1)
        with Vault.open(root, create=True, embedder=HashEmbedder()) as v:
            v.sync()
        times = []
        for _ in range(runs):
            with Vault.open(root, create=True, embedder=HashEmbedder()) as v:
                started = time.perf_counter()
                report = v.sync()
                times.append(time.perf_counter() - started)
                assert not report.changed and report.embedded_chunks == 0
    return {
        "notes": 5000,
        "median_seconds": round(statistics.median(times), 4),
        "note": "the vault reopened before each run; timed: full scan + stat + diff; hash embedder: "
        "a no-op sync never calls the model",
    }


def query_latency(
    emb: SentenceTransformerEmbedder, target: int = 50_000, queries: int = 100
) -> dict[str, Any]:
    root = WORK / "query-50k"
    if not (root / ".memvault" / "index.db").exists():
        shutil.rmtree(root, ignore_errors=True)
        make_notes(root, target // 5, 5, seed=9)
    with Vault.open(root, create=True, embedder=emb) as v:
        started = time.perf_counter()
        report = v.sync()
        build = time.perf_counter() - started
        chunks = v.engine.store.counts()["chunks"]
        rng = random.Random(3)
        qs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))) for _ in range(queries)]
        v.search(qs[0])  # warm: model, vectors, caches
        times, embed_times = [], []
        for q in qs:
            started = time.perf_counter()
            emb.embed([q])
            embed_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            v.search(q, k=10)
            times.append(time.perf_counter() - started)
    return {
        "chunks": chunks,
        "queries": queries,
        "p50_ms": round(1000 * statistics.median(times), 1),
        "p95_ms": round(1000 * sorted(times)[int(0.95 * len(times)) - 1], 1),
        "query_embedding_p50_ms": round(1000 * statistics.median(embed_times), 1),
        "build_seconds_this_run": round(build, 1),
        "embedded_this_run": report.embedded_chunks,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("all", "throughput", "update", "noop", "query"))
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args(argv)
    emb = None
    if args.what != "noop":
        emb = SentenceTransformerEmbedder(threads=args.threads or None)
    results: dict[str, Any] = {}
    for name, fn in (
        ("throughput", lambda: throughput(emb)),
        ("update", lambda: update_cost(emb)),
        ("noop", noop),
        ("query", lambda: query_latency(emb)),
    ):
        if args.what in (name, "all"):
            results[name] = fn()
            print(json.dumps({name: results[name]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
