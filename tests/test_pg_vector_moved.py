"""pgvector moved to another schema while a process holds the index open (``ALTER
EXTENSION vector SET SCHEMA``: a DBA tidying extensions into a schema of their own):
its type and operator are named by the schema read again, not the one read at the open.
Before, every search of a running daemon failed (HTTP 500, UndefinedObject: `type
"public.vector" does not exist`) until it was restarted. A real server (pgserver)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from helpers import make_vault, note, open_vault, write


@pytest.fixture
def moved_later(pg_dsn: str) -> Iterator[str]:
    """The schema pgvector is moved to by the test; put back in ``public`` after."""
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS extensions_moved")
    try:
        yield "extensions_moved"
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("ALTER EXTENSION vector SET SCHEMA public")
            conn.execute("DROP SCHEMA extensions_moved")


def test_a_search_and_a_save_go_on_after_pgvector_moved_schema(
    tmp_path: Path, pg_dsn: str, moved_later: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        for build in v.engine.store.builds:  # the HNSW index (a thread's)
            build.join()
        before = [(h.path, h.line_start) for h in v.search("which database did we choose", k=5)]
        assert before
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"ALTER EXTENSION vector SET SCHEMA {moved_later}")
        after = [(h.path, h.line_start) for h in v.search("which database did we choose", k=5)]
        assert after == before
        write(root, "people/okapi.md", note("Okapi", "", "the okapi keeps the striped legs"))
        v.sync()
        found = v.search("okapi striped legs", k=3)
        assert found[0].path == "people/okapi.md"
    # a new process reads where it lives at its open, as before
    with open_vault(root) as v:
        assert [(h.path, h.line_start) for h in v.search("which database did we choose", k=5)] == (
            before
        )
