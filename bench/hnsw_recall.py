"""hnswlib's recall against exact search, and its insert CPU, per ef_construction.

    PYTHONPATH=daemon python bench/hnsw_recall.py embed TEXTS.json VECS.npz [--limit N]
        # TEXTS.json: {"texts": [...], "queries": [...]}; the bundled model (int8 ONNX,
        # the shipped settings) embeds both, batches of 64 of like length; float16 (what
        # cache.db keeps). Keep VECS.npz out of the repository: it is the texts' vectors.
    PYTHONPATH=daemon python bench/hnsw_recall.py recall VECS.npz --sizes 50000,100000 \\
        --ef-construction 200,100,64 [--ef-search 100,150]
        # for each size: the first N texts' vectors go into a cosine hnswlib index as
        # memvault builds one (M=16, batches of 256 through add_items, its threads),
        # once per ef_construction; queries at each ef_search (default 100), k=10, against exact kNN
        # (a matrix product over the same N vectors). Queries: the questions (real
        # questions of the dev sets) and held-out texts (never inserted), each split
        # into folds A (even) and B (odd). Prints one JSON line per (size, ef).
    python bench/hnsw_recall.py recall --random 384 ...   # Gaussian vectors instead

Insert CPU is getrusage(RUSAGE_SELF) around the inserts (hnswlib's own threads
included), so it is the build's CPU, not only the main thread's.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import hnswlib
import numpy as np

BATCH = 256  # engine/beside.py's BESIDE_BATCH: what the lane beside hands add_items
HELD_OUT = 2000
K = 10


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def embed(texts_file: Path, out: Path, limit: int | None) -> None:
    """The shortest ``limit`` texts (the model's time grows with a text's length), in a
    shuffled order, and every query; saved to ``out`` after each 6,400 texts too (a
    partial file holds the texts done so far: ``recall`` uses what is there)."""
    from memvault.config import IndexSettings
    from memvault.index.embedder import make_embedder

    data = json.loads(texts_file.read_text())
    embedder = make_embedder(IndexSettings())
    texts = sorted(data["texts"], key=len)[:limit]
    np.random.default_rng(27).shuffle(texts)
    queries = _embed_all(embedder, data["queries"], None)
    _embed_all(embedder, texts, lambda done: np.savez(out, texts=done, queries=queries))


def _embed_all(embedder: Any, items: list[str], save: Any) -> np.ndarray:
    # batches of like lengths (a batch pads to its longest text); rows kept in order
    order = sorted(range(len(items)), key=lambda i: len(items[i]))
    rows: list[np.ndarray] = []
    started = time.perf_counter()
    for i in range(0, len(order), 64):
        rows.append(np.asarray(embedder.embed([items[j] for j in order[i : i + 64]])))
        if (save is not None and (i + 64) % 6400 == 0) or i + 64 >= len(order):
            done = np.concatenate(rows).astype(np.float16)
            at = np.asarray(order[: len(done)])
            if save is not None:  # the texts done so far, in their shuffled order
                save(done[np.argsort(at)])
            print(f"{len(done)}/{len(items)} {time.perf_counter() - started:.0f}s", flush=True)
    done = np.concatenate(rows).astype(np.float16)
    out = np.zeros_like(done)
    out[np.asarray(order)] = done
    return out


def _normed(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def _exact(base: np.ndarray, queries: np.ndarray) -> np.ndarray:
    out = np.empty((len(queries), K), dtype=np.int64)
    for i in range(0, len(queries), 256):
        sims = queries[i : i + 256] @ base.T
        top = np.argpartition(-sims, K, axis=1)[:, :K]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1)
        out[i : i + 256] = np.take_along_axis(top, order, axis=1)
    return out


def _build(
    base: np.ndarray, ef_construction: int, m: int, threads: int
) -> tuple[hnswlib.Index, float, float]:
    index = hnswlib.Index(space="cosine", dim=base.shape[1])
    index.init_index(max_elements=len(base), ef_construction=ef_construction, M=m)
    cpu, wall = _cpu(), time.perf_counter()
    labels = np.arange(len(base), dtype=np.uint64)
    for i in range(0, len(base), BATCH):
        index.add_items(base[i : i + BATCH], labels[i : i + BATCH], num_threads=threads)
    return index, _cpu() - cpu, time.perf_counter() - wall


def _recall(index: hnswlib.Index, queries: np.ndarray, truth: np.ndarray) -> list[float]:
    found, _ = index.knn_query(queries, k=K, num_threads=1)
    return [len(set(f.tolist()) & set(t.tolist())) / K for f, t in zip(found, truth, strict=True)]


def recall(args: argparse.Namespace) -> None:
    if args.random:
        rng = np.random.default_rng(0)
        n = max(args.sizes) + HELD_OUT
        texts = _normed(rng.standard_normal((n, args.random)))
        sets = {"held_out": texts[-HELD_OUT:]}
    else:
        data = np.load(args.vecs)
        texts = _normed(data["texts"])
        sets = {"questions": _normed(data["queries"]), "held_out": texts[-HELD_OUT:]}
    pool = texts[:-HELD_OUT]
    for size in args.sizes:
        if size > len(pool):
            print(f"only {len(pool)} vectors; {size} skipped", file=sys.stderr)
            continue
        base = pool[:size]
        truth = {name: _exact(base, q) for name, q in sets.items()}
        for ef in args.ef_construction:
            index, cpu, wall = _build(base, ef, args.m, args.threads)
            for ef_search in args.ef_search:
                index.set_ef(ef_search)
                row: dict[str, object] = {
                    "n": size,
                    "ef_construction": ef,
                    "M": args.m,
                    "ef_search": ef_search,
                    "threads": args.threads,
                    "insert_cpu_us": round(cpu / size * 1e6, 1),
                    "insert_wall_s": round(wall, 1),
                }
                for name, q in sets.items():
                    started = _cpu()
                    per = _recall(index, q, truth[name])
                    row[f"{name}_query_cpu_us"] = round((_cpu() - started) / len(q) * 1e6)
                    row[name] = {
                        "A": round(float(np.mean(per[0::2])), 4),
                        "B": round(float(np.mean(per[1::2])), 4),
                        "min": round(float(np.min(per)), 2),
                    }
                print(json.dumps(row), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("embed")
    e.add_argument("texts", type=Path)
    e.add_argument("out", type=Path)
    e.add_argument("--limit", type=int, help="the first N texts only")
    r = sub.add_parser("recall")
    r.add_argument("vecs", type=Path, nargs="?")
    r.add_argument("--random", type=int, default=0, help="Gaussian vectors of this dimension")
    r.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[50000])
    r.add_argument(
        "--ef-construction", type=lambda s: [int(x) for x in s.split(",")], default=[200]
    )
    r.add_argument("--m", type=int, default=16)
    r.add_argument("--ef-search", type=lambda s: [int(x) for x in s.split(",")], default=[100])
    r.add_argument("--threads", type=int, default=-1, help="add_items' num_threads (-1: all)")
    args = parser.parse_args(argv)
    if args.cmd == "embed":
        embed(args.texts, args.out, args.limit)
    else:
        recall(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
