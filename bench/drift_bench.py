"""A churned vector graph against exact search, and the int8 model's batch dependence.

    python bench/drift_bench.py recall --model hash      # cause 1 of soak58's finding 2
    python bench/drift_bench.py recall --model default   # the same with the real int8 model
    python bench/drift_bench.py batch                    # cause 2: alone vs first-index batches
    python bench/drift_bench.py speed                    # encode: torch, int8 batched, int8 alone

``recall``: texts are the LoCoMo dev conversations' turns, pairs and triples of
consecutive turns and the chunks memvault makes of them (read from
../shared/bench/locomo, never copied); queries are the dev questions and live chunk
vectors, split by a fixed seed into half A (to choose a setting on) and half B (to
report). A ``VectorIndex`` (the projected one, ``ProjectedVectors``, for the real
model, as ``Store.vector_index`` makes it) holds ``--live`` of them; then churn as the
daemon makes it: each step deletes ``--per-step`` live labels and adds as many texts not
live under fresh labels, compacting whenever ``deleted_ratio`` passes ``compact_ratio``.
At checkpoints (after the last compaction, at deleted fractions near the soak's 17 % and
just under 25 %) recall@10 of the churned graph and of a graph built afresh on the same
live vectors, against exact cosine top-10 (numpy, the same float16-exact vectors; ties
at the 10th score count as found). Search latency medians, alternated.

``batch``: the real model's vector of each text embedded alone vs in the first index's
batches (``embed(all)``), and what it moves: top-10 over the two sets of vectors for the
same queries (exact search, so only the vectors differ).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))
sys.path.insert(0, str(ROOT / "bench"))
KIT = ROOT.parent / "shared" / "bench" / "locomo"
sys.path.insert(0, str(KIT))

import locomo_kit  # noqa: E402

from memvault.config import IndexSettings  # noqa: E402
from memvault.index.embedder_hash import HashEmbedder  # noqa: E402
from memvault.index.projection import projection_for  # noqa: E402
from memvault.index.vectors import VectorIndex, VectorsWanted  # noqa: E402
from memvault.index.vectors_projected import ProjectedVectors  # noqa: E402

K = 10
_SETTINGS = IndexSettings()  # the graph as the daemon builds it (config.index's defaults)
GRAPH = {"m": _SETTINGS.hnsw_m, "ef_construction": _SETTINGS.ef_construction}
CACHE = Path(tempfile.gettempdir()) / "drift59-emb"


def texts_and_questions() -> tuple[list[str], list[str]]:
    convs = locomo_kit.load(KIT / "locomo10_dev.json")
    texts: list[str] = []
    for conv in convs:
        turns = [
            locomo_kit.turn_text(t)
            for key, session in conv["conversation"].items()
            if key.startswith("session_") and isinstance(session, list)
            for t in session
        ]
        for n in (1, 2, 3):
            texts += ["\n".join(turns[i : i + n]) for i in range(len(turns) - n + 1)]
    from embed_bench import chunk_texts

    chunks, questions = chunk_texts()
    return list(dict.fromkeys(texts + chunks)), questions


def embedder(model: str):
    if model == "hash":
        return HashEmbedder()
    from embed_bench import onnx_embedder

    return onnx_embedder()


def embedded(model: str) -> tuple[np.ndarray, np.ndarray, str]:
    """(text vectors, question vectors, model id), cached in /tmp between runs."""
    CACHE.mkdir(exist_ok=True)
    file = CACHE / f"{model}.npz"
    if file.exists():
        d = np.load(file)
        return d["texts"], d["questions"], str(d["model_id"])
    texts, questions = texts_and_questions()
    emb = embedder(model)
    started = time.perf_counter()
    tv, qv = emb.embed(texts), emb.embed(questions)
    print(f"embedded {len(texts)} + {len(questions)} in {time.perf_counter() - started:.0f} s")
    np.savez(file, texts=tv, questions=qv, model_id=emb.model_id)
    return tv, qv, emb.model_id


def f16(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=np.float16).astype(np.float32)


class Bench:
    def __init__(self, vectors: np.ndarray, model_id: str, tmp: Path, ef: int) -> None:
        self.vectors = f16(vectors)
        self.dim = vectors.shape[1]
        self.projection = projection_for(model_id, self.dim)
        self.tmp = tmp
        self.ef = ef
        self.of: dict[int, int] = {}  # label -> row of vectors

    def rows(self, labels: Sequence[int]) -> np.ndarray:
        return self.vectors[[self.of[int(x)] for x in labels]]

    def index(self, name: str, ef: int | None = None):
        path = self.tmp / f"{name}.bin"
        ef = ef or self.ef
        if self.projection is None:
            return VectorIndex(path, self.dim, **GRAPH, ef_search=ef)
        return ProjectedVectors(
            VectorIndex(path, self.projection.out, **GRAPH, ef_search=ef),
            self.projection,
            lambda labels: (list(labels), self.rows(labels)),
        )

    def wanted(self, labels: Sequence[int]) -> VectorsWanted:
        return VectorsWanted(None, list(labels), self.rows)


def exact(vectors: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per query: the exact top-K rows and the K-th score (ties at it count)."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    sims = q @ unit.T
    top = np.argsort(-sims, axis=1, kind="stable")[:, :K]
    return top, np.take_along_axis(sims, top[:, K - 1 : K], axis=1)[:, 0]


def recall(
    index, labels: list[int], bench: Bench, queries: np.ndarray
) -> tuple[float, list[float]]:
    """Mean recall@K of ``index`` against exact search over ``labels``; per query too."""
    live = bench.rows(labels)
    unit = live / np.linalg.norm(live, axis=1, keepdims=True)
    _, kth = exact(live, queries)
    pos = {label: i for i, label in enumerate(labels)}
    per: list[float] = []
    for qi, q in enumerate(queries):
        found = [label for label, _ in index.query(q, K)]
        sims = unit[[pos[x] for x in found]] @ (q / np.linalg.norm(q))
        per.append(float(np.sum(sims >= kth[qi] - 1e-6)) / K)
    return float(np.mean(per)), per


def latency(indexes: dict[str, object], queries: np.ndarray, rounds: int = 5) -> dict[str, float]:
    """Median seconds per query, the indexes alternated round by round."""
    times: dict[str, list[float]] = {name: [] for name in indexes}
    for r in range(rounds):
        names = list(indexes) if r % 2 == 0 else list(reversed(indexes))
        for name in names:
            started = time.perf_counter()
            for q in queries:
                indexes[name].query(q, K)  # type: ignore[attr-defined]
            times[name].append((time.perf_counter() - started) / len(queries))
    return {name: statistics.median(t) for name, t in times.items()}


def run_recall(args: argparse.Namespace) -> dict:
    if args.vectors:  # a vault's cached vectors (e.g. a soak's cache.db), no questions
        tv = np.load(args.vectors)
        qv, model_id = np.zeros((0, tv.shape[1]), np.float32), args.vectors_model
    else:
        tv, qv, model_id = embedded(args.model)
    rng = np.random.default_rng(args.seed)
    n = len(tv)
    live_n = min(args.live, n * 2 // 3)
    with tempfile.TemporaryDirectory(prefix="drift59-") as tmp:
        bench = Bench(tv, model_id, Path(tmp), args.ef)
        rows = rng.permutation(n)
        first = rows[:live_n].tolist()
        labels = list(range(live_n))
        for label, row in zip(labels, first, strict=True):
            bench.of[label] = row
        next_label = live_n
        live_rows = set(first)
        churned = bench.index("churned")
        churned.open(bench.wanted(labels))
        live = list(labels)
        compactions: list[float] = []
        results: list[dict] = []
        marks = sorted(args.marks)
        steps = 0
        started = time.perf_counter()
        while marks:
            steps += 1
            if args.clustered:  # a topic goes: the live chunks nearest one of them
                rows_live = bench.rows(live)
                centre = rows_live[rng.integers(len(live))]
                out_idx = np.argsort(-(rows_live @ centre), kind="stable")[: args.per_step]
            else:
                out_idx = rng.choice(len(live), size=args.per_step, replace=False)
            gone = [live[i] for i in out_idx]
            free = np.array(sorted(set(range(n)) - live_rows))
            new_rows = rng.choice(free, size=args.per_step, replace=False).tolist()
            new_labels = list(range(next_label, next_label + args.per_step))
            next_label += args.per_step
            for label, row in zip(new_labels, new_rows, strict=True):
                bench.of[label] = row
            churned.delete(gone)
            churned.add(new_labels, bench.rows(new_labels))
            keep = set(gone)
            live = [x for x in live if x not in keep] + new_labels
            live_rows = (live_rows - {bench.of[x] for x in gone}) | set(new_rows)
            if churned.deleted_ratio() > args.compact_ratio:
                t0 = time.perf_counter()
                churned.compact(bench.rows)
                compactions.append(time.perf_counter() - t0)
                continue
            if compactions and churned.deleted_ratio() >= marks[0]:
                marks.pop(0)
                break_at = churned.deleted_ratio()
                live_sorted = sorted(live)
                print(
                    f"step {steps}: deleted {break_at:.3f}, compactions {len(compactions)}",
                    flush=True,
                )
                result = measure(bench, churned, live_sorted, qv, args)
                result.update(
                    deleted_ratio=round(break_at, 3),
                    steps=steps,
                    compactions=len(compactions),
                    compaction_s_median=round(statistics.median(compactions), 3),
                    churn_s=round(time.perf_counter() - started, 1),
                )
                print(json.dumps(result), flush=True)
                results.append(result)
    return {"model": args.model, "texts": n, "live": live_n, "results": results}


def measure(bench: Bench, churned, live: list[int], qv: np.ndarray, args) -> dict:
    """recall@K of the churned graph, a fresh one, and the candidates, on halves A and B."""
    sample = np.random.default_rng(args.seed + 1).choice(
        len(live), size=min(args.chunk_queries, len(live)), replace=False
    )
    queries = np.concatenate([qv, bench.rows([live[i] for i in sample])])
    half = np.random.default_rng(args.seed + 2).permutation(len(queries))
    a, b = queries[half[: len(half) // 2]], queries[half[len(half) // 2 :]]
    fresh = bench.index(f"fresh-{time.monotonic_ns()}")
    fresh.open(bench.wanted(live))
    # a second fresh graph, its labels inserted in another order: two approximations
    # of exact search on the same vectors, as the soak compared (ties, insert order)
    other = bench.index(f"other-{time.monotonic_ns()}")
    shuffled = [live[i] for i in np.random.default_rng(args.seed + 3).permutation(len(live))]
    other.open(VectorsWanted(None, [], bench.rows))
    for start in range(0, len(shuffled), 4096):
        other.add(shuffled[start : start + 4096], bench.rows(shuffled[start : start + 4096]))
    indexes: dict[str, object] = {"churned": churned, "fresh": fresh, "fresh_shuffled": other}
    for ef in args.more_ef:
        inner = churned.inner if isinstance(churned, ProjectedVectors) else churned
        other = inner.ef_search
        inner.ef_search = ef
        ra, _ = recall(churned, live, bench, a)
        rb, _ = recall(churned, live, bench, b)
        inner.ef_search = other
        print(f"  churned at ef {ef}: A {ra:.4f} B {rb:.4f}", flush=True)
    out: dict = {"queries_a": len(a), "queries_b": len(b)}
    for name, index in indexes.items():
        ra, _ = recall(index, live, bench, a)
        rb, per_b = recall(index, live, bench, b)
        out[name] = {"recall_a": round(ra, 4), "recall_b": round(rb, 4)}
        out[name]["below_1_b"] = int(sum(1 for x in per_b if x < 1.0))
        if name != "fresh":  # top-10 labels shared with the fresh graph's, half B
            shared = [
                len({x for x, _ in index.query(q, K)} & {x for x, _ in fresh.query(q, K)})
                for q in b
            ]
            out[name]["overlap_fresh_b"] = round(float(np.mean(shared)), 3)
            out[name]["overlap_fresh_b_min"] = int(min(shared))
    lat = latency(indexes, b[:200])
    for name, s in lat.items():
        out[name]["query_ms"] = round(s * 1000, 3)
    return out


def run_batch(args: argparse.Namespace) -> dict:
    texts, questions = texts_and_questions()
    texts = texts[: args.texts]
    emb = embedder("default")
    t0 = time.perf_counter()
    batched = emb.embed(texts)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    alone = np.concatenate([emb.embed([t]) for t in texts])
    t_alone = time.perf_counter() - t0
    again = emb.embed(texts)
    cos = np.sum(batched * alone, axis=1)
    qv = emb.embed(questions)
    queries = np.concatenate([qv, batched[:: max(1, len(texts) // 500)]])
    top_b, _ = exact(f16(batched), queries)
    top_a, _ = exact(f16(alone), queries)
    overlap = [len(set(x) & set(y)) / K for x, y in zip(top_b, top_a, strict=True)]
    top1 = float(np.mean(top_b[:, 0] == top_a[:, 0]))
    return {
        "texts": len(texts),
        "cosine_alone_vs_batched": {
            "min": round(float(cos.min()), 4),
            "median": round(float(np.median(cos)), 4),
            "share_below_0.9999": round(float(np.mean(cos < 0.9999)), 3),
        },
        "same_batches_twice_max_abs_diff": float(np.abs(again - batched).max()),
        "queries": len(queries),
        "top10_overlap_mean": round(float(np.mean(overlap)), 4),
        "top10_overlap_min": min(overlap),
        "top1_same": round(top1, 4),
        "embed_s": {"batched": round(t_batched, 1), "alone": round(t_alone, 1)},
    }


def run_speed(args: argparse.Namespace) -> dict:
    """texts/s of the texts memvault embeds for the LoCoMo dev vaults: bare PyTorch, the
    int8 model in its batches (``index.batch_size`` 32), the int8 model a text at a time
    (batch 1: a vector independent of its batch). Rounds alternate the order; medians.
    Since batch59 the ONNX embedder runs every text alone whatever ``batch_size`` is:
    ``batch`` and ``speed`` compare batched runs only on drift59's code or before."""
    from embed_bench import chunk_texts, onnx_embedder, timed, torch_embedder

    texts, _ = chunk_texts()
    texts = texts[: args.texts]
    torch_emb, batched, alone = torch_embedder(), onnx_embedder(), onnx_embedder()
    alone.batch_size = 1
    runs = {
        "torch": torch_emb.embed,
        "int8_batched": batched.embed,
        "int8_alone": alone.embed,
    }
    for fn in runs.values():
        fn(texts[:32])
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(args.rounds):
        for name in list(runs) if r % 2 == 0 else list(reversed(runs)):
            rates[name].append(len(texts) / timed(lambda fn=runs[name]: fn(texts)))
            print(json.dumps({"round": r, name: round(rates[name][-1], 1)}), flush=True)
    med = {name: statistics.median(v) for name, v in rates.items()}
    return {
        "texts": len(texts),
        "texts_per_s": {k: round(v, 1) for k, v in med.items()},
        "all_runs": {k: [round(x, 1) for x in v] for k, v in rates.items()},
        "alone_to_batched": round(med["int8_alone"] / med["int8_batched"], 2),
        "alone_to_torch": round(med["int8_alone"] / med["torch"], 2),
        "batched_to_torch": round(med["int8_batched"] / med["torch"], 2),
        "same_round_alone_to_torch": [
            round(a / t, 2) for a, t in zip(rates["int8_alone"], rates["torch"], strict=True)
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("recall")
    r.add_argument("--model", default="hash", choices=["hash", "default"])
    r.add_argument("--live", type=int, default=5000)
    r.add_argument("--per-step", type=int, default=40)
    r.add_argument("--compact-ratio", type=float, default=IndexSettings().compact_ratio)
    r.add_argument("--ef", type=int, default=IndexSettings().ef_search)
    r.add_argument("--clustered", action="store_true", help="delete a topic at a time")
    r.add_argument("--marks", type=float, nargs="+", default=[0.17, 0.24])
    r.add_argument("--more-ef", type=int, nargs="*", default=[])
    r.add_argument("--chunk-queries", type=int, default=400)
    r.add_argument("--seed", type=int, default=59)
    r.add_argument("--vectors", help="a .npy of vectors to churn instead of LoCoMo's texts")
    r.add_argument("--vectors-model", default="hash-64", help="their model id (projection)")
    b = sub.add_parser("batch")
    b.add_argument("--texts", type=int, default=1500)
    s = sub.add_parser("speed")
    s.add_argument("--texts", type=int, default=100000)
    s.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    run = {"recall": run_recall, "batch": run_batch, "speed": run_speed}[args.what]
    out = run(args)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
