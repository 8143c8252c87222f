"""The keyword lane's transforms that come from other packages, pinned: the Snowball
Russian stems (``snowballstemmer``) and the traditional-to-simplified table
(``hanziconv``) are part of the index's format. A SQLite index takes a row out of its
keyword table with the values it computes again, so a release of either package that
changed a stem or a character would make those values differ from what was put in.
If a digest here changes, the keyword form changed: bump the schema (index/schema.py,
pg_schema.py) with an upgrade that keys the changed rows again, then pin the new digest.
(Stems measured identical under snowballstemmer 2.2.0 and 3.1.1.)"""

from __future__ import annotations

import hashlib
import itertools

from memvault.core import cjk

_BASES = [
    "москв",
    "книг",
    "стол",
    "дом",
    "вод",
    "люб",
    "работ",
    "говор",
    "нов",
    "хорош",
    "сид",
    "бега",
    "читател",
    "учител",
    "решени",
    "проект",
]
_ENDS = (
    "",
    *[
        "а",
        "ы",
        "е",
        "у",
        "ой",
        "ою",
        "ами",
        "ах",
        "ов",
        "ем",
        "ям",
        "ить",
        "ал",
        "ала",
        "ющий",
        "ения",
        "ость",
        "ого",
        "ему",
        "ими",
        "ство",
    ],
)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_russian_stems_are_those_the_index_was_made_with() -> None:
    words = [b + e for b, e in itertools.product(_BASES, _ENDS)]
    assert len(words) == 352
    got = "\n".join(f"{w} {cjk.stem(w)}" for w in words)
    assert cjk.stem("москве") == "москв"
    assert _digest(got) == "05b0b59bacca66114fd7f1627ebe0c0de5c85cb0f1c2c5422ccc0b92cf450bec"


def test_the_traditional_to_simplified_table_is_the_one_the_index_was_made_with() -> None:
    assert cjk.simplified("學習東京") == "学习东京"
    table = {ord(t): cjk.simplified(t) for t in cjk.han_changed() if t != "-"}
    assert len(table) == 2702
    text = "".join(f"{chr(k)}{v}" for k, v in sorted(table.items()))
    assert _digest(text) == "5953f3a5129417c210dfc981c3f6d3def7611eb2729425cae4310e17b107c53f"
