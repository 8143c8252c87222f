"""What the rare word's other forms (``engine/rare_lines.forms``, stop 54) cost a search
and a context: two codes on one vault, in one run, rounds alternating.

    python bench/rare_forms_cost.py --vault /tmp/rev54a-ru \\
        --base /tmp/rev54a-before/daemon --code daemon --rounds 3

Each round runs one process per code (their order alternating), each on the same copy
of the vault (nothing is written: search and context only read): the Russian field
vault's questions (``field_lang_vaults.russian``: each word as written, and another
form of it), each searched once (k 10) after a warm-up, then each "another form"
question's context (budget 1000). Per code: the median process_time and wall time of
a search (all questions, and those with a rare Cyrillic word apart) and of a context,
over every round's samples, and the keyword statements each asked (``Store.keywords``
and ``Store.term_docs`` calls: the same in every round).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def worker(vault: Path) -> None:
    import functools

    from field_lang_vaults import read_notes, russian
    from memvault.api import Vault
    from memvault.core.cjk import stem_term
    from memvault.engine.rare_lines import rare_word

    qs = russian(read_notes(vault), 7)
    out: dict[str, Any] = {"search": [], "context": []}
    with Vault.open(vault) as v:
        store, cfg = v.engine.store, v.engine.config.search
        calls = {"keywords": 0, "term_docs": 0}

        def counted(name: str) -> Any:
            real = getattr(store, name)

            def call(*a: Any, **k: Any) -> Any:
                calls[name] += 1
                return real(*a, **k)

            return call

        for name in calls:
            setattr(store, name, counted(name))
        v.search(qs[0][1], k=10)  # warm: the model, the vectors, the caches
        v.context(qs[0][1], 1000)
        for kind, query, _ in qs:
            rare = rare_word(cfg, store, query, functools.cache(store.term_docs))
            cyrillic = rare is not None and any(stem_term(t) for t in rare.terms)
            before = dict(calls)
            c, t = time.process_time(), time.perf_counter()
            v.search(query, k=10)
            cpu, wall = time.process_time() - c, time.perf_counter() - t
            asked = {n: calls[n] - before[n] for n in calls}
            out["search"].append([kind, cyrillic, cpu, wall, asked])
        for kind, query, _ in qs:
            if kind != "inflected":
                continue
            before = dict(calls)
            c, t = time.process_time(), time.perf_counter()
            v.context(query, 1000)
            cpu, wall = time.process_time() - c, time.perf_counter() - t
            asked = {n: calls[n] - before[n] for n in calls}
            out["context"].append([kind, True, cpu, wall, asked])
    print(json.dumps(out))


def ms(xs: list[float]) -> float:
    return round(1000 * statistics.median(xs), 2) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--base", type=Path, required=True, help="the code before: its daemon/")
    ap.add_argument("--code", type=Path, required=True, help="the code after: its daemon/")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--worker", action="store_true")
    args = ap.parse_args()
    if args.worker:
        worker(args.vault)
        return 0
    codes = {"base": args.base.resolve(), "code": args.code.resolve()}
    samples: dict[str, dict[str, list[Any]]] = {c: {"search": [], "context": []} for c in codes}
    for r in range(args.rounds):
        order = list(codes) if r % 2 == 0 else list(reversed(codes))
        for name in order:
            env = {**os.environ, "PYTHONPATH": str(codes[name])}
            got = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--vault",
                    str(args.vault),
                    "--base",
                    ".",
                    "--code",
                    ".",
                    "--worker",
                ],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            for op, rows in json.loads(got.stdout.splitlines()[-1]).items():
                samples[name][op].extend(rows)
    report: dict[str, Any] = {"rounds": args.rounds}
    for name, ops in samples.items():
        s, ctx = ops["search"], ops["context"]
        rare = [x for x in s if x[1]]
        rest = [x for x in s if not x[1]]
        n = len(s) // args.rounds
        report[name] = {
            "code": str(codes[name]),
            "searches": n,
            "with_rare_cyrillic": len(rare) // args.rounds,
            "search_cpu_ms": ms([x[2] for x in s]),
            "search_wall_ms": ms([x[3] for x in s]),
            "rare_cpu_ms": ms([x[2] for x in rare]),
            "rare_wall_ms": ms([x[3] for x in rare]),
            "rest_cpu_ms": ms([x[2] for x in rest]),
            "context_cpu_ms": ms([x[2] for x in ctx]),
            "context_wall_ms": ms([x[3] for x in ctx]),
            "keywords_per_rare_search": statistics.mean(x[4]["keywords"] for x in rare),
            "term_docs_per_rare_search": statistics.mean(x[4]["term_docs"] for x in rare),
            "keywords_per_context": statistics.mean(x[4]["keywords"] for x in ctx),
        }
    base, code = report["base"], report["code"]
    report["ratio"] = {
        k: round(code[k] / base[k], 3)
        for k in (
            "search_cpu_ms",
            "search_wall_ms",
            "rare_cpu_ms",
            "rare_wall_ms",
            "context_cpu_ms",
        )
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
