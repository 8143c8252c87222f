"""A team's index (docs/TEAM.md) whose PostgreSQL server goes away under running daemons
and comes back: the daemons stay up and carry on unattended. A server of the test's own
(pgserver), the daemon as a real process, the CLI as a process."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import DaemonProcess, eventually, make_vault, note, run_memvault, write
from pg_helpers import fresh_schema, start_server, stop_server


def _stop(server: Any, mode: str) -> None:
    """``pg_ctl stop -m MODE`` as pgserver runs the server (its own user when root)."""
    import pgserver

    user = {"user": "pgserver"} if os.geteuid() == 0 else {}
    pgserver.pg_ctl(["-w", "stop", "-m", mode], pgdata=server.pgdata, **user)


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_a_writer_daemon_outlives_the_server_stopped_and_indexes_what_changed_meanwhile(
    tmp_path: Path, mode: str
) -> None:
    """A field test: `pg_ctl stop -m fast` under a writer daemon ended the daemon within
    2 s (its MEMORY.md catch-up, asked of the index on each tick, raised in the main
    thread); nothing indexed the notes written meanwhile until someone started it again."""
    own = start_server()
    try:
        settings = {
            "MEMVAULT_INDEX_STORE": "postgres",
            "MEMVAULT_INDEX_DSN": str(own.get_uri()),
            "MEMVAULT_INDEX_SCHEMA": fresh_schema(own, f"outage-{mode}"),
        }
        root = make_vault(tmp_path, "team")
        daemon = DaemonProcess(tmp_path, root, **settings)
        try:
            daemon.ready(answering=True)
            _stop(own, mode)
            write(root, "people/during.md", note("During", "", "wombat written while down"))
            time.sleep(6)  # three of the daemon's 2 s ticks with the server gone
            assert daemon.proc.poll() is None, daemon.stderr[-3000:]
            own.ensure_postgres_running()
            env = {**settings, "HOME": str(tmp_path / "home")}

            def found() -> bool:
                from helpers import memvault_env

                got = run_memvault(
                    "search", "wombat", "--vault", str(root), env=memvault_env(tmp_path, **env)
                )
                return got.returncode == 0 and "people/during.md" in got.stdout

            eventually(found, 90, "the note written while the server was down indexed")
            assert "[[people/during]]" in (root / "MEMORY.md").read_text(encoding="utf-8")
            assert daemon.proc.poll() is None
        finally:
            assert daemon.stop() == 0, daemon.stderr[-3000:]
    finally:
        stop_server(own)
