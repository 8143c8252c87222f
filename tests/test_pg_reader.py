"""A reader machine of a team's index (docs/TEAM.md): its HTTP API (the Obsidian
plugin's routes) over real uvicorn on loopback, and its MCP server as a real process
over stdio, answering from the shared PostgreSQL index while the writer holds the
lock: no local index, the same answers as the writer's; and a reader daemon
(`memvault up` there) beside a writer daemon, both real processes. A real server
(pgserver)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from anyio.from_thread import start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from helpers import (
    DaemonProcess,
    eventually,
    make_vault,
    memvault_env,
    note,
    open_vault,
    run_memvault,
    write,
)
from memvault.service.daemon import HttpServer
from memvault.service.http_api import create_app

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "r3ader-token-for-tests-" + "x" * 20
AUTH = {"Authorization": f"Bearer {TOKEN}"}
QUESTION = "which database did we choose and why"


@pytest.fixture
def team(tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The writer (this process, holding the vault's lock in PostgreSQL, synced) and a
    reader machine's copy of the files: ``.memvault/`` with no index in it."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    writer_root = make_vault(tmp_path, "team")
    reader_root = tmp_path / "reader-machine" / "team"
    with open_vault(writer_root) as writer:
        writer.sync()
        shutil.copytree(writer_root, reader_root, ignore=shutil.ignore_patterns(".memvault"))
        (reader_root / ".memvault").mkdir()
        yield writer, reader_root


def _no_local_index(root: Path) -> None:
    assert sorted(p.name for p in (root / ".memvault").iterdir() if p.is_file()) == []


def test_the_http_api_on_a_reader_serves_the_plugins_routes_from_the_shared_index(
    team: Any,
) -> None:
    writer, reader_root = team
    expected = [(h.path, h.line_start, h.line_end) for h in writer.search(QUESTION, k=5)]
    expected_context = writer.context(QUESTION, budget=400).text
    related = [h.path for h in writer.related("people/sarah-chen.md", k=3)]
    assert expected and related
    with open_vault(reader_root, mode="read") as reader:
        port: list[int] = []
        app = create_app(reader, TOKEN, lambda: {"port": port[0]})
        server = HttpServer(app, "127.0.0.1", 0)
        port.append(server.port)
        server.start()
        try:
            base = f"http://127.0.0.1:{server.port}"
            with httpx.Client(base_url=base, trust_env=False, timeout=30, headers=AUTH) as c:
                found = c.post("/search", json={"query": QUESTION, "k": 5})
                assert found.status_code == 200, found.text
                hits = found.json()["hits"]
                assert [(h["path"], h["line_start"], h["line_end"]) for h in hits] == expected
                ctx = c.post("/context", json={"query": QUESTION, "budget": 400})
                assert ctx.status_code == 200 and ctx.json()["text"] == expected_context
                near = c.get("/related", params={"path": "people/sarah-chen.md", "k": 3})
                assert near.status_code == 200
                assert [h["path"] for h in near.json()["hits"]] == related
                got = c.get("/notes/people/sarah-chen.md")
                assert got.status_code == 200 and "Sarah" in got.json()["text"]
                where = c.get("/status").json()["index"]["where"]
                assert where["store"] == "postgres" and where["role"] == "reader"
                assert where["writer"]["pid"] == os.getpid()  # the writer holds the lock
        finally:
            app.state.close()
            server.stop()
    _no_local_index(reader_root)


def test_a_reader_kept_open_sees_the_notes_the_writer_adds_after_it_opened(
    team: Any,
) -> None:
    """A reader never syncs: its note rows and link index follow the writer's syncs
    (its last_sync_at), so a note added after it opened has its title and metadata,
    and a filter by its tag or folder finds it."""
    writer, reader_root = team
    with open_vault(reader_root, mode="read") as reader:
        assert reader.engine.store.read_only
        assert not reader.search("zephyr queue retries", k=5, tags=["queue"])
        assert "decisions/zephyr.md" not in reader.engine.catalogue.notes()
        write(
            writer.root,
            "decisions/zephyr.md",
            note("Zephyr Queue", "we queue with zephyr", "Zephyr queue retries.", tags="[queue]"),
        )
        writer.sync()

        def found() -> Any:  # the reader looks at the writer's last sync every 0.5 s
            hits = reader.search("zephyr queue retries", k=5)
            return [h.title for h in hits if h.path == "decisions/zephyr.md"] == ["Zephyr Queue"]

        eventually(found, what="the reader finds the writer's new note, with its title")
        tagged = reader.search("zephyr queue retries", k=5, tags=["queue"])
        assert [h.path for h in tagged] == ["decisions/zephyr.md"]
        foldered = reader.search("zephyr queue retries", k=5, folder="decisions")
        assert "decisions/zephyr.md" in [h.path for h in foldered]


def test_the_mcp_server_on_a_reader_answers_from_the_shared_index(team: Any, pg_dsn: str) -> None:
    writer, reader_root = team
    expected = [h.path for h in writer.search(QUESTION, k=5)]
    assert expected
    env = {
        "PYTHONPATH": str(ROOT / "daemon"),
        "MEMVAULT_INDEX_MODEL": "hash",
        "MEMVAULT_INDEX_STORE": "postgres",
        "MEMVAULT_INDEX_DSN": pg_dsn,
        "MEMVAULT_INDEX_SCHEMA": os.environ["MEMVAULT_INDEX_SCHEMA"],
        "HF_HUB_OFFLINE": "1",
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memvault", "mcp", "--vault", str(reader_root)],
        env=env,
        cwd=str(reader_root.parent),
    )

    async def ask() -> dict[str, Any]:
        out: dict[str, Any] = {}
        with (reader_root.parent / "mcp-stderr.log").open("w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                for name, args in (
                    ("memory_search", {"query": QUESTION, "k": 5}),
                    ("memory_context", {"query": QUESTION, "budget": 400}),
                    ("memory_get", {"path": "people/sarah-chen.md"}),
                    ("memory_status", {}),
                ):
                    result = await s.call_tool(name, args)
                    text = "".join(
                        c.text for c in result.content if isinstance(c, types.TextContent)
                    )
                    assert not result.is_error, (name, text)
                    out[name] = result.structured_content or text
        return out

    with start_blocking_portal() as portal:
        got = portal.call(ask)
    assert [h["path"] for h in got["memory_search"]["hits"]] == expected
    context = got["memory_context"]
    context = context if isinstance(context, str) else context.get("result", "")
    assert f"[[{expected[0].removesuffix('.md')}" in context
    assert "Sarah" in got["memory_get"]["text"]
    where = got["memory_status"]["index"]["where"]
    assert where["store"] == "postgres" and where["role"] == "reader"
    _no_local_index(reader_root)


NOTE = """---
type: decision
---
# Queue choice

We chose the zephyrine broker for the job queue: it keeps ordering per tenant.
"""


def _client(info: dict[str, Any]) -> httpx.Client:
    return httpx.Client(
        base_url=f"http://127.0.0.1:{info['port']}",
        trust_env=False,
        timeout=30,
        headers={"Authorization": f"Bearer {info['token']}"},
    )


def test_up_on_a_reader_machine_serves_the_shared_index_read_only_beside_the_writer_daemon(
    tmp_path: Path, pg_dsn: str
) -> None:
    settings = {
        "MEMVAULT_INDEX_STORE": "postgres",
        "MEMVAULT_INDEX_DSN": pg_dsn,
        "MEMVAULT_INDEX_SCHEMA": os.environ["MEMVAULT_INDEX_SCHEMA"],
    }
    a = make_vault(tmp_path / "machine-a", "team")
    b = tmp_path / "machine-b" / "team"
    writer = DaemonProcess(tmp_path, a, **settings, MEMVAULT_HOSTNAME="machine-a")
    reader: DaemonProcess | None = None
    try:
        w_info = writer.ready(answering=True)  # the lock free: the writer, as ever
        (a / "decisions" / "queue-choice.md").write_text(NOTE, encoding="utf-8")
        with _client(w_info) as w:

            def indexed() -> bool:
                hits = w.post("/search", json={"query": "zephyrine broker", "k": 3}).json()
                return any(h["path"] == "decisions/queue-choice.md" for h in hits["hits"])

            eventually(indexed, 60, "the writer to index the new note")
            assert w.get("/status").json()["daemon"]["role"] == "writer"
        # the reader machine: the files (by git, a shared folder), no index of its own
        shutil.copytree(a, b, ignore=shutil.ignore_patterns(".memvault"))
        (b / ".memvault").mkdir()
        reader = DaemonProcess(tmp_path, b, "up", str(b), **settings, MEMVAULT_HOSTNAME="machine-b")
        r_info = reader.ready(answering=True)
        with _client(r_info) as r:
            found = r.post("/search", json={"query": "zephyrine broker", "k": 3})
            assert found.status_code == 200, found.text
            assert found.json()["hits"][0]["path"] == "decisions/queue-choice.md"
            ctx = r.post("/context", json={"query": "which broker for the job queue"})
            assert ctx.status_code == 200 and "zephyrine" in ctx.json()["text"]
            got = r.get("/notes/decisions/queue-choice.md")
            assert got.status_code == 200 and "zephyrine" in got.json()["text"]
            status = r.get("/status").json()
            assert status["daemon"]["role"] == "reader" and status["daemon"]["state"] == "reading"
            with r.stream("GET", "/events") as events:  # the plugin's status bar
                lines = events.iter_lines()
                first = next(line for line in lines if line.startswith("data: "))
                assert json.loads(first.removeprefix("data: "))["role"] == "reader"
            where = status["index"]["where"]
            assert where["role"] == "reader" and where["writer"]["pid"] == writer.proc.pid
            assert where["behind_seconds"] is not None
            # writes are refused, naming the writer; nothing is written on either side
            before_a = sorted(p.relative_to(a) for p in a.rglob("*.md"))
            before_b = {p: p.read_bytes() for p in b.rglob("*") if p.is_file()}
            for route, body in (
                ("/notes", {"category": "decisions", "title": "Reader write"}),
                ("/log", {"text": "from the reader"}),
                ("/sync", {}),
                ("/memory-tool", {"command": "create", "path": "/memories/x.md", "file_text": "x"}),
            ):
                refused = r.post(route, json=body)
                assert refused.status_code == 400, (route, refused.text)
                error = refused.json()["error"]
                assert error["type"] == "LockHeld", (route, error)
                assert f"pid {writer.proc.pid}" in error["message"], error
            # the CLI there goes through the reader daemon: reads answered, writes refused
            env = memvault_env(tmp_path, **settings)
            added = run_memvault(
                "add", "decisions", "--title", "CLI write", "--vault", str(b), env=env
            )
            assert added.returncode == 6, added.stderr
            assert "its writer is" in added.stderr and str(writer.proc.pid) in added.stderr
            state = run_memvault("daemon", "status", "--vault", str(b), env=env)
            assert state.returncode == 0 and "read-only (a reader)" in state.stdout, state
            searched = run_memvault("search", "zephyrine broker", "--vault", str(b), env=env)
            assert searched.returncode == 0 and "queue-choice" in searched.stdout, searched
            assert {p: p.read_bytes() for p in b.rglob("*") if p.is_file()} == before_b
            assert sorted(p.relative_to(a) for p in a.rglob("*.md")) == before_a
        assert "read-only: this is a reader of the index" in reader.stderr
        # this folder's lock (a daemon runs here: runfile's rule), daemon.json and the
        # ignore file that keeps them out of git: no index, no vectors
        state = [".gitignore", "daemon.json", "lock"]
        assert sorted(p.name for p in (b / ".memvault").iterdir()) == state
        with _client(w_info) as w:  # the writer still writes
            assert w.post("/log", json={"text": "from the writer"}).status_code == 200
        # the writer gone, the reader daemon stays one, and its status says so
        assert writer.stop() == 0
        said = run_memvault("status", "--vault", str(b), env=env)
        assert "(this process: reader daemon, which stays one: restart it" in said.stdout, said
        assert "writer: no writer running" in said.stdout, said
        assert reader.stop() == 0
        reader = None
        assert sorted(p.name for p in (b / ".memvault").iterdir()) == [".gitignore", "lock"]
    finally:
        if reader is not None:
            reader.stop()
        writer.stop()


def test_a_reader_a_pull_behind_is_told_so_by_get_and_status(
    team: Any, tmp_path: Path, pg_dsn: str
) -> None:
    """A field test: a note the writer indexed after the reader's last `git pull` was a
    search hit on the reader, and `get` of it said only "no note at ..."; the reader's
    `status` said "index is behind the files: N notes changed since the last sync", which
    a reader cannot sync. Now both say the copy's files are what differ."""
    from memvault.errors import NoteNotFound

    writer, reader_root = team
    write(writer.root, "decisions/zephyr.md", note("Zephyr Queue", "", "Zephyr queue retries."))
    writer.sync()
    with open_vault(reader_root, mode="read") as reader:
        hits = reader.search("zephyr queue retries", k=3)
        assert hits[0].path == "decisions/zephyr.md"
        for asked in ("decisions/zephyr.md", "decisions/zephyr", "Zephyr Queue"):
            with pytest.raises(NoteNotFound, match=r"shared index has it.*git pull"):
                reader.get(asked)
        with pytest.raises(NoteNotFound) as other:
            reader.get("decisions/never-written.md")
        assert "shared index" not in str(other.value)
    env = memvault_env(
        tmp_path,
        MEMVAULT_INDEX_STORE="postgres",
        MEMVAULT_INDEX_DSN=pg_dsn,
        MEMVAULT_INDEX_SCHEMA=os.environ["MEMVAULT_INDEX_SCHEMA"],
    )
    said = run_memvault("status", "--vault", str(reader_root), env=env)
    assert said.returncode == 0, said.stderr
    assert "this copy's files differ from the shared index in 2 notes" in said.stdout, said.stdout
    assert "index is behind the files" not in said.stdout
