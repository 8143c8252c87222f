"""Multi-word Russian questions on the field vault under the rules for a rare word's
other forms (``engine/rare_lines.forms``), in one process (review of stop 55).

    python bench/field_lang_multi.py --vault /tmp/rev55a-v

Stop 55's questions are single words; a question of two or three words whose rare
Cyrillic word carries ``search.rare_share`` of it, its stem common, now has up to
``rare_chunks`` notes of the word's other forms kept right after the notes holding the
form asked. Here, from each note (seeded), a body word of 6+ letters in at most 5 notes
whose Snowball stem more than 5 notes hold, with one or two other body words of the same
note held by 6 to 200 notes (the question's other words, common enough that the rare word
may carry the share):

- ``written``: the rare word as written and the other words; a hit is a note holding
  all of them;
- ``inflected``: another form of the rare word (one the vault holds, same Snowball stem)
  and the other words; a hit is a note holding the first form and the other words and
  not the form asked (``field_lang_vaults``' rule).

Per rule (each a ``forms`` put in place for the run, as ``field_lang_forms`` does), per
kind and per fold (sha256 of the first hit's path, mod 2): hit@1, hit@10, MRR@10 of
search (k 10); ``engaged``: the questions whose chunks of other forms the rule changes
against ``main`` (only those can move). Against ``main``, per rule: ``hits_lost`` and
``hits_gained``, the questions a hit in main's first 10 and not now, and the other way;
``first_moved``, the
questions whose first note changed; ``asked_lost``, notes holding the form asked that
were in main's first 10 and are not any more (``rare_kept`` keeps them first: should be
0); ``pushed_out``, main's first-10 notes (the asked form's or not) past the 10th now.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import unicodedata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cjk_bench import body_lines, summary
from field_lang_forms import rules
from field_lang_vaults import MAX_NOTES, WORD, read_notes


def questions(notes: dict[str, str], seed: int) -> list[tuple[str, str, list[str], str]]:
    """(kind, query, the notes a hit is, the rare word asked)."""
    from memvault.core.cjk import stem

    rng = random.Random(seed)
    words_of = {
        rel: sorted(set(WORD.findall("\n".join(body_lines(t)).lower()))) for rel, t in notes.items()
    }
    holding: dict[str, set[str]] = {}
    for rel, words in words_of.items():
        for w in words:
            holding.setdefault(w, set()).add(rel)
    forms: dict[str, set[str]] = {}
    for w in holding:
        forms.setdefault(stem(w), set()).add(w)
    stem_notes = {s: set().union(*(holding[w] for w in ws)) for s, ws in forms.items()}
    out: list[tuple[str, str, list[str], str]] = []
    for words in words_of.values():
        rare = [
            w
            for w in words
            if len(holding[w]) <= MAX_NOTES and len(stem_notes[stem(w)]) > MAX_NOTES
        ]
        common = [w for w in words if 6 <= len(holding[w]) <= 200]
        if not rare or not common:
            continue
        w = rng.choice(rare)
        others = sorted(forms[stem(w)] - {w})
        for n in (1, 2):
            if len(common) < n:
                continue
            ctx = rng.sample(common, n)
            with_ctx = set.intersection(*(holding[c] for c in ctx))
            q = [w, *ctx]
            rng.shuffle(q)
            out.append(("written", " ".join(q), sorted(holding[w] & with_ctx), w))
            if others:
                o = rng.choice(others)
                q = [o, *ctx]
                rng.shuffle(q)
                hits = (holding[w] & with_ctx) - holding[o]
                if hits:
                    out.append(("inflected", " ".join(q), sorted(hits), o))
    return list({(k, q): (k, q, h, w) for k, q, h, w in out}.values())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--rules", default="main,best_other,code")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    from memvault.api import Vault
    from memvault.engine import rare_lines

    # one spelling of a path (the disk's and search's may differ: NFD, NFC)
    notes = {unicodedata.normalize("NFC", p): t for p, t in read_notes(args.vault).items()}
    qs = questions(notes, args.seed)
    folds = [int(hashlib.sha256(h[0].encode()).hexdigest(), 16) % 2 for _, _, h, _ in qs]
    kinds = list(dict.fromkeys(k for k, _, _, _ in qs))
    every = rules()
    chosen = {n: every[n] for n in args.rules.split(",")}
    pages: dict[str, list[list[str]]] = {}
    others: dict[str, list[frozenset[int]]] = {}
    report: dict[str, Any] = {}
    with Vault.open(args.vault) as v:
        store, cfg = v.engine.store, v.engine.config.search
        for name, forms in chosen.items():
            rare_lines.forms = forms  # type: ignore[assignment]
            pages[name], others[name] = [], []
            for _, query, _, _ in qs:
                found = (unicodedata.normalize("NFC", h.path) for h in v.search(query, k=10))
                pages[name].append(list(dict.fromkeys(found)))
                rare = rare_lines.rare_word(cfg, store, query, other_forms=True)
                others[name].append(frozenset() if rare is None else rare.other_forms)
    base = "main" if "main" in chosen else next(iter(chosen))
    for name in chosen:
        ranks = [
            [k, next((i for i, p in enumerate(page) if p in h), None)]
            for (k, _, h, _), page in zip(qs, pages[name], strict=True)
        ]
        engaged = [o != b for o, b in zip(others[name], others[base], strict=True)]
        was = [
            any(p in h for p in page) for (_, _, h, _), page in zip(qs, pages[base], strict=True)
        ]
        now = [r is not None for _, r in ranks]
        moved = lost = pushed = 0
        for (_, _, _, w), page, old in zip(qs, pages[name], pages[base], strict=True):
            moved += bool(page[:1] != old[:1])
            asked = {p for p in old if w in WORD.findall(notes[p].lower())}
            lost += len(asked - set(page))
            pushed += len(set(old) - set(page))
        report[name] = {
            "by_kind": {
                kind: {
                    "all": summary(ranks, kind),
                    "folds": [
                        summary([r for r, f in zip(ranks, folds, strict=True) if f == i], kind)
                        for i in (0, 1)
                    ],
                    "engaged": summary([r for r, e in zip(ranks, engaged, strict=True) if e], kind),
                }
                for kind in kinds
            },
            "hits_lost": [q for (_, q, _, _), a, b in zip(qs, was, now, strict=True) if a > b],
            "hits_gained": sum(b and not a for a, b in zip(was, now, strict=True)),
            "first_moved": moved,
            "asked_lost": lost,
            "pushed_out": pushed,
            "other_chunks_max": max(len(o) for o in others[name]),
        }
    print(json.dumps({"questions": len(qs), "rules": report}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
