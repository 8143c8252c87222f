"""A team's database holds tables of its own in ``public`` named as the index's
(``notes``, ``chunks``, ``meta``, ...): memvault reads and writes its own schema only.
Its sessions' search_path was the vault's schema then pgvector's, ``public`` by
default: a statement naming a table whose own memvault had lost (dropped by hand, a
schema not made yet) reached the user's. A real server (pgserver), never a mock."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from helpers import make_vault, open_vault
from memvault.errors import IndexCorrupt

# the index's tables a team's application may well have in public, each with a row the
# user's own; made with the index's columns, so a statement meant for the index would run
USERS = ("notes", "chunks", "meta", "links", "writer", "embeddings", "vectors", "pending")
SECRET = "the user's own row: memvault never reads nor writes it"


def _rows(conn: psycopg.Connection) -> dict[str, list[Any]]:
    """Every row of the user's tables, and what the server counted of their writes."""
    got: dict[str, list[Any]] = {}
    for name in USERS:
        got[name] = sorted(map(repr, conn.execute(f"SELECT * FROM public.{name}").fetchall()))
    return got


@pytest.fixture
def users_tables(pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``public``'s tables of the index's names (their columns the index's, from a
    scratch index built first), a row of the user's in each; dropped after."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    scratch = schema + "_shape"
    monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", scratch)
    with open_vault(make_vault(tmp_path, "shape")) as v:
        v.sync()
    monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", schema)
    conn = psycopg.connect(pg_dsn, autocommit=True)
    for name in USERS:
        conn.execute(f'CREATE TABLE public.{name} (LIKE "{scratch}".{name} INCLUDING DEFAULTS)')
        conn.execute(f'INSERT INTO public.{name} SELECT * FROM "{scratch}".{name} LIMIT 1')
    conn.execute("UPDATE public.chunks SET text = %s", (SECRET,))
    conn.execute("UPDATE public.notes SET path = 'people/users-own.md'")
    conn.execute("UPDATE public.meta SET key = 'schema_version', value = '12'")
    conn.execute(f'DROP SCHEMA "{scratch}" CASCADE')
    try:
        yield conn
    finally:
        for name in USERS:
            conn.execute(f"DROP TABLE IF EXISTS public.{name}")
        conn.close()


def test_an_index_built_beside_a_users_public_tables_leaves_them_as_they_were(
    tmp_path: Path,
    pg_dsn: str,
    users_tables: psycopg.Connection,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A writer's first open (its schema not there yet: `SELECT ... FROM writer` read
    public's), its sync, search and status leave the user's tables as they were; every
    session memvault opens looks up names in its schema and the catalog alone, whatever
    the DSN's options say."""
    before = _rows(users_tables)
    root = make_vault(tmp_path, "team")
    with open_vault(root) as v:
        v.sync()
        hits = v.search("database choice", k=5)
        assert hits and all(SECRET not in h.text for h in hits)
        assert all(h.path != "people/users-own.md" for h in v.search("people", k=20))
        v.status()
        (path,) = v.engine.store._pg.conn.execute("SHOW search_path").fetchone()
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    assert path == f"{schema}, pg_catalog"
    assert _rows(users_tables) == before
    # a DSN whose options put public first, or PGOPTIONS, does not take memvault there
    for dsn, env in (
        (with_options(pg_dsn, "-c search_path=public"), ""),
        (pg_dsn, "-c search_path=public"),
    ):
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", dsn)
        monkeypatch.setenv("PGOPTIONS", env)
        with psycopg.connect(dsn) as theirs:  # what the options do to a session of theirs
            assert theirs.execute("SHOW search_path").fetchone() == ("public",)
        with open_vault(root) as v:
            (path,) = v.engine.store._pg.conn.execute("SHOW search_path").fetchone()
            assert [h.path for h in v.search("database choice", k=3)]
        assert path == f"{schema}, pg_catalog"
    assert _rows(users_tables) == before


def with_options(dsn: str, options: str) -> str:
    """``dsn`` (a URI) with libpq's ``options`` in its query."""
    from urllib.parse import quote

    return dsn + ("&" if "?" in dsn else "?") + "options=" + quote(options)


@pytest.mark.parametrize("table", ["chunks", "notes", "meta", "vectors"])
def test_an_index_table_dropped_by_hand_is_an_error_never_the_users_table(
    tmp_path: Path, pg_dsn: str, users_tables: psycopg.Connection, table: str
) -> None:
    """memvault's own ``chunks`` (``notes``, ...) dropped by hand: a search says the index
    lost a table (as tests/test_pg_outage.py's), it never answers from public's, and the
    writer's next open builds the index again in its own schema, public's untouched."""
    before = _rows(users_tables)
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    root = make_vault(tmp_path, "team")
    with open_vault(root) as v:
        v.sync()
        for build in list(v.engine.store.builds):  # its HNSW build (DDL) finished
            build.join()
        users_tables.execute(f'DROP TABLE "{schema}"."{table}" CASCADE')
        with pytest.raises(IndexCorrupt, match="lost a table"):
            v.search("database choice", k=3)
        with pytest.raises(IndexCorrupt, match="lost a table"):
            v.search("people", k=3)
        assert _rows(users_tables) == before
    with open_vault(root) as v:  # the writer again: built anew in its own schema
        v.sync()
        assert [h.path for h in v.search("database choice", k=3)]
        assert all(SECRET not in h.text for h in v.search("users own row memvault", k=10))
    assert _rows(users_tables) == before
