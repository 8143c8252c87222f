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

            try:
                eventually(found, 90, "the note written while the server was down indexed")
            except AssertionError as exc:
                raise AssertionError(f"{exc}; the daemon's log: {daemon.stderr[-4000:]}") from None
            assert "[[people/during]]" in (root / "MEMORY.md").read_text(encoding="utf-8")
            assert daemon.proc.poll() is None
        finally:
            assert daemon.stop() == 0, daemon.stderr[-3000:]
    finally:
        stop_server(own)


def _terminate_memvaults(dsn: str) -> int:
    """``pg_terminate_backend`` of every memvault session of this process (an admin's
    clean-up, a pooler's restart): the sessions look alive to their clients until used."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        (n,) = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name LIKE %s",
            (f"memvault % {os.getpid()}",),
        ).fetchone()
    return int(n)


def test_the_first_search_after_the_sessions_were_terminated_answers(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field test: after `SELECT pg_terminate_backend(pid) ...` (or a server restart)
    a reader daemon's next search or status was HTTP 503 'terminating connection due to
    administrator command'; only the one after it answered."""
    import shutil

    from helpers import open_vault

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    writer_root = make_vault(tmp_path, "team")
    reader_root = tmp_path / "laptop" / "team"
    with open_vault(writer_root) as writer:
        writer.sync()
        shutil.copytree(writer_root, reader_root, ignore=shutil.ignore_patterns(".memvault"))
        (reader_root / ".memvault").mkdir()
        with open_vault(reader_root, mode="read") as reader:
            expected = [h.path for h in reader.search("database choice", k=3)]
            assert _terminate_memvaults(pg_dsn) >= 3  # the reader's, the writer's two
            assert [h.path for h in reader.search("database choice", k=3)] == expected
            assert [h.path for h in writer.search("database choice", k=3)] == expected
            writer.sync()  # its lock taken again with its connection: it still writes
            assert writer.status()["index"]["where"]["role"] == "writer"
            assert reader.status()["index"]["where"]["role"] == "reader"


def _terminate_lock_session(dsn: str) -> None:
    """End only the session holding the writer's advisory lock (the writer's other
    connection, the one it writes on, lives on)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        (n,) = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_locks "
            "WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()"
        ).fetchone()
    assert n == 1


def test_a_writer_whose_lock_session_alone_was_ended_takes_its_lock_again_before_writing(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field test: `pg_terminate_backend` of the writer daemon's lock session left its
    other connection writing with no lock; a daemon started on another clone took the
    free lock, and the two wrote the index at once (the second's start-up reconcile
    deleted the notes its clone lacked, the first indexed them again)."""
    import shutil

    from helpers import open_vault
    from memvault.errors import LockHeld

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path, "team")
    copy = tmp_path / "build-02" / "team"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    with open_vault(root) as first:
        first.sync()
        _terminate_lock_session(pg_dsn)
        write(root, "people/after.md", note("After", "", "written after the lock went"))
        first.sync()  # takes its lock again before it writes
        with pytest.raises(LockHeld):
            open_vault(copy, wait=0)
        _terminate_lock_session(pg_dsn)
        with open_vault(copy) as second:  # the lock free: the other clone took it first
            assert second._backend.writable
            write(root, "people/later.md", note("Later", "", "never indexed by the first"))
            with pytest.raises(LockHeld):
                first.sync()  # refused: its lock is another's now
            assert second.engine.store.note("people/later.md") is None
            assert second.engine.store.note("people/after.md") is not None


@pytest.mark.parametrize("table", ["vectors", "chunks", "meta", "embeddings"])
def test_a_table_dropped_by_hand_is_said_and_the_writers_next_open_builds_it_again(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch, table: str
) -> None:
    """A field test: `DROP TABLE memvault_team.vectors` under a running team: every sync
    and search failed with 'internal error (UndefinedTable)', and a restart of the
    writer did not help (its schema version was current, nothing made the table again)."""
    import psycopg

    from helpers import open_vault, rebuilt_snapshot, snapshot
    from memvault.errors import IndexCorrupt

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    root = make_vault(tmp_path, "team")
    with open_vault(root) as writer:
        writer.sync()
        for build in list(writer.engine.store.builds):  # its HNSW build (DDL) finished
            build.join()
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f'DROP TABLE "{schema}"."{table}" CASCADE')
        if table != "embeddings":  # the cache is not read by a search
            with pytest.raises(IndexCorrupt, match="restart its writer"):
                writer.search("database choice", k=3)
    with open_vault(root) as writer:  # the writer again: the index built anew
        writer.sync()
        assert [h.path for h in writer.search("database choice", k=3)]
        writer.engine.embed_pending()  # a lost cache: every chunk queued for the lane
        got = snapshot(writer)
    monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", fresh_schema_of(pg_dsn, f"dropped-{table}"))
    assert rebuilt_snapshot(root, tmp_path) == got


def fresh_schema_of(dsn: str, name: str) -> str:
    """``pg_helpers.fresh_schema`` for a DSN (the session's server)."""
    import hashlib

    import psycopg

    schema = "t_" + hashlib.sha256(name.encode()).hexdigest()[:16]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return schema


def test_a_writer_daemons_tick_after_a_restart_takes_its_lock_again_and_stays_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field test (`pg_ctl stop -m immediate`, 30 s, start): the daemon's tick, looking
    at its lock before any sync, took it on a new session; its main connection, opened
    again inside that, took it once more, found it held (by itself) and made the daemon
    read-only: `status` said "writer: no writer running" and nothing was indexed again."""
    from helpers import open_vault
    from memvault.errors import StorageError
    from pg_helpers import kill_server

    own = start_server()
    try:
        monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", str(own.get_uri()))
        monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", fresh_schema(own, "tick-retake"))
        root = make_vault(tmp_path, "team")
        with open_vault(root) as writer:
            writer.sync()
            store = writer.engine.store
            kill_server(own)
            with pytest.raises(StorageError):
                store.hold_writer_lock()  # a tick while the server is away
            own.ensure_postgres_running()
            store.hold_writer_lock()  # the first tick after: before any sync
            write(root, "people/after.md", note("After", "", "written after the restart"))
            writer.sync()
            assert writer.status()["index"]["where"]["role"] == "writer"
            assert [h.path for h in writer.search("written after the restart", k=1)] == [
                "people/after.md"
            ]
    finally:
        stop_server(own)


def test_a_write_through_the_daemon_while_the_server_is_away_is_indexed_once_it_is_back(
    tmp_path: Path,
) -> None:
    """A field test: `memvault log ...` through a writer daemon while PostgreSQL was down
    wrote the day's log and said "the next sync indexes it"; the next syncs (of other
    paths) did not, and the daemon's watcher skips its own writes: it stayed unindexed
    (and out of MEMORY.md) until the 5-minute reconcile."""
    from helpers import memvault_env
    from pg_helpers import kill_server

    own = start_server()
    try:
        settings = {
            "MEMVAULT_INDEX_STORE": "postgres",
            "MEMVAULT_INDEX_DSN": str(own.get_uri()),
            "MEMVAULT_INDEX_SCHEMA": fresh_schema(own, "write-away"),
            "MEMVAULT_DAEMON_RECONCILE_SECONDS": "3600",
        }
        root = make_vault(tmp_path, "team")
        env = memvault_env(tmp_path, **settings)
        daemon = DaemonProcess(tmp_path, root, **settings)
        try:
            daemon.ready(answering=True)
            first = run_memvault("log", "a first entry", "--vault", str(root), env=env)
            assert first.returncode == 0, first.stderr  # today's log is there: appended to
            time.sleep(3)  # the watcher's events of that write, if any, synced
            kill_server(own)
            said = run_memvault("log", "capybara outage entry", "--vault", str(root), env=env)
            assert said.returncode == 0 and "not indexed yet" in said.stderr, said.stderr
            own.ensure_postgres_running()

            last: list[Any] = []

            def found() -> bool:
                # among the logs alone: unfiltered, the entry's rank depends on the clock
                # (its HH:MM is in the chunk the hash model embeds; at 11:04 on 2026-12-06
                # it was 12th of the vault's 15 chunks, rc 0, nothing else wrong)
                got = run_memvault(
                    "search", "capybara", "--folder", "logs", "--vault", str(root), env=env
                )
                last[:] = [got]
                return got.returncode == 0 and "capybara outage entry" in got.stdout

            try:
                eventually(found, 90, "the log entry written while the server was away")
            except AssertionError as exc:
                got = last[0] if last else None
                said = "" if got is None else f"rc {got.returncode}: {got.stdout}{got.stderr}"
                raise AssertionError(
                    f"{exc}; the last search: {said[-2000:]}; the daemon's log: "
                    f"{daemon.stderr[-4000:]}"
                ) from None
        finally:
            assert daemon.stop() == 0, daemon.stderr[-3000:]
    finally:
        stop_server(own)


def test_two_machines_daemons_started_at_once_make_one_writer_and_one_reader(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field test: `memvault daemon start` on two clones at the same moment; the one
    that lost found the lock held by a daemon whose writer row was not written yet
    ("another process (a daemon)"), so it took it for no other machine's and exited,
    where a daemon of another machine makes it a reader (docs/TEAM.md)."""
    import threading

    import psycopg

    from helpers import open_vault
    from memvault.index import pg_schema

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    root = make_vault(tmp_path, "team")
    with open_vault(root) as first:
        first.sync()
    key = pg_schema.lock_key(schema, "writer")
    winner = psycopg.connect(pg_dsn, autocommit=True, application_name="memvault daemon b 77")
    try:  # machine b's daemon: the lock taken, its row still to come (after its migrate)
        winner.execute("SELECT pg_advisory_lock(%s)", (key,))
        winner.execute(f'DELETE FROM "{schema}".writer')

        def row_written() -> None:
            time.sleep(0.5)
            winner.execute(f'INSERT INTO "{schema}".writer VALUES (%s, %s, %s)', ("b", 77, 0.0))

        later = threading.Thread(target=row_written)
        later.start()
        monkeypatch.setenv("MEMVAULT_HOSTNAME", "a")
        try:
            with open_vault(root, through_daemon=False, reader=True, wait=0.0) as reader:
                assert reader.engine.store.read_only  # a reader of b's index, not refused
        finally:
            later.join()
    finally:
        winner.close()
