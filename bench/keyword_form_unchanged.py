"""Whether a data set's keyword rows and keyword queries are the same with Cyrillic
stems and simplified Han characters (index schema 15) as before them: every string of a JSON file given to
``keyword_form`` with and without stems, and each as a query's keyword terms; and each
as a query whose rare word's other forms search keeps on the first page (stop 54:
``rare_lines.forms``, asked only for a word with a stem).

    python bench/keyword_form_unchanged.py ../shared/bench/locomo/locomo10_dev.json

Prints how many strings, how many hold a Cyrillic letter, and how many change.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from memvault.core.cjk import CYRILLIC_CHARS, keyword_form, stem_term
from memvault.core.ranking import keyword_terms, query_terms
from memvault.core.rare_words import query_words


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        texts = list(strings(json.load(f)))
    cyrillic = re.compile(f"[{CYRILLIC_CHARS}]")
    rows = sum(keyword_form(t) != keyword_form(t, stems=False) for t in texts)
    asked = sum(keyword_terms(query_terms(t), lambda _t: 1) != query_terms(t)[:64] for t in texts)
    forms = sum(any(stem_term(t) for w in query_words(s) for t in w) for s in texts)
    print(
        json.dumps(
            {
                "strings": len(texts),
                "with_cyrillic": sum(bool(cyrillic.search(t)) for t in texts),
                "keyword_form_changed": rows,
                "query_terms_changed": asked,
                "rare_word_forms_asked": forms,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
