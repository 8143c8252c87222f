"""Copies of one vector in the PostgreSQL index (pgvector HNSW): recall@10 against exact
search, memvault's ``PgVectors`` (its shipped M / ef settings) on a real server
(pgserver). One code a run (PYTHONPATH picks it): compare the code before and after.

    PYTHONPATH=CODE/daemon python bench/pg_copies.py [--others 3000] \\
        [--copies 0,300,3000] [--seeds 2]

Gaussian vectors at 384 dimensions, as bench/vector_copies.py's ``recall``: ``others``
distinct vectors and ``copies`` labels sharing one, the copies 8th to last in label
order, added in steps of 32 (the vector lane's) into an index built after the first
step; 100 Gaussian queries; any copies count as the one vector they are. ``add_s``: the
wall time of the adds (the server's work included), each seed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import memvault
from memvault.index.vectors import VectorsWanted
from vector_copies import add_in_steps, recall_at_10

DIM = 384


def recall(others: int, copies: list[int], seeds: int) -> None:
    from memvault.api import Vault
    from memvault.index.pg_vectors import PgVectors
    from pg_helpers import fresh_schema, start_server, stop_server

    server = start_server()
    try:
        os.environ.update(
            MEMVAULT_INDEX_STORE="postgres",
            MEMVAULT_INDEX_DSN=str(server.get_uri()),
            MEMVAULT_INDEX_MODEL="hash",
        )
        for count in copies:
            scores: list[float] = []
            adds: list[float] = []
            for seed in range(seeds):
                rng = np.random.default_rng(seed)
                base = rng.standard_normal((others, DIM)).astype(np.float32)
                copy = rng.standard_normal((1, DIM)).astype(np.float32)
                data = np.vstack([base[:7], np.repeat(copy, count, axis=0), base[7:]])
                data = data.astype(np.float16).astype(np.float32)
                copied = set(range(7, 7 + count))
                os.environ["MEMVAULT_INDEX_SCHEMA"] = fresh_schema(server, f"c{count}-{seed}")
                with tempfile.TemporaryDirectory() as tmp:
                    root = Path(tmp) / "v"
                    (root / ".memvault").mkdir(parents=True)
                    with Vault.open(root) as v:
                        vi = PgVectors(v.engine.store, DIM)
                        vi.open(VectorsWanted(None, [], lambda labels, d=data: d[list(labels)]))
                        began = time.perf_counter()
                        add_in_steps(vi.add, data)
                        for t in v.engine.store.builds:
                            t.join()
                        adds.append(time.perf_counter() - began)
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
                        "add_s": [round(a, 2) for a in adds],
                    }
                ),
                flush=True,
            )
    finally:
        stop_server(server)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--others", type=int, default=3000)
    ap.add_argument("--copies", default="0,300,3000")
    ap.add_argument("--seeds", type=int, default=2)
    a = ap.parse_args()
    recall(a.others, [int(c) for c in a.copies.split(",")], a.seeds)


if __name__ == "__main__":
    main()
