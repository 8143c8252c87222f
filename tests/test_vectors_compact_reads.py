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
