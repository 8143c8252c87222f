"""A rare Russian word's other forms chosen in the fused order instead of by the stem's
keyword score alone: the single-word and multi-word questions of the field vault, in one
process (review of stop 55; a rule not in the code, measured for the next stop).

    python bench/field_lang_fused_forms.py --vault /tmp/rev55a-v

Rules: ``main`` (stop 54), ``code`` (the checkout's ``rare_lines.forms``: the stem's best
``rare_chunks`` chunks not holding the word, by its BM25 alone) and ``fused_poolK``: the
stem's best K x ``rare_chunks`` chunks not holding the word, of which ``rare_kept`` keeps
the first ``rare_chunks`` notes in the ranking's own order (a note holding another form
and the question's other words, ranked high already, is among them; by the stem alone it
may not be, and the stem's best went before it). Each a ``forms`` and a ``rare_kept``
put in place for the run (a bench's patch). Question sets: ``single``,
``field_lang_vaults``' "inflected" (seed 7); ``multiS``, ``field_lang_multi``'s (seed S).
Per rule and set: per kind and fold (sha256 of the first hit's path, mod 2) n, hit@10,
MRR@10 of search (k 10); the questions lost and gained against ``main``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cjk_bench import summary
from field_lang_forms import rules
from field_lang_multi import questions
from field_lang_vaults import read_notes, russian


def nfc(path: str) -> str:
    return unicodedata.normalize("NFC", path)


def variants() -> dict[str, tuple[Callable[..., frozenset[int]], Callable[..., Any]]]:
    from memvault.core import cjk
    from memvault.core.ranking import rare_kept

    def pool(k: int) -> Callable[..., frozenset[int]]:
        def forms(
            store: Any,
            terms: Sequence[str],
            most: int,
            docs_of: Callable[[str], int],
            held: Sequence[frozenset[int]],
        ) -> frozenset[int]:
            taken = frozenset().union(*held)
            out: set[int] = set()
            for t in terms:
                s = cjk.stem_term(t)
                if s is not None and docs_of(t) < docs_of(s):
                    found = store.keywords([s], k * most + len(taken), docs_of)
                    out.update(lab for lab, _ in found if lab not in taken)
            return frozenset(out)

        return forms

    def kept_first(
        ranked: Sequence[tuple[int, float]],
        notes: Mapping[int, str],
        holders: Collection[int],
        place: int = 1,
        other_forms: Collection[int] = (),
        most: int = 5,
    ) -> list[tuple[int, float]]:
        held = {notes.get(lab) for lab in holders}
        seen: set[str] = set()
        chosen: set[int] = set()
        for lab, _ in ranked:
            note = notes.get(lab)
            if lab in other_forms and note is not None and note not in held | seen:
                seen.add(note)
                chosen.add(lab)
                if len(seen) >= most:
                    break
        return rare_kept(ranked, notes, holders, place, chosen)

    every = rules()
    out = {"main": (every["main"], rare_kept), "code": (every["code"], rare_kept)}
    for k in (2, 4, 8):
        out[f"fused_pool{k}"] = (pool(k), kept_first)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--seeds", default="7,8,9")
    args = ap.parse_args()
    from memvault.api import Vault
    from memvault.engine import evidence, rare_lines

    raw = read_notes(args.vault)
    notes = {nfc(p): t for p, t in raw.items()}
    sets = {"single": [(k, q, [nfc(p) for p in h]) for k, q, h in russian(raw, 7) if k != "word"]}
    for seed in args.seeds.split(","):
        sets[f"multi{seed}"] = [(k, q, h) for k, q, h, _ in questions(notes, int(seed))]
    hits: dict[tuple[str, str], list[bool]] = {}
    with Vault.open(args.vault) as v:
        for name, (forms, kept) in variants().items():
            rare_lines.forms = forms  # type: ignore[assignment]
            evidence.rare_kept = kept  # type: ignore[assignment]
            for sname, qs in sets.items():
                ranks = []
                for kind, query, holders in qs:
                    page = list(dict.fromkeys(nfc(h.path) for h in v.search(query, k=10)))
                    ranks.append(
                        [kind, next((i for i, p in enumerate(page) if p in holders), None)]
                    )
                folds = [int(hashlib.sha256(h[0].encode()).hexdigest(), 16) % 2 for _, _, h in qs]
                hits[name, sname] = [r is not None for _, r in ranks]
                base = hits.get(("main", sname), hits[name, sname])
                now = hits[name, sname]
                lost = sum(a > b for a, b in zip(base, now, strict=True))
                gained = sum(b > a for a, b in zip(base, now, strict=True))
                by_kind = {
                    kind: [
                        (s["n"], s["hit@10"], s["mrr@10"])
                        for i in (0, 1)
                        if (
                            s := summary(
                                [r for r, f in zip(ranks, folds, strict=True) if f == i], kind
                            )
                        )
                    ]
                    for kind in dict.fromkeys(k for k, _, _ in qs)
                }
                print(name, sname, by_kind, "lost", lost, "gained", gained, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
