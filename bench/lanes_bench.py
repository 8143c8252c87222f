"""The two lanes, measured: save -> MEMORY.md while the model is busy, and a hybrid
query at 60,000 chunks.

    python bench/lanes_bench.py big-note                # a 5 MB note being embedded
    python bench/lanes_bench.py first-index             # the first index of 5,000 notes
    python bench/lanes_bench.py first-index --code /path/to/main --work /tmp/x  # main's daemon
    python bench/lanes_bench.py query --chunks 60000    # hybrid query p50 incl. embedding

``big-note`` and ``first-index`` run a real daemon (`python -m memvault daemon run`,
the default ONNX backend) and, while the vector lane works, create a small note
every ``--every`` seconds in ``decisions/`` dated after everything else (so it
belongs at the top of MEMORY.md's "Recent Decisions"); the clock runs from the
moment the file is closed until MEMORY.md names it (polled every 10 ms).
``big-note`` uses daemon_bench's 5,000-note vault once indexed (built on first
use) and writes one note of ``--mb`` MB of prose (memvault indexes the first
``vault.max_note_bytes`` of it, 2 MB by default, and says so); ``first-index``
copies that vault's notes into a new vault that was never indexed and starts the
daemon on it. Each also reports how many chunks were pending at each save, so
the figures are known to be taken while the model was busy. ``first-index`` also
tells apart the saves made while the start-up reconcile (the structure lane's
first sync of all 5,000 notes) was in flight, by the daemon's status at the save,
and how long that reconcile took; ``--code`` runs another checkout's daemon (main's,
for a before/after in the same sitting) and ``--work`` keeps the copied vault apart
from another bench's.

``query`` indexes generated notes up to ``--chunks`` chunks, embedding the
documents with the hash embedder at 384 dimensions (embedding 60,000 chunks with
the real model would take half an hour on two cores, and search time does not
depend on what the vectors mean), then times ``Vault.search`` in process with
every query embedded by the real ONNX model: FTS5 + hnswlib + fusion + the
query embedding, end to end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))
sys.path.insert(0, str(ROOT / "bench"))

from daemon_bench import WORDS, Daemon, build_vault, pct  # noqa: E402
from memvault.api import Vault  # noqa: E402
from memvault.index.embedder import HashEmbedder  # noqa: E402
from memvault.vault.template import init_vault  # noqa: E402

WORK = Path(tempfile.gettempdir()) / "memvault-daemon-bench"


def summary(latencies: list[float]) -> dict[str, Any]:
    return {
        "saves": len(latencies),
        "p50_ms": round(statistics.median(latencies) * 1000),
        "p95_ms": round(pct(latencies, 0.95) * 1000),
        "max_ms": round(max(latencies) * 1000),
    }


def indexed_vault(notes: int) -> Path:
    """daemon_bench's vault of ``notes`` notes, indexed with the default model."""
    root = WORK / f"vault-{notes}-minilm"
    if not (root / ".memvault" / "index.db").exists():
        print(f"building {notes} notes at {root} (once)", flush=True)
        shutil.rmtree(root, ignore_errors=True)
        root.parent.mkdir(parents=True, exist_ok=True)
        build_vault(root, notes, None)
    return root


def saves_into_memory_md(
    d: Daemon,
    root: Path,
    every: float,
    count: int,
    busy: Any = None,
    saved_at: list[float] | None = None,
    status_every: int = 1,
) -> tuple[list[float], list[int]]:
    """Create ``count`` small decisions ``every`` seconds apart; for each, the seconds
    from the file's close until MEMORY.md names it, and the chunks pending at the save.
    Stops early once ``busy()`` says the vector lane has caught up."""
    memory = root / "MEMORY.md"
    run = f"{int(time.time()) % 100000:05}"
    latencies, pending = [], []
    for i in range(count):
        name = f"lane-{run}-{i:03}"
        day = 1 + i % 28
        text = (
            f"---\ntitle: Lane {run} {i}\nsummary: a save while the model is busy\n"
            f"date: 2031-{1 + i // 28:02}-{day:02}\nstatus: accepted\n---\n"
            f"# Lane {run} {i}\n\nSaved while the vector lane works.\n"
        )
        path = root / "decisions" / f"{name}.md"
        if i % status_every == 0:  # /status checks every link: not free mid-index
            left = d.call("GET", "/status")["daemon"]["vectors"]["pending"]
        path.write_text(text, encoding="utf-8")
        saved = time.perf_counter()
        if saved_at is not None:
            saved_at.append(saved)
        link = f"[[decisions/{name}]]"
        while link not in memory.read_text(encoding="utf-8"):
            if time.perf_counter() - saved > 120:
                raise SystemExit(f"{path} never reached MEMORY.md")
            time.sleep(0.01)
        latencies.append(time.perf_counter() - saved)
        pending.append(left)
        print(f"  save {i + 1}: {latencies[-1] * 1000:.0f} ms ({left} chunks pending)", flush=True)
        if busy is not None and not busy():
            break
        time.sleep(max(0.0, every - (time.perf_counter() - saved)))
    return latencies, pending


def big_note(args: argparse.Namespace) -> dict[str, Any]:
    root = indexed_vault(args.notes)
    rng = random.Random(11)
    paragraphs, size = [], 0
    while size < args.mb * 1_000_000:
        p = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 90))) + "."
        paragraphs.append(p)
        size += len(p) + 2
    for p in (*root.glob("decisions/lane-*.md"), *root.glob("projects/big-*.md")):
        p.unlink()  # an interrupted run's: its dates would hide this run's saves
    d = Daemon(root, None, args.debounce_ms)
    try:
        d.settle()
        started = time.perf_counter()
        big = root / "projects" / f"big-{int(time.time())}.md"
        big.write_text(
            "---\ntitle: Big note\nsummary: megabytes of prose\n---\n# Big note\n\n"
            + "\n\n".join(paragraphs)
            + "\n",
            encoding="utf-8",
        )

        def vectors() -> dict[str, Any]:
            v: dict[str, Any] = d.call("GET", "/status")["daemon"]["vectors"]
            return v

        while vectors()["pending"] < 100:  # the big note's chunks queued
            time.sleep(0.05)
        latencies, pending = saves_into_memory_md(
            d, root, args.every, args.saves, busy=lambda: vectors()["pending"] > 50
        )
        while vectors()["pending"]:
            time.sleep(0.5)
        embedded_in = time.perf_counter() - started
        hwm = d.status_kb("VmHWM")
    finally:
        d.stop()
        for p in (*root.glob("decisions/lane-*.md"), *root.glob("projects/big-*.md")):
            p.unlink()
    return {
        "what": f"save -> MEMORY.md while a {args.mb} MB note is embedded",
        "debounce_ms": args.debounce_ms or "the vault's",
        **summary(latencies),
        "pending_at_saves_min": min(pending),
        "big_note_vectors_done_seconds": round(embedded_in, 1),
        "peak_rss_mb": round(hwm / 1024, 1),
    }


def first_index(args: argparse.Namespace) -> dict[str, Any]:
    source = indexed_vault(args.notes)
    root = (args.work or WORK) / f"first-index-{args.notes}"
    shutil.rmtree(root, ignore_errors=True)
    init_vault(root)
    for path in source.rglob("n*.md"):
        rel = path.relative_to(source)
        if rel.parts[0].startswith("."):
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, root / rel)
    started = time.perf_counter()
    # answers at once; the start-up reconcile runs behind it
    d = Daemon(root, None, args.debounce_ms, code=args.code)
    reconciled: list[float] = []

    def watch() -> None:
        # the reconcile's end, from the daemon's log line (polling /status would load it)
        log = root.parent / "daemon-bench.log"
        while not reconciled:
            if "synced everything (start-up reconcile)" in log.read_text(errors="replace"):
                reconciled.append(time.perf_counter())
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:

        def busy() -> bool:
            return bool(d.call("GET", "/status")["daemon"]["vectors"]["pending"])

        saved_at: list[float] = []
        latencies, pending = saves_into_memory_md(
            d, root, args.every, args.saves, busy, saved_at, args.status_every
        )
        hwm = d.status_kb("VmHWM")
    finally:
        reconciled.append(-1.0)  # ends the watch if it has not seen the end
        d.stop()
    end = reconciled[0] if reconciled[0] > 0 else None
    # a save made before the reconcile ended, and seen in MEMORY.md before or after it
    mid = [t for t, at in zip(latencies, saved_at, strict=True) if end is None or at < end]
    for i, at in enumerate(saved_at):
        if end is None or at < end:
            print(f"  save {i + 1} was made during the start-up reconcile", flush=True)
    return {
        "what": f"save -> MEMORY.md during the first index of {args.notes} notes",
        "code": str(args.code or ROOT),
        **summary(latencies),
        "during_reconcile": summary(mid) if mid else {"saves": 0},
        "reconcile_seconds": round(end - started, 1) if end else None,
        "pending_at_saves_min": min(pending),
        "peak_rss_mb": round(hwm / 1024, 1),
    }


class QueryModelEmbedder(HashEmbedder):
    """Documents by the hash embedder (384-d), queries by the real model once
    ``queries`` is set: the search path's cost at scale without half an hour of
    embedding. The index is never kept (a bench folder of its own)."""

    def __init__(self) -> None:
        super().__init__(dim=384)
        self.model_id = "bench-hash-docs-onnx-queries-384"
        self.real: Any = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.real is not None:
            out: np.ndarray = self.real.embed(texts)
            return out
        return super().embed(texts)


def query(args: argparse.Namespace) -> dict[str, Any]:
    from index_bench import WORDS as QWORDS
    from index_bench import make_notes
    from memvault.config import IndexSettings
    from memvault.index.embedder_onnx import make_onnx_embedder

    root = WORK / f"query-{args.chunks}"
    if not (root / ".memvault" / "index.db").exists():
        shutil.rmtree(root, ignore_errors=True)
        make_notes(root, args.chunks // 5, 5, seed=9)
        (root / ".memvault").mkdir(exist_ok=True)
    emb = QueryModelEmbedder()
    overrides = {"index": {"line_vectors": False}}
    with Vault.open(root, embedder=emb, overrides=overrides) as v:
        started = time.perf_counter()
        v.sync()
        build = time.perf_counter() - started
        chunks = v.engine.store.counts()["chunks"]
        emb.real = make_onnx_embedder(IndexSettings())
        rng = random.Random(3)
        qs = [
            " ".join(rng.choice(QWORDS) for _ in range(rng.randint(2, 6)))
            for _ in range(args.queries)
        ]
        v.search(qs[0])  # warm: model, vectors, caches
        times, embed_times = [], []
        for q in qs:
            t = time.perf_counter()
            emb.real.embed([q])  # the query embedding on its own (the search does it again)
            embed_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            v.search(q, k=10)
            times.append(time.perf_counter() - t)
    return {
        "what": "hybrid query (FTS5 + hnswlib + fusion + ONNX query embedding), in process",
        "chunks": chunks,
        "queries": len(times),
        "p50_ms": round(1000 * statistics.median(times), 1),
        "p95_ms": round(1000 * pct(times, 0.95), 1),
        "query_embedding_p50_ms": round(1000 * statistics.median(embed_times), 1),
        "index_build_seconds_this_run": round(build, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("big-note", "first-index", "query"))
    ap.add_argument("--notes", type=int, default=5000)
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--every", type=float, default=0.5, help="seconds between saves")
    ap.add_argument("--saves", type=int, default=40)
    ap.add_argument("--chunks", type=int, default=60_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument(
        "--debounce-ms", type=int, help="daemon.debounce_ms (default: the vault's config.toml)"
    )
    ap.add_argument("--status-every", type=int, default=1, help="saves per /status call")
    ap.add_argument("--code", type=Path, help="a checkout whose daemon runs (default: this one)")
    ap.add_argument("--work", type=Path, help=f"where first-index copies the vault ({WORK})")
    args = ap.parse_args()
    load = os.getloadavg()
    fn = {"big-note": big_note, "first-index": first_index, "query": query}[args.what]
    result = fn(args)
    result["load_average_before_after"] = [round(load[0], 2), round(os.getloadavg()[0], 2)]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
