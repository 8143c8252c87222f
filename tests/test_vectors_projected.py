"""The graph on projected vectors, each search ranked again by the full vectors
(index/projection.py, index/vectors_projected.py): real hnswlib, real files.

Vectors here are random ones whose variance falls off by direction (a projection
fitted on them, as the default model's is on its own kind of vectors); what is checked
is what a search must give whatever the graph holds: the full vectors' top hits and their exact cosines, labels never
reused, deletes, filters, twins, compaction, and a graph built under another
projection (or none) rebuilt, never trusted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memvault.config import IndexSettings
from memvault.index import projection as P
from memvault.index.embedder import model_id_for
from memvault.index.store import Store
from memvault.index.vectors import VectorIndex, VectorsWanted
from memvault.index.vectors_projected import ProjectedVectors, candidates

DIM, OUT = 48, 12


def clustered(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors whose variance falls off by direction (as a model's do: a few
    directions carry most of it), float16-exact as the cache gives them back."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(np.random.default_rng(42).normal(size=(DIM, DIM)))[0]
    scale = 1.0 / (1 + np.arange(DIM)) ** 1.2
    rows = (rng.normal(size=(n, DIM)) * scale) @ basis.T + 0.5 * basis[:, 0]
    rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float16).astype(np.float32)


class Cache:
    """The full vectors by label, as cache.db gives them (``Store.vectors_for``)."""

    def __init__(self, rows: dict[int, np.ndarray]) -> None:
        self.rows = rows

    def full(self, labels: Sequence[int]) -> tuple[list[int], np.ndarray]:
        found = [label for label in labels if label in self.rows]
        return found, np.array([self.rows[label] for label in found], dtype=np.float32).reshape(
            -1, DIM
        )

    def vectors_for(self, labels: Sequence[int]) -> np.ndarray:
        return np.array([self.rows[label] for label in labels], dtype=np.float32).reshape(-1, DIM)


def exact(cache: Cache, q: np.ndarray, k: int, labels: set[int]) -> list[tuple[int, float]]:
    keys = sorted(labels)
    rows = np.array([cache.rows[label] for label in keys])
    sims = rows @ (q / np.linalg.norm(q)) / np.linalg.norm(rows, axis=1)
    order = sorted(range(len(keys)), key=lambda i: (-sims[i], keys[i]))[:k]
    return [(keys[i], float(sims[i])) for i in order]


def projected(path: Path, fitted: P.Projection, cache: Cache) -> ProjectedVectors:
    return ProjectedVectors(VectorIndex(path, fitted.out), fitted, cache.full)


@pytest.fixture
def built(tmp_path: Path) -> tuple[ProjectedVectors, Cache, P.Projection, Path]:
    rows = clustered(3000)
    fitted = P.fit(rows[:1000], OUT, "test-model")
    cache = Cache({i + 1: rows[i] for i in range(len(rows))})
    pv = projected(tmp_path / "vectors.bin", fitted, cache)
    pv.open(VectorsWanted(None, [], cache.vectors_for))
    pv.add(list(cache.rows), np.array(list(cache.rows.values())))
    return pv, cache, fitted, tmp_path / "vectors.bin"


def test_a_search_gives_the_full_vectors_top_hits_and_their_exact_cosines(
    built: tuple[ProjectedVectors, Cache, P.Projection, Path],
) -> None:
    pv, cache, fitted, _ = built
    assert pv.inner.dim == OUT and fitted.out == OUT  # the graph holds 12 of 48 dimensions
    queries = clustered(60, seed=1)
    same = 0
    for q in queries:
        got = pv.query(q, 10)
        want = exact(cache, q, 10, set(cache.rows))
        assert len(got) == 10
        for label, score in got:  # every score is the full vectors' cosine
            assert score == pytest.approx(exact(cache, q, 1, {label})[0][1], abs=1e-5)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
        same += len({lab for lab, _ in got} & {lab for lab, _ in want})
    assert same / (10 * len(queries)) >= 0.97


def test_without_the_second_look_the_graph_alone_finds_fewer(
    built: tuple[ProjectedVectors, Cache, P.Projection, Path],
) -> None:
    # the second look is what keeps the ranking: the projected graph's own top 10 (no
    # re-rank) misses more of the exact top 10 than the re-ranked answer does
    pv, cache, fitted, _ = built
    alone = looked = 0
    for q in clustered(60, seed=2):
        want = {lab for lab, _ in exact(cache, q, 10, set(cache.rows))}
        alone += len({lab for lab, _ in pv.inner.query(fitted.apply(q)[0], 10)} & want)
        looked += len({lab for lab, _ in pv.query(q, 10)} & want)
    assert looked > alone


def test_a_saved_graph_is_loaded_as_it_was_and_gives_the_same_answers(
    built: tuple[ProjectedVectors, Cache, P.Projection, Path],
) -> None:
    pv, cache, fitted, path = built
    sha = pv.save()
    assert sha is not None and sha.endswith("+" + fitted.ident)
    q = clustered(1, seed=3)[0]
    before = pv.query(q, 20)
    again = projected(path, fitted, cache)
    report = again.open(VectorsWanted(sha, list(cache.rows), cache.vectors_for))
    assert report.loaded and report.added == 0 and report.removed == 0
    assert again.query(q, 20) == before
    assert not again.dirty and again.save() is None  # nothing changed: nothing written


def test_a_graph_of_another_projection_or_none_is_rebuilt_not_trusted(
    built: tuple[ProjectedVectors, Cache, P.Projection, Path],
) -> None:
    pv, cache, fitted, path = built
    sha = pv.save()
    assert sha is not None
    other = P.fit(clustered(1000, seed=9), OUT, "test-model")  # same size, other numbers
    assert other.ident != fitted.ident
    report = projected(path, other, cache).open(
        VectorsWanted(sha, list(cache.rows), cache.vectors_for)
    )
    assert not report.loaded and report.rebuilt_reason
    # the full graph (the projection switched off) given this checksum: rebuilt too
    full = VectorIndex(path, DIM)
    assert not full.open(VectorsWanted(sha, list(cache.rows), cache.vectors_for)).loaded
    # and a full graph's file opened projected: another dimension, rebuilt from the cache
    saved = full.save()
    report = projected(path, fitted, cache).open(
        VectorsWanted(saved, list(cache.rows), cache.vectors_for)
    )
    assert not report.loaded and report.added == len(cache.rows)


def test_deletes_filters_twins_and_compaction(
    built: tuple[ProjectedVectors, Cache, P.Projection, Path],
) -> None:
    pv, cache, _, _ = built
    q = clustered(1, seed=4)[0]
    top = [lab for lab, _ in pv.query(q, 5)]
    assert pv.delete(top[:2]) == 2
    assert not set(top[:2]) & {lab for lab, _ in pv.query(q, 50)}
    with pytest.raises(ValueError, match="never reused"):
        pv.add([top[0]], np.array([cache.rows[top[0]]]))
    # a filter: only the labels it allows, even when it allows few (searched exactly)
    few = {7, 99, 1234}
    got = pv.query(q, 10, allowed=few.__contains__)
    assert {lab for lab, _ in got} == few
    want = exact(cache, q, 10, few)
    assert [lab for lab, _ in got] == [lab for lab, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)
    # a twin: the same vector under a new label, found with its node, at its score
    twin = max(cache.rows) + 1
    cache.rows[twin] = cache.rows[top[2]]
    pv.add([twin], np.array([cache.rows[twin]]))
    scores = dict(pv.query(q, 10))
    assert twin in scores and scores[twin] == scores[top[2]]
    # compaction: the deleted slots dropped, the answers kept
    live = set(cache.rows) - set(top[:2])
    before = pv.query(q, 10)
    pv.compact(cache.vectors_for)
    assert pv.deleted_ratio() == 0.0 and pv.labels() == live
    assert pv.query(q, 10) == before


def test_a_chunk_the_cache_lost_is_still_found_by_the_graph(
    built: tuple[ProjectedVectors, Cache, P.Projection, Path],
) -> None:
    pv, cache, _, _ = built
    q = clustered(1, seed=5)[0]
    best = pv.query(q, 1)[0][0]
    del cache.rows[best]  # its cache row gone: the graph's score stands in
    assert best in {lab for lab, _ in pv.query(q, 10)}


@pytest.mark.parametrize("bad", [np.zeros(DIM), np.full(DIM, np.nan)])
def test_a_zero_or_nan_vector_is_refused(
    built: tuple[ProjectedVectors, Cache, P.Projection, Path], bad: np.ndarray
) -> None:
    pv, cache, _, _ = built
    with pytest.raises(ValueError):
        pv.add([max(cache.rows) + 1], np.array([bad], dtype=np.float32))
    with pytest.raises(ValueError):
        pv.query(np.zeros(DIM + 1, dtype=np.float32), 5)


def test_the_mean_itself_projects_to_a_vector_hnswlib_can_take() -> None:
    fitted = P.fit(clustered(500), OUT, "m")
    out = fitted.apply(fitted.mean[None, :])
    assert np.isfinite(out).all() and np.linalg.norm(out) > 0
    # a row projects to the same bits alone or in any batch (twins are found by bits)
    rows = clustered(300, seed=6)
    assert np.array_equal(fitted.apply(rows)[17:18], fitted.apply(rows[17:18]))


def test_the_store_projects_the_default_models_graph_only(tmp_path: Path) -> None:
    onnx = model_id_for(IndexSettings())
    fitted = P.projection_for(onnx, 384)
    assert fitted is not None and fitted.out == 192 and fitted.dim == 384
    assert P.projection_for(onnx.split("+")[0], 384) is fitted  # PyTorch's id: the same space
    assert P.projection_for(onnx, 768) is None and P.projection_for("hash-64", 384) is None
    store = Store(tmp_path / "index.db", tmp_path / "cache.db")
    try:
        on, off = IndexSettings(), IndexSettings(graph_projection=False)
        graph = store.vector_index(tmp_path / "v.bin", 384, on, onnx)
        assert isinstance(graph, ProjectedVectors) and graph.inner.dim == 192
        assert graph.inner.m == on.hnsw_m and graph.inner.ef_search == on.ef_search
        full = store.vector_index(tmp_path / "v.bin", 384, off, onnx)
        assert isinstance(full, VectorIndex) and full.dim == 384
        other = store.vector_index(tmp_path / "v.bin", 64, on, "hash-64")
        assert isinstance(other, VectorIndex) and other.dim == 64
    finally:
        store.close()


def test_over_is_what_a_search_asks_of_the_graph(
    built: tuple[ProjectedVectors, Cache, P.Projection, Path],
) -> None:
    pv, _, _, _ = built
    asked: list[int] = []
    real = pv.inner.query
    pv.inner.query = lambda v, k, allowed=None: asked.append(k) or real(v, k, allowed)  # type: ignore[method-assign]
    pv.query(clustered(1, seed=7)[0], 25)
    pv.query(clustered(1, seed=7)[0], 300)
    assert asked == [candidates(25), candidates(300)] == [65, 600]


@pytest.mark.model
def test_the_real_model_finds_the_same_chunks_with_the_graph_projected(tmp_path: Path) -> None:
    """The default model's graph is projected (192 of 384), and its answers are the full
    graph's: on the demo vault (every chunk a candidate) the same chunks, at the same
    cosines up to the float16 rounding hnswlib's full graph keeps."""
    import shutil

    from memvault.api import Vault
    from memvault.vault.template import init_vault

    root = tmp_path / "demo"
    init_vault(root, example=True)
    shutil.copytree(root, tmp_path / "full")
    questions = ["why did we pick postgres", "who is sarah", "what happened at the offsite"]
    answers = []
    for where, overrides in (
        (root, None),
        (tmp_path / "full", {"index": {"graph_projection": False}}),
    ):
        with Vault.open(where, overrides=overrides) as vault:
            vault.sync()
            index = vault.engine.embedding.vectors
            assert isinstance(index, ProjectedVectors) == (overrides is None)
            embed = vault.engine.embedding.embedder.embed
            answers.append([index.query(np.asarray(embed([q]))[0], 8) for q in questions])
    for projected_hits, full_hits in zip(*answers, strict=True):
        assert [lab for lab, _ in projected_hits] == [lab for lab, _ in full_hits]
        assert [s for _, s in projected_hits] == pytest.approx([s for _, s in full_hits], abs=2e-3)


@pytest.mark.parametrize("damage", ["missing", "garbage", "truncated", "wrong-shape"])
def test_a_damaged_projection_file_gives_the_full_graph(tmp_path: Path, damage: str) -> None:
    onnx = model_id_for(IndexSettings())
    path = tmp_path / "graph_projection.npz"
    if damage != "missing":
        path.write_bytes(P.BUNDLED.read_bytes())
        assert P.projection_for(onnx, 384, path) is not None  # the copy, whole
        P._load.cache_clear()
    if damage == "garbage":
        path.write_bytes(b"\x00not a zip" * 50)
    elif damage == "truncated":
        path.write_bytes(P.BUNDLED.read_bytes()[:5000])
    elif damage == "wrong-shape":
        P.save(
            P.Projection(
                P.base_model(onnx), np.zeros(7, np.float32), np.zeros((3, 384), np.float32)
            ),
            path,
        )
    assert P.projection_for(onnx, 384, path) is None
