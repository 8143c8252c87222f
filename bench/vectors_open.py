"""Opening the vector index at scale: hnswlib's full vectors.bin (memvault before the
graph form) against the graph form, the same graph, the same store.

    PYTHONPATH=daemon python bench/vectors_open.py build DIR 100000 384
        # a store of N chunks with random float16 vectors, the graph built once (a low
        # ef_construction: its quality is not measured), saved as the graph form
        # (vectors.bin) and as hnswlib's full file (vectors-full.bin); both shas in DIR/shas
    PYTHONPATH=<old>/daemon python bench/vectors_open.py open DIR vectors-full.bin 384
    PYTHONPATH=daemon python bench/vectors_open.py open DIR vectors.bin 384
        # one fresh process each: Store + VectorIndex.open, its CPU, wall and peak RSS
"""

from __future__ import annotations

import hashlib
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

from memvault.index.rows import NewChunk
from memvault.index.store import Store
from memvault.index.vectors import VectorIndex, VectorsWanted

MODEL = "bench-model"


def build(d: Path, n: int, dim: int) -> None:
    d.mkdir(parents=True, exist_ok=True)
    st = Store(d / "index.db", d / "cache.db")
    rng = np.random.default_rng(0)
    for start in range(0, n, 5000):
        m = min(5000, n - start)
        shas = [hashlib.sha256(f"t{start + i}".encode()).hexdigest() for i in range(m)]
        chunks = [
            NewChunk(i, (), 1, 1, f"t{start + i}", s, 3, title="") for i, s in enumerate(shas)
        ]
        with st.transaction() as conn:
            st.insert_chunks(conn, f"n{start}.md", chunks)
        v = rng.standard_normal((m, dim)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        st.put_embeddings(MODEL, dict(zip(shas, v, strict=True)))
    labels = sorted(st.labels())
    vi = VectorIndex(d / "vectors.bin", dim, ef_construction=20)
    t = time.process_time()
    vi.open(VectorsWanted(None, labels, lambda ls: st.vectors_for(MODEL, ls, dim)[1]))
    print("built in", round(time.process_time() - t, 1), "s CPU", flush=True)
    sha = vi.save()
    vi._index.save_index(str(d / "vectors-full.bin"))  # type: ignore[union-attr]
    full = hashlib.sha256((d / "vectors-full.bin").read_bytes()).hexdigest()
    (d / "shas").write_text(json.dumps({"vectors.bin": sha, "vectors-full.bin": full}))
    st.close()
    print({p.name: p.stat().st_size for p in d.iterdir()})


def open_once(d: Path, name: str, dim: int) -> None:
    sha = json.loads((d / "shas").read_text())[name]
    st = Store(d / "index.db", d / "cache.db")
    labels = st.labels()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c, w = time.process_time(), time.perf_counter()
    vi = VectorIndex(d / name, dim)
    rep = vi.open(VectorsWanted(sha, labels, lambda ls: st.vectors_for(MODEL, ls, dim)[1]))
    cpu, wall = time.process_time() - c, time.perf_counter() - w
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hits = vi.query(np.ones(dim, dtype=np.float32), 10)
    out = {
        "file": name,
        "loaded": rep.loaded,
        "reason": rep.rebuilt_reason,
        "labels": len(labels),
        "open_cpu_s": round(cpu, 2),
        "open_wall_s": round(wall, 2),
        "peak_rss_before_mb": rss0 // 1024,
        "peak_rss_after_mb": rss1 // 1024,
        "hits": len(hits),
    }
    print(json.dumps(out))
    st.close()


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        open_once(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
