"""vectors.py: hnswlib with fresh labels, growth, compaction, atomic saves and a checked open.

Real hnswlib, real files. The corrupt-file tests run in this process on purpose:
a file that reached hnswlib's loader unchecked could kill it, so passing proves
the checks keep such files away.
"""

from __future__ import annotations

import hashlib
import os
import struct
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from helpers import nearest
from memvault.errors import IndexCorrupt, StorageError
from memvault.index.vectors import HEADER, VectorIndex, VectorsWanted, inspect_index_file

DIM = 16


class Store:
    """The embedding cache stand-in: label -> vector, counting what open/compact fetch."""

    def __init__(self, n: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.vectors = rng.standard_normal((n, DIM)).astype(np.float32)
        self.fetched = 0

    def __call__(self, labels: Sequence[int]) -> np.ndarray:
        self.fetched += len(labels)
        if not labels:
            return np.zeros((0, DIM), dtype=np.float32)
        return self.vectors[list(labels)]


@pytest.fixture
def store() -> Store:
    return Store(5000)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "vectors.bin"


def opened(path: Path, store: Store, labels=range(200), sha: str | None = None) -> VectorIndex:
    index = VectorIndex(path, DIM, m=8, ef_construction=100, ef_search=50)
    index.open(VectorsWanted(sha, labels, store))
    return index


def sha_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_query_returns_the_nearest_first(path: Path, store: Store) -> None:
    index = opened(path, store)
    hits = index.query(store.vectors[42], 5)
    assert hits[0][0] == 42 and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    sims = [s for _, s in hits]
    assert sims == sorted(sims, reverse=True)
    exact = store.vectors[:200] @ store.vectors[42] / np.linalg.norm(store.vectors[:200], axis=1)
    assert hits[1][0] == int(np.argsort(-exact)[1])


def test_added_vectors_are_found(path: Path, store: Store) -> None:
    index = opened(path, store)
    index.add([300, 301], store.vectors[300:302])
    assert nearest(index, store.vectors[301])[0] == 301
    assert len(index.labels()) == 202 and {300, 301} <= index.labels()


def test_deleted_labels_leave_the_results(path: Path, store: Store) -> None:
    index = opened(path, store)
    assert index.delete([42, 43, 99_999]) == 2
    assert index.delete([42]) == 0
    assert 42 not in [label for label, _ in index.query(store.vectors[42], 20)]
    assert len(index.labels()) == 198
    assert index.deleted_ratio() == pytest.approx(2 / 200)


def test_the_index_grows_past_its_capacity(path: Path, store: Store) -> None:
    index = opened(path, store, labels=range(10))
    for start in range(10, 4010, 500):
        index.add(range(start, start + 500), store.vectors[start : start + 500])
    assert len(index.labels()) == 4010
    assert nearest(index, store.vectors[3999])[0] == 3999


@pytest.mark.parametrize(
    ("labels", "rows", "message"),
    [
        ([42], [42], "never reused"),  # live
        ([7], [7], "never reused"),  # deleted below
        ([500, 500], [500, 501], "duplicate"),
        ([-1], [0], ">= 0"),
        ([500], [0, 1], "shape"),
    ],
)
def test_add_refuses_reused_duplicate_and_malformed_labels(
    path: Path, store: Store, labels: list[int], rows: list[int], message: str
) -> None:
    index = opened(path, store)
    index.delete([7])
    with pytest.raises(ValueError, match=message):
        index.add(labels, store.vectors[rows])


def test_a_deleted_label_stays_refused_after_save_open_and_compact(
    path: Path, store: Store
) -> None:
    index = opened(path, store)
    index.delete([7])
    sha = index.save()
    again = opened(path, store, labels=set(range(200)) - {7}, sha=sha)
    with pytest.raises(ValueError, match="never reused"):
        again.add([7], store.vectors[[7]])
    again.compact(store)
    with pytest.raises(ValueError, match="never reused"):
        again.add([7], store.vectors[[7]])


@pytest.mark.parametrize("bad", [np.zeros(DIM), np.full(DIM, np.nan)])
def test_add_refuses_zero_and_non_finite_vectors(path: Path, store: Store, bad) -> None:
    index = opened(path, store)
    with pytest.raises(ValueError, match="finite and non-zero"):
        index.add([500], np.asarray([bad], dtype=np.float32))


def test_save_and_open_roundtrip_with_the_checksum(path: Path, store: Store) -> None:
    index = opened(path, store)
    index.delete([5])
    sha = index.save()
    assert sha == sha_of(path)
    before = index.query(store.vectors[10], 10)

    store.fetched = 0
    again = VectorIndex(path, DIM, m=8, ef_construction=100, ef_search=50)
    report = again.open(VectorsWanted(sha, set(range(200)) - {5}, store))
    assert (report.loaded, report.rebuilt_reason, report.added, report.removed) == (
        True,
        None,
        0,
        0,
    )
    # the file is the graph: the live vectors come from the cache (each once), and the
    # index is the saved one to the bit (the same hits, the same scores)
    assert store.fetched == 199
    assert again.query(store.vectors[10], 10) == before
    assert not again.dirty and again.save() is None
    assert again.deleted_ratio() == pytest.approx(1 / 200)


@pytest.mark.parametrize(
    ("sha", "reason"),
    [("0" * 64, "checksum mismatch"), (None, "no checksum")],
)
def test_a_file_that_is_not_the_one_saved_is_rebuilt(
    path: Path, store: Store, sha: str | None, reason: str
) -> None:
    opened(path, store).save()
    index = VectorIndex(path, DIM, m=8)
    report = index.open(VectorsWanted(sha, range(100), store))
    assert not report.loaded and reason in (report.rebuilt_reason or "")
    assert report.added == 100 and len(index.labels()) == 100
    assert nearest(index, store.vectors[3])[0] == 3
    assert index.dirty


def test_a_missing_file_is_built(path: Path, store: Store) -> None:
    index = VectorIndex(path, DIM)
    report = index.open(VectorsWanted("f" * 64, range(50), store))
    assert (report.loaded, report.rebuilt_reason, report.added) == (False, "no vectors file", 50)


def test_a_file_built_with_another_m_is_rebuilt(path: Path, store: Store) -> None:
    sha = opened(path, store).save()
    report = VectorIndex(path, DIM, m=16).open(VectorsWanted(sha, range(200), store))
    assert not report.loaded and "M=8" in (report.rebuilt_reason or "")


def _corrupt(data: bytes, kind: str) -> bytes:
    per_element = struct.unpack_from("<Q", data, 24)[0]
    if kind == "empty":
        return b""
    if kind == "header-only":
        return data[: HEADER.size]
    if kind == "half":
        return data[: len(data) // 2]
    if kind == "one-byte-short":
        return data[:-1]
    if kind == "trailing-bytes":
        return data + b"\0" * 8
    if kind == "garbage":
        return np.random.default_rng(1).bytes(len(data))
    if kind == "huge-count":
        return data[:16] + struct.pack("<Q", 10**12) + data[24:]
    if kind == "link-out-of-range":  # element 3's first level-0 link -> element 10**6
        at = HEADER.size + 3 * per_element + 4
        return data[:at] + struct.pack("<I", 10**6) + data[at + 4 :]
    if kind == "link-count-too-big":
        at = HEADER.size + 3 * per_element
        return data[:at] + struct.pack("<H", 60_000) + data[at + 2 :]
    if kind == "entry-point-out-of-range":
        return data[:52] + struct.pack("<I", 10**6) + data[56:]
    if kind == "max-level-above-the-entry-point":
        level = struct.unpack_from("<i", data, 48)[0]
        return data[:48] + struct.pack("<i", level + 1) + data[52:]
    if kind == "upper-level-size":
        at = HEADER.size + struct.unpack_from("<Q", data, 16)[0] * per_element
        return data[:at] + struct.pack("<I", 7) + data[at + 4 :]
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "empty",
        "header-only",
        "half",
        "one-byte-short",
        "trailing-bytes",
        "garbage",
        "huge-count",
        "link-out-of-range",
        "link-count-too-big",
        "entry-point-out-of-range",
        "max-level-above-the-entry-point",
        "upper-level-size",
    ],
)
def test_a_damaged_file_with_a_matching_checksum_is_rebuilt_not_loaded(
    path: Path, store: Store, kind: str
) -> None:
    opened(path, store).save()
    path.write_bytes(_corrupt(path.read_bytes(), kind))
    index = VectorIndex(path, DIM, m=8)
    report = index.open(
        VectorsWanted(sha_of(path), range(200), store)
    )  # the checksum cannot save us here
    assert not report.loaded and report.rebuilt_reason
    assert nearest(index, store.vectors[17])[0] == 17


def test_a_file_of_another_dimension_is_rebuilt(path: Path, store: Store) -> None:
    other = VectorIndex(path, 8, m=8)
    other.open(
        VectorsWanted(
            None,
            range(20),
            lambda ls: np.ones((len(ls), 8), dtype=np.float32) + np.arange(len(ls))[:, None],
        )
    )
    sha = other.save()
    report = VectorIndex(path, DIM, m=8).open(VectorsWanted(sha, range(20), store))
    assert not report.loaded and "16-dimensional" in (report.rebuilt_reason or "")


def test_inspect_reads_labels_and_deleted_flags(path: Path, store: Store) -> None:
    index = opened(path, store, labels=range(10))
    index.delete([3, 4])
    index.save()
    info = inspect_index_file(path.read_bytes(), DIM)
    assert sorted(info.labels.tolist()) == list(range(10))
    assert sorted(int(x) for x in info.labels[info.deleted]) == [3, 4]
    with pytest.raises(IndexCorrupt):
        inspect_index_file(path.read_bytes(), DIM + 1)


def test_open_reconciles_with_the_db(path: Path, store: Store) -> None:
    sha = opened(path, store).save()  # labels 0..199
    wanted = set(range(10, 200)) | {300, 301}
    index = VectorIndex(path, DIM, m=8)
    report = index.open(VectorsWanted(sha, wanted, store))
    assert (report.loaded, report.added, report.removed) == (True, 2, 10)
    assert index.labels() == wanted
    assert nearest(index, store.vectors[300])[0] == 300
    assert all(label >= 10 for label, _ in index.query(store.vectors[5], 50))
    assert index.dirty
    with pytest.raises(ValueError, match="never reused"):
        index.add([5], store.vectors[[5]])  # was in the file: seen


def test_a_db_label_deleted_in_the_file_forces_a_rebuild(path: Path, store: Store) -> None:
    index = opened(path, store)
    index.delete([9])
    sha = index.save()
    report = VectorIndex(path, DIM, m=8).open(
        VectorsWanted(sha, range(200), store)
    )  # the db still has 9
    assert not report.loaded and "deleted in the vectors file" in (report.rebuilt_reason or "")


def test_compact_drops_deleted_slots_and_keeps_results(path: Path, store: Store) -> None:
    index = opened(path, store, labels=range(1000))
    index.delete(range(0, 1000, 2))
    assert index.deleted_ratio() == pytest.approx(0.5)
    before = index.query(store.vectors[501], 10)
    index.compact(store)
    assert index.deleted_ratio() == 0.0
    assert index.labels() == set(range(1, 1000, 2))
    after = index.query(store.vectors[501], 10)
    assert after[0] == before[0] and {lab for lab, _ in after} == {lab for lab, _ in before}
    sha = index.save()
    assert inspect_index_file(path.read_bytes(), DIM).deleted.sum() == 0
    assert sha == sha_of(path)


def test_allowed_filters_the_candidates(path: Path, store: Store) -> None:
    index = opened(path, store)
    hits = index.query(store.vectors[0], 5, allowed=lambda label: label % 2 == 1)
    assert len(hits) == 5 and all(label % 2 == 1 for label, _ in hits)


def test_a_filter_allowing_fewer_than_k_returns_what_it_allows(path: Path, store: Store) -> None:
    index = opened(path, store)
    index.delete([11])
    hits = index.query(store.vectors[0], 10, allowed=lambda label: label in (10, 11, 12))
    assert sorted(label for label, _ in hits) == [10, 12]
    assert hits[0][1] >= hits[1][1]
    assert index.query(store.vectors[0], 10, allowed=lambda label: False) == []


def test_k_is_clipped_and_an_empty_index_has_no_hits(path: Path, store: Store) -> None:
    index = opened(path, store, labels=range(3))
    assert len(index.query(store.vectors[0], 50)) == 3
    assert index.query(store.vectors[0], 0) == []
    index.delete(range(3))
    assert index.query(store.vectors[0], 5) == []
    empty = opened(path.with_name("empty.bin"), store, labels=())
    assert empty.query(store.vectors[0], 5) == []


def test_a_query_of_the_wrong_dimension_is_an_error(path: Path, store: Store) -> None:
    with pytest.raises(ValueError, match="shape"):
        opened(path, store).query(np.ones(DIM + 1), 3)


def test_save_only_writes_when_something_changed(path: Path, store: Store) -> None:
    index = opened(path, store)
    assert index.dirty
    assert index.save() is not None
    assert index.save() is None
    assert index.delete([12345]) == 0 and index.save() is None
    index.delete([1])
    assert index.save() == sha_of(path)


def test_save_leaves_no_temp_file(path: Path, store: Store) -> None:
    index = opened(path, store)
    index.save()
    index.add([900], store.vectors[[900]])
    index.save()
    assert os.listdir(path.parent) == ["vectors.bin"]


def test_a_failed_save_leaves_no_temp_file_and_stays_dirty(tmp_path: Path, store: Store) -> None:
    target = tmp_path / "vectors.bin"
    target.mkdir()  # os.replace cannot put a file over a folder
    index = opened(target, store)
    with pytest.raises(StorageError, match=r"vectors\.bin: cannot write the vector index"):
        index.save()  # named by the file, not by its temp copy (a field test)
    assert os.listdir(tmp_path) == ["vectors.bin"]
    assert index.dirty


def test_nothing_works_before_open(path: Path, store: Store) -> None:
    index = VectorIndex(path, DIM)
    with pytest.raises(RuntimeError, match="open"):
        index.query(store.vectors[0], 1)
    with pytest.raises(RuntimeError, match="open"):
        index.add([1], store.vectors[[1]])


def test_queries_while_another_thread_adds(path: Path, store: Store) -> None:
    index = opened(path, store, labels=range(100))
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for start in range(100, 4100, 50):
                index.add(range(start, start + 50), store.vectors[start : start + 50])
                if start % 500 == 0:
                    index.delete(range(start - 50, start - 40))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=writer, name="vectors-writer")
    thread.start()
    rng = np.random.default_rng(3)
    queries = 0
    while thread.is_alive() or queries < 50:
        hits = index.query(rng.standard_normal(DIM).astype(np.float32), 10)
        assert len(hits) == 10
        queries += 1
    thread.join()
    assert not errors
    assert len(index.labels()) == 4100 - 10 * len(range(500, 4100, 500))


def test_months_of_saves_do_not_grow_what_the_index_remembers(path: Path, store: Store) -> None:
    """A note saved thousands of times a day gives each save's chunks new labels, and
    every label ever added stays refused. Kept as a set of ints, that cost ~80 bytes a
    label for as long as the daemon ran (megabytes a week); now one bit."""
    import tracemalloc

    def vectors_for(labels: Sequence[int]) -> np.ndarray:
        return store.vectors[[label % len(store.vectors) for label in labels]]

    index = opened(path, store, labels=range(100))
    label = 100

    def saves(n: int) -> None:  # each: 10 chunks replaced, compacted as the engine does
        nonlocal label
        for _ in range(n):
            batch = list(range(label, label + 10))
            index.add(batch, vectors_for(batch))
            index.delete(range(label - 100, label - 90))
            label += 10
            if index.deleted_ratio() > 0.25:
                index.compact(vectors_for)

    saves(1000)
    # what the index's own code keeps: another test's thread still winding down in this
    # process (a full run) allocates beside it, 15 MB once, and is not the index's
    ours = [tracemalloc.Filter(True, "*/memvault/index/*")]
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot().filter_traces(ours)
        saves(3000)  # 30,000 more labels
        after = tracemalloc.take_snapshot().filter_traces(ours)
    finally:
        tracemalloc.stop()
    grown = sum(d.size_diff for d in after.compare_to(before, "filename"))
    assert grown < 256 * 1024, f"{grown} bytes kept for 30,000 labels"
    with pytest.raises(ValueError, match="never reused"):  # still refused, every one
        index.add([150], vectors_for([150]))
    assert index.labels() == set(range(label - 100, label))


# -- the graph form: vectors.bin keeps the graph, cache.db the vectors (vectors_file.py) --


class Refusing(Store):
    """A cache that must not be asked for some labels (their vectors are gone)."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self.gone: set[int] = set()

    def __call__(self, labels: Sequence[int]) -> np.ndarray:
        asked = self.gone & set(labels)
        assert not asked, f"asked for vectors the cache no longer has: {sorted(asked)}"
        return super().__call__(labels)


def test_the_file_keeps_the_graph_not_the_live_vectors(path: Path, store: Store) -> None:
    index = opened(path, store, labels=range(1000))
    index.delete([3, 4])
    index.save()
    full = path.with_name("hnswlib.bin")
    index._index.save_index(str(full))  # type: ignore[union-attr]  # what hnswlib writes
    info = inspect_index_file(path.read_bytes(), DIM)
    assert info.graph_only and len(info.labels) == 1000
    # the 998 live vectors are not in the file; the 2 deleted ones and the footer are
    assert path.stat().st_size == full.stat().st_size - 998 * DIM * 4 + 8


def test_a_file_memvault_wrote_before_the_graph_form_loads_and_is_saved_as_a_graph(
    path: Path, store: Store
) -> None:
    index = opened(path, store)
    index.delete([5])
    path.parent.mkdir(parents=True, exist_ok=True)
    index._index.save_index(str(path))  # type: ignore[union-attr]  # the old file: hnswlib's
    before = index.query(store.vectors[10], 10)
    old = VectorIndex(path, DIM, m=8, ef_construction=100, ef_search=50)
    report = old.open(VectorsWanted(sha_of(path), set(range(200)) - {5}, store))
    assert report.loaded and (report.added, report.removed) == (0, 0)
    assert old.query(store.vectors[10], 10) == before
    assert not inspect_index_file(path.read_bytes(), DIM).graph_only
    assert old.dirty  # so the writer's next save gives the vectors' bytes back
    size = path.stat().st_size
    sha = old.save()
    assert inspect_index_file(path.read_bytes(), DIM).graph_only
    assert path.stat().st_size == size - 199 * DIM * 4 + 8
    again = VectorIndex(path, DIM, m=8, ef_construction=100, ef_search=50)
    assert again.open(VectorsWanted(sha, set(range(200)) - {5}, store)).loaded
    assert again.query(store.vectors[10], 10) == before and not again.dirty


def test_deleted_vectors_stay_in_the_file_and_are_not_asked_of_the_cache(path: Path) -> None:
    store = Refusing(500)
    index = opened(path, store)
    index.delete([3, 4])
    store.gone = {3, 4}  # pruned from the cache
    before = [index.query(store.vectors[q], 10) for q in range(0, 200, 7)]
    sha = index.save()
    again = VectorIndex(path, DIM, m=8, ef_construction=100, ef_search=50)
    assert again.open(VectorsWanted(sha, set(range(200)) - {3, 4}, store)).loaded
    assert [again.query(store.vectors[q], 10) for q in range(0, 200, 7)] == before
    assert again.save() is None  # loaded as saved: nothing to write


def test_labels_the_db_lost_are_not_asked_of_the_cache_and_leave_the_results(
    path: Path,
) -> None:
    gone = set(range(10, 20))
    store = Refusing(500)
    sha = opened(path, store).save()
    store.gone = gone  # deleted from the db (and the cache) while no process had the file
    index = VectorIndex(path, DIM, m=8, ef_construction=100, ef_search=50)
    report = index.open(VectorsWanted(sha, set(range(200)) - gone, store))
    assert (report.loaded, report.removed) == (True, 10)
    assert index.labels() == set(range(200)) - gone
    hits = index.query(store.vectors[15], 20)
    assert len(hits) == 20 and not gone & {label for label, _ in hits}


def test_a_graph_file_without_its_footer_is_rebuilt(path: Path, store: Store) -> None:
    opened(path, store).save()
    path.write_bytes(path.read_bytes()[:-8] + b"\0" * 8)
    report = VectorIndex(path, DIM, m=8).open(VectorsWanted(sha_of(path), range(200), store))
    assert not report.loaded and "footer" in (report.rebuilt_reason or "")


def test_vectors_go_in_float16_exact(path: Path, store: Store) -> None:
    """What the cache keeps (float16) is what the index holds, so a load from the
    cache gives the same index back."""
    index = opened(path, store, labels=range(10))
    stored = np.asarray(index._index.get_items(list(range(10))), dtype=np.float32)  # type: ignore[union-attr]
    rounded = store.vectors[:10].astype(np.float16).astype(np.float32)
    expected = rounded / np.linalg.norm(rounded, axis=1, keepdims=True)
    assert np.allclose(stored, expected, atol=1e-7)
    assert not np.allclose(
        stored,
        store.vectors[:10] / np.linalg.norm(store.vectors[:10], axis=1, keepdims=True),
        atol=1e-5,
    )


def test_no_temp_folder_to_load_the_graph_in_builds_it_from_the_cache(
    path: Path, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    sha = opened(path, store).save()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    again = VectorIndex(path, DIM, m=8, ef_construction=100, ef_search=50)
    report = again.open(VectorsWanted(sha, range(200), store))
    assert not report.loaded and "temp file" in (report.rebuilt_reason or "")
    # built from the cache: every label, each holding the cache's vector (float16, as
    # kept). (It compared the two graphs' first three hits: two builds on two threads
    # are two approximate graphs, and in a full run the saved one's answer once lacked
    # the query's own vector, [143, 178, 109] against the rebuild's [10, 143, 178].)
    assert again.labels() == set(range(200))
    stored = np.asarray(again._index.get_items(list(range(200))), dtype=np.float32)  # type: ignore[union-attr]
    rounded = store.vectors[:200].astype(np.float16).astype(np.float32)
    assert np.allclose(stored, rounded / np.linalg.norm(rounded, axis=1, keepdims=True), atol=1e-7)
    assert nearest(again, store.vectors[10])[0] == 10  # and it answers
