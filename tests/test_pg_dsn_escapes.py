"""A libpq key=value DSN whose bare value has a backslash escape (``password=se\\ cret``,
as libpq reads it: ``se cret``): taken, and its password shown nowhere. A real server
(pgserver, which trusts the socket: the password is not checked), the CLI as a process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import make_vault, memvault_env, run_memvault
from memvault.index.pg_conn import redact
from pg_helpers import fresh_schema, socket_dir


def test_a_key_value_dsn_with_an_escaped_space_in_a_bare_value_is_taken_and_hidden(
    tmp_path: Path, pg_server: Any
) -> None:
    """libpq takes ``\\`` before any character of a value, quoted or bare; a bare one was
    refused ("needs a PostgreSQL connection string"), and ``redact`` hid the password only
    up to the escaped space (``password=*** cret-tail``)."""
    dsn = (
        f"host={socket_dir(pg_server)} dbname=postgres user=postgres "
        r"password=se\ cret-tail"
    )
    assert "cret-tail" not in redact(dsn)
    root = make_vault(tmp_path, "team")
    env = memvault_env(
        tmp_path,
        MEMVAULT_INDEX_STORE="postgres",
        MEMVAULT_INDEX_DSN=dsn,
        MEMVAULT_INDEX_SCHEMA=fresh_schema(pg_server, "dsn-escapes"),
    )
    synced = run_memvault("sync", "--vault", str(root), env=env)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    shown = run_memvault("status", "--json", "--vault", str(root), env=env)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "cret-tail" not in shown.stdout + shown.stderr
