"""vectors_cold.py: a command with no daemon searches vectors.bin's saved graph as
hnswlib would, reading only the vectors its walk reaches (issue 27: the full open read
every chunk's vector and wrote a full hnswlib file in the temp folder, 7 s at 100,000
notes, for one search).

Real hnswlib, real files, real SQLite: the walk is compared with hnswlib's own search
of the same saved index."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from helpers import new_vault, note, open_vault, write
from memvault.index import vectors_cold
from memvault.index.vectors import VectorIndex, VectorsWanted
from memvault.index.vectors_cold import ColdGraph, open_cold

DIM = 16
GRAPH = {"m": 8, "ef_construction": 60, "ef_search": 20}  # a small ef: approximate


class Cache:
    """The embedding cache stand-in: label -> vector, counting the rows read."""

    def __init__(self, n: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.vectors = rng.standard_normal((n, DIM)).astype(np.float32)
        self.read = 0

    def __call__(self, labels: Sequence[int]) -> np.ndarray:
        self.read += len(labels)
        return self.vectors[list(labels)] if len(labels) else np.zeros((0, DIM), np.float32)


def _saved(path: Path, cache: Cache, labels: Sequence[int], deleted: Sequence[int] = ()) -> str:
    index = VectorIndex(path, DIM, **GRAPH)
    index.open(VectorsWanted(None, labels, cache))
    index.delete(deleted)
    sha = index.save()
    assert sha is not None
    return sha


def _full(path: Path, cache: Cache, sha: str, labels: Sequence[int]) -> VectorIndex:
    index = VectorIndex(path, DIM, **GRAPH)
    report = index.open(VectorsWanted(sha, labels, cache))
    assert report.loaded
    return index


def _cold(path: Path, cache: Cache, sha: str, labels: Sequence[int]) -> ColdGraph:
    graph = open_cold(path, DIM, GRAPH["m"], GRAPH["ef_search"], sha, labels, cache)
    assert graph is not None
    return graph


def test_the_walk_finds_what_hnswlib_finds_in_the_same_saved_graph(tmp_path: Path) -> None:
    """Deleted nodes in the file, labels the db no longer has, a filter: hnswlib's walk,
    so the same hits in the same order at the same scores, reading a few vectors."""
    path = tmp_path / "vectors.bin"
    cache = Cache(3000)
    sha = _saved(path, cache, range(3000), deleted=range(0, 3000, 10))
    live = [x for x in range(3000) if x % 10 and x % 7]  # % 7: gone from the db since
    full = _full(path, cache, sha, live)
    cache.read = 0
    cold = _cold(path, cache, sha, live)
    rng = np.random.default_rng(1)
    cold.query(rng.standard_normal(DIM).astype(np.float32), 10)
    assert 0 < cache.read < 3000 // 4  # the vectors one walk reaches, not every one
    even = lambda label: label % 2 == 0  # noqa: E731
    for q in rng.standard_normal((40, DIM)).astype(np.float32):
        for k, allowed in ((10, None), (25, even)):
            walked, searched = cold.query(q, k, allowed), full.query(q, k, allowed)
            assert [x for x, _ in walked] == [x for x, _ in searched]
            assert np.allclose([s for _, s in walked], [s for _, s in searched], atol=1e-5)
            assert all(x % 10 and x % 7 for x, _ in walked)


def test_labels_the_graph_lacks_are_searched_exactly(tmp_path: Path) -> None:
    """Chunks embedded since the save (the full open would insert them) are found at
    their exact similarity; the ones the db dropped never are."""
    path = tmp_path / "vectors.bin"
    cache = Cache(2100)
    sha = _saved(path, cache, range(2000))
    labels = [*range(1900), *range(2000, 2100)]
    cold = _cold(path, cache, sha, labels)
    for label in (2000, 2042, 2099):
        best, score = cold.query(cache.vectors[label], 5)[0]
        assert best == label and score == pytest.approx(1.0, abs=1e-3)
    hits = {x for q in cache.vectors[1900:2000] for x, _ in cold.query(q, 10)}
    assert not hits & set(range(1900, 2000))


def test_what_the_full_open_must_handle_is_left_to_it(tmp_path: Path) -> None:
    path = tmp_path / "vectors.bin"
    cache = Cache(500)
    sha = _saved(path, cache, range(400), deleted=[5])
    m, ef = GRAPH["m"], GRAPH["ef_search"]
    assert open_cold(path, DIM, m, ef, None, range(400), cache) is None  # no checksum
    assert open_cold(path, DIM, m, ef, "0" * 64, range(400), cache) is None  # another file
    assert open_cold(path, DIM, m + 8, ef, sha, range(400), cache) is None  # another M
    assert open_cold(path, DIM, m, ef, sha, range(500), cache) is None  # 5 revived: rebuilt
    assert open_cold(tmp_path / "none.bin", DIM, m, ef, sha, range(400), cache) is None
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha  # nothing written


def _vault(tmp_path: Path) -> Path:
    root = new_vault(tmp_path)
    for i in range(40):
        folder = ("projects", "people", "decisions", "logs")[i % 4]
        body = f"## Plan {i}\n\nThe harbour budget {i} is reviewed with crew {i % 7}.\n"
        write(root, f"{folder}/n{i:02d}.md", note(f"Harbour {i}", f"plan {i}", body))
    with open_vault(root) as v:
        v.sync()
    return root


def test_a_search_with_no_daemon_reads_the_saved_graph_and_answers_as_the_full_index(
    tmp_path: Path,
) -> None:
    root = _vault(tmp_path)
    queries = ("harbour budget crew 3", "plan 12", "reviewed with crew")
    with open_vault(root) as cold:
        answers = [[(h.path, h.score) for h in cold.search(q, k=10)] for q in queries]
        assert cold.engine.embedding.held.opened is None  # the full index never opened
        context = cold.context("What is the harbour budget 7?", budget=400).text
        related = [h.path for h in cold.related("projects/n00.md", k=5)]
        assert cold.engine.embedding.held.opened is None
    with open_vault(root) as full:
        assert full.engine.embedding.vectors is not None  # opened first, as a daemon's
        assert [[(h.path, h.score) for h in full.search(q, k=10)] for q in queries] == answers
        assert full.context("What is the harbour budget 7?", budget=400).text == context
        assert [h.path for h in full.related("projects/n00.md", k=5)] == related


def test_a_note_written_then_searched_with_no_daemon_is_found_by_meaning(
    tmp_path: Path,
) -> None:
    """The write leaves the saved graph as it is (tests/test_oneshot_writes.py); the next
    command reads it cold, the chunks it lacks searched exactly."""
    root = _vault(tmp_path)
    write(root, "projects/kelp.md", note("Kelp farm", "seaweed", "Kelp farming off the pier.\n"))
    with open_vault(root) as v:
        v.sync()
    with open_vault(root) as cold:
        hits = cold.search("kelp farming pier", k=3)
        assert hits[0].path == "projects/kelp.md" and not hits[0].pending
        assert cold.engine.embedding.held.opened is None


def test_the_vectors_kept_between_searches_stay_within_32_mb(tmp_path: Path) -> None:
    """A process kept between an agent's calls (the MCP server with no daemon) searches
    the same cold graph many times: the vectors it keeps are bounded in bytes. A count
    (200,000 vectors) let them grow to 300 MB at 384 dimensions, 600 MB at 768."""
    dim, n = 4096, 3000  # 32 MB holds 2,048 such vectors; the searches reach more
    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    read = lambda labels: vectors[list(labels)]  # noqa: E731
    path = tmp_path / "vectors.bin"
    index = VectorIndex(path, dim, m=8, ef_construction=20, ef_search=40)
    index.open(VectorsWanted(None, range(n), read))
    sha = index.save()
    cold = open_cold(path, dim, 8, 40, sha, range(n), read)
    assert cold is not None
    reached: set[int] = set()
    for q in rng.standard_normal((60, dim)).astype(np.float32):
        hits = cold.query(q, 10)
        assert hits == sorted(hits, key=lambda hit: -hit[1])
        kept = cold._kept
        reached.update(kept)
        assert sum(v.nbytes for v in kept.values()) <= 32 * 1024 * 1024
    assert len(reached) * dim * 4 > 32 * 1024 * 1024  # the bound was met, and held


def test_searches_on_two_threads_at_once_share_the_kept_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python API's searches may run on several threads. One search letting the kept
    vectors go while another read them failed the other with a KeyError (seen on main
    with its count bound set to 50)."""
    path = tmp_path / "vectors.bin"
    cache = Cache(3000)
    sha = _saved(path, cache, range(3000))
    cold = _cold(path, cache, sha, range(3000))
    single = _cold(path, cache, sha, range(3000))
    monkeypatch.setattr(vectors_cold, "KEPT_BYTES", 50 * DIM * 4)  # let go at every step
    queries = np.random.default_rng(3).standard_normal((2, 300, DIM)).astype(np.float32)
    answers: dict[int, list[list[tuple[int, float]]]] = {}
    failures: list[BaseException] = []

    def search(which: int) -> None:
        try:
            answers[which] = [cold.query(q, 10) for q in queries[which]]
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=search, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    for which in (0, 1):
        assert answers[which] == [single.query(q, 10) for q in queries[which]]


def test_a_graph_lacking_many_chunks_is_opened_in_full_and_saved_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon killed before its save left vectors.bin without the chunks it embedded
    since. Read cold, each search read all of them again and no read ever put them into
    the graph (the full open did, and the CLI's close saved it). Past ``MISSING_MOST``
    the full open runs, and the next command walks a graph lacking none."""
    import sqlite3

    root = _vault(tmp_path)
    state = root / ".memvault"
    old_graph = (state / "vectors.bin").read_bytes()
    with sqlite3.connect(state / "index.db") as db:
        (old_sha,) = db.execute("SELECT value FROM meta WHERE key = 'vectors_sha'").fetchone()
    for i in range(12):
        write(root, f"projects/k{i:02d}.md", note(f"Kelp {i}", "kelp", f"Kelp line {i}.\n"))
    with open_vault(root) as v:
        v.sync()
    # as a daemon killed before its save leaves it: the old graph, its checksum
    (state / "vectors.bin").write_bytes(old_graph)
    with sqlite3.connect(state / "index.db") as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'vectors_sha'", (old_sha,))
    monkeypatch.setattr(vectors_cold, "MISSING_MOST", 5)  # 12 notes' chunks lacking
    with open_vault(root) as v:
        assert v.search("kelp line 7", k=3)[0].path == "projects/k07.md"
        assert v.engine.embedding.held.opened is not None  # the full open ran
    assert (state / "vectors.bin").read_bytes() != old_graph  # and its close saved it
    with open_vault(root) as v:
        cold = v.engine.embedding.searching
        graph = getattr(cold, "inner", cold)  # a projected graph's, or itself
        assert isinstance(graph, ColdGraph) and v.engine.embedding.held.opened is None
        assert len(graph._missing) == 0  # read cold, lacking nothing
        assert v.search("kelp line 7", k=3)[0].path == "projects/k07.md"
