"""The Russian field vault's questions under several rules for a rare word's other forms
(``engine/rare_lines.forms``), in one process (stop 55).

    python bench/field_lang_forms.py --vault /tmp/ru55-a

Each rule is a ``forms`` put in place of the module's for the run's searches (a bench's
patch: the code searched is otherwise the checkout's). Per rule, per question kind
(``field_lang_vaults``: a word as written, another form of it, a file name) and per fold
(sha256 of the first hit's path, mod 2): hit@1, hit@10, MRR@10 of search (k 10); with
``main`` among the rules (run first), the questions each rule loses and gains against it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cjk_bench import summary
from field_lang_vaults import names, read_notes, russian


def rules() -> dict[str, Callable[..., frozenset[int]]]:
    from memvault.core import cjk

    def make(bound: Callable[[int, int, int], int | None]) -> Callable[..., frozenset[int]]:
        def forms(
            store: Any,
            terms: Sequence[str],
            most: int,
            docs_of: Callable[[str], int],
            held: Sequence[frozenset[int]],
        ) -> frozenset[int]:
            out: set[int] = set()
            for t in terms:
                s = cjk.stem_term(t)
                if s is None or not docs_of(t) < docs_of(s):
                    continue
                ask = bound(docs_of(t), docs_of(s), most)
                if ask:
                    out.update(lab for lab, _ in store.keywords([s], ask, docs_of))
            return frozenset(out)

        return forms

    from memvault.engine.rare_lines import forms as code

    out: dict[str, Callable[..., frozenset[int]]] = {
        # the checkout's own rule
        "code": code,
        # stop 54's: the stem's chunks when at most ``most`` hold it
        "main": make(lambda w, s, most: most if s <= most else None),
        # the stem's best ``most`` chunks (its own BM25), however many hold it
        "best": make(lambda w, s, most: most),
        # the stem's best ``most`` + w chunks, the word's left out (ru55's first code:
        # up to 2 x ``most`` when the word's w chunks rank low on the stem)
        "best_other": make(lambda w, s, most: most + w),
    }
    # stop 54's bound times c
    for c in (2, 3, 4, 6, 8):
        out[f"bound_x{c}"] = make(lambda w, s, most, c=c: most if s <= c * most else None)
    return out


def nfc(path: str) -> str:
    return unicodedata.normalize("NFC", path)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--rules", default="")
    args = ap.parse_args()
    from memvault.api import Vault
    from memvault.engine import rare_lines

    notes = read_notes(args.vault)
    # one spelling of a path: the disk's may be NFD (a folder Объёмы йогуртов), search's NFC
    qs = [(k, q, [nfc(p) for p in h]) for k, q, h in russian(notes, 7) + names(notes)]
    folds = [int(hashlib.sha256(h[0].encode()).hexdigest(), 16) % 2 for _, _, h in qs]
    kinds = list(dict.fromkeys(k for k, _, _ in qs))
    every = rules()
    names_ = args.rules.split(",") if args.rules else list(every)
    chosen = {n: every[n] for n in sorted(names_, key=lambda n: n != "main")}  # main first
    report: dict[str, Any] = {}
    hit: dict[str, list[bool]] = {}  # each question's hit@10, per rule
    with Vault.open(args.vault) as v:
        for name, forms in chosen.items():
            rare_lines.forms = forms  # type: ignore[assignment]
            ranks = []
            for kind, query, holders in qs:
                paths = list(dict.fromkeys(nfc(h.path) for h in v.search(query, k=10)))
                ranks.append([kind, next((i for i, p in enumerate(paths) if p in holders), None)])
            report[name] = {
                kind: [
                    summary([r for r, f in zip(ranks, folds, strict=True) if f == i], kind)
                    for i in (0, 1)
                ]
                for kind in kinds
            }
            hit[name] = [r is not None for _, r in ranks]
            if "main" in hit:  # the questions lost and gained against stop 54's rule
                report[name]["lost_gained"] = [
                    [
                        q
                        for (_, q, _), a, b in zip(qs, hit["main"], hit[name], strict=True)
                        if a > b
                    ],
                    [
                        q
                        for (_, q, _), a, b in zip(qs, hit["main"], hit[name], strict=True)
                        if b > a
                    ],
                ]
            print(name, json.dumps(report[name], ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
