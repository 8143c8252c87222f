"""vector_twins.py: one graph node per distinct vector; copies are twins of it.

Real hnswlib, real files. hnswlib's graph breaks on copies of one vector (a note of one
repeated line, a template's empty section in every daily note): the searches here
missed most of the exact nearest neighbours before copies became twins.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memvault.index import vector_twins
from memvault.index.vectors import VectorIndex, VectorsWanted

DIM = 64


class Cache:
    """The embedding cache stand-in: label -> vector; ``copies`` labels share one vector."""

    def __init__(self, others: int, copies: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        base = rng.standard_normal((others, DIM)).astype(np.float32)
        copy = rng.standard_normal((1, DIM)).astype(np.float32)
        # labels 0-6 other vectors, then the copies, then the rest (a note's chunks in a row)
        self.vectors = np.vstack([base[:7], np.repeat(copy, copies, axis=0), base[7:]])
        self.copies = list(range(7, 7 + copies))
        self.fetched = 0

    def __call__(self, labels: Sequence[int]) -> np.ndarray:
        self.fetched += len(labels)
        return self.vectors[list(labels)] if labels else np.zeros((0, DIM), np.float32)

    def exact(self, q: np.ndarray, k: int, live: Sequence[int]) -> list[int]:
        rows = self.vectors[list(live)]
        sims = rows @ q / np.linalg.norm(rows, axis=1) / np.linalg.norm(q)
        return [live[i] for i in np.argsort(-sims, kind="stable")[:k]]


def opened(path: Path, cache: Cache, labels: Sequence[int], sha: str | None = None) -> VectorIndex:
    index = VectorIndex(path, DIM, m=16, ef_construction=100, ef_search=200)
    index.open(VectorsWanted(sha, labels, cache))
    return index


def recall(index: VectorIndex, cache: Cache, live: Sequence[int], seed: int = 1) -> float:
    """recall@10 against exact search, over 50 queries, the copies counted as one vector
    (a query near them: any 10 of them are the right 10)."""
    rng = np.random.default_rng(seed)
    found = 0
    for q in rng.standard_normal((50, DIM)).astype(np.float32):
        want = cache.exact(q, 10, live)
        got = [label for label, _ in index.query(q, 10)]
        copies = set(cache.copies)
        found += len({x for x in got if x not in copies} & set(want))
        found += min(len([x for x in got if x in copies]), len([x for x in want if x in copies]))
    return found / 500


def test_copies_of_one_vector_no_longer_hide_the_nearest_neighbours(tmp_path: Path) -> None:
    cache = Cache(300, 300)
    live = list(range(600))
    index = opened(tmp_path / "v.bin", cache, live)  # a rebuild: nothing saved
    assert recall(index, cache, live) >= 0.98
    index.add(list(range(600, 900)), np.repeat(cache.vectors[7:8], 300, axis=0))  # more copies
    assert recall(index, cache, live) >= 0.98
    assert index.deleted_ratio() == 0.0 and len(index.labels()) == 900


def test_a_query_near_the_copies_gets_every_copy_at_the_same_similarity(tmp_path: Path) -> None:
    cache = Cache(50, 40)
    index = opened(tmp_path / "v.bin", cache, list(range(90)))
    hits = index.query(cache.vectors[7], 45)
    assert [label for label, _ in hits[:40]] == cache.copies
    assert {round(s, 5) for _, s in hits[:40]} == {1.0}
    assert len(hits) == 45 and len({label for label, _ in hits}) == 45
    assert index.query(cache.vectors[7], 3) == hits[:3]


def test_a_deleted_copy_leaves_and_the_others_stay_found(tmp_path: Path) -> None:
    cache = Cache(50, 5)
    index = opened(tmp_path / "v.bin", cache, list(range(55)))
    node = cache.copies[0]  # the first given the vector holds it in the graph
    assert index.delete([node]) == 1  # its oldest twin takes its place
    assert [label for label, _ in index.query(cache.vectors[7], 4)] == cache.copies[1:]
    assert index.delete(cache.copies[1:3]) == 2
    assert index.delete([cache.copies[1]]) == 0  # already gone
    assert [label for label, _ in index.query(cache.vectors[7], 2)] == cache.copies[3:]
    assert index.labels() == set(range(55)) - set(cache.copies[:3])
    index.delete(cache.copies[3:])
    assert not set(cache.copies) & {label for label, _ in index.query(cache.vectors[7], 10)}
    # each copy was the node when it left: five slots marked deleted, beside 50 live
    assert index.deleted_ratio() == pytest.approx(5 / 55)
    index.add([100], cache.vectors[7:8])  # the vector again, under a new label: a node
    assert index.query(cache.vectors[7], 1)[0][0] == 100


def test_twins_are_found_again_on_open_and_nothing_is_written(tmp_path: Path) -> None:
    cache = Cache(100, 30)
    labels = list(range(130))
    path = tmp_path / "v.bin"
    index = opened(path, cache, labels)
    sha = index.save()
    assert sha is not None
    cache.fetched = 0
    again = VectorIndex(path, DIM, m=16, ef_construction=100, ef_search=200)
    report = again.open(VectorsWanted(sha, labels, cache))
    assert report.loaded and report.added == 0 and report.removed == 0
    assert not again.dirty and again.save() is None  # the twins are not saved: no write
    assert cache.fetched == 130  # the nodes for the load, the twins to find their node
    assert again.labels() == set(labels)
    assert [label for label, _ in again.query(cache.vectors[7], 30)] == cache.copies
    # a node deleted by the db meanwhile: its twin is a node of its own on open
    third = VectorIndex(path, DIM, m=16, ef_construction=100, ef_search=200)
    third.open(VectorsWanted(sha, [x for x in labels if x != 7], cache))
    assert [label for label, _ in third.query(cache.vectors[7], 29)] == cache.copies[1:]
    assert third.dirty


def test_a_filter_reaches_a_twin_whose_node_it_excludes(tmp_path: Path) -> None:
    cache = Cache(200, 10)
    index = opened(tmp_path / "v.bin", cache, list(range(210)))
    wanted = cache.copies[4]
    hits = index.query(cache.vectors[7], 5, allowed=lambda label: label == wanted or label > 100)
    assert hits[0][0] == wanted and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert all(label == wanted or label > 100 for label, _ in hits)
    # fewer allowed than asked: the exact search, twins included
    few = index.query(cache.vectors[7], 5, allowed=lambda label: label in (wanted, 3))
    assert [label for label, _ in few] == [wanted, 3]


def test_compaction_keeps_the_twins_and_what_changed_meanwhile(tmp_path: Path) -> None:
    cache = Cache(100, 20)
    index = opened(tmp_path / "v.bin", cache, list(range(120)))
    index.delete([7, 50, 51])  # a node with twins, two others

    def build_with_changes(labels: Sequence[int]) -> np.ndarray:
        if labels and labels[0] == 0:  # the build's first batch: the daemon goes on
            index.add([500, 501], np.repeat(cache.vectors[8:9], 2, axis=0))
            index.delete([9, 10])
        return cache(labels)

    index.compact(build_with_changes)
    assert index.deleted_ratio() == 0.0  # built anew; what changed meanwhile touched twins
    want = [*range(11, 27), 500, 501]
    assert [label for label, _ in index.query(cache.vectors[7], 19)] == [8, *want]
    assert index.labels() == set(range(120)) - {7, 9, 10, 50, 51} | {500, 501}


def test_a_digest_collision_costs_a_node_never_a_wrong_hit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every vector collides
    monkeypatch.setattr(vector_twins, "digests", lambda rows: np.zeros(len(rows), np.uint64))
    cache = Cache(100, 10)
    index = opened(tmp_path / "v.bin", cache, list(range(110)))
    for label in (0, 3, 50, 99):
        assert index.query(cache.vectors[label], 1)[0] == (label, pytest.approx(1.0, abs=1e-5))
    assert {label for label, _ in index.query(cache.vectors[7], 10)} == set(cache.copies)


def test_a_note_and_its_copy_are_both_found_through_delete_and_reopen(tmp_path: Path) -> None:
    # A person copies a note into another folder (Obsidian's "Make a copy", a cp): the
    # same title and text, so the same embedded texts and vectors; then deletes the first.
    from helpers import make_vault, open_vault, write

    root = make_vault(tmp_path)
    text = "# Runbook\n\nRestart the ingest workers, then drain the dead-letter queue.\n"
    write(root, "projects/runbook.md", text)
    write(root, "logs/runbook.md", text)
    query = "restart ingest workers dead-letter queue"
    with open_vault(root) as v:
        v.sync()
        vectors = v.engine.embedding.vectors
        assert len(vectors._twins) >= 1  # the copy's chunk is a twin: one graph node
        # both chunks are found by the graph, with one score (the twin answers for its node)
        qv = v.engine.embedding.embedder.embed([query])[0]
        found = dict(vectors.query(qv, 2))
        assert set(found) == set(
            v.engine.store.labels_of(["projects/runbook.md", "logs/runbook.md"])
        )
        assert len(set(map(round, found.values(), [6] * 2))) == 1, found
        # and by search: one text, one hit naming its copy (core/copies)
        hits = v.search(query, k=2)
        assert {hits[0].path, *hits[0].copy_paths} == {"projects/runbook.md", "logs/runbook.md"}
        (root / "projects" / "runbook.md").unlink()
        v.sync()
        assert [h.path for h in v.search(query, k=1)] == ["logs/runbook.md"]
        assert vectors.labels() == v.engine.store.labels()
    with open_vault(root) as v:  # reopened: the heir, a node since, is in the saved graph
        v.sync()
        assert [h.path for h in v.search(query, k=1)] == ["logs/runbook.md"]
        assert v.engine.embedding.vectors.labels() == v.engine.store.labels()
