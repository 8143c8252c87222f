"""A search while the vector index compacts (``VectorIndex.compact``: a rebuild from the
cache once deleted slots pass ``index.compact_ratio``) is answered, not held until the
rebuild ends. Found by the review of 0fcb838..49c9285 (pre-existing): on a real pull of
obsidian-help (72,146 chunks, hash model, load 16) the daemon compacted after the pull
and every CLI search for 2.5 minutes failed with "the daemon did not answer POST /search
within 30 s"; at 100,000 notes with the real model a rebuild takes far longer. Cause:
``compact`` builds the new hnswlib index holding the index's one lock, which every
``query`` takes.

Real hnswlib; the cache stand-in's callback is where the test looks at the query."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from helpers import nearest
from memvault.index.vectors import VectorIndex, VectorsWanted

DIM = 16


def test_a_query_is_answered_while_the_index_compacts(tmp_path: Path) -> None:
    vectors = np.random.default_rng(0).standard_normal((2000, DIM)).astype(np.float32)
    compacting = threading.Event()
    answered = threading.Event()
    during: list[bool] = []

    def vectors_for(labels: Sequence[int]) -> np.ndarray:
        if compacting.is_set() is False and building.is_set():
            compacting.set()
            # the rebuild is under way: a query asked now must be answered now
            during.append(answered.wait(20))
        return vectors[list(labels)]

    building = threading.Event()
    index = VectorIndex(tmp_path / "vectors.bin", DIM, m=8, ef_construction=50, ef_search=50)
    index.open(VectorsWanted(None, range(2000), vectors_for))
    index.delete(range(0, 2000, 2))  # half the slots deleted: due for compaction
    building.set()
    compaction = threading.Thread(target=index.compact, args=(vectors_for,))
    compaction.start()
    assert compacting.wait(20)
    hits: list[list[tuple[int, float]]] = []
    query = threading.Thread(target=lambda: hits.append(index.query(vectors[1], 5)))
    query.start()
    query.join(20)
    if hits:
        answered.set()
    compaction.join(60)
    query.join(60)
    assert during == [True], "the query waited for the whole rebuild"
    assert hits and hits[0][0][0] == 1


def test_adds_and_deletes_made_during_a_compaction_are_in_the_compacted_index(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((3000, DIM)).astype(np.float32)
    index = VectorIndex(tmp_path / "vectors.bin", DIM, m=8, ef_construction=50, ef_search=50)
    index.open(VectorsWanted(None, range(2000), lambda labels: vectors[list(labels)]))
    index.delete(range(0, 2000, 2))
    changed = threading.Event()

    def vectors_for(labels: Sequence[int]) -> np.ndarray:
        if not changed.is_set():  # the build is under way: the sync goes on meanwhile
            changed.set()
            worker = threading.Thread(
                target=lambda: (
                    index.add(range(2000, 2100), vectors[2000:2100]),
                    index.delete([1, 3, 2001]),  # two the build has, one added meanwhile
                )
            )
            worker.start()
            worker.join(20)
        return vectors[list(labels)]

    index.compact(vectors_for)
    expected = (set(range(1, 2000, 2)) | set(range(2000, 2100))) - {1, 3, 2001}
    assert index.labels() == expected
    assert index.deleted_ratio() == 3 / (len(expected) + 3)  # only those replayed
    assert nearest(index, vectors[2050])[0] == 2050
    assert {label for label, _ in index.query(vectors[1], 50)}.isdisjoint({1, 3, 2001})
    with pytest.raises(ValueError, match="used before"):
        index.add([2001], vectors[2001:2002])  # never reused, compaction or not
    index.save()
    again = VectorIndex(tmp_path / "vectors.bin", DIM, m=8, ef_construction=50, ef_search=50)
    report = again.open(VectorsWanted(None, sorted(expected), lambda labels: vectors[list(labels)]))
    assert again.labels() == expected and nearest(again, vectors[2050])[0] == 2050
    assert report is not None
