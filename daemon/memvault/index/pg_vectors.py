"""The vectors of a PostgreSQL index: pgvector, HNSW, the same seam as ``VectorIndex``.

Rows of ``vectors(label, embedding)`` in the vault's schema, written as the chunks
are (a chunk's delete takes its vector in the same transaction: ``PgStore``), so
there is no file to save and every reader sees the writer's vectors once committed.
The HNSW index is an expression index per dimension (``embedding::vector(dim)``,
cosine): a model of another dimension gets its own, and the old one is dropped.

``query`` is cosine similarity, best first, as ``VectorIndex.query``. A filter that
is a set's membership test (what the reader passes) is pushed into the SQL (an exact
scan over the allowed labels, as hnswlib's exact fallback); any other predicate
filters a deepening HNSW search.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from memvault.index.vectors import OpenReport, VectorsWanted, _checked

_BATCH = 1000


def _literal(vector: np.ndarray) -> str:
    # repr of each float32 as a double: exact (the cosine is hnswlib's to the last place)
    return "[" + ",".join(map(str, vector.astype(np.float32).tolist())) + "]"


class PgVectors:
    """The vector index of a ``PgStore`` (``store``: typed loosely, so that this module
    and pg_store.py, which makes it, import in one direction only): pgvector HNSW."""

    def __init__(
        self,
        store: Any,
        dim: int,
        *,
        m: int = 16,
        ef_construction: int = 200,
        ef_search: int = 100,
    ) -> None:
        self.store = store
        self.dim = dim
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self._db = store._pg
        self._lock = store._lock

    @property
    def _expr(self) -> str:
        return f"embedding::vector({int(self.dim)})"

    def open(self, want: VectorsWanted) -> OpenReport:
        """Reconcile the table with the store's embedded chunks (a writer only: a reader
        reads what the writer wrote). Nothing is saved to a file: no checksum to check."""
        if self.store.read_only:
            return OpenReport(loaded=True, rebuilt_reason=None, added=0, removed=0)
        with self._lock:
            name = f"vectors_hnsw_{int(self.dim)}"
            # another model's vectors first (a model change: requeue_all re-queued every
            # chunk): this dimension's index casts every row, and a row of another
            # dimension fails the cast
            for (other,) in self._db.raw(
                "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = 'vectors' "
                "AND indexname LIKE 'vectors_hnsw_%%' AND indexname <> %s",
                (self.store.schema, name),
            ).fetchall():
                self._db.raw(f'DROP INDEX IF EXISTS "{other}"')
            wrong = {
                int(r[0])
                for r in self._db.raw(
                    "SELECT label FROM vectors WHERE vector_dims(embedding) <> %s", (self.dim,)
                ).fetchall()
            }
            if wrong:
                self.delete(wrong)
            self._db.raw(
                f"CREATE INDEX IF NOT EXISTS {name} ON vectors USING hnsw (({self._expr}) "
                f"vector_cosine_ops) WITH (m = {int(self.m)}, ef_construction = "
                f"{int(self.ef_construction)})"
            )
            stored = {int(r[0]) for r in self._db.raw("SELECT label FROM vectors").fetchall()}
        wanted = {int(x) for x in want.labels}
        extra = stored - wanted
        if extra:
            self.delete(extra)
        missing = sorted(wanted - (stored - extra))
        for start in range(0, len(missing), _BATCH):
            batch = missing[start : start + _BATCH]
            self.add(batch, want.vectors_for(batch))
        return OpenReport(
            loaded=True, rebuilt_reason=None, added=len(missing), removed=len(extra | wrong)
        )

    def add(self, labels: Sequence[int], vectors: np.ndarray) -> None:
        batch = [int(label) for label in labels]
        array = _checked(vectors, len(batch), self.dim)
        if not batch:
            return
        if len(set(batch)) != len(batch):
            raise ValueError("duplicate labels in one add")
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        array = array / norms  # stored normalised, as hnswlib keeps them for cosine
        with self._lock:
            self._db.executemany(
                "INSERT INTO vectors(label, embedding) VALUES(?, ?::vector) "
                "ON CONFLICT(label) DO UPDATE SET embedding = excluded.embedding",
                [(label, _literal(v)) for label, v in zip(batch, array, strict=True)],
            )

    def delete(self, labels: Iterable[int]) -> int:
        batch = [int(x) for x in labels]
        if not batch:
            return 0
        with self._lock:
            cur = self._db.raw("DELETE FROM vectors WHERE label = ANY(%s)", (batch,))
            return int(cur.rowcount or 0)

    def compact(self, vectors_for: Callable[[Sequence[int]], np.ndarray]) -> None:
        """Nothing to compact: PostgreSQL's vacuum reclaims deleted rows."""

    def deleted_ratio(self) -> float:
        return 0.0

    def query(
        self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None
    ) -> list[tuple[int, float]]:
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape != (self.dim,):
            raise ValueError(f"query vector has shape {q.shape}, expected ({self.dim},)")
        if k <= 0:
            return []
        lit = _literal(q)
        subset = getattr(allowed, "__self__", None)
        with self._lock:
            if isinstance(subset, (set, frozenset)):  # a set's membership test: in the SQL
                rows = self._db.raw(
                    f"SELECT label, 1 - ({self._expr} <=> %s::vector) FROM vectors "
                    f"WHERE label = ANY(%s) ORDER BY {self._expr} <=> %s::vector, label LIMIT %s",
                    (lit, sorted(subset), lit, k),
                ).fetchall()
                return [(int(a), float(b)) for a, b in rows]
            want = k
            while True:
                with self._db.conn.transaction():
                    self._db.raw(f"SET LOCAL hnsw.ef_search = {max(self.ef_search, want)}")
                    rows = self._db.raw(
                        f"SELECT label, 1 - ({self._expr} <=> %s::vector) FROM vectors "
                        f"ORDER BY {self._expr} <=> %s::vector LIMIT %s",
                        (lit, lit, want),
                    ).fetchall()
                out = [(int(a), float(b)) for a, b in rows if allowed is None or allowed(int(a))]
                if len(out) >= k or len(rows) < want or want >= 1000:
                    return out[:k]
                want *= 4

    def save(self) -> str | None:
        """Committed as written: nothing to save."""
        return None

    @property
    def dirty(self) -> bool:
        return False

    def labels(self) -> set[int]:
        with self._lock:
            return {int(r[0]) for r in self._db.raw("SELECT label FROM vectors").fetchall()}


__all__ = ["PgVectors"]
