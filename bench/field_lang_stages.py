"""Where search loses a note the keyword lane finds: each stage of ``Reader.search`` run
on its own for the Russian field vault's "another form" questions (stop 54).

    python bench/field_lang_stages.py --vault /tmp/ru54-b

Per stage, the share of questions whose note (holding only another form of the word
asked: ``field_lang_vaults.russian``) is among the first 10 notes: the keyword lane
(100 chunks, as search asks it), the vector lane (100), the convex fusion, the fusion
with the note evidence and the place rules (``engine/evidence.joined``), and search.
Also the keyword lane's largest candidate count (any cut before the fusion) and the
note's keyword score over the best (the convex fusion's normalisation), in the median.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from field_lang_vaults import read_notes, russian

POOL = 100


def first_note(ranked: list[tuple[int, float]], rows: dict[int, Any], holders: list[str]) -> Any:
    paths = list(dict.fromkeys(rows[lab].path for lab, _ in ranked if lab in rows))
    return next((i for i, p in enumerate(paths) if p in holders), None)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    args = ap.parse_args()
    from memvault.api import Vault
    from memvault.core.ranking import keyword_terms, query_terms
    from memvault.engine.evidence import joined
    from memvault.engine.reader import _fused

    qs = [q for q in russian(read_notes(args.vault), 7) if q[0] == "inflected"]
    ranks: dict[str, list[Any]] = {}
    counts, scaled = [], []
    with Vault.open(args.vault) as v:
        reader, store, cfg = v.engine.reader, v.engine.store, v.engine.config.search
        for _, query, holders in qs:
            docs_of = functools.cache(store.term_docs)
            lexical = store.keywords(keyword_terms(query_terms(query), docs_of), POOL, docs_of)
            qv = reader.embedding.embedder.embed([query])[0]
            vector = reader.embedding.searching.query(qv, POOL)
            fused = _fused(cfg, lexical, vector)
            rows = store.chunk_rows([lab for lab, _ in fused[:POOL]])
            nearest = [lab for lab, _ in vector]
            evidence = joined(reader, fused, rows, qv, None, nearest, query, docs_of)
            hits = list(dict.fromkeys(h.path for h in v.search(query, k=10)))
            found = {
                "keywords": first_note(lexical, rows, holders),
                "vectors": first_note(vector, rows, holders),
                "fused": first_note(fused, rows, holders),
                "evidence": first_note(evidence, rows, holders),
                "search": next((i for i, p in enumerate(hits) if p in holders), None),
            }
            for stage, rank in found.items():
                ranks.setdefault(stage, []).append(rank)
            counts.append(len(lexical))
            best = max((s for _, s in lexical), default=0.0)
            held = [s / best for lab, s in lexical if lab in rows and rows[lab].path in holders]
            if held and found["keywords"] is not None and found["keywords"] < 10:
                scaled.append(held[0])
    report = {
        "questions": len(qs),
        "first_10": {
            s: round(sum(r is not None and r < 10 for r in rs) / len(rs), 3)
            for s, rs in ranks.items()
        },
        "keyword_candidates_max": max(counts),
        "keyword_score_over_best_p50": round(statistics.median(scaled), 3),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
