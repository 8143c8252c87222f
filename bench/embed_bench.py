"""Embedding backends (issue 14): ONNX int8 vs PyTorch, and the lean cache.db.

    python bench/embed_bench.py all          # everything below, in order
    python bench/embed_bench.py throughput   # bare encode + cold sync vs bare torch encode
    python bench/embed_bench.py query        # one query at a time
    python bench/embed_bench.py startup      # import -> first query, and RSS (fresh processes)
    python bench/embed_bench.py quality      # cosine and top-10 neighbours vs PyTorch
    python bench/embed_bench.py cache        # cache.db bytes per vector, float16 vs float32

Texts: the exact chunk texts memvault embeds for the LoCoMo dev conversations
(read from ../shared/bench/locomo, never copied here; the kit writes each as a
vault in a temporary folder). Timings alternate which backend goes first and
report medians: the machine is shared. Ratios are of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))
KIT = ROOT.parent / "shared" / "bench" / "locomo"
sys.path.insert(0, str(KIT))

import locomo_kit  # noqa: E402

from memvault.api import Vault  # noqa: E402
from memvault.config import IndexSettings  # noqa: E402
from memvault.index.embedder import Embedder, SentenceTransformerEmbedder  # noqa: E402
from memvault.index.embedder_onnx import OnnxEmbedder, load_onnx_embedder  # noqa: E402
from memvault.index.tokenizer import Tokenizer  # noqa: E402


class Recorder:
    """Counts with the real tokenizer, records the texts the engine embeds, returns noise."""

    def __init__(self) -> None:
        self.tokenizer = Tokenizer.for_model("sentence-transformers/all-MiniLM-L6-v2")
        self.model_id, self.dim, self.max_tokens = "recorder", 384, self.tokenizer.max_tokens
        self.texts: list[str] = []
        self.rng = np.random.default_rng(0)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += texts
        v = self.rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def count_tokens(self, text: str) -> int:
        return self.tokenizer.count(text)


def write_vaults(base: Path) -> list[Path]:
    convs = locomo_kit.load(KIT / "locomo10_dev.json")
    roots = []
    for i, conv in enumerate(convs):
        root = base / f"conv-{i}"
        locomo_kit.build_vault(conv, root)
        roots.append(root)
    return roots


def chunk_texts() -> tuple[list[str], list[str]]:
    """(the texts memvault embeds for the LoCoMo dev vaults, the questions)."""
    rec = Recorder()
    with tempfile.TemporaryDirectory() as tmp:
        for root in write_vaults(Path(tmp)):
            with Vault.open(root, embedder=rec, create=True) as v:
                v.sync()
    convs = locomo_kit.load(KIT / "locomo10_dev.json")
    questions = [q["question"] for c in convs for q in locomo_kit.questions(c)]
    return list(dict.fromkeys(rec.texts)), questions


def settings(**kw: Any) -> IndexSettings:
    return IndexSettings(**kw)


def torch_embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def onnx_embedder() -> OnnxEmbedder:
    return load_onnx_embedder(settings())


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


# --- throughput -------------------------------------------------------------------------------


def throughput(texts: list[str], runs: int) -> dict[str, Any]:
    """texts/s of bare encode (torch, onnx) and of a cold index sync with onnx, same texts."""
    torch_emb, onnx_emb = torch_embedder(), onnx_embedder()
    torch_emb.embed(texts[:32])
    onnx_emb.embed(texts[:32])
    rates: dict[str, list[float]] = {"torch_encode": [], "onnx_encode": [], "onnx_cold_sync": []}
    sync_texts: list[float] = []  # texts a second the cold sync gave the encoder
    chunks = 0

    def cold_sync() -> float:
        """Chunks a second; ``sync_texts`` gets the texts a second (chunks and their
        lines: what the encoder is given, in the units of the bare encodes)."""
        nonlocal chunks
        given = [0]
        encode = onnx_emb.embed

        def counted(batch: Sequence[str]) -> np.ndarray:
            given[0] += len(batch)
            return encode(batch)

        onnx_emb.embed = counted  # type: ignore[method-assign]
        try:
            with tempfile.TemporaryDirectory() as tmp:
                roots = write_vaults(Path(tmp))
                started, embedded = time.perf_counter(), 0
                for root in roots:
                    with Vault.open(root, embedder=onnx_emb, create=True) as v:
                        embedded += v.sync().embedded_chunks
                seconds = time.perf_counter() - started
        finally:
            del onnx_emb.embed
        chunks = embedded
        sync_texts.append(given[0] / seconds)
        return embedded / seconds

    order = ["torch_encode", "onnx_encode", "onnx_cold_sync"]
    for run in range(runs):
        for which in order if run % 2 == 0 else order[::-1]:
            if which == "torch_encode":
                rates[which].append(len(texts) / timed(lambda: torch_emb.embed(texts)))
            elif which == "onnx_encode":
                rates[which].append(len(texts) / timed(lambda: onnx_emb.embed(texts)))
            else:
                rates[which].append(cold_sync())
            print(json.dumps({"run": run, which: round(rates[which][-1], 1)}), flush=True)
    med = {k: statistics.median(v) for k, v in rates.items()}
    return {
        "texts": len(texts),
        "sync_chunks": chunks,
        "runs": runs,
        "texts_per_s": {k: round(v, 1) for k, v in med.items()},
        "all_runs": {k: [round(x, 1) for x in v] for k, v in rates.items()},
        "ratio_onnx_encode_to_torch_encode": round(med["onnx_encode"] / med["torch_encode"], 2),
        # chunks a second over texts a second: since line vectors (3.44 texts a chunk
        # here) not one unit; the next ratio is of texts to texts
        "ratio_onnx_cold_sync_to_torch_encode": round(
            med["onnx_cold_sync"] / med["torch_encode"], 2
        ),
        "onnx_cold_sync_texts_per_s": round(statistics.median(sync_texts), 1),
        "ratio_onnx_cold_sync_texts_to_torch_encode": round(
            statistics.median(sync_texts) / med["torch_encode"], 2
        ),
        "same_run_ratios": [
            round(o / t, 2)
            for o, t in zip(rates["onnx_encode"], rates["torch_encode"], strict=True)
        ],
        "threads": {"torch": _torch_threads(), "onnxruntime": "default (physical cores)"},
    }


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


# --- query latency -------------------------------------------------------------------------------


def query_latency(questions: list[str], n: int) -> dict[str, Any]:
    embedders: dict[str, Embedder] = {"torch": torch_embedder(), "onnx": onnx_embedder()}
    times: dict[str, list[float]] = {k: [] for k in embedders}
    for emb in embedders.values():
        emb.embed(questions[:3])
    for i, q in enumerate(questions[:n]):
        for name in list(embedders) if i % 2 == 0 else list(embedders)[::-1]:
            times[name].append(timed(lambda e=embedders[name], q=q: e.embed([q])))
    out: dict[str, Any] = {"queries": min(n, len(questions))}
    for name, ts in times.items():
        ts.sort()
        out[name] = {
            "p50_ms": round(1000 * statistics.median(ts), 2),
            "p95_ms": round(1000 * ts[int(0.95 * len(ts)) - 1], 2),
        }
    out["ratio_p50_torch_to_onnx"] = round(out["torch"]["p50_ms"] / out["onnx"]["p50_ms"], 1)
    return out


# --- start-up and memory (fresh processes) ----------------------------------------------------------

_STARTUP = """
import time, sys, json
t0 = time.perf_counter()
from memvault.config import IndexSettings
from memvault.index.embedder import make_embedder
emb = make_embedder(IndexSettings(backend=sys.argv[1]))
emb.embed(["What did Caroline research?"])
first = time.perf_counter() - t0
texts = json.loads(open(sys.argv[2]).read())
emb.embed(texts)
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
mb = lambda key: int(status[key].split()[0]) / 1024  # noqa: E731
# VmHWM, not ru_maxrss: the latter keeps the forking parent's high-water mark
print(json.dumps({"first_query_s": first, "rss_mb": mb("VmRSS"), "peak_rss_mb": mb("VmHWM"),
                  "torch_imported": "torch" in sys.modules}))
"""


def startup(texts: list[str], runs: int) -> dict[str, Any]:
    """Import -> first query wall time, then RSS after embedding the texts, per backend."""
    onnx_embedder()  # built before anything is timed
    results: dict[str, list[dict[str, Any]]] = {"torch": [], "onnx": []}
    env = {**os.environ, "PYTHONPATH": str(ROOT / "daemon")}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(texts, f)
    try:
        for run in range(runs):
            for backend in ("torch", "onnx") if run % 2 == 0 else ("onnx", "torch"):
                out = subprocess.run(
                    [sys.executable, "-c", _STARTUP, backend, f.name],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                results[backend].append(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        os.unlink(f.name)
    summary: dict[str, Any] = {"runs": runs, "texts_embedded_after": len(texts)}
    for backend, rows in results.items():
        summary[backend] = {
            "first_query_s_median": round(statistics.median(r["first_query_s"] for r in rows), 2),
            "rss_mb_median": round(statistics.median(r["rss_mb"] for r in rows)),
            "peak_rss_mb_median": round(statistics.median(r["peak_rss_mb"] for r in rows)),
            "torch_imported": rows[0]["torch_imported"],
        }
    return summary


# --- quality ---------------------------------------------------------------------------------------


def topk(corpus: np.ndarray, queries: np.ndarray, k: int = 10) -> np.ndarray:
    scores = queries @ corpus.T
    return np.argsort(-scores, axis=1)[:, :k]


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean([len(set(x) & set(y)) / len(x) for x, y in zip(a, b, strict=True)]))


def quality(texts: list[str], questions: list[str]) -> dict[str, Any]:
    torch_emb, onnx_emb = torch_embedder(), onnx_embedder()
    t_docs, o_docs = torch_emb.embed(texts), onnx_emb.embed(texts)
    t_q, o_q = torch_emb.embed(questions), onnx_emb.embed(questions)
    o_q_alone = np.vstack([onnx_emb.embed([q]) for q in questions[:200]])
    cos = (t_docs * o_docs).sum(axis=1)
    ref = topk(t_docs, t_q)
    return {
        "texts": len(texts),
        "questions": len(questions),
        "cosine_to_torch": {
            "min": round(float(cos.min()), 4),
            "mean": round(float(cos.mean()), 4),
            "p01": round(float(np.percentile(cos, 1)), 4),
        },
        "top10_overlap_questions_vs_torch": round(overlap(ref, topk(o_docs, o_q)), 3),
        "top10_overlap_torch_index_onnx_queries": round(overlap(ref, topk(t_docs, o_q)), 3),
        "top10_overlap_chunk_neighbours_vs_torch": round(
            overlap(topk(t_docs, t_docs, 11)[:, 1:], topk(o_docs, o_docs, 11)[:, 1:]), 3
        ),
        "onnx_query_alone_vs_in_a_batch_cosine_min": round(
            float((o_q_alone * o_q[:200]).sum(axis=1).min()), 4
        ),
        "storage": {
            name: _storage_effect(vecs, queries)
            for name, vecs, queries in (("torch", t_docs, t_q), ("onnx", o_docs, o_q))
        },
    }


def _storage_effect(docs: np.ndarray, queries: np.ndarray) -> dict[str, Any]:
    """What keeping the vectors as float16 (or int8) does to them and to top-10 neighbours."""
    from memvault.index.vector_cache import decode_half, decode_rows, encode_half, encode_rows

    f16 = np.vstack([decode_half(encode_half(v)) for v in docs])  # cache.db version 2
    i8 = decode_rows(encode_rows(docs))  # cache.db version 3: what memvault keeps
    ref = topk(docs, queries)
    out = {}
    for name, stored in (("float16", f16), ("int8", i8)):
        cos = (docs * stored).sum(axis=1) / np.linalg.norm(stored, axis=1)
        out[name] = {
            "cosine_min": round(float(cos.min()), 7),
            "top10_overlap": round(overlap(ref, topk(stored, queries)), 4),
        }
    return out


# --- cache.db ----------------------------------------------------------------------------------------


def cache_size(texts: list[str]) -> dict[str, Any]:
    """Bytes per vector: memvault 0.1's cache.db, and the same rows after the migration."""
    import hashlib
    import sqlite3

    from memvault.index.vector_cache import VectorCache

    vectors = onnx_embedder().embed(texts)
    model = "sentence-transformers/all-MiniLM-L6-v2@53aa51172d14+onnx-int8-v1"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cache.db"
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(
            "CREATE TABLE embeddings(model TEXT NOT NULL, sha TEXT NOT NULL, vector BLOB NOT NULL, "
            "PRIMARY KEY (model, sha)) WITHOUT ROWID"
        )
        rows = [
            (model, hashlib.sha256(t.encode()).hexdigest(), v.tobytes())
            for t, v in zip(texts, vectors, strict=True)
        ]
        for i in range(0, len(rows), 256):  # a batch per commit, as the engine writes
            conn.execute("BEGIN")
            conn.executemany("INSERT INTO embeddings VALUES(?, ?, ?)", rows[i : i + 256])
            conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        before = path.stat().st_size
        started = time.perf_counter()
        VectorCache(path).close()
        migrated = time.perf_counter() - started
        after = path.stat().st_size
        fresh = Path(tmp) / "fresh.db"
        cache = VectorCache(fresh)
        for i in range(0, len(rows), 256):
            cache.put(
                model,
                {r[1]: v for r, v in zip(rows[i : i + 256], vectors[i : i + 256], strict=True)},
            )
        cache.close()
        grown = fresh.stat().st_size
    n = len(rows)
    return {
        "vectors": n,
        "v1_bytes_per_vector": round(before / n),
        "migrated_bytes_per_vector": round(after / n),
        "fresh_bytes_per_vector": round(grown / n),  # this version's (v3: int8)
        "migration_seconds": round(migrated, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "what", choices=("all", "throughput", "query", "startup", "quality", "cache")
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--texts", type=int, default=0, help="only the first N chunk texts")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    texts, questions = chunk_texts()
    if args.texts:
        texts = texts[: args.texts]
    print(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M"),
                "load_average": [round(x, 2) for x in os.getloadavg()],
                "cpus": os.cpu_count(),
                "texts": len(texts),
                "questions": len(questions),
                "max_rss_mb_so_far": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            }
        ),
        flush=True,
    )
    steps: dict[str, Callable[[], dict[str, Any]]] = {
        "throughput": lambda: throughput(texts, args.runs),
        "query": lambda: query_latency(questions, args.queries),
        "startup": lambda: startup(texts[:500], args.runs),
        "quality": lambda: quality(texts, questions),
        "cache": lambda: cache_size(texts),
    }
    for name, step in steps.items():
        if args.what in (name, "all"):
            print(json.dumps({name: step()}), flush=True)
    print(json.dumps({"load_average_end": [round(x, 2) for x in os.getloadavg()]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
