"""CPU per hybrid search (process_time), in process, on a vault built once: one code a run.

    PYTHONPATH=CODE/daemon python bench/search_cpu.py VAULT 72000   # the first run builds it

index_bench's generator (N chunks: N/5 notes of 5 sections), line vectors off, chunks
embedded by the hash embedder at 384 dimensions (lanes_bench's QueryModelEmbedder), every
query by the real int8 model; 150 queries of 2-6 words, the median process_time.
memvault is imported before bench/ is put on sys.path: index_bench puts its own
checkout's daemon/ first, which would run this checkout's code whatever PYTHONPATH says.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path

import memvault
from memvault.api import Vault
from memvault.config import IndexSettings
from memvault.index.embedder_onnx import make_onnx_embedder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from index_bench import WORDS, make_notes
from lanes_bench import QueryModelEmbedder


def main() -> None:
    root, n = Path(sys.argv[1]), int(sys.argv[2])
    build = not (root / ".memvault" / "index.db").exists()
    if build:
        make_notes(root, n // 5, 5, seed=9)
        (root / ".memvault").mkdir(exist_ok=True)
    emb = QueryModelEmbedder()
    with Vault.open(root, embedder=emb, overrides={"index": {"line_vectors": False}}) as v:
        if build:
            v.sync()
            print("built", v.engine.store.counts()["chunks"])
            return
        emb.real = make_onnx_embedder(IndexSettings())
        rng = random.Random(3)
        qs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))) for _ in range(150)]
        v.search(qs[0])  # warm: model, vectors, caches
        cpu, wall = [], []
        for q in qs:
            c, t = time.process_time(), time.perf_counter()
            v.search(q, k=10)
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - t)
        out = {
            "code": memvault.__file__,
            "ef_search": v.engine.config.index.ef_search,
            "cpu_p50_ms": round(1000 * statistics.median(cpu), 2),
            "wall_p50_ms": round(1000 * statistics.median(wall), 2),
        }
        print(json.dumps(out))


if __name__ == "__main__":
    main()
