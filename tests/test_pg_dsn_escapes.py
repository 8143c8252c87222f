"""A libpq key=value DSN whose bare value has a backslash escape (``password=se\\ cret``,
as libpq reads it: ``se cret``), a URI whose password holds ``#`` or ``?`` and one of a
list of hosts: taken, and the password shown nowhere. A real server
(pgserver, which trusts the socket: the password is not checked), the CLI as a process."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

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


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://ann:se#cret@db/team", "postgresql://ann:***@db/team"),  # libpq: se#cret
        (
            "postgresql://ann:se?cr@db/team?sslmode=require",
            "postgresql://ann:***@db/team?sslmode=require",
        ),
        ("postgresql://ann:p@ss@db/team", "postgresql://ann:***@db/team"),  # '@' not as %40
        ("postgres://ann:pw@h1:5432,h2:5433/team", "postgres://ann:***@h1:5432,h2:5433/team"),
        (
            "postgresql://[::1]:5432/team?user=a&password=x",
            "postgresql://[::1]:5432/team?user=a&password=***",
        ),
        ("postgresql://ann:@db/team", "postgresql://ann:@db/team"),  # none to hide
    ],
)
def test_a_uri_is_shown_as_written_but_its_password_as_libpq_reads_it(dsn: str, shown: str) -> None:
    """A field test: a password holding ``#`` or ``?`` (libpq takes both as written) was
    shown whole by `status`, errors and the log; a list of hosts (libpq's failover) was
    a traceback (the URI read by urllib, whose port is one number)."""
    assert redact(dsn) == shown


def test_a_list_of_hosts_with_an_odd_password_is_served_and_never_shown(
    tmp_path: Path, pg_server: Any
) -> None:
    """libpq's failover: the first host refuses, the second (the server's socket folder,
    percent-encoded) answers; `sync` and `status` work, and the password is nowhere."""
    folder = quote(socket_dir(pg_server), safe="")
    dsn = f"postgresql://postgres:se#cr?et@127.0.0.1:1,{folder}:5432/postgres"
    root = make_vault(tmp_path, "team")
    env = memvault_env(
        tmp_path,
        MEMVAULT_INDEX_STORE="postgres",
        MEMVAULT_INDEX_DSN=dsn,
        MEMVAULT_INDEX_SCHEMA=fresh_schema(pg_server, "dsn-hosts"),
    )
    synced = run_memvault("sync", "--vault", str(root), env=env)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    shown = run_memvault("status", "--vault", str(root), env=env)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f"postgresql://postgres:***@127.0.0.1:1,{folder}:5432/postgres" in shown.stdout
    assert "se#cr" not in shown.stdout + shown.stderr


def test_index_move_refuses_a_dsn_of_neither_form_as_the_settings_do(tmp_path: Path) -> None:
    """`index move --dsn mysql://...` (a careless paste) reached libpq and said `cannot
    reach the index at mysql://...: missing "=" after ...` (exit 7); config.toml's and
    $MEMVAULT_INDEX_DSN's are refused naming the two forms (exit 3): so is the flag's.
    Nothing written."""
    root = make_vault(tmp_path, "team")
    env = memvault_env(tmp_path)
    before = (root / ".memvault" / "config.toml").read_bytes()
    got = run_memvault("index", "move", "--to", "postgres", "--dsn", "mysql://u@db/team",
                       "--vault", str(root), env=env)  # fmt: skip
    assert got.returncode == 3, got.stdout + got.stderr
    assert "--dsn: a PostgreSQL connection string is needed" in got.stderr
    assert (root / ".memvault" / "config.toml").read_bytes() == before
