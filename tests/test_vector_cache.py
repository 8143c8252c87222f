"""vector_cache.py: int8 rows (a scale each) keyed by (model, sha bytes), migrated in place
from memvault 0.1's float32 table and from version 2's float16 rows."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers import make_vault, note, open_vault, write
from memvault.errors import IndexCorrupt
from memvault.index import vector_cache
from memvault.index.embedder import HashEmbedder
from memvault.index.vector_cache import CACHE_VERSION, VectorCache

DAEMON = Path(__file__).resolve().parents[1] / "daemon"
MODEL = "sentence-transformers/all-MiniLM-L6-v2@53aa51172d14+onnx-int8-v1"
# memvault 0.1's cache.db, verbatim
V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings(
    model TEXT NOT NULL, sha TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (model, sha)
) WITHOUT ROWID;
"""


def unit_vectors(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def shas(n: int, salt: str = "") -> list[str]:
    return [hashlib.sha256(f"{salt}{i}".encode()).hexdigest() for i in range(n)]


def write_v1(path: Path, rows: Sequence[tuple[str, str, bytes]]) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(V1_SCHEMA)
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO embeddings(model, sha, vector) VALUES(?, ?, ?)", rows)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
        return {r[0] for r in rows}
    finally:
        conn.close()


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def within_int8(got: np.ndarray, vector: np.ndarray) -> bool:
    """``got`` is ``vector`` as int8 with one scale keeps it: each dimension within half a
    step (the largest magnitude over 127) of it, the direction all but unchanged."""
    step = float(np.abs(vector).max()) / 127.0
    return (
        got.dtype == np.float32
        and got.shape == vector.shape
        and float(np.abs(got - vector).max()) <= step / 2 * (1 + 1e-5)
        and cosine(got, vector) > 0.9999
    )


def write_v2(path: Path, rows: Sequence[tuple[str, str, np.ndarray]]) -> None:
    """A cache.db as memvault wrote it before int8 (version 2: float16 rows)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE models(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE)"
    )
    conn.execute(
        "CREATE TABLE vectors(id INTEGER PRIMARY KEY, model INTEGER NOT NULL, "
        "sha BLOB NOT NULL, vector BLOB NOT NULL)"
    )
    conn.execute("CREATE UNIQUE INDEX vectors_key ON vectors(model, sha)")
    conn.execute("BEGIN")
    ids: dict[str, int] = {}
    for model, sha, vector in rows:
        if model not in ids:
            ids[model] = int(conn.execute("INSERT INTO models(name) VALUES(?)", (model,)).lastrowid)
        blob = vector.astype("<f2").tobytes() if isinstance(vector, np.ndarray) else vector
        conn.execute(
            "INSERT INTO vectors(model, sha, vector) VALUES(?, ?, ?)",
            (ids[model], bytes.fromhex(sha), blob),
        )
    conn.execute("PRAGMA user_version = 2")
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def version_of(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def file_bytes(path: Path) -> int:
    return sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal") if os.path.exists(f"{path}{s}"))


def _fails_after(monkeypatch: pytest.MonkeyPatch, function: str, calls: int) -> Callable[[], None]:
    """``vector_cache.function`` raises ``OSError("disk full")`` past its ``calls``-th
    call; returns what puts the real one back."""
    real = getattr(vector_cache, function)
    count = 0

    def failing(value: Any) -> Any:
        nonlocal count
        count += 1
        if count > calls:
            raise OSError("disk full")
        return real(value)

    monkeypatch.setattr(vector_cache, function, failing)
    return lambda: monkeypatch.setattr(vector_cache, function, real)


def _killed_halfway(tmp_path: Path, path: Path, function: str, call: int) -> None:
    """Open the cache at ``path`` in a real process, stopped for good (kill -9) at the
    ``call``-th call of ``vector_cache.function`` in its migration (the clock plays no
    part)."""
    ready = tmp_path / "halfway"
    code = (
        "import time, pathlib\n"
        "from memvault.index import vector_cache\n"
        f"real, calls = vector_cache.{function}, [0]\n"
        "def slow(v):\n"
        "    calls[0] += 1\n"
        f"    if calls[0] == {call}:\n"
        f"        pathlib.Path({str(ready)!r}).write_text('x')\n"
        "        time.sleep(600)\n"
        "    return real(v)\n"
        f"vector_cache.{function} = slow\n"
        f"vector_cache.VectorCache(pathlib.Path({str(path)!r}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(DAEMON)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "never got halfway"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -9


# --- the layout ------------------------------------------------------------------------------


def test_vectors_come_back_as_float32_within_int8_precision(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path / "cache.db")
    vectors, keys = unit_vectors(50), shas(50)
    cache.put(MODEL, dict(zip(keys, vectors, strict=True)))
    got = cache.get(MODEL, keys)
    cache.close()
    assert set(got) == set(keys)
    for key, vector in zip(keys, vectors, strict=True):
        assert within_int8(got[key], vector)
    assert got[keys[7]].tobytes() == vector_cache.decode(vector_cache.encode(vectors[7])).tobytes()


def test_a_vector_that_is_not_finite_comes_back_not_finite(tmp_path: Path) -> None:
    """The index refuses a NaN or infinite vector (vectors._checked): the cache must not
    turn one into a finite vector it would take."""
    cache = VectorCache(tmp_path / "cache.db")
    bad = unit_vectors(3, dim=16)
    bad[0, 3], bad[1, 0] = np.nan, np.inf
    zero = np.zeros(16, dtype=np.float32)
    keys = shas(4)
    cache.put(MODEL, {keys[0]: bad[0], keys[1]: bad[1], keys[2]: bad[2], keys[3]: zero})
    got = cache.get(MODEL, keys)
    cache.close()
    assert np.isnan(got[keys[0]]).all() and np.isnan(got[keys[1]]).all()
    assert within_int8(got[keys[2]], bad[2])
    assert np.array_equal(got[keys[3]], zero)


def test_rows_of_the_current_layout_memvault_did_not_write_are_misses_not_fatal(
    tmp_path: Path,
) -> None:
    """Hostile rows in a version-3 cache (a blob too short for a scale, an empty one, a
    text value, a row of another length beside the model's): each a miss (embedded
    again), the others read, nothing raised."""
    path = tmp_path / "cache.db"
    cache = VectorCache(path)
    keys = shas(6)
    vectors = unit_vectors(2)
    cache.put(MODEL, {keys[0]: vectors[0], keys[1]: vectors[1], keys[5]: unit_vectors(1, 8)[0]})
    conn = sqlite3.connect(path, isolation_level=None)
    mid = conn.execute("SELECT model FROM vectors LIMIT 1").fetchone()[0]
    for key, value in zip(keys[2:5], [b"\x01\x02\x03", b"", "not bytes"], strict=True):
        conn.execute(
            "INSERT INTO vectors(model, sha, vector) VALUES(?, ?, ?)",
            (mid, bytes.fromhex(key), value),
        )
    conn.close()
    got = cache.get(MODEL, keys)
    cache.close()
    assert set(got) == {keys[0], keys[1], keys[5]}
    assert within_int8(got[keys[0]], vectors[0]) and got[keys[5]].shape == (8,)


def test_a_cached_vector_takes_under_half_a_kb(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = VectorCache(path)
    n = 3000
    for start in range(0, n, 256):  # the engine writes a batch at a time
        keys = shas(n)[start : start + 256]
        cache.put(MODEL, dict(zip(keys, unit_vectors(len(keys), seed=start), strict=True)))
    cache.close()  # checkpoints the WAL into the file
    # 388 bytes of vector (384 int8 and a float32 scale), the sha, the key's index entry
    assert file_bytes(path) / n < 520, file_bytes(path) / n


def test_models_are_kept_apart_and_unknown_keys_are_misses(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path / "cache.db")
    key = shas(1)[0]
    fp32_like, int8_like = unit_vectors(2)
    cache.put("model@fp32", {key: fp32_like})
    cache.put("model@int8", {key: int8_like})
    assert within_int8(cache.get("model@fp32", [key])[key], fp32_like)
    assert within_int8(cache.get("model@int8", [key])[key], int8_like)
    assert cache.get("never-seen", [key]) == {}
    assert cache.get("model@fp32", ["not-a-sha", shas(2)[1]]) == {}
    assert (cache.count("model@fp32"), cache.count("model@int8"), cache.count("x")) == (1, 1, 0)
    cache.close()


def test_putting_a_key_again_replaces_its_vector(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path / "cache.db")
    key = shas(1)[0]
    first, second = unit_vectors(2)
    cache.put(MODEL, {key: first})
    cache.put(MODEL, {key: second})
    assert cache.count(MODEL) == 1
    assert within_int8(cache.get(MODEL, [key])[key], second)
    cache.close()


def test_prune_drops_other_models_and_dead_texts_and_space_comes_back(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = VectorCache(path)
    keys = shas(4000)  # ~2 MB: VACUUM on open wants 1 MB free at least
    cache.put(MODEL, dict(zip(keys, unit_vectors(4000), strict=True)))
    cache.put("old-model", dict(zip(keys[:10], unit_vectors(10, seed=1), strict=True)))
    assert cache.prune(MODEL, set(keys[:100])) == 3900 + 10
    assert cache.count(MODEL) == 100 and cache.count("old-model") == 0
    assert set(cache.get(MODEL, keys)) == set(keys[:100])
    cache.close()
    before = file_bytes(path)
    VectorCache(path).close()  # mostly free pages: VACUUM on open
    assert file_bytes(path) < before / 4, (before, file_bytes(path))


def test_a_cache_from_a_newer_memvault_is_refused_not_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    VectorCache(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {CACHE_VERSION + 1}")
    conn.close()
    with pytest.raises(IndexCorrupt, match="newer than this memvault") as info:
        VectorCache(path)
    assert info.value.path is None  # None: the engine does not delete it


# --- migration from memvault 0.1's table ----------------------------------------------------------


def test_v1_rows_are_migrated_in_place_and_the_file_shrinks(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    keys, vectors = shas(1500), unit_vectors(1500)
    other = shas(20, salt="other")
    rows = [(MODEL, k, v.tobytes()) for k, v in zip(keys, vectors, strict=True)]
    rows += [("hash-64", k, unit_vectors(1, 64, seed=i)[0].tobytes()) for i, k in enumerate(other)]
    write_v1(path, rows)
    before = file_bytes(path)
    assert before / len(rows) > 4000  # the old layout: a page of overflow per row

    cache = VectorCache(path)
    got = cache.get(MODEL, keys)
    assert set(got) == set(keys)
    assert all(within_int8(got[k], v) for k, v in zip(keys, vectors, strict=True))
    assert cache.count("hash-64") == 20 and cache.get("hash-64", other)[other[3]].shape == (64,)
    cache.close()
    assert tables(path) == {"models", "vectors"}
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == CACHE_VERSION
    conn.close()
    assert file_bytes(path) / len(rows) < 520, file_bytes(path) / len(rows)


def test_rows_memvault_did_not_write_are_dropped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    good = shas(1)[0]
    write_v1(
        path,
        [
            (MODEL, good, unit_vectors(1)[0].tobytes()),
            (MODEL, "not-hex", unit_vectors(1)[0].tobytes()),
            (MODEL, shas(2)[1], b"\x00\x01\x02"),  # not float32s
        ],
    )
    cache = VectorCache(path)
    assert cache.count(MODEL) == 1 and set(cache.get(MODEL, [good])) == {good}
    cache.close()


def test_a_failed_migration_leaves_the_old_table_whole_and_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.db"
    keys, vectors = shas(5000), unit_vectors(5000)
    write_v1(path, [(MODEL, k, v.tobytes()) for k, v in zip(keys, vectors, strict=True)])
    restore = _fails_after(monkeypatch, "encode", 2500)
    with pytest.raises(OSError, match="disk full"):
        VectorCache(path)
    assert tables(path) == {"embeddings"}  # the new tables were rolled back with the rows
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 5000
    conn.close()
    restore()
    cache = VectorCache(path)
    assert cache.count(MODEL) == 5000
    cache.close()


def test_kill_9_during_the_migration_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    keys, vectors = shas(4000), unit_vectors(4000)
    write_v1(path, [(MODEL, k, v.tobytes()) for k, v in zip(keys, vectors, strict=True)])
    _killed_halfway(tmp_path, path, "encode", 2000)
    cache = VectorCache(path)
    got = cache.get(MODEL, keys)
    cache.close()
    assert len(got) == 4000
    assert all(within_int8(got[k], v) for k, v in zip(keys, vectors, strict=True))


# --- version 2's float16 rows ------------------------------------------------------------------


def test_v2_float16_rows_are_converted_in_place_and_the_file_shrinks(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    keys, vectors = shas(3000), unit_vectors(3000)
    other = shas(20, salt="other")
    rows = [(MODEL, k, v) for k, v in zip(keys, vectors, strict=True)]
    rows += [("hash-64", k, unit_vectors(1, 64, seed=i)[0]) for i, k in enumerate(other)]
    write_v2(path, rows)
    before = file_bytes(path)
    assert before / len(rows) > 800  # 768 bytes of float16 a row

    cache = VectorCache(path)
    got = cache.get(MODEL, keys)
    assert set(got) == set(keys)
    half = {k: v.astype(np.float16).astype(np.float32) for k, v in zip(keys, vectors, strict=True)}
    assert all(within_int8(got[k], half[k]) for k in keys)  # the float16 kept, now int8
    small = cache.get("hash-64", other)
    assert set(small) == set(other) and small[other[3]].shape == (64,)
    cache.close()
    assert version_of(path) == CACHE_VERSION == 3
    assert file_bytes(path) / len(rows) < 520, file_bytes(path) / len(rows)
    again = VectorCache(path)  # nothing left to convert: the rows stay as they are
    assert again.get(MODEL, keys[:5]).keys() == set(keys[:5])
    assert all(np.array_equal(again.get(MODEL, [k])[k], got[k]) for k in keys[:5])
    again.close()


def test_v2_rows_memvault_did_not_write_are_dropped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    good, odd, empty = shas(3)
    write_v2(
        path,
        [(MODEL, good, unit_vectors(1)[0]), (MODEL, odd, b"\x00\x01\x02"), (MODEL, empty, b"")],
    )
    cache = VectorCache(path)
    assert cache.count(MODEL) == 1 and set(cache.get(MODEL, [good, odd, empty])) == {good}
    cache.close()


def test_a_failed_v2_conversion_leaves_the_float16_rows_whole_and_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.db"
    keys, vectors = shas(5000), unit_vectors(5000)
    write_v2(path, [(MODEL, k, v) for k, v in zip(keys, vectors, strict=True)])
    before = path.read_bytes()
    restore = _fails_after(monkeypatch, "encode_rows", 1)  # on the second page of rows
    with pytest.raises(OSError, match="disk full"):
        VectorCache(path)
    assert version_of(path) == 2
    conn = sqlite3.connect(path)
    blobs = [b for (b,) in conn.execute("SELECT vector FROM vectors")]
    conn.close()
    assert len(blobs) == 5000 and {len(b) for b in blobs} == {768}  # every row still float16
    assert path.read_bytes() == before
    restore()
    cache = VectorCache(path)
    got = cache.get(MODEL, keys)
    cache.close()
    assert len(got) == 5000 and version_of(path) == CACHE_VERSION


def test_kill_9_during_the_v2_conversion_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    keys, vectors = shas(6000), unit_vectors(6000)
    write_v2(path, [(MODEL, k, v) for k, v in zip(keys, vectors, strict=True)])
    _killed_halfway(tmp_path, path, "encode_rows", 2)  # the second page of rows
    cache = VectorCache(path)
    got = cache.get(MODEL, keys)
    cache.close()
    assert len(got) == 6000 and version_of(path) == CACHE_VERSION
    half = vectors.astype(np.float16).astype(np.float32)
    assert all(within_int8(got[k], h) for k, h in zip(keys, half, strict=True))


class Recording:
    """The hash embedder, keeping every vector it produced (float32), by text."""

    def __init__(self) -> None:
        self.inner = HashEmbedder()
        self.model_id, self.dim, self.max_tokens = "hash-64", 64, 254
        self.made: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = self.inner.embed(texts)
        self.made.update(zip(texts, out, strict=True))
        return out

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


def test_a_vault_indexed_with_the_old_cache_opens_without_re_embedding(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    for i in range(12):
        write(root, f"decisions/d{i}.md", note(f"Decision {i}", body=f"Zebra {i} crossing talk."))
    recorder = Recording()
    with open_vault(root, embedder=recorder) as v:
        v.sync()
        labels = v.engine.store.label_shas()
    assert labels and recorder.made
    # today's cache.db: the float32 vectors the model gave, in memvault 0.1's table
    state = root / ".memvault"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{state / 'cache.db'}{suffix}").unlink(missing_ok=True)
    by_sha = {hashlib.sha256(t.encode()).hexdigest(): v for t, v in recorder.made.items()}
    assert set(labels.values()) <= set(by_sha)
    write_v1(state / "cache.db", [("hash-64", s, v.tobytes()) for s, v in by_sha.items()])
    (state / "vectors.bin").unlink()  # the vector index must be rebuilt from the cache

    again = Recording()
    with open_vault(root, embedder=again) as v:
        report = v.sync()
        assert v.engine.embedding.vectors.labels() == set(labels)
        assert report.embedded_chunks == 0 and again.made == {}, "no chunk was embedded again"
        got = v.engine.store.cached("hash-64", by_sha)
        assert [h.path for h in v.search("zebra 7 crossing", k=1)] == ["decisions/d7.md"]
    assert set(got) == set(by_sha)
    assert all(within_int8(got[s], by_sha[s]) for s in by_sha)
    assert tables(state / "cache.db") == {"models", "vectors"}


def test_a_vault_indexed_with_a_float16_cache_opens_without_re_embedding(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    for i in range(12):
        write(root, f"decisions/d{i}.md", note(f"Decision {i}", body=f"Zebra {i} crossing talk."))
    recorder = Recording()
    with open_vault(root, embedder=recorder) as v:
        v.sync()
        labels = v.engine.store.label_shas()
    state = root / ".memvault"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{state / 'cache.db'}{suffix}").unlink(missing_ok=True)
    by_sha = {hashlib.sha256(t.encode()).hexdigest(): v for t, v in recorder.made.items()}
    write_v2(state / "cache.db", [("hash-64", s, v) for s, v in by_sha.items()])
    (state / "vectors.bin").unlink()  # the vector index must be rebuilt from the cache

    again = Recording()
    with open_vault(root, embedder=again) as v:
        report = v.sync()
        assert v.engine.embedding.vectors.labels() == set(labels)
        assert report.embedded_chunks == 0 and again.made == {}, "no chunk was embedded again"
        assert [h.path for h in v.search("zebra 7 crossing", k=1)] == ["decisions/d7.md"]
    assert version_of(state / "cache.db") == CACHE_VERSION


def test_a_model_number_is_never_reused_after_a_prune(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    writer, reader = VectorCache(path), VectorCache(path)
    key = shas(1)[0]
    old, new = unit_vectors(2)
    writer.put("model-a", {key: old})
    assert set(reader.get("model-a", [key])) == {key}  # the reader now knows model-a's number
    writer.prune("model-b", set())  # model-a's vectors and its number go
    writer.put("model-b", {key: new})
    assert reader.get("model-a", [key]) == {}  # a miss, never model-b's vector
    writer.close()
    reader.close()


def test_line_rows_of_another_dimension_are_misses_embedded_again(tmp_path: Path) -> None:
    """A row memvault did not write, of plausible length (another dimension), for a
    line's text: searches and contexts read line vectors too, and one such row made
    every search stacking it with the question's vector fail. It is a miss; the next
    sync embeds the line again over it."""
    root = make_vault(tmp_path)
    write(root, "decisions/zebra.md", note("Zebra", body="Zebra crossing talk.\n\nA second line."))
    with open_vault(root) as v:
        v.sync()
        chunk_shas = {bytes.fromhex(s) for s in v.engine.store.label_shas().values()}
    cache = root / ".memvault" / "cache.db"
    with sqlite3.connect(cache) as db:
        lines = [r[0] for r in db.execute("SELECT sha FROM vectors") if r[0] not in chunk_shas]
        odd = vector_cache.encode(np.ones(40, dtype=np.float32))  # 40 dimensions, not 64
        db.executemany("UPDATE vectors SET vector = ? WHERE sha = ?", [(odd, s) for s in lines])
    db.close()
    assert lines
    with open_vault(root) as v:
        assert v.search("zebra crossing", k=1)[0].path == "decisions/zebra.md"
        assert "Zebra crossing" in v.context("zebra crossing talk", budget=400).text
        path = root / "decisions" / "zebra.md"
        path.write_text(path.read_text("utf-8") + "\nA third line.\n", "utf-8")
        v.sync()
        emb = v.engine.embedding
        chunks = v.engine.store.chunks_of("decisions/zebra.md")
        again = [s for s in emb.line_texts(c.text for c in chunks) if bytes.fromhex(s) in lines]
        got = v.engine.store.cached(emb.model_id(), again)
    assert again and set(got) == set(again)  # its lines cut again: embedded over the odd rows
    assert all(vec.shape == (64,) for vec in got.values())
