"""A team's writer upgraded while a reader runs (docs/TEAM.md): the reader read the
index's schema version once, at its open, and asked as that version keyed its rows ever
after. Another machine's newer memvault keys them anew (schema 14: a word in traditional
Chinese characters as simplified, Russian words with their stems): the reader asks as
the writer keys now; a schema newer than its code stops a reader daemon, as its start is
refused. A real server (pgserver), a real reader daemon."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from anyio.from_thread import start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from helpers import (
    TOKEN,
    DaemonProcess,
    eventually,
    make_vault,
    memvault_env,
    open_vault,
    run_memvault,
    running_daemon,
    write,
)
from keyword_helpers import by_keywords, pg_as_schema_13
from memvault.errors import IndexCorrupt, IndexTooNew
from memvault.index import pg_schema
from memvault.index.pg_writer import FOLLOW_SECONDS

MANUAL = "people/lin.md"
TEXT = "---\ntitle: Lin\n---\n# Lin\n\n林先生負責這本說明書的翻譯。\n"


@pytest.fixture
def team(tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The writer's vault, indexed in PostgreSQL, its index as a schema-13 writer left it."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path / "machine-a", "team")
    write(root, MANUAL, TEXT)
    with open_vault(root) as writer:
        writer.sync()
    pg_as_schema_13(pg_dsn, os.environ["MEMVAULT_INDEX_SCHEMA"])
    return root


def test_a_reader_asks_as_its_writer_keys_once_the_writer_upgraded(team: Path) -> None:
    """The reader opened on schema 13 finds 說明書 by its words; the writer's upgrade
    keys it 说明书. A ``Vault`` opened read-only in a process with no daemon (an agent's
    Python, the HTTP app) read the version once: asking 說明書 as written, it found the
    note no more, for as long as it lived. It looks again before a read once
    ``FOLLOW_SECONDS`` passed, as a reader daemon's tick does."""
    with open_vault(team, read_only=True) as reader:
        assert not reader.engine.store.stems
        assert by_keywords(reader, "說明書") == [MANUAL]
        with open_vault(team) as writer:  # a newer memvault's writer: schema 15
            assert writer.engine.store.meta("schema_version") == str(pg_schema.PG_SCHEMA_VERSION)
        time.sleep(FOLLOW_SECONDS)
        assert by_keywords(reader, "說明書") == [MANUAL]
        assert reader.engine.store.stems
        assert by_keywords(reader, "说明书") == [MANUAL]
        assert MANUAL in [h.path for h in reader.search("說明書", k=5)]


def test_an_open_vault_refuses_every_call_once_its_writer_is_newer_than_its_code(
    team: Path, pg_dsn: str
) -> None:
    """Another machine's writer upgraded past this memvault while a process holds a
    read-only ``Vault``: it answered from tables a newer memvault shapes, silently. Each
    call that reads the index is refused now, saying what to do; nothing is written."""
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    newer = pg_schema.PG_SCHEMA_VERSION + 1
    files = {p: p.read_bytes() for p in team.rglob("*") if p.is_file()}
    with open_vault(team, read_only=True) as reader:
        assert MANUAL in [h.path for h in reader.search("說明書", k=5)]
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(
                f"UPDATE \"{schema}\".meta SET value = %s WHERE key = 'schema_version'",
                (str(newer),),
            )
            before = conn.execute(f'SELECT key, value FROM "{schema}".meta ORDER BY key').fetchall()
        time.sleep(FOLLOW_SECONDS)
        for call in (
            lambda: reader.search("說明書", k=5),
            lambda: reader.context("說明書"),
            lambda: reader.search("translation", k=5),  # each call, not the first alone
            lambda: reader.related(MANUAL),
        ):
            with pytest.raises(IndexCorrupt) as refused:
                call()
            assert f"is version {newer}, newer than this memvault's" in str(refused.value)
            assert "upgrade memvault on this machine" in str(refused.value)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        after = conn.execute(f'SELECT key, value FROM "{schema}".meta ORDER BY key').fetchall()
    assert after == before
    assert {p: p.read_bytes() for p in team.rglob("*") if p.is_file()} == files


def test_a_read_beside_another_threads_look_at_the_writer_is_refused_too(
    team: Path, pg_dsn: str
) -> None:
    """The HTTP app beside no daemon answers requests in threads. One request's look at
    the writer's version (due every 2 s) waits for the store while another request
    reads: that read was let through unrefused (the look's own flag, shared by every
    thread, said "a look is under way, don't ask"), answering from tables a newer
    memvault shapes. Each read but the look's own is refused."""
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with open_vault(team, read_only=True) as reader:
        store = reader.engine.store
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(
                f"UPDATE \"{schema}\".meta SET value = %s WHERE key = 'schema_version'",
                (str(pg_schema.PG_SCHEMA_VERSION + 1),),
            )
        time.sleep(FOLLOW_SECONDS)
        with pytest.raises(IndexCorrupt):
            reader.search("說明書", k=5)  # the look: newer, refused
        time.sleep(FOLLOW_SECONDS)  # the next look due
        looked: list[BaseException] = []

        def look() -> None:  # another request's read, whose look waits for the store
            try:
                store.chunk_count()
            except BaseException as exc:
                looked.append(exc)

        with store._lock:  # this request's read holds the store meanwhile
            other = threading.Thread(target=look)
            other.start()
            eventually(lambda: len(store._lock._queue) == 1, 10)  # its look waits
            with pytest.raises(IndexCorrupt):
                reader.search("說明書", k=5)
        other.join(10)
        assert [type(e) for e in looked] == [IndexTooNew]


def _old_writer_daemon(dsn: str, schema: str) -> Any:
    """Another machine's writer daemon holding the index's lock (its session, as
    ``PgStore.take_writer_lock`` leaves it), of a memvault that does not upgrade it."""
    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("SELECT set_config('application_name', 'memvault daemon machine-a 4242', false)")
    conn.execute("SELECT pg_advisory_lock(%s)", (pg_schema.lock_key(schema, "writer"),))
    conn.execute(f'DELETE FROM "{schema}".writer')
    conn.execute(
        f'INSERT INTO "{schema}".writer(host, pid, since) VALUES(%s, %s, %s)',
        ("machine-a", 4242, time.time()),
    )
    return conn


def test_a_reader_daemon_stops_once_its_writer_is_newer_than_its_code(
    tmp_path: Path, team: Path, pg_dsn: str
) -> None:
    """Its start is refused on such an index (exit 7, `upgrade memvault on this
    machine`); it went on answering from tables a newer memvault shapes. A table dropped
    by hand meanwhile is no such end: the writer's next start builds it again."""
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    settings = {
        "MEMVAULT_INDEX_STORE": "postgres",
        "MEMVAULT_INDEX_DSN": pg_dsn,
        "MEMVAULT_INDEX_SCHEMA": schema,
    }
    copy = tmp_path / "machine-b" / "team"
    shutil.copytree(team, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    held = _old_writer_daemon(pg_dsn, schema)
    reader = DaemonProcess(tmp_path, copy, "up", str(copy), **settings, MEMVAULT_HOSTNAME="b")
    try:
        reader.ready(answering=True)
        assert "read-only: this is a reader of the index" in reader.stderr
        # a table dropped by hand is waited out (the writer builds it again), not an end
        held.execute(f'ALTER TABLE "{schema}".meta RENAME TO meta_gone')
        eventually(lambda: "lost a table" in reader.stderr, 30, "the reader to look")
        held.execute(f'ALTER TABLE "{schema}".meta_gone RENAME TO meta')
        assert reader.proc.poll() is None
        newer = pg_schema.PG_SCHEMA_VERSION + 1
        held.execute(
            f"UPDATE \"{schema}\".meta SET value = %s WHERE key = 'schema_version'", (str(newer),)
        )
        eventually(lambda: reader.proc.poll() is not None, 30, "the reader daemon to stop")
        assert reader.proc.returncode == 7
        assert f"is version {newer}, newer than this memvault's" in reader.stderr
        assert "upgrade memvault on this machine" in reader.stderr
    finally:
        reader.stop()
        held.close()


def _writer_upgraded(pg_dsn: str) -> int:
    """Another machine's newer memvault wrote the index: its schema version past ours."""
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    newer = pg_schema.PG_SCHEMA_VERSION + 1
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            f"UPDATE \"{schema}\".meta SET value = %s WHERE key = 'schema_version'", (str(newer),)
        )
    return newer


def _said_newer(message: str, newer: int) -> None:
    assert f"is version {newer}, newer than this memvault's" in message, message
    assert "upgrade memvault on this machine" in message, message


def test_status_answers_naming_the_versions_while_reads_are_refused(
    team: Path, pg_dsn: str, tmp_path: Path
) -> None:
    """A writer of a newer memvault on the team's index: opening a ``Vault`` here was
    refused, and so was `memvault status` (the error alone): nothing said what the
    vault holds or that this machine's memvault is the one behind. The open goes on now:
    status answers (the files, the versions, to upgrade; exit 7), each read and write is
    refused with the versions, and nothing is written."""
    newer = _writer_upgraded(pg_dsn)
    files = {p: p.read_bytes() for p in team.rglob("*") if p.is_file()}
    with open_vault(team, read_only=True) as reader:
        index = reader.status()["index"]
        assert index["too_new"]["version"] == newer
        assert index["too_new"]["ours"] == pg_schema.PG_SCHEMA_VERSION
        _said_newer(index["too_new"]["error"], newer)
        assert index["where"]["role"] == "reader"
        for call in (
            lambda: reader.search("說明書", k=5),
            lambda: reader.context("說明書"),
            lambda: reader.get(MANUAL),
            lambda: reader.related(MANUAL),
            lambda: reader.add("people", "Zed", body="Zed."),
            lambda: reader.sync(),
        ):
            with pytest.raises(IndexTooNew) as refused:
                call()
            _said_newer(str(refused.value), newer)
    env = memvault_env(tmp_path, **_team_env(pg_dsn))
    shown = run_memvault("status", "--vault", str(team), env=env)
    assert shown.returncode == 7, shown.stdout + shown.stderr
    said = " ".join(shown.stdout.split())
    assert f"written by a newer memvault (schema version {newer}" in said, said
    assert "upgrade memvault on this machine" in said, said
    assert "notes on disk: 6" in said, said  # the example notes and Lin
    data = json.loads(run_memvault("status", "--json", "--vault", str(team), env=env).stdout)
    assert data["index"]["too_new"]["version"] == newer
    searched = run_memvault("search", "說明書", "--vault", str(team), env=env)
    assert searched.returncode == 7
    _said_newer(" ".join(searched.stderr.split()), newer)
    assert {p: p.read_bytes() for p in team.rglob("*") if p.is_file()} == files


def test_the_http_app_beside_no_daemon_answers_status_once_its_writer_is_newer(
    team: Path, pg_dsn: str
) -> None:
    """The HTTP app over a ``Vault`` opened read-only (no daemon) while another machine's
    writer upgraded past it: every call was refused, `/status` included (HTTP 503).
    `/status` answers now (200, ``index.too_new``); a search is refused, 503, saying to
    upgrade. So does one opened after the upgrade."""
    with open_vault(team, read_only=True) as reader, running_daemon(reader) as port:
        newer = _writer_upgraded(pg_dsn)
        time.sleep(FOLLOW_SECONDS)  # its next look at the writer
        _http_says_newer(port, newer)
    with open_vault(team, read_only=True) as reader, running_daemon(reader) as port:
        _http_says_newer(port, newer)


def _http_says_newer(port: int, newer: int) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Host": f"127.0.0.1:{port}"}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as http:
        status = http.get("/status", timeout=30)
        assert status.status_code == 200, status.text
        assert status.json()["index"]["too_new"]["version"] == newer
        found = http.post("/search", json={"query": "說明書"}, timeout=30)
        assert found.status_code == 503, found.text
        _said_newer(found.json()["error"]["message"], newer)


def _team_env(pg_dsn: str) -> dict[str, str]:
    return {
        "MEMVAULT_INDEX_STORE": "postgres",
        "MEMVAULT_INDEX_DSN": pg_dsn,
        "MEMVAULT_INDEX_SCHEMA": os.environ["MEMVAULT_INDEX_SCHEMA"],
    }


def test_mcp_memory_status_answers_once_its_writer_is_newer(
    team: Path, pg_dsn: str, tmp_path: Path
) -> None:
    """The MCP server beside no daemon (the real client, the server a process): its
    memory_status was an error like every tool; it answers now, saying to upgrade, and
    memory_search is an error saying so."""
    newer = _writer_upgraded(pg_dsn)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memvault", "mcp", "--vault", str(team)],
        env=memvault_env(tmp_path, **_team_env(pg_dsn)),
        cwd=str(team.parent),
    )

    async def ask() -> tuple[Any, Any]:
        with (tmp_path / "mcp-stderr.log").open("w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                status = await s.call_tool("memory_status", {})
                found = await s.call_tool("memory_search", {"query": "說明書"})
                return status, found

    with start_blocking_portal() as portal:
        status, found = portal.call(ask)
    assert not status.is_error, status.content
    assert (status.structured_content or {})["index"]["too_new"]["version"] == newer
    assert found.is_error
    _said_newer(" ".join(c.text for c in found.content if hasattr(c, "text")), newer)
