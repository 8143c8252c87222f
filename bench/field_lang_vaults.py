"""A real vault in another language searched as its owner would: the figures of stop 53's
field test.

    python bench/field_lang_vaults.py --vault /tmp/fld53-zh --lang zh --opencc /tmp/pylib
    python bench/field_lang_vaults.py --vault /tmp/fld53-ru --lang ru

The vault is one already made a vault and indexed (``memvault up``: its own model; a
daemon serving it answers the searches, as it would the person's). Its notes are
public repositories' (hsy358/obsidian-vault, Chinese; vanadium23/wiki's ``content/``,
Russian): cloned, never copied into this one.

The questions, seeded, from the notes' own text (known-item questions, not ones people
asked). Chinese: ``inside``, a 2-4 character window inside a body line's run of CJK
characters found in at most 5 notes (``cjk_bench.make_questions``); ``hant``, the same
word in traditional characters where that differs (OpenCC's ``s2t``, from
opencc-purepy on ``--opencc``: not a memvault dependency), whose notes are the same:
what a reader writing traditional characters finds (index schema 15 keys a traditional
character as its simplified one, from another table: hanziconv's). Russian: ``word``,
a body word of 6+ letters found in at most 5 notes, as written; ``inflected``, another
form of it found in the vault (the same letters but the last two, ``заметок`` for
``заметки``), whose notes are those holding the first form and not the asked one: found
through its stem (index schema 15 keys a Cyrillic word with its Snowball stem beside
it) or by meaning. Both: ``name``, a note's file name without a leading date (the name
Obsidian shows and a person remembers), a hit being that note (several notes of one name, as
``SKILL`` or a day's report, make some of these questions ambiguous). Per kind: how many,
hit@1, hit@10, MRR@10 of ``search`` (k 10, one rank per note) and its median wall time;
and of the keyword lane alone (``keywords``: the store's BM25 ranking of the query's
keyword terms, as search asks it, ranks of notes cut at 10), which shows what the
keyword index finds before fusion with the model's ranking. Each kind is given for two
folds of its questions too (``folds``: by a hash of the path of the first note counted a
hit), so a change chosen on one can be read on the other.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cjk_bench import body_lines, make_questions, summary

WORD = re.compile(r"[а-яё]{6,}")
MAX_NOTES = 5


def read_notes(vault: Path) -> dict[str, str]:
    return {
        p.relative_to(vault).as_posix(): p.read_text("utf-8", errors="replace")
        for p in sorted(vault.rglob("*.md"))
        if not {".memvault", ".git", ".obsidian", ".claude", "templates"} & set(p.parts)
    }


def names(notes: dict[str, str]) -> list[Any]:
    """Each note's file name (what Obsidian shows and links by), dates and numbers aside:
    ``2026-06-30 - 简历 vs 德勤岗位匹配度`` is asked as ``简历 vs 德勤岗位匹配度``."""
    out = []
    for rel in notes:
        name = re.sub(r"^[\d_.\- ]+", "", Path(rel).stem).strip(" -_")
        if len(name) >= 2 and name.lower() not in ("index", "readme"):
            out.append(("name", name, [rel]))
    return out


def chinese(vault: Path, seed: int, opencc: str | None) -> list[Any]:
    qs = [q for q in make_questions(vault, seed, "zh") if q[0] == "inside"]
    if opencc:
        sys.path.insert(0, opencc)
        from opencc_purepy import OpenCC

        s2t = OpenCC("s2t")
        qs += [("hant", t, h) for _, w, h in list(qs) if (t := s2t.convert(w)) != w]
    return qs


def russian(notes: dict[str, str], seed: int) -> list[Any]:
    rng = random.Random(seed)
    holding: dict[str, set[str]] = {}
    for rel, text in notes.items():
        for w in set(WORD.findall("\n".join(body_lines(text)).lower())):
            holding.setdefault(w, set()).add(rel)
    by_stem: dict[str, list[str]] = {}
    for w in holding:
        by_stem.setdefault(w[:-2], []).append(w)
    out = []
    for text in notes.values():
        words = sorted(set(WORD.findall("\n".join(body_lines(text)).lower())))
        for w in rng.sample(words, min(2, len(words))):
            if len(holding[w]) > MAX_NOTES:
                continue
            out.append(("word", w, sorted(holding[w])))
            others = [o for o in by_stem[w[:-2]] if o != w]
            if others:
                other = rng.choice(sorted(others))
                only = holding[w] - holding[other]
                if only:
                    out.append(("inflected", other, sorted(only)))
    return list({(k, q): (k, q, h) for k, q, h in out}.values())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--lang", choices=("zh", "ru"), required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--opencc", help="a folder holding opencc_purepy (zh: the hant kind)")
    args = ap.parse_args()
    from memvault.api import Vault

    notes = read_notes(args.vault)
    qs = chinese(args.vault, args.seed, args.opencc) if args.lang == "zh" else []
    qs += russian(notes, args.seed) if args.lang == "ru" else []
    qs += names(notes)
    from memvault.core.ranking import keyword_terms, query_terms

    ranks: list[list[Any]] = []
    lane: list[list[Any]] = []  # the keyword lane alone
    ms: dict[str, list[float]] = {}
    with Vault.open(args.vault) as v:
        store = v.engine.store
        for kind, query, holders in qs:
            t0 = time.perf_counter()
            paths = list(dict.fromkeys(h.path for h in v.search(query, k=10)))
            ms.setdefault(kind, []).append((time.perf_counter() - t0) * 1000)
            ranks.append([kind, next((i for i, p in enumerate(paths) if p in holders), None)])
            found = store.keywords(keyword_terms(query_terms(query), store.term_docs), 100)
            rows = store.chunk_rows([label for label, _ in found])
            kw = list(dict.fromkeys(rows[label].path for label, _ in found))[:10]
            lane.append([kind, next((i for i, p in enumerate(kw) if p in holders), None)])
    folds = [int(hashlib.sha256(h[0].encode()).hexdigest(), 16) % 2 for _, _, h in qs]
    report = {
        kind: {
            **summary(ranks, kind),
            "ms_p50": round(statistics.median(ms[kind]), 1),
            "keywords": summary(lane, kind),
            "folds": [
                summary([r for r, f in zip(ranks, folds, strict=True) if f == i], kind)
                for i in (0, 1)
            ],
        }
        for kind in dict.fromkeys(k for k, _ in ranks)
    }
    print(json.dumps({"notes": len(notes), "by_kind": report}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
