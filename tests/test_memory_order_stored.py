"""The keys an index keeps of each note (``memory_order.stored_keys``): their byte order
is ``sort_key``'s order, and they are pinned: a change of ``sort_key`` or ``collation``
changes the keys an older index holds, so it takes a new ``KEYS_ALGORITHM``, which the
index records with its keys: a writer computes them again at its open (``note_order.rekey``).
The pieces here collate alike under every Unicode version Python has had since 3.11; the
tables' own changes are recorded with the keys too (tests/test_order_keys_made.py)."""

from __future__ import annotations

import hashlib
import random

from memvault.core.memory_order import (
    KEYS_ALGORITHM,
    ORDERS_KEPT,
    CatalogueEntry,
    sort_key,
    stored_keys,
)

_PIECES = ["a", "B", "\x00", "é", "_", "-", "1", "10", "2", "~", " ", "Ä", "z", "ß", "日", "/"]
_STAMPS = ["2024-01-01", "2024-03", "2024-01-01é", "2024-01-01ü", "2024-01-01 10:00", None]


def _entries(seed: int, count: int) -> list[CatalogueEntry]:
    rng = random.Random(seed)

    def text() -> str:
        return "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 6)))

    out = []
    for i in range(count):
        folder = rng.choice(["people", "Plugins", "a/b", ""])
        path = f"{folder}/{text()}{i}.md" if folder else f"{text()}{i}.md"
        fields = {k: v for k in ("date", "updated") if (v := rng.choice(_STAMPS)) is not None}
        out.append(CatalogueEntry(path, text(), "", fields))
    return out


def test_the_kept_keys_sort_as_sort_key_does() -> None:
    entries = _entries(52, 4000)
    for i, order in enumerate(ORDERS_KEPT):
        by_key = sorted(entries, key=lambda e: sort_key(e, order))
        kept = sorted(entries, key=lambda e: stored_keys(e.path, e.title, e.fields)[i])
        assert [e.path for e in kept] == [e.path for e in by_key], order


def test_the_kept_keys_are_those_of_algorithm_1() -> None:
    """Failing here: the keys changed. Bump ``memory_order.KEYS_ALGORITHM`` (an index
    records it with its keys: a writer then computes them again), then pin the new
    digest and the number below."""
    assert KEYS_ALGORITHM == 1
    digest = hashlib.sha256()
    for e in _entries(14, 300):
        for key in stored_keys(e.path, e.title, e.fields):
            digest.update(key + b"|")
    assert digest.hexdigest()[:16] == "4f63bf2a27229dce"
