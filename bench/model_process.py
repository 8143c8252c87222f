"""The int8 model in this process or in a process of its own: throughput, start, memory.

    python bench/model_process.py [--texts 1200] [--rounds 3] [--out FILE]
    python bench/model_process.py --against CHECKOUT [--texts 1200] [--rounds 4]

Three measures, each side by side in one run (this machine is shared: medians, ratios):

- queries: one short text a call, as a search embeds its query: wall and CPU a call
  (this process's and the child's, from /proc), alternating rounds;
- throughput: the same texts (LoCoMo-sized chunks of English from Python's own docs,
  ``pydoc_data``) embedded by ``LocalRun`` and by ``ChildRun`` in alternating rounds,
  texts a second, and the ratio child / local; the vectors must be equal;
- start: ``load_onnx_embedder`` to the first vector, in-process against apart (a fresh
  Python each time, so neither finds onnxruntime loaded);
- memory: a fresh Python's RSS with the tokenizer loaded (what a daemon holds for
  chunking), then after the model was loaded, used and let go (``release`` as the
  daemon does: dropped, gc, malloc_trim), in-process against apart; and the child's
  own RSS while it ran.

``--against CHECKOUT``: instead, this code's model process against CHECKOUT's (another
memvault, a ``git archive`` export), both children of this one process: the same texts
in alternating rounds (texts a second, one-query calls: wall and CPU of this process and
the child), the vectors equal, and each child's memory (/proc/PID/smaps_rollup: Rss,
Pss, Anonymous) after its start and one query, and after the batches.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

DAEMON = Path(__file__).resolve().parents[1] / "daemon"


def corpus(n: int) -> list[str]:
    """``n`` texts of 40-250 words from pydoc_data's topics (English prose and code)."""
    from pydoc_data.topics import topics

    words = " ".join(topics.values()).split()
    rng = random.Random(27)
    out = []
    for _ in range(n):
        start = rng.randrange(len(words) - 300)
        out.append(" ".join(words[start : start + rng.randint(40, 250)]))
    return out


def throughput(texts: list[str], rounds: int) -> dict:
    import numpy as np

    from memvault.config import IndexSettings
    from memvault.index.embedder_onnx import load_onnx_embedder

    local = load_onnx_embedder(IndexSettings())
    apart = load_onnx_embedder(IndexSettings(), apart=True)
    local.embed(texts[:32])
    apart.embed(texts[:32])  # both warm
    rates: dict[str, list[float]] = {"local": [], "child": []}
    for r in range(rounds):
        order = [("local", local), ("child", apart)]
        for name, emb in order if r % 2 == 0 else order[::-1]:
            t = time.perf_counter()
            vectors = emb.embed(texts)
            rates[name].append(len(texts) / (time.perf_counter() - t))
            if name == "local":
                here = vectors
            else:
                there = vectors
        assert np.array_equal(here, there), "the child's vectors differ"
    apart.close()
    med = {k: statistics.median(v) for k, v in rates.items()}
    return {
        "texts": len(texts),
        "local_texts_per_s": [round(x, 1) for x in rates["local"]],
        "child_texts_per_s": [round(x, 1) for x in rates["child"]],
        "child_over_local": round(med["child"] / med["local"], 3),
    }


def child_cpu_s(pid: int | None) -> float:
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def queries(texts: list[str], n: int, rounds: int) -> dict:
    """One short text a call (a search's query): wall and CPU (this process and the
    model's) per call, median over rounds of ``n`` calls, alternating."""
    from memvault.config import IndexSettings
    from memvault.index.embedder_onnx import load_onnx_embedder

    asks = [" ".join(t.split()[:8]) for t in texts[:n]]
    local = load_onnx_embedder(IndexSettings())
    apart = load_onnx_embedder(IndexSettings(), apart=True)
    local.embed(asks[:4])
    apart.embed(asks[:4])
    wall: dict[str, list[float]] = {"local": [], "child": []}
    cpu: dict[str, list[float]] = {"local": [], "child": []}
    for r in range(rounds):
        order = [("local", local), ("child", apart)]
        for name, emb in order if r % 2 == 0 else order[::-1]:
            pid = getattr(emb._run, "pid", None)
            c0, t0 = time.process_time() + child_cpu_s(pid), time.perf_counter()
            for q in asks:
                emb.embed([q])
            c1, t1 = time.process_time() + child_cpu_s(pid), time.perf_counter()
            wall[name].append((t1 - t0) * 1000 / len(asks))
            cpu[name].append((c1 - c0) * 1000 / len(asks))
    apart.close()
    return {
        "calls_a_round": len(asks),
        "wall_ms": {k: [round(x, 2) for x in v] for k, v in wall.items()},
        "cpu_ms": {k: [round(x, 2) for x in v] for k, v in cpu.items()},
        "wall_child_over_local": round(
            statistics.median(wall["child"]) / statistics.median(wall["local"]), 3
        ),
        "cpu_child_over_local": round(
            statistics.median(cpu["child"]) / statistics.median(cpu["local"]), 3
        ),
    }


START = """
import time, json
t = time.perf_counter()
from memvault.config import IndexSettings
from memvault.index.embedder_onnx import load_onnx_embedder
emb = load_onnx_embedder(IndexSettings(), apart={apart})
emb.embed(["the first query of the day"])
print(json.dumps(round((time.perf_counter() - t) * 1000, 1)))
"""

MEMORY = """
import ctypes, gc, json
def rss(pid="self"):
    for line in open(f"/proc/{{pid}}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
from memvault.config import IndexSettings
from memvault.index.tokenizer import Tokenizer
import numpy, hnswlib, sqlite3
Tokenizer.for_model(IndexSettings().model).count("warm the tokenizer up")
before = rss()
from memvault.index.embedder_onnx import load_onnx_embedder
emb = load_onnx_embedder(IndexSettings(), apart={apart})
import sys
texts = json.load(sys.stdin)
emb.embed(texts)
used = rss()
child = rss(emb._run.pid) if {apart} else 0.0
emb.close()
del emb
gc.collect()
ctypes.CDLL("libc.so.6").malloc_trim(0)
print(json.dumps({{"tokenizer_only": before, "in_use": used, "child_in_use": child, "let_go": rss()}}))
"""


def fresh(code: str, given: object = None) -> object:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        input=json.dumps(given),
        env={**os.environ, "PYTHONPATH": str(DAEMON)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def rollup(pid: int | None) -> dict[str, float]:
    """Rss, Pss and Anonymous of /proc/PID/smaps_rollup, MiB."""
    got = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Pss", "Anonymous"):
            got[key.lower()] = round(int(rest.split()[0]) / 1024, 1)
    return got


def against(checkout: Path, texts: list[str], rounds: int) -> dict:
    """This code's model process against ``checkout``'s (the module doc)."""
    import numpy as np

    from memvault.config import IndexSettings
    from memvault.index import onnx_run
    from memvault.index.embedder_onnx import load_onnx_embedder

    folder = checkout.resolve() / "daemon" / "memvault"
    boot = onnx_run._BOOT
    if not (folder / "index" / "onnx_session.py").exists():  # its child runs onnx_run.main
        boot = boot.replace("memvault.index.onnx_session", "memvault.index.onnx_run")

    def spawn() -> subprocess.Popen[bytes]:
        env = {**os.environ, **onnx_run.CHILD_ENV, "ORT_DISABLE_TELEMETRY": "1"}
        return subprocess.Popen(
            [sys.executable, "-P", "-c", boot, str(folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            bufsize=0,
        )

    here = load_onnx_embedder(IndexSettings(), apart=True)
    there = load_onnx_embedder(IndexSettings(), apart=True)
    start = json.loads(here._run._start_line)  # type: ignore[union-attr]  # model, threads
    there._run.close()
    real, onnx_run._spawn = onnx_run._spawn, spawn
    try:
        there._run = onnx_run.ChildRun(Path(start["model"]), start["threads"])
    finally:
        onnx_run._spawn = real
    asks = [" ".join(t.split()[:8]) for t in texts[:200]]
    emb = {"this": here, "other": there}
    memory: dict[str, dict] = {}
    for name, e in emb.items():
        e.embed(asks[:1])
        memory[name] = {"started_one_query": rollup(e._run.pid)}
    rates: dict[str, list[float]] = {"this": [], "other": []}
    wall: dict[str, list[float]] = {"this": [], "other": []}
    cpu: dict[str, list[float]] = {"this": [], "other": []}
    got: dict[str, np.ndarray] = {}
    for r in range(rounds):
        order = ["this", "other"] if r % 2 == 0 else ["other", "this"]
        for name in order:
            t = time.perf_counter()
            got[name] = emb[name].embed(texts)
            rates[name].append(len(texts) / (time.perf_counter() - t))
        assert np.array_equal(got["this"], got["other"]), "the two children's vectors differ"
        for name in order:
            pid = emb[name]._run.pid
            c0, t0 = time.process_time() + child_cpu_s(pid), time.perf_counter()
            for q in asks:
                emb[name].embed([q])
            c1, t1 = time.process_time() + child_cpu_s(pid), time.perf_counter()
            wall[name].append((t1 - t0) * 1000 / len(asks))
            cpu[name].append((c1 - c0) * 1000 / len(asks))
    for name, e in emb.items():
        memory[name]["after_batches"] = rollup(e._run.pid)
        e.close()
    med = statistics.median
    return {
        "other": str(checkout),
        "texts": len(texts),
        "texts_per_s": {k: [round(x, 1) for x in v] for k, v in rates.items()},
        "query_wall_ms": {k: [round(x, 2) for x in v] for k, v in wall.items()},
        "query_cpu_ms": {k: [round(x, 2) for x in v] for k, v in cpu.items()},
        "this_over_other": {
            "texts_per_s": round(med(rates["this"]) / med(rates["other"]), 3),
            "query_wall": round(med(wall["this"]) / med(wall["other"]), 3),
            "query_cpu": round(med(cpu["this"]) / med(cpu["other"]), 3),
        },
        "memory_mib": memory,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--texts", type=int, default=1200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--against", type=Path, help="another checkout: its model process vs ours")
    args = ap.parse_args()
    sys.path.insert(0, str(DAEMON))
    texts = corpus(args.texts)
    if args.against:
        result = against(args.against, texts, args.rounds)
        print(json.dumps(result, indent=1))
        if args.out:
            args.out.write_text(json.dumps(result, indent=1) + "\n")
        return
    row: dict = {"throughput": throughput(texts, args.rounds)}
    row["queries"] = queries(texts, 200, 2 * args.rounds)
    starts: dict[str, list[float]] = {"local": [], "child": []}
    for _ in range(5):
        for name, apart in (("local", False), ("child", True)):
            starts[name].append(float(fresh(START.format(apart=apart))))  # type: ignore[arg-type]
    row["start_ms"] = {k: sorted(v) for k, v in starts.items()}
    row["start_ms_median"] = {k: statistics.median(v) for k, v in starts.items()}
    row["memory_mib"] = {
        name: [fresh(MEMORY.format(apart=apart), texts[:200]) for _ in range(2)]
        for name, apart in (("local", False), ("child", True))
    }
    print(json.dumps(row, indent=1))
    if args.out:
        args.out.write_text(json.dumps(row, indent=1) + "\n")


if __name__ == "__main__":
    main()
