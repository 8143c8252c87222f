"""pgvector's type, operator, operator class and ``vector_dims`` named by the schema the
extension lives in (a memvault session's search_path is the vault's schema and the
catalog alone: pg_schema.search_path), as last read; read again when a name is not
found, the extension moved while the process ran (``ALTER EXTENSION vector SET
SCHEMA``, a DBA's tidying): every search of a running daemon failed then (HTTP 500,
UndefinedObject) until it was restarted."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from memvault.index import pg_schema

log = logging.getLogger("memvault")

_T = TypeVar("_T")


class PgvectorNames:
    """pgvector's names for the statements of ``store`` (a PgStore: its
    ``vector_schema``, read at its open, its lock and its connection)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    @property
    def _ext(self) -> str:
        return pg_schema.quoted(self.store.vector_schema)

    @property
    def vec(self) -> str:
        return f"{self._ext}.vector"

    @property
    def near(self) -> str:
        return f"OPERATOR({self._ext}.<=>)"

    @property
    def ops(self) -> str:
        return f"{self._ext}.vector_cosine_ops"

    @property
    def dims(self) -> str:
        return f"{self._ext}.vector_dims"

    def named(self, run: Callable[[], _T]) -> _T:
        """``run``, and once more when pgvector's names were not found because the
        extension moved since its schema was read: read again first."""
        import psycopg

        try:
            return run()
        except (
            psycopg.errors.UndefinedObject,
            psycopg.errors.UndefinedFunction,
            psycopg.errors.InvalidSchemaName,
        ):
            db = self.store._pg
            with self.store._lock, db.deadline():
                now = pg_schema.vector_schema(db.conn)
            if now == self.store.vector_schema:
                raise
            log.info("pgvector lives in schema %r now (was %r)", now, self.store.vector_schema)
            self.store.vector_schema = now
        return run()


__all__ = ["PgvectorNames"]
