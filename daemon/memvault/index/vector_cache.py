"""cache.db: embeddings kept by (model identity, sha256 of the embedded text), lean.

Layout (``PRAGMA user_version = 3``)::

    models(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE)  -- one per model identity
    vectors(id INTEGER PRIMARY KEY, model INTEGER, sha BLOB, vector BLOB)
    UNIQUE INDEX vectors_key ON vectors(model, sha)

- ``sha`` is the 32 raw bytes of the text's sha256, not 64 hex characters, and
  the model is a small integer, not its 60-character name in every row;
- ``vector`` is int8 with one scale (``encode``: a float32, the largest
  magnitude over 127, then a byte a dimension: 388 bytes for 384 dimensions,
  ~0.48 KB a row with its key and index entry). Version 2 kept float16 (768
  bytes): cache.db was three quarters of a real-model ``.memvault/``, most of it
  the line vectors. Measured (bench/RESULTS.md, issue 27): cosine to the
  float16 vector > 0.9999 on the model's vectors, and recall on the dev sets the
  same (LoCoMo both folds, the help vault's 60 questions to the rank, the garden
  vault within its run-to-run spread);
- a rowid table: rows are appended in id order, so pages stay full. The old
  layout — a ``WITHOUT ROWID`` table with a 1.6 KB row — pushed each row's
  tail into an overflow page of its own: 4.7 KB per vector.

Older caches are migrated in place on open, in one transaction (a kill in the
middle leaves the old rows whole, and the next open migrates again), then
``VACUUM`` gives the space back: version 1 (memvault 0.1: ``embeddings(model, sha,
vector)``, float32) and version 2 (float16 rows, converted). PostgreSQL's cache
(pg_store.py) keeps the same int8 rows from its schema 5 on (float16 before).
"""

from __future__ import annotations

import itertools
import logging
import os
import sqlite3
import struct
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from memvault.errors import IndexCorrupt, StorageError
from memvault.index import integrity, sqlite_open
from memvault.index.sql import close_optimized, parts, rollback

log = logging.getLogger("memvault")

CACHE_VERSION = 3
_SCALE = struct.Struct("<f")  # an int8 row's scale, before its bytes
K = TypeVar("K")  # a row's key: cache.db's id, PostgreSQL's (model, sha)
# the WAL a checkpoint left is cut to this at the next write (index.db's too); else it
# stays as large as the largest transaction (a VACUUM, a new model's re-queue) until
# the daemon stops
WAL_KEPT = 16 << 20
_VACUUM_SHARE = 0.5  # free pages past this share of the file (and 1 MB): VACUUM on open

_SCHEMA = (
    # AUTOINCREMENT: a model number is never reused, so a process holding an old
    # name -> number mapping can only miss, never read another model's vectors
    "CREATE TABLE IF NOT EXISTS models("
    "id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE)",
    # sha: the 32 bytes of sha256(embedded text); vector: ``encode``'s int8
    "CREATE TABLE IF NOT EXISTS vectors("
    "id INTEGER PRIMARY KEY, model INTEGER NOT NULL, sha BLOB NOT NULL, vector BLOB NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS vectors_key ON vectors(model, sha)",
)


def encode(vector: np.ndarray) -> bytes:
    """A vector as cache.db keeps it (``encode_rows`` of one row)."""
    return encode_rows(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]


def encode_rows(matrix: np.ndarray) -> list[bytes]:
    """Each row as cache.db keeps it: a little-endian float32 scale (its largest
    magnitude over 127), then each dimension rounded to a multiple of it, as int8. A
    row that is not finite keeps a NaN scale, so it comes back NaN: the index refuses
    it where it would have (``vectors._checked``)."""
    rows = np.asarray(matrix, dtype=np.float32)
    rows = rows.reshape(len(rows), -1)
    finite: np.ndarray = np.asarray(np.isfinite(rows).all(axis=1))
    clean = np.where(finite[:, None], rows, np.float32(0.0))
    top = np.abs(clean).max(axis=1, initial=0.0).astype(np.float64)
    scale = np.where(top > 0.0, top / 127.0, 1.0).astype(np.float32)
    quantized = np.clip(np.rint(clean / scale[:, None]), -127, 127).astype(np.int8)
    scale[~finite] = np.nan
    head = scale.astype("<f4").view(np.uint8).reshape(-1, _SCALE.size)
    packed = np.concatenate([head, quantized.view(np.uint8)], axis=1)
    return [row.tobytes() for row in packed]


def decode(blob: bytes) -> np.ndarray:
    """``encode``'s bytes as float32."""
    scale = np.float32(_SCALE.unpack_from(blob)[0])
    return np.frombuffer(blob, dtype=np.int8, offset=_SCALE.size).astype(np.float32) * scale


def decode_rows(blobs: Sequence[bytes]) -> np.ndarray:
    """Rows of one length, ``encode``'s, decoded in one step: (len(blobs), dim)."""
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), -1)
    scales = raw[:, : _SCALE.size].copy().view("<f4").astype(np.float32)
    return raw[:, _SCALE.size :].view(np.int8).astype(np.float32) * scales


def decode_keyed(rows: Iterable[tuple[bytes, Any]]) -> dict[str, np.ndarray]:
    """(sha bytes, ``encode``'s bytes) rows as {sha hex: float32 vector}, the rows of
    one length decoded in one step (an open of the vector index reads every chunk's
    vector through here). A row memvault did not write (not bytes, no room for a
    scale and a dimension) is left out: a cache miss, embedded again."""
    by_size: dict[int, list[tuple[bytes, bytes]]] = {}
    for key, blob in rows:
        if isinstance(blob, (bytes, memoryview)) and len(blob) > _SCALE.size:
            by_size.setdefault(len(blob), []).append((bytes(key), bytes(blob)))
    out: dict[str, np.ndarray] = {}
    for same in by_size.values():
        block = decode_rows([blob for _, blob in same])
        out.update(zip((key.hex() for key, _ in same), block, strict=True))
    return out


def encode_half(vector: np.ndarray) -> bytes:
    """float16, little-endian: cache.db's version 2, PostgreSQL's cache before schema 5."""
    return np.asarray(vector, dtype="<f2").tobytes()


def decode_half(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f2").astype(np.float32)


def is_half(blob: Any) -> bool:
    """Whether ``blob`` can be float16 bytes (what memvault wrote before int8)."""
    return isinstance(blob, (bytes, memoryview)) and len(blob) > 0 and len(blob) % 2 == 0


def half_to_int8(rows: Iterable[tuple[K, Any]]) -> tuple[list[tuple[K, bytes]], list[K]]:
    """float16 rows (key, bytes) as ``encode`` keeps them, the rows of one length in one
    step: (the converted rows, the keys of rows memvault did not write: not float16
    bytes). Both backends' conversions (cache.db's version 2, PostgreSQL's schema 4)."""
    by_size: dict[int, list[tuple[K, bytes]]] = {}
    bad: list[K] = []
    for key, blob in rows:
        if is_half(blob):
            by_size.setdefault(len(blob), []).append((key, bytes(blob)))
        else:
            bad.append(key)
    converted: list[tuple[K, bytes]] = []
    for same in by_size.values():
        blobs = encode_rows(np.stack([decode_half(b) for _, b in same]))
        converted += zip((key for key, _ in same), blobs, strict=True)
    return converted, bad


def encoded(vectors: Iterable[np.ndarray]) -> list[bytes]:
    """``encode`` of each, in one step when they are of one length (a model's)."""
    rows = [np.asarray(v, dtype=np.float32).reshape(-1) for v in vectors]
    if len({len(r) for r in rows}) > 1:
        return [encode(r) for r in rows]
    return encode_rows(np.stack(rows)) if rows else []


def _key(sha: str) -> bytes:
    return bytes.fromhex(sha)


class VectorCache:
    """The embedding cache of one vault. Thread-safe: one lock around each call."""

    def __init__(self, path: Path, *, trusting: bool = False) -> None:
        """``trusting``: a file unchanged since a memvault closed it is not checked
        again (``index/integrity.py``); SQLite's quick_check (``checked``) else."""
        self.path = path
        self._lock = integrity.Guard(threading.Lock(), path)  # damage: IndexCorrupt
        self._models: dict[str, int] = {}
        self.checked = not (trusting and integrity.unchanged(path))
        try:
            self._db = sqlite_open.connect(path, self._lock)  # (one this user cannot write)
            self._opened = integrity.identity(path)  # the file the stamp may vouch for
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(f"PRAGMA journal_size_limit = {WAL_KEPT}")
                self._db.execute("PRAGMA synchronous=NORMAL")
                if self.checked:
                    integrity.check(self._db)
                self._open()
                self._lock.opened()
            except BaseException:
                self._db.close()
                raise
        except sqlite3.DatabaseError as exc:
            raise opening_error(path, exc) from None

    def _open(self) -> None:
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if version > CACHE_VERSION:
            raise IndexCorrupt(
                f"{self.path}: cache format {version} is newer than this memvault "
                f"({CACHE_VERSION}); upgrade memvault"
            )
        if self._has_table("embeddings") or version < CACHE_VERSION:
            self._migrate()
        self._maybe_vacuum()

    def _has_table(self, name: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return row is not None

    def _migrate(self) -> None:
        """An older cache to this version, in one transaction; then VACUUM gives the
        space back. Version 1's float32 table moves into ``vectors``; version 2's
        float16 rows are converted (``_convert_half_rows``)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            # read under the write lock: another process may have migrated meanwhile
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            half = version == 2 and self._has_table("vectors")
            for statement in _SCHEMA:  # (executescript would commit first)
                self._db.execute(statement)
            moved = self._convert_half_rows() if half else 0
            if self._has_table("embeddings"):
                moved += self._move_v1_rows()
                self._db.execute("DROP TABLE embeddings")
            self._db.execute(f"PRAGMA user_version = {CACHE_VERSION}")
        except BaseException:
            rollback(self._db)
            raise
        self._db.execute("COMMIT")
        if moved:
            log.info("%s: %d cached vectors moved to the int8 layout", self.path, moved)
            self._vacuum()

    def _convert_half_rows(self) -> int:
        """Version 2's float16 rows as ``encode`` keeps them, a page at a time; a row
        memvault did not write (not float16 bytes) is dropped: it is only a cache."""
        converted, last = 0, -1
        while rows := self._db.execute(
            "SELECT id, vector FROM vectors WHERE id > ? ORDER BY id LIMIT 2000", (last,)
        ).fetchall():
            last = int(rows[-1][0])
            good, bad = half_to_int8((int(i), b) for i, b in rows)
            self._db.executemany(
                "UPDATE vectors SET vector = ? WHERE id = ?", [(b, i) for i, b in good]
            )
            self._db.executemany("DELETE FROM vectors WHERE id = ?", [(i,) for i in bad])
            converted += len(good)
        return converted

    def _move_v1_rows(self) -> int:
        moved = 0
        rows = self._db.execute("SELECT model, sha, vector FROM embeddings")
        while batch := rows.fetchmany(2000):
            out = []
            for model, sha, blob in batch:
                if not isinstance(blob, bytes) or len(blob) % 4 or not _is_sha(sha):
                    continue  # not a row memvault wrote: dropped (it is only a cache)
                out.append(
                    (self._model_id(str(model)), _key(sha), encode(np.frombuffer(blob, "<f4")))
                )
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors(model, sha, vector) VALUES(?, ?, ?)", out
            )
            moved += len(out)
        return moved

    def _maybe_vacuum(self) -> None:
        free = int(self._db.execute("PRAGMA freelist_count").fetchone()[0])
        pages = int(self._db.execute("PRAGMA page_count").fetchone()[0])
        size = int(self._db.execute("PRAGMA page_size").fetchone()[0])
        if free * size >= 1 << 20 and free > _VACUUM_SHARE * pages:
            self._vacuum()

    def _vacuum(self) -> None:
        try:
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError as exc:  # another connection reading: next time
            log.info("%s: VACUUM postponed (%s)", self.path, exc)

    def _model_id(self, name: str, create: bool = True) -> int | None:
        known = self._models.get(name)
        if known is not None:
            return known
        row = self._db.execute("SELECT id FROM models WHERE name = ?", (name,)).fetchone()
        if row is None:
            if not create:
                return None
            cur = self._db.execute("INSERT INTO models(name) VALUES(?)", (name,))
            row = (int(cur.lastrowid or 0),)
        self._models[name] = int(row[0])
        return int(row[0])

    # -- the cache's API (what Store delegates) --------------------------------------------

    def get(self, model: str, shas: Iterable[str]) -> dict[str, np.ndarray]:
        """float32 vectors for the given text hashes that are cached (missing ones left out)."""
        out: dict[str, np.ndarray] = {}
        with self._lock:
            mid = self._model_id(model, create=False)
            if mid is None:
                return out
            for part in parts([s for s in dict.fromkeys(shas) if _is_sha(s)]):
                q = f"SELECT sha, vector FROM vectors WHERE model = ? AND sha IN ({','.join('?' * len(part))})"
                rows = self._db.execute(q, (mid, *map(_key, part))).fetchall()
                out.update(decode_keyed(rows))
        return out

    def put(self, model: str, items: Mapping[str, np.ndarray]) -> None:
        with self._lock, self._lock.writing():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                mid = self._model_id(model)
                self._db.executemany(
                    "INSERT INTO vectors(model, sha, vector) VALUES(?, ?, ?) "
                    "ON CONFLICT(model, sha) DO UPDATE SET vector = excluded.vector",
                    zip(itertools.repeat(mid), map(_key, items), encoded(items.values())),
                )
                self._db.execute("COMMIT")  # (a full disk there rolls the model row back too)
            except BaseException:
                rollback(self._db)
                self._models.clear()  # a model row created in the rolled-back transaction
                raise

    def prune(self, model: str, live: set[str]) -> int:
        """Drop vectors of other models and of texts not in ``live``; return how many."""
        with self._lock:
            mid = self._model_id(model, create=False)
            rows = self._db.execute("SELECT id, model, sha FROM vectors").fetchall()
            dead = [(i,) for i, m, sha in rows if m != mid or sha.hex() not in live]
            if dead:
                with self._lock.writing():
                    self._db.execute("BEGIN IMMEDIATE")
                    try:
                        self._db.executemany("DELETE FROM vectors WHERE id = ?", dead)
                        self._db.execute(
                            "DELETE FROM models WHERE id NOT IN (SELECT DISTINCT model FROM vectors)"
                        )
                    except BaseException:
                        rollback(self._db)
                        raise
                    self._db.execute("COMMIT")
                self._models.clear()
        return len(dead)

    def count(self, model: str) -> int:
        with self._lock:
            mid = self._model_id(model, create=False)
            if mid is None:
                return 0
            return int(
                self._db.execute("SELECT COUNT(*) FROM vectors WHERE model = ?", (mid,)).fetchone()[
                    0
                ]
            )

    def close(self) -> None:
        with self._lock.closing():
            mine = self._lock.only_mine()  # (before the close's own checkpoint)
            self._lock.closed(self._opened, mine, close_optimized(self._db))


def opening_error(path: Path, exc: sqlite3.DatabaseError) -> IndexCorrupt | StorageError:
    """What a database that failed to open is: damaged (``IndexCorrupt``, with its path:
    deleted and rebuilt), or on a disk that is full, read-only or failing
    (``StorageError``: left alone). A full disk fails the open too (the -shm file, the
    WAL's recovery): taken for damage, it deleted the whole index."""
    code = getattr(exc, "sqlite_errorcode", None)  # None: our own integrity check failed
    if code is None or code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        if not sqlite_open.writable(path):  # not ours to delete, nor to make again
            return StorageError(
                f"cannot open {path}: {exc}; this user cannot write it: its owner's next "
                "memvault checks it and rebuilds it (nothing was deleted)"
            )
        return IndexCorrupt(f"{path}: {exc}", str(path))
    folder = path.parent
    if code & 0xFF == sqlite3.SQLITE_READONLY and not os.access(folder, os.W_OK | os.X_OK):
        # its file writable or not, a WAL database is read only beside a -shm made there
        return StorageError(
            f"cannot open {path}: its folder {folder} cannot be written by this user, and "
            f"SQLite makes {path.name}-shm there to read it: run memvault as the folder's "
            f"owner, or make it writable (chmod u+wx {folder}) (nothing was deleted)"
        )
    return StorageError(f"cannot open {path}: {exc} (nothing was deleted)")


def _is_sha(value: Any) -> bool:
    if not isinstance(value, str) or len(value) != 64:
        return False
    try:
        bytes.fromhex(value)
    except ValueError:
        return False
    return True


__all__ = [
    "CACHE_VERSION",
    "VectorCache",
    "decode",
    "decode_half",
    "decode_keyed",
    "decode_rows",
    "encode",
    "encode_half",
    "encode_rows",
    "encoded",
    "half_to_int8",
    "is_half",
    "opening_error",
]
