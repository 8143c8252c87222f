"""The index on PostgreSQL + pgvector against the default (SQLite FTS5 + hnswlib), same run.

    python bench/pg_bench.py --dsn postgresql://... --chunks 100000
    python bench/pg_bench.py --dsn ... --chunks 20000 --readers 3     # + 3 readers, 1 writer

Through the seam both backends implement (index/seam.py), the way a first index or
``index move`` goes when every vector is in the cache already: the structure lane's
rows (``put_note``, ``insert_chunks``, ``add_pending``) of synthetic notes (10 chunks
each, 40-word texts from a 5,000-word vocabulary), committed 100 notes a transaction;
the precomputed unit vectors (dim 384) put in the embedding cache; then the vector
lane's steps as ``Embedding.embed_pending`` takes them (``PENDING_BATCH`` chunks off the
queue, ``finish_pending``, their cached vectors into the vector index), until the
queue is empty (PostgreSQL builds its HNSW index then: pg_vectors.py). Then queries as
the reader asks them (keyword candidates for 3 words, 100 vector candidates for a
vector), p50/p95 over 200.
With ``--readers``: that many reader processes query the PostgreSQL index while one
writer process adds more notes; the readers' p50 is reported against an idle one.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))

from memvault.config import IndexSettings
from memvault.engine.embedding import PENDING_BATCH
from memvault.index.pg_store import PgStore
from memvault.index.rows import NewChunk, NoteRow
from memvault.index.store import Store
from memvault.index.vectors import VectorsWanted

DIM = 384
# the graph as pg_bench has always measured it (no model: no projection)
GRAPH = IndexSettings(hnsw_m=16, ef_construction=200, ef_search=100)
PER_NOTE = 10
WORDS = [f"w{i}" for i in range(5000)]
MODEL = "bench-model"


def _notes(start: int, count: int, seed: int) -> list[tuple[str, list[NewChunk], np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for n in range(start, start + count):
        chunks = []
        for c in range(PER_NOTE):
            text = " ".join(rng.choice(WORDS, 40))
            sha = f"{n:032x}{c:032x}"
            chunks.append(NewChunk(c, ("H",), c * 4 + 1, c * 4 + 4, text, sha, 60, f"Note {n}"))
        vecs = rng.standard_normal((PER_NOTE, DIM)).astype(np.float32)
        out.append((f"notes/n{n}.md", chunks, vecs / np.linalg.norm(vecs, axis=1, keepdims=True)))
    return out


def _ingest(
    store: Store, vectors: Any, notes: list[tuple[str, list[NewChunk], np.ndarray]]
) -> None:
    for i in range(0, len(notes), 100):  # the structure lane
        part = notes[i : i + 100]
        with store.transaction() as tx:
            for path, chunks, _ in part:
                store.put_note(tx, NoteRow(path=path, size=1, mtime_ns=1, sha256="x", kind="note"))
                labels = store.insert_chunks(tx, path, chunks)
                store.add_pending(
                    tx, ((lb, c.sha, c.text) for lb, c in zip(labels, chunks, strict=True)), 1.0
                )
        store.put_embeddings(  # the cache (index move copies it first)
            MODEL, {c.sha: v for _, cs, vecs in part for c, v in zip(cs, vecs, strict=True)}
        )
    while True:  # the vector lane, as Embedding.embed_pending steps
        batch = store.pending(PENDING_BATCH)
        if not batch:
            break
        store.cached(MODEL, [p.sha for p in batch])  # what the step asks the cache first
        done = store.finish_pending([p.label for p in batch], {p.label: p.sha for p in batch})
        found, matrix = store.vectors_for(MODEL, done, DIM)
        vectors.add(found, matrix)
        store.pending_state()


def _open(
    kind: str, where: str, dsn: str, schema: str, read_only: bool = False
) -> tuple[Store, Any]:
    if kind == "sqlite":
        store = Store(Path(where) / "index.db", Path(where) / "cache.db")
    else:
        store = PgStore(dsn, schema, read_only=read_only, timeout=60, statement_ms=600_000)
        if not read_only:  # a writer migrates the schema once it holds the writer's lock
            store.take_writer_lock()
    vi = store.vector_index(Path(where) / "vectors.bin", DIM, GRAPH)
    labels = store.labels() if kind == "sqlite" else []
    vi.open(VectorsWanted(None, labels, lambda ls: np.zeros((0, DIM))))
    return store, vi


def _queries(store: Store, vectors: Any, count: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    times = []
    for _ in range(count):
        terms = list(rng.choice(WORDS, 3))
        q = rng.standard_normal(DIM).astype(np.float32)
        started = time.perf_counter()
        store.keywords(terms, 100)
        vectors.query(q, 100)
        times.append((time.perf_counter() - started) * 1000)
    return times


def _pct(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def _reader(dsn: str, schema: str, seconds: float, out: Any) -> None:
    store, vi = _open("postgres", "", dsn, schema, read_only=True)
    times: list[float] = []
    end = time.monotonic() + seconds
    seed = 0
    while time.monotonic() < end:
        times += _queries(store, vi, 5, seed)
        seed += 1
    out.put(times)
    store.close()


def _writer(dsn: str, schema: str, start: int, count: int) -> None:
    store = PgStore(dsn, schema, timeout=60, statement_ms=600_000)
    vi = store.vector_index(Path("."), DIM, GRAPH)
    _ingest(store, vi, _notes(start, count, 99))
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--readers", type=int, default=0)
    parser.add_argument("--reader-seconds", type=float, default=30)
    parser.add_argument(
        "--writer-chunks", type=int, default=0, help="what the writer adds (default: --chunks)"
    )
    args = parser.parse_args()
    notes = _notes(0, args.chunks // PER_NOTE, 7)
    schema = "memvault_pg_bench"
    import psycopg

    with psycopg.connect(args.dsn, autocommit=True) as c:
        c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    result: dict[str, Any] = {"chunks": args.chunks}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("sqlite", "postgres"):
            store, vi = _open(kind, tmp, args.dsn, schema)
            started = time.perf_counter()
            _ingest(store, vi, notes)
            if kind == "sqlite":
                vi.save()
            elapsed = time.perf_counter() - started
            times = _queries(store, vi, args.queries, 1)
            p50, p95 = _pct(times)
            result[kind] = {
                "ingest_chunks_per_s": round(args.chunks / elapsed),
                "query_p50_ms": round(p50, 2),
                "query_p95_ms": round(p95, 2),
            }
            print(kind, result[kind], flush=True)
            store.close()
    result["ratio_pg_over_sqlite"] = {
        k: round(result["postgres"][k] / result["sqlite"][k], 2) for k in result["sqlite"]
    }
    if args.readers:
        idle_q: Any = mp.Queue()
        p = mp.Process(target=_reader, args=(args.dsn, schema, args.reader_seconds / 3, idle_q))
        p.start()
        idle = idle_q.get()
        p.join()
        queue: Any = mp.Queue()
        readers = [
            mp.Process(target=_reader, args=(args.dsn, schema, args.reader_seconds, queue))
            for _ in range(args.readers)
        ]
        adds = (args.writer_chunks or args.chunks) // PER_NOTE
        writer = mp.Process(target=_writer, args=(args.dsn, schema, 10**6, adds))
        writer.start()
        for r in readers:
            r.start()
        busy: list[float] = []
        for _ in readers:
            busy += queue.get()
        for r in readers:
            r.join()
        writer.join()
        result["readers"] = {
            "idle_reader_p50_ms": round(_pct(idle)[0], 2),
            "readers": args.readers,
            "reader_p50_ms_while_writing": round(_pct(busy)[0], 2),
            "reader_p95_ms_while_writing": round(_pct(busy)[1], 2),
            "queries": len(busy),
            "writer_chunks": adds * PER_NOTE,
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
