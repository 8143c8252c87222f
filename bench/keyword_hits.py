"""Every dev question's keyword hits (path, chunk ord, BM25 to 9 places) on a copy of a
vault indexed by the code on PYTHONPATH: two codes' files compared byte for byte show
whether a change to the keyword table changed any ranking.

    MEMVAULT_INDEX_MODEL=hash PYTHONPATH=<code>/daemon python bench/keyword_hits.py \
        VAULT WORKDIR OUT.json QA.json [QA.json ...]       # then: cmp OUT-a.json OUT-b.json

The questions are those of each ``QA.json`` (the help set's ``qa.json`` shape); the
query is ``fts_query`` of the question's words, 100 hits each. The hash embedder is
enough: the keyword side does not depend on the model.
"""

import json
import shutil
import sys
from pathlib import Path

from memvault.api import Vault
from memvault.core.ranking import fts_query


def main() -> None:
    src, work, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    qs: list[str] = []
    for qa in sys.argv[4:]:
        qs += [q["q"] for q in json.loads(Path(qa).read_text())["questions"]]
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(src, work, ignore=shutil.ignore_patterns(".memvault", ".obsidian"))
    (work / ".memvault").mkdir()
    res = {}
    with Vault.open(work) as v:
        v.sync()
        st = v.engine.store
        for q in qs:
            hits = st.fts(fts_query(q.split()), 100)
            rows = st.chunk_rows([label for label, _ in hits])
            res[q] = [(rows[lb].path, rows[lb].ord, round(s, 9)) for lb, s in hits]
    out.write_text(json.dumps(res, indent=0))
    print(len(qs), "questions", sum(len(h) for h in res.values()), "hits")


if __name__ == "__main__":
    main()
