"""Copies of one vector in the hnswlib index: how many a vault has, what they cost recall,
and what finding them costs an insert. One code a run (PYTHONPATH picks it).

    PYTHONPATH=CODE/daemon python bench/vector_copies.py share VAULT [VAULT...]
        # each vault indexed in a temp copy (hash embedder): its chunks, the distinct
        # texts embedded for them (chunks.sha), the share that are copies
    PYTHONPATH=CODE/daemon python bench/vector_copies.py recall [--others 3000] \\
        [--copies 0,30,300,3000] [--seeds 3]
        # memvault's VectorIndex (the shipped M / ef settings) of Gaussian vectors at
        # 384 dimensions: ``others`` distinct vectors and ``copies`` labels sharing one,
        # the copies 8th to last in label order (one note's chunks in a row), added in
        # steps of 32 (the vector lane's); recall@10 of 100 Gaussian queries against
        # exact search (any copies count as the one vector they are)
    PYTHONPATH=CODE/daemon python bench/vector_copies.py insert [--n 40000] [--rounds 3]
        # process_time of adding n distinct vectors in steps of 32, no copies: what the
        # digest of each vector costs an insert; one JSON line per round

Run each mode with the code before and after in the same session (alternating), and
compare the medians as a ratio.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import memvault
from memvault.config import IndexSettings
from memvault.index.vectors import VectorIndex, VectorsWanted

DIM = 384
STEP = 32  # engine/embedding.py's vector lane step


def _index(path: Path) -> VectorIndex:
    s = IndexSettings()
    return VectorIndex(
        path, DIM, m=s.hnsw_m, ef_construction=s.ef_construction, ef_search=s.ef_search
    )


def share(vaults: list[Path]) -> None:
    from memvault.api import Vault
    from memvault.index.embedder import HashEmbedder

    for vault in vaults:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "v"
            shutil.copytree(vault, root, ignore=shutil.ignore_patterns(".memvault", ".git"))
            (root / ".memvault").mkdir(exist_ok=True)
            with Vault.open(root, embedder=HashEmbedder()) as v:
                v.sync()
                db = v.engine.store._db
                chunks, texts = db.execute(
                    "SELECT count(*), count(DISTINCT sha) FROM chunks"
                ).fetchone()
                top = db.execute(
                    "SELECT count(*) AS n, min(text) FROM chunks GROUP BY sha HAVING n > 1 "
                    "ORDER BY n DESC LIMIT 3"
                ).fetchall()
        print(
            json.dumps(
                {
                    "vault": vault.name,
                    "chunks": chunks,
                    "distinct": texts,
                    "copies": chunks - texts,
                    "share": round((chunks - texts) / chunks, 4) if chunks else 0.0,
                    "most_copied": [[n, t[:60]] for n, t in top],
                }
            )
        )


def add_in_steps(add: Callable[[list[int], np.ndarray], None], data: np.ndarray) -> None:
    """``data``'s rows added as the vector lane adds them, ``STEP`` at a time (labels
    are row numbers)."""
    for start in range(0, len(data), STEP):
        stop = min(start + STEP, len(data))
        add(list(range(start, stop)), data[start:stop])


def recall_at_10(
    search: Callable[[np.ndarray, int], list[tuple[int, float]]],
    data: np.ndarray,
    copied: set[int],
    queries: np.ndarray,
) -> float:
    """``search``'s recall@10 against exact search over ``data``, any labels in
    ``copied`` counting as the one vector they share."""
    unit = data / np.linalg.norm(data, axis=1, keepdims=True)
    found = 0
    for q in queries:
        exact = np.argsort(-(unit @ (q / np.linalg.norm(q))), kind="stable")[:10]
        got = [label for label, _ in search(q, 10)]
        found += len({x for x in got if x not in copied} & set(exact.tolist()))
        found += min(sum(1 for x in got if x in copied), sum(1 for x in exact if x in copied))
    return found / (10 * len(queries))


def recall(others: int, copies: list[int], seeds: int) -> None:
    for count in copies:
        scores = []
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            base = rng.standard_normal((others, DIM)).astype(np.float32)
            copy = rng.standard_normal((1, DIM)).astype(np.float32)
            data = np.vstack([base[:7], np.repeat(copy, count, axis=0), base[7:]])
            data = data.astype(np.float16).astype(np.float32)  # what the cache keeps
            copied = set(range(7, 7 + count))
            with tempfile.TemporaryDirectory() as tmp:
                vi = _index(Path(tmp) / "v.bin")
                vi.open(VectorsWanted(None, [], lambda labels, d=data: d[list(labels)]))
                add_in_steps(vi.add, data)
                queries = rng.standard_normal((100, DIM)).astype(np.float32)
                scores.append(recall_at_10(vi.query, data, copied, queries))
        print(
            json.dumps(
                {
                    "code": memvault.__file__,
                    "others": others,
                    "copies": count,
                    "recall@10": [round(s, 3) for s in scores],
                    "median": round(statistics.median(scores), 3),
                }
            )
        )


def insert(n: int, rounds: int) -> None:
    rng = np.random.default_rng(5)
    data = rng.standard_normal((n, DIM)).astype(np.float16).astype(np.float32)
    for r in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            vi = _index(Path(tmp) / "v.bin")
            vi.open(VectorsWanted(None, [], lambda labels, d=data: d[list(labels)]))
            t = time.process_time()
            for start in range(0, n, STEP):
                vi.add(list(range(start, min(start + STEP, n))), data[start : start + STEP])
            cpu = time.process_time() - t
        print(json.dumps({"code": memvault.__file__, "round": r, "n": n, "cpu_s": round(cpu, 2)}))


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("share")
    s.add_argument("vaults", nargs="+", type=Path)
    r = sub.add_parser("recall")
    r.add_argument("--others", type=int, default=3000)
    r.add_argument("--copies", default="0,30,300,3000")
    r.add_argument("--seeds", type=int, default=3)
    i = sub.add_parser("insert")
    i.add_argument("--n", type=int, default=40000)
    i.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if a.mode == "share":
        share(a.vaults)
    elif a.mode == "recall":
        recall(a.others, [int(x) for x in a.copies.split(",")], a.seeds)
    else:
        insert(a.n, a.rounds)


if __name__ == "__main__":
    sys.exit(main())
