"""The index backend seam: what the engine asks of an index, whichever engine holds it.

Two implementations satisfy it:

- ``store.Store`` + ``vectors.VectorIndex``: SQLite (FTS5 BM25) and hnswlib under
  ``.memvault/`` (the default, ``[index] store = "sqlite"``);
- ``pg_store.PgStore`` + ``pg_vectors.PgVectors``: one PostgreSQL schema per vault,
  ``tsvector``/GIN keywords ranked BM25-like from the terms' document frequencies,
  pgvector HNSW (``[index] store = "postgres"``, ``dsn = "postgresql://..."``).

What stays above the seam, in memvault's own code for both: query terms, fusion,
evidence, line ranking, context assembly and budgets (engine/reader.py,
engine/evidence.py, core/ranking.py). So a question gets the same hits from either
backend, up to ties.

A transaction is an opaque handle (``Tx``): the engine only passes it back to the
store's own methods (all SQL lives under index/), never executes on it.
``IndexStore`` names the seam's core; the implementations carry a few more methods
(link tables, attachments, MEMORY.md's owned lines) with the same SQL for both.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from memvault.config import VaultConfig
from memvault.core.changes import Known
from memvault.index.rows import ChunkRow, NewChunk, NoteRow, PendingChunk

Tx = Any  # a transaction handle: only ever handed back to the store that gave it


class VectorSearch(Protocol):
    """Vectors by chunk label: hnswlib (``VectorIndex``) or pgvector (``PgVectors``)."""

    def open(
        self,
        expected_sha: str | None,
        labels: Collection[int],
        vectors_for: Callable[[Sequence[int]], np.ndarray],
    ) -> Any: ...
    def add(self, labels: Sequence[int], vectors: np.ndarray) -> None: ...
    def delete(self, labels: Iterable[int]) -> int: ...
    def query(
        self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None
    ) -> list[tuple[int, float]]: ...
    def save(self) -> str | None: ...
    def compact(self, vectors_for: Callable[[Sequence[int]], np.ndarray]) -> None: ...
    def deleted_ratio(self) -> float: ...
    def labels(self) -> set[int]: ...
    @property
    def dirty(self) -> bool: ...


class IndexStore(Protocol):
    """Notes, chunks, keywords, the pending queue, the embedding cache by content hash."""

    def transaction(self) -> AbstractContextManager[Tx]: ...
    def close(self) -> None: ...
    def meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str, conn: Tx | None = None) -> None: ...
    # notes: upsert, delete and rename by path
    def manifest(self) -> dict[str, Known]: ...
    def note(self, path: str) -> NoteRow | None: ...
    def put_note(self, conn: Tx, row: NoteRow) -> None: ...
    def delete_note(self, conn: Tx, path: str) -> list[int]: ...
    def rename_note(self, conn: Tx, old: str, new: str) -> None: ...
    # chunks
    def chunks_of(self, path: str) -> list[ChunkRow]: ...
    def chunk_rows(self, labels: Sequence[int]) -> dict[int, ChunkRow]: ...
    def insert_chunks(self, conn: Tx, path: str, chunks: Sequence[NewChunk]) -> list[int]: ...
    def move_chunk(self, conn: Tx, label: int, c: NewChunk) -> None: ...
    def delete_chunks(self, conn: Tx, labels: Sequence[int]) -> None: ...
    # keyword candidates: BM25 (higher is better); filters are applied by the caller
    def chunk_count(self) -> int: ...
    def term_docs(self, term: str) -> int: ...
    def keywords(self, terms: Sequence[str], limit: int) -> list[tuple[int, float]]: ...
    # pending work (the vector lane's queue)
    def add_pending(
        self, conn: Tx, items: Iterable[tuple[int, str, str]], since: float
    ) -> None: ...
    def pending(self, limit: int) -> list[PendingChunk]: ...
    def finish_pending(
        self, labels: Sequence[int], shas: Mapping[int, str] | None = None
    ) -> list[int]: ...
    def pending_state(self) -> tuple[int, float | None]: ...
    def requeue_all(
        self,
        texts_for: Callable[[NoteRow, list[ChunkRow]], tuple[list[str], bool]],
        model: str,
        reason: str,
        since: float,
    ) -> tuple[int, int]: ...
    # health
    def counts(self) -> dict[str, int]: ...
    # the embedding cache by content hash
    def cached(self, model: str, shas: Iterable[str]) -> dict[str, np.ndarray]: ...
    def put_embeddings(self, model: str, items: Mapping[str, np.ndarray]) -> None: ...
    # the vector index that goes with this store
    def vector_index(
        self, path: Path, dim: int, *, m: int, ef_construction: int, ef_search: int
    ) -> VectorSearch: ...


def is_postgres(config: VaultConfig) -> bool:
    return config.index.store == "postgres"


def pg_schema_of(config: VaultConfig) -> str:
    from memvault.index.pg_schema import schema_name

    return schema_name(config.root, config.index.schema)


def open_postgres(config: VaultConfig, *, read_only: bool) -> Any:
    """The vault's PostgreSQL index (``PgStore``), migrated unless ``read_only``."""
    from memvault.errors import ConfigError
    from memvault.index.pg_store import PgStore

    if not config.index.dsn:
        raise ConfigError('index.store = "postgres" needs index.dsn ("postgresql://...")')
    store = PgStore(
        config.index.dsn,
        pg_schema_of(config),
        read_only=read_only,
        timeout=config.index.pg_timeout,
        statement_ms=int(config.index.pg_timeout * 1000),
    )
    if not read_only:
        try:  # one writer per vault, on any machine: the schema's advisory lock
            store.take_writer_lock()
        except BaseException:
            store.close()
            raise
    return store


__all__ = [
    "IndexStore",
    "Tx",
    "VectorSearch",
    "is_postgres",
    "open_postgres",
    "pg_schema_of",
]
