"""LoCoMo evidence recall through memvault, on the dev split only.

    python bench/locomo_eval.py                         # Vault.context at 1000 and 2000 tokens
    python bench/locomo_eval.py --mode search           # Vault.search hits concatenated best-first
    python bench/locomo_eval.py --set index.chunk_target_tokens=64 --set search.vector_weight=2
    python bench/locomo_eval.py --convs 0,1,2           # one fold of the dev split (tune here,
    python bench/locomo_eval.py --convs 3,4             #  check there, and the other way round)
    python bench/locomo_eval.py --memo /tmp/embeddings.pkl   # keep embeddings across runs
    python bench/locomo_eval.py --backend torch         # the PyTorch backend (default: onnx)
    python bench/locomo_eval.py --onnx-precision fp32   # the float32 ONNX model (default: int8)
    python bench/locomo_eval.py --onnx-model x.onnx     # another ONNX graph of the model (a variant)
    python bench/locomo_eval.py --batch-size 1          # index.batch_size (torch: its batch)
    python bench/locomo_eval.py --per-conv              # also each conversation on its own

The data and the scorer are read from ../shared/bench/locomo (never copied
here). For each conversation the kit writes a vault; memvault indexes it with
the real bundled model and answers every question; the kit's scorer measures
the share of evidence turns inside the context cut to the budget.

Embeddings are memoised in-process by text, so trying another fusion or
context setting does not re-run the model; chunking settings do. ``--memo``
keeps the memo in a file between runs (for one's own iterations: it holds
vectors of the dataset's text, so keep it out of the repository).

Each result line gives recall per budget, recall per question category per
budget (the dataset's ``category`` field, 1-4), and the conversations used.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))
# ../shared beside the checkout (or beside its parent: a worktree under wt/)
KIT = next(
    (p / "shared" / "bench" / "locomo" for p in ROOT.parents if (p / "shared" / "bench").is_dir()),
    ROOT.parent / "shared" / "bench" / "locomo",
)
sys.path.insert(0, str(KIT))

import locomo_kit  # noqa: E402

from memvault.api import Vault  # noqa: E402
from memvault.config import IndexSettings  # noqa: E402
from memvault.index.embedder import Embedder, make_embedder  # noqa: E402


class MemoEmbedder:
    """The real model, with a per-process memo of text -> vector."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.max_tokens = inner.max_tokens
        self.memo: dict[str, np.ndarray] = {}
        self.encoded = 0
        self.encode_seconds = 0.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            started = time.perf_counter()
            for text, vec in zip(missing, self.inner.embed(missing), strict=True):
                self.memo[text] = vec
            self.encode_seconds += time.perf_counter() - started
            self.encoded += len(missing)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.memo[t] for t in texts])

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


def parse_sets(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, _, raw = item.partition("=")
        section, _, name = key.partition(".")
        value: Any
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if isinstance(value, list):
            value = list(value)
        out.setdefault(section, {})[name] = value
    return out


def _own_schema(root: Path, overrides: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """With the index on PostgreSQL (MEMVAULT_INDEX_STORE=postgres): a schema per
    conversation's vault (the kit names every vault folder alike, and one writer holds
    a schema at a time)."""
    import hashlib
    import os

    if os.environ.get("MEMVAULT_INDEX_STORE") != "postgres":
        return overrides
    schema = "memvault_locomo_" + hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return {**overrides, "index": {**overrides.get("index", {}), "schema": schema}}


def parse_convs(spec: str, total: int) -> list[int]:
    """``"0,1,2"``, ``"3-4"`` or ``""`` (all) -> conversation indices."""
    if not spec.strip():
        return list(range(total))
    out: list[int] = []
    for part in spec.split(","):
        first, _, last = part.strip().partition("-")
        out += range(int(first), int(last or first) + 1)
    bad = [i for i in out if not 0 <= i < total]
    if bad:
        raise SystemExit(f"--convs: no conversation {bad[0]} (the dev split has 0-{total - 1})")
    return list(dict.fromkeys(out))


def run(
    embedder: MemoEmbedder,
    overrides: dict[str, dict[str, Any]],
    budgets: Sequence[int],
    mode: str,
    convs: list[dict],
) -> dict[str, Any]:
    results: dict[str, Any] = {"recall": {}, "by_category": {}}
    timings: dict[str, float] = {"sync": 0.0, "query": 0.0}
    questions = 0
    for budget in budgets:

        def make(root: Path, budget: int = budget) -> Callable[[str], str]:
            # the kit's folder of notes, made a vault by its .memvault/ alone (as before
            # Vault.open required one): no template files join the conversation's notes
            (root / ".memvault").mkdir(exist_ok=True)
            vault = Vault.open(root, embedder=embedder, overrides=_own_schema(root, overrides))
            started = time.perf_counter()
            vault.sync()
            timings["sync"] += time.perf_counter() - started

            def answer(question: str) -> str:
                nonlocal questions
                started = time.perf_counter()
                if mode == "search":
                    hits = vault.engine.search(question, k=100)
                    text = "\n".join(h.text for h in hits)
                else:
                    text = vault.engine.context(question, budget=budget).text
                timings["query"] += time.perf_counter() - started
                questions += 1
                return text

            make.vaults.append(vault)  # type: ignore[attr-defined]
            return answer

        make.vaults = []  # type: ignore[attr-defined]
        scored = locomo_kit.evaluate(convs, make, budgets=(budget,))
        for vault in make.vaults:  # type: ignore[attr-defined]
            vault.close()
        results["recall"][budget] = round(scored["recall"][budget], 4)
        results["by_category"][budget] = {
            c: round(v, 4) for c, v in scored["recall_by_category_at_first_budget"].items()
        }
        results["questions"] = scored["questions"]
    results["ms_per_query"] = round(1000 * timings["query"] / max(questions, 1), 1)
    results["sync_seconds"] = round(timings["sync"], 1)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--set", action="append", default=[], help="section.key=value (JSON values)"
    )
    parser.add_argument("--budgets", default="1000,2000")
    parser.add_argument("--mode", choices=("context", "search"), default="context")
    parser.add_argument(
        "--convs",
        default="",
        help="conversations of the dev split to use, e.g. 0,1,2 or 3-4 (default: all)",
    )
    parser.add_argument("--memo", type=Path, help="a pickle file memoising embeddings across runs")
    parser.add_argument(
        "--grid", type=Path, help="a JSON list of {name, set: [...]} to run in turn"
    )
    parser.add_argument("--backend", choices=("onnx", "torch"), default="onnx")
    parser.add_argument("--onnx-precision", choices=("int8", "fp32"), default="int8")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="index.batch_size (onnx: texts a message, each run alone)",
    )
    parser.add_argument("--onnx-model", type=Path, help="run this ONNX graph (mean-pooled output)")
    parser.add_argument(
        "--per-conv", action="store_true", help="also score each conversation on its own"
    )
    args = parser.parse_args(argv)

    convs = locomo_kit.load(KIT / "locomo10_dev.json")
    chosen = parse_convs(args.convs, len(convs))
    convs = [convs[i] for i in chosen]
    budgets = [int(b) for b in args.budgets.split(",")]
    if args.onnx_model:
        from memvault.index.embedder_onnx import OnnxEmbedder
        from memvault.index.model_files import resolve_model_path

        folder = resolve_model_path("sentence-transformers/all-MiniLM-L6-v2")
        inner: Embedder = OnnxEmbedder(args.onnx_model, folder, f"variant:{args.onnx_model.name}")
    else:
        inner = make_embedder(
            IndexSettings(
                backend=args.backend, onnx_precision=args.onnx_precision, batch_size=args.batch_size
            )
        )
    embedder = MemoEmbedder(inner)
    if args.memo and args.memo.is_file():  # one memo per model: backends never mix
        memos = pickle.loads(args.memo.read_bytes())
        embedder.memo = memos.get(embedder.model_id, {}) if isinstance(memos, dict) else {}
    print(json.dumps({"backend": args.backend, "model_id": embedder.model_id}), flush=True)
    configs = json.loads(args.grid.read_text()) if args.grid else [{"name": "run", "set": args.set}]
    for config in configs:
        started = time.perf_counter()
        result = run(embedder, parse_sets(config["set"]), budgets, args.mode, convs)
        result["config"] = config
        result["convs"] = chosen
        result["mode"] = args.mode
        result["seconds"] = round(time.perf_counter() - started, 1)
        if args.per_conv:  # the embeddings are memoised: only the queries run again
            result["per_conv"] = [
                run(embedder, parse_sets(config["set"]), budgets, args.mode, [conv])["recall"]
                for conv in convs
            ]
        print(json.dumps(result), flush=True)
        if args.memo and embedder.encoded:
            memos = pickle.loads(args.memo.read_bytes()) if args.memo.is_file() else {}
            memos = memos if isinstance(memos, dict) else {}
            memos[embedder.model_id] = embedder.memo
            args.memo.write_bytes(pickle.dumps(memos))
    return 0


if __name__ == "__main__":
    sys.exit(main())
