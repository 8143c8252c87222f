"""The HTTP API (docs/HTTP.md), in-process, plus one round trip over real uvicorn."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import socket
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from attacks import ATTACKS
from helpers import escaping_vault, note, open_vault, write
from memvault import __version__
from memvault import errors as E
from memvault.api import Vault
from memvault.service.daemon import HttpServer
from memvault.service.http_api import STATUS_FIELDS, create_app
from memvault.service.http_schema import openapi_schema

PORT = 48123
TOKEN = "t0k3n-for-tests-" + "x" * 27
AUTH = {"Authorization": f"Bearer {TOKEN}"}
INFO = {"state": "watching", "pid": 1, "port": PORT, "queue": 0, "lag_seconds": None}


def files_outside(tmp_path: Path, vault_root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        if Path(dirpath) == tmp_path:
            dirnames[:] = [d for d in dirnames if d != vault_root.name]
        for name in filenames:
            p = Path(dirpath) / name
            out[str(p)] = p.read_bytes()
    return out


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    """A vault with a secret beside it, a sibling 'vault-evil' and symlinks leading out."""
    root = escaping_vault(tmp_path)
    write(root, "people/ana.md", note("Ana Lopez", "our designer", "## Work\n\nDraws kiwis."))
    with open_vault(root) as v:
        v.sync()
        yield v


@pytest.fixture
def app(vault: Vault) -> Any:
    app = create_app(
        vault,
        TOKEN,
        lambda: dict(INFO),
        port=PORT,
        max_request_bytes=10_000,
        keepalive_seconds=0.05,
    )
    yield app
    app.state.close()


@pytest.fixture
def client(app: Any) -> Iterator[TestClient]:
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}", headers=AUTH) as c:
        yield c


def err(response: httpx.Response) -> tuple[int, str]:
    body = response.json()
    assert set(body) == {"error"} and {"type", "message"} <= set(body["error"])
    # more only where a client can act on it: the note that exists, and that update changes
    # it; the notes an ambiguous name has
    assert set(body["error"]) - {"type", "message"} <= {"path", "updatable", "candidates"}
    return response.status_code, body["error"]["type"]


# -- routes ---------------------------------------------------------------------------------------


def test_health_needs_no_token(app: Any) -> None:
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as c:
        r = c.get("/health")
    assert r.status_code == 200 and r.json() == {"ok": True, "version": __version__}


def test_status_has_the_vault_and_the_daemon(client: TestClient) -> None:
    data = client.get("/status").json()
    assert data["notes"] >= 5 and data["daemon"] == INFO and "index" in data


def test_search_returns_hits_with_addresses(client: TestClient) -> None:
    r = client.post("/search", json={"query": "kiwis", "k": 3, "folder": "people"})
    assert r.status_code == 200
    hits = r.json()["hits"]
    assert hits and hits[0]["path"] == "people/ana.md"
    assert {
        "path",
        "title",
        "heading",
        "line_start",
        "line_end",
        "snippet",
        "score",
        "text",
        "address",
    } <= set(hits[0])
    assert hits[0]["address"].startswith("[[people/ana")


def test_search_filters_and_group(client: TestClient) -> None:
    r = client.post(
        "/search",
        json={
            "query": "postgres",
            "group": True,
            "tags": [],
            "since": "2000-01-01",
            "where": {},
            "path": "decisions/*",
        },
    )
    assert r.status_code == 200
    paths = [h["path"] for h in r.json()["hits"]]
    assert paths and all(p.startswith("decisions/") for p in paths)
    assert len(paths) == len(set(paths))


def test_context_stays_within_budget(client: TestClient) -> None:
    r = client.post("/context", json={"query": "who draws kiwis", "budget": 300})
    body = r.json()
    assert r.status_code == 200 and body["tokens"] <= 300 and body["budget"] == 300
    assert {"query", "budget", "tokens", "text", "sources"} <= set(body)


def test_get_note_whole_section_and_lines(client: TestClient) -> None:
    whole = client.get("/notes/people/ana.md").json()
    assert whole["path"] == "people/ana.md" and "Draws kiwis." in whole["text"]
    section = client.get("/notes/people/ana.md", params={"heading": "Work"}).json()
    assert section["heading"] == "Work" and "kiwis" in section["text"]
    lines = client.get("/notes/people/ana.md", params={"lines": "1:2"}).json()
    assert (lines["line_start"], lines["line_end"]) == (1, 2)


def test_add_note_creates_then_updates(client: TestClient, vault: Vault) -> None:
    body = {
        "category": "people",
        "title": "Bo Li",
        "summary": "runs ops",
        "fields": {"role": "ops"},
        "body": "Keeps the lights on.",
    }
    r = client.post("/notes", json=body)
    assert r.status_code == 201 and r.json()["created"] and r.json()["path"] == "people/bo-li.md"
    assert "[[people/bo-li]]" in (vault.root / "MEMORY.md").read_text(encoding="utf-8")
    again = client.post("/notes", json=body)
    assert err(again) == (409, "NoteExists")
    # says how to change it in the API's own terms (it said "pass update": issue 13)
    assert again.json()["error"] == {
        "type": "NoteExists",
        "message": 'people/bo-li.md already exists (send "update": true to change it)',
        "path": "people/bo-li.md",
        "updatable": True,
    }
    r = client.post("/notes", json={**body, "summary": "runs infra", "update": True})
    assert r.status_code == 200 and not r.json()["created"]


def test_a_days_log_is_the_day_its_title_names_and_a_bad_date_is_refused(
    client: TestClient, vault: Vault
) -> None:
    """`POST /notes` to logs titled "2024-13-45" set the summary of today's log (and a
    title "2024-03-10" too): the day the title named was lost without a word. A day
    written YYYY-MM-DD is that day's log; a day written otherwise, or no real day, a 400
    naming the form, nothing written; a title naming no day is today's log, as before."""
    before = sorted(p.name for p in (vault.root / "logs").iterdir())
    for title in ("2024-13-45", "2024-02-30", "10.03.2024", "2024/03/10", "3/10/24"):
        r = client.post("/notes", json={"category": "logs", "title": title, "summary": "x"})
        assert err(r) == (400, "BadRequest"), (title, r.text)
        message = r.json()["error"]["message"]
        assert "YYYY-MM-DD" in message and repr(title) in message, message
    assert sorted(p.name for p in (vault.root / "logs").iterdir()) == before  # nothing written
    r = client.post("/notes", json={"category": "logs", "title": "2024-03-10", "summary": "kiwi"})
    assert r.status_code == 201 and r.json()["path"] == "logs/2024-03-10.md", r.text
    text = (vault.root / "logs" / "2024-03-10.md").read_text(encoding="utf-8")
    assert 'date: "2024-03-10"' in text and "# 2024-03-10" in text and "summary: kiwi" in text
    r = client.post("/notes", json={"category": "logs", "title": "Follow-up on 2024-03-11"})
    assert err(r) == (400, "BadRequest"), r.text  # that day's log, or today's about it?
    r = client.post("/notes", json={"category": "logs", "title": "Standup", "summary": "day"})
    today = dt.date.today().isoformat()
    assert r.status_code == 201 and r.json()["path"] == f"logs/{today}.md", r.text


def test_log_appends_to_today(client: TestClient, vault: Vault) -> None:
    r = client.post("/log", json={"text": "met the wombat team"})
    assert r.status_code == 200
    path = r.json()["path"]
    text = (vault.root / path).read_text(encoding="utf-8")
    assert path.startswith("logs/") and "wombat" in text
    # under the day's date, not under "## Follow-ups"; no template hint
    assert text.index("wombat") < text.index("## Follow-ups") and "%%" not in text


def test_a_write_the_system_refuses_says_which_file_and_why(
    client: TestClient, vault: Vault
) -> None:
    """The disk full, a folder made read-only: the answer was "internal error (OSError);
    see the daemon log" -- a log that may be on that same full disk."""
    from onnx_helpers import read_only

    r = client.post("/log", json={"text": "first entry of the day"})
    path = r.json()["path"]
    before = (vault.root / path).read_bytes()
    names = sorted(p.name for p in (vault.root / "logs").iterdir())
    with read_only(vault.root / "logs"):
        r = client.post("/log", json={"text": "an entry that cannot be written"})
    assert err(r) == (500, "OSError")
    message = r.json()["error"]["message"]
    assert (
        message.startswith(f"{path}: ") and os.strerror(1 if os.geteuid() == 0 else 13) in message
    )
    assert (vault.root / path).read_bytes() == before  # nothing half written, no temp left
    assert sorted(p.name for p in (vault.root / "logs").iterdir()) == names


def test_sync_all_and_some_paths(client: TestClient, vault: Vault) -> None:
    write(vault.root, "people/cy.md", note("Cy"))
    r = client.post("/sync", json={"paths": ["people/cy.md"]})
    assert r.status_code == 200 and r.json()["created"] == ["people/cy.md"]
    (vault.root / "people/cy.md").unlink()
    r = client.post("/sync", content=b"")
    assert r.status_code == 200 and r.json()["deleted"] == ["people/cy.md"] and r.json()["full"]


def test_related_notes(client: TestClient) -> None:
    r = client.get("/related", params={"path": "people/ana.md", "k": 2})
    assert r.status_code == 200
    hits = r.json()["hits"]
    assert 0 < len(hits) <= 2 and all(h["path"] != "people/ana.md" for h in hits)


def test_related_hits_name_the_heading_and_lines_and_leave_out_excluded_folders(
    vault: Vault, client: TestClient
) -> None:
    body = "## Kiwi drawings\n\nDraws kiwis and ferns for the {} team.\n"
    write(vault.root, "projects/kiwi.md", note("Kiwi", "kiwi art", body.format("project")))
    write(vault.root, "logs/2024-01-02.md", note("Log", "kiwi log", body.format("log")))
    write(vault.root, "logs/deep/old.md", note("Old", "old kiwi", body.format("old")))
    vault.sync()
    everything = client.get("/related", params={"path": "people/ana.md", "k": 10}).json()["hits"]
    assert {h["path"] for h in everything} >= {"projects/kiwi.md", "logs/2024-01-02.md"}
    kiwi = next(h for h in everything if h["path"] == "projects/kiwi.md")
    lines = (vault.root / "projects/kiwi.md").read_text(encoding="utf-8").splitlines()
    assert (
        kiwi["heading"][-1] == "Kiwi drawings"
        and kiwi["address"] == "[[projects/kiwi#Kiwi drawings]]"
    )
    assert lines[kiwi["line_start"] - 1] == "## Kiwi drawings"  # 1-based, as in the file

    r = client.get("/related", params=[("path", "people/ana.md"), ("exclude", "logs")])
    assert r.status_code == 200
    paths = {h["path"] for h in r.json()["hits"]}
    assert "projects/kiwi.md" in paths and not any(p.startswith("logs/") for p in paths)
    two = [("path", "people/ana.md"), ("exclude", "logs/"), ("exclude", "projects")]
    paths = {h["path"] for h in client.get("/related", params=two).json()["hits"]}
    assert not any(p.startswith(("logs/", "projects/")) for p in paths)
    # a folder name is matched whole: "log" does not leave out "logs/"
    paths = {
        h["path"]
        for h in client.get("/related", params=[*two[:1], ("exclude", "log")]).json()["hits"]
    }
    assert "logs/2024-01-02.md" in paths
    bad = client.get("/related", params=[("path", "people/ana.md"), ("exclude", "../x")])
    assert err(bad) == (400, "UnsafePath")


def test_openapi_describes_exactly_the_routes(client: TestClient, app: Any) -> None:
    doc = client.get("/openapi.json").json()
    assert doc == json.loads(json.dumps(openapi_schema()))
    assert doc["openapi"].startswith("3.1")
    routes = {r.path.replace("{path:path}", "{path}") for r in app.routes}
    assert set(doc["paths"]) == routes
    assert (
        doc["paths"]["/search"]["post"]["requestBody"]["content"]["application/json"]["schema"][
            "additionalProperties"
        ]
        is False
    )


# -- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"query": NaN}', "not valid JSON"),
        (b'{"query": "x", "colour": "red"}', "unknown field 'colour'"),
        (b'{"k": 3}', "missing field 'query'"),
        (b'{"query": 1}', "'query' must be a string"),
        (b'{"query": "x", "k": "5"}', "'k' must be a whole number"),
        (b'{"query": "x", "k": true}', "'k' must be a whole number"),
        (b'{"query": "x", "k": 0}', "between 1 and 100"),
        (b'{"query": "x", "k": 101}', "between 1 and 100"),
        (b'{"query": "x", "tags": "a"}', "list of strings"),
        (b'{"query": "x", "where": {"a": 1}}', "object of strings"),
        (b'{"query": "x", "group": "yes"}', "true or false"),
        (b'{"query": "x", "since": "last week"}', "date like"),
        (b'{"query": "   "}', "empty"),
        (b"\xff\xfe", "not valid JSON"),
    ],
)
def test_bad_requests_are_400_with_a_message(client: TestClient, body: bytes, needle: str) -> None:
    r = client.post("/search", content=body, headers={"Content-Type": "application/json"})
    assert err(r) == (400, "BadRequest")
    assert needle in r.json()["error"]["message"]


def test_unknown_query_parameter_is_400(client: TestClient) -> None:
    assert err(client.get("/notes/people/ana.md", params={"colour": "red"}))[0] == 400
    assert err(client.get("/related", params={"path": "people/ana.md", "k": "many"}))[0] == 400


def test_not_found_unknown_route_and_wrong_method(client: TestClient) -> None:
    assert err(client.get("/notes/people/nobody.md")) == (404, "NoteNotFound")
    assert err(client.get("/notes/people/ana.md", params={"heading": "Nope"})) == (
        404,
        "NoteNotFound",
    )
    assert err(client.get("/nowhere")) == (404, "NotFound")
    r = client.get("/search")
    assert err(r) == (405, "MethodNotAllowed") and "POST" in r.headers["allow"]


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (E.ModelError("no model"), 503),
        (E.IndexCorrupt("bad index"), 503),
        (E.WriteConflict("busy"), 409),
        (E.MemoryFileError("unclosed section"), 409),
        (RuntimeError("a bug"), 500),
    ],
)
def test_library_errors_map_to_statuses_and_the_app_survives(
    client: TestClient,
    vault: Vault,
    monkeypatch: pytest.MonkeyPatch,
    exc: Exception,
    status: int,
) -> None:
    def broken(*a: Any, **k: Any) -> Any:
        raise exc

    monkeypatch.setattr(vault, "search", broken)
    r = client.post("/search", json={"query": "x"})
    kind = "InternalError" if status == 500 else type(exc).__name__
    assert err(r) == (status, kind)
    if status == 500:
        assert "a bug" not in r.json()["error"]["message"]  # details go to the log
    monkeypatch.undo()
    assert client.post("/search", json={"query": "kiwis"}).status_code == 200


# -- the guard ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": TOKEN},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": f"Bearer {TOKEN}x"},
    ],
)
def test_missing_or_wrong_token_is_401(app: Any, headers: dict[str, str]) -> None:
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}", headers=headers) as c:
        for r in (
            c.get("/status"),
            c.post("/search", json={"query": "x"}),
            c.get("/events"),
            c.get("/nowhere"),
            c.get("/openapi.json"),
        ):
            assert err(r) == (401, "Unauthorized")
            assert r.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "host",
    [
        "evil.com",
        "127.0.0.1.evil.com",
        f"127.0.0.1.evil.com:{PORT}",
        "127.0.0.1",
        f"127.0.0.1:{PORT + 1}",
        f"evil.com:{PORT}",
        f"localhost.evil.com:{PORT}",
        "",
    ],
)
def test_foreign_host_is_403_even_for_health(client: TestClient, host: str) -> None:
    for r in (
        client.get("/health", headers={"Host": host}),
        client.post("/search", json={"query": "x"}, headers={"Host": host}),
    ):
        assert err(r) == (403, "Forbidden")


@pytest.mark.parametrize(
    "host", [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"[::1]:{PORT}", f"LOCALHOST:{PORT}"]
)
def test_loopback_hosts_are_allowed(client: TestClient, host: str) -> None:
    assert client.get("/status", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.com",
        "null",
        "http://127.0.0.1",
        "app://obsidian.md.evil.com",
        "APP://OBSIDIAN.MD",
    ],
)
def test_foreign_origin_is_403(client: TestClient, origin: str) -> None:
    r = client.post("/search", json={"query": "x"}, headers={"Origin": origin})
    assert err(r) == (403, "Forbidden")
    assert "access-control-allow-origin" not in r.headers


def test_obsidian_origin_is_allowed_and_echoed_never_star(client: TestClient) -> None:
    r = client.post("/search", json={"query": "kiwis"}, headers={"Origin": "app://obsidian.md"})
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == "app://obsidian.md"
    plain = client.post("/search", json={"query": "kiwis"})
    assert "access-control-allow-origin" not in plain.headers
    pre = client.options(
        "/search", headers={"Origin": "app://obsidian.md", "Access-Control-Request-Method": "POST"}
    )
    assert pre.status_code == 204
    assert pre.headers["access-control-allow-origin"] == "app://obsidian.md"
    assert "Authorization" in pre.headers["access-control-allow-headers"]
    bad = client.get("/health", headers={"Origin": "app://obsidian.md"})
    assert bad.headers["access-control-allow-origin"] != "*"


def test_oversized_body_is_413_by_length_and_by_stream(client: TestClient) -> None:
    big = json.dumps({"query": "x" * 20_000}).encode()
    assert err(client.post("/search", content=big)) == (413, "RequestTooLarge")

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(30):
            yield b" " * 1000

    assert err(client.post("/search", content=chunks())) == (413, "RequestTooLarge")
    assert client.post("/search", json={"query": "kiwis"}).status_code == 200


# -- path traversal -------------------------------------------------------------------------------


def test_traversal_attacks_are_refused_everywhere(
    client: TestClient, vault: Vault, tmp_path: Path
) -> None:
    before = files_outside(tmp_path, vault.root)
    for attack in ATTACKS:
        # every byte escaped, dots too: a client would otherwise fold "/notes/.." to "/"
        quoted = urllib.parse.quote(attack, safe="").replace(".", "%2E")
        responses = [
            client.get(f"/notes/{quoted}"),
            client.get("/related", params={"path": attack}),
            client.post("/sync", json={"paths": [attack]}),
        ]
        for r in responses:
            assert r.status_code == 400, (attack, r.status_code, r.text)
            assert err(r)[1] in ("UnsafePath", "BadRequest"), (attack, r.text)
            assert "SECRET" not in r.text
    for category in ["../people", "/etc", "people/../..", "people\x00", ".memvault", ""]:
        r = client.post("/notes", json={"category": category, "title": "x"})
        assert err(r) == (400, "BadRequest"), category
    for name in ["../x", "a\nb", "a: b", "x/y", "", "title\n---"]:
        r = client.post(
            "/notes", json={"category": "people", "title": f"F {len(name)}", "fields": {name: "v"}}
        )
        assert err(r)[0] == 400, name
    r = client.post("/notes", json={"category": "people", "title": "../../../secret"})
    assert r.status_code == 201 and r.json()["path"] == "people/secret.md"
    r = client.post(
        "/notes",
        json={"category": "people", "title": "Val", "fields": {"note": "a\n---\nowned: yes"}},
    )
    assert r.status_code == 201
    text = (vault.root / r.json()["path"]).read_text(encoding="utf-8")
    assert "\nowned: yes" not in text  # the value stayed one YAML scalar
    assert files_outside(tmp_path, vault.root) == before


# -- server-sent events ---------------------------------------------------------------------------


async def _sse(app: Any, vault: Vault, until: str, write: bool) -> tuple[list[bytes], Any]:
    """Drive GET /events as a raw ASGI call; disconnect once ``until`` is seen."""
    disconnect = asyncio.Event()
    chunks: list[bytes] = []
    done = asyncio.Event()
    loop = asyncio.get_running_loop()

    async def receive() -> dict[str, Any]:
        await disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            assert message["status"] == 200
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            joined = b"".join(chunks)
            if b": connected" in joined and write and not done.is_set():
                done.set()
                loop.run_in_executor(None, lambda: vault.add("people", "Sse Sam"))
            if until.encode() in joined:
                disconnect.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/events",
        "raw_path": b"/events",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", f"127.0.0.1:{PORT}".encode()),
            (b"authorization", f"Bearer {TOKEN}".encode()),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", PORT),
    }
    await asyncio.wait_for(app(scope, receive, send), 20)
    return chunks, app.state.hub


async def _drive(app: Any, on_text: Callable[[str], bool]) -> str:
    """GET /events as a raw ASGI call; ``on_text(all text so far)`` -> True disconnects."""
    received = ""
    disconnect = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal received
        if message["type"] == "http.response.body":
            received += message.get("body", b"").decode()
            if on_text(received):
                disconnect.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/events",
        "raw_path": b"/events",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", f"127.0.0.1:{PORT}".encode()),
            (b"authorization", f"Bearer {TOKEN}".encode()),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", PORT),
    }
    await asyncio.wait_for(app(scope, receive, send), 20)
    return received


def test_events_stream_a_sync_and_clean_up_on_disconnect(app: Any, vault: Vault) -> None:
    chunks, hub = asyncio.run(_sse(app, vault, "event: sync", write=True))
    text = b"".join(chunks).decode()
    event = next(block for block in text.split("\n\n") if block.startswith("event: sync"))
    report = json.loads(event.split("data: ", 1)[1])
    assert report["created"] == ["people/sse-sam.md"]
    assert hub.clients == 0


def test_events_keep_alive_comments(app: Any, vault: Vault) -> None:
    chunks, hub = asyncio.run(_sse(app, vault, ": keep-alive", write=False))
    assert b": keep-alive\n\n" in b"".join(chunks) and hub.clients == 0


def _events(text: str, kind: str) -> list[dict[str, Any]]:
    blocks = [b for b in text.split("\n\n") if b.startswith(f"event: {kind}\n")]
    return [json.loads(b.split("data: ", 1)[1]) for b in blocks]


def test_events_start_with_the_daemons_status(app: Any, vault: Vault) -> None:
    chunks, hub = asyncio.run(_sse(app, vault, "event: status", write=False))
    text = b"".join(chunks).decode()
    assert text.startswith(": connected\n\nevent: status\n")
    [status] = _events(text, "status")
    assert set(status) == set(STATUS_FIELDS)
    assert status["state"] == "watching" and status["queue"] == 0 and status["lag_seconds"] is None
    assert hub.clients == 0


def test_events_send_status_on_a_nudge_only_when_it_changed(vault: Vault) -> None:
    info: dict[str, Any] = {"state": "watching", "queue": 0, "lag_seconds": None, "port": PORT}
    app = create_app(vault, TOKEN, lambda: dict(info), port=PORT, keepalive_seconds=0.3)
    hub = app.state.hub
    steps: list[str] = []

    def on_text(text: str) -> bool:
        statuses = text.count("event: status")
        if statuses == 1 and not steps:
            steps.append("same")
            hub.nudge()  # nothing changed: nothing is sent (the keep-alive comes next)
        elif ": keep-alive" in text and steps == ["same"]:
            steps.append("changed")
            assert statuses == 1
            info.update(state="indexing", progress={"done": 3, "total": 120, "embedded": 9})
            hub.nudge()
            hub.nudge()  # two nudges before the stream reads them: one status
        elif statuses == 2 and steps == ["same", "changed"]:
            steps.append("idle")
            info.update(state="watching", progress=None)
            hub.nudge()
        return statuses == 3

    try:
        text = asyncio.run(_drive(app, on_text))
    finally:
        app.state.close()
    statuses = _events(text, "status")
    assert [s["state"] for s in statuses] == ["watching", "indexing", "watching"]
    assert statuses[1]["progress"] == {"done": 3, "total": 120, "embedded": 9}
    assert text.count("event: status") == 3 and hub.clients == 0


def test_events_resend_the_status_while_the_daemon_is_busy(vault: Vault) -> None:
    """Lag grows without anything happening: a busy daemon's status is re-read each tick."""
    ticks = iter(range(1, 1000))
    app = create_app(
        vault,
        TOKEN,
        lambda: {"state": "watching", "queue": 1, "lag_seconds": float(next(ticks))},
        port=PORT,
        keepalive_seconds=30,
        busy_seconds=0.02,
    )
    try:
        chunks, _ = asyncio.run(_sse(app, vault, '"lag_seconds": 4.0', write=False))
    finally:
        app.state.close()
    lags = [s["lag_seconds"] for s in _events(b"".join(chunks).decode(), "status")]
    assert lags[:4] == [1.0, 2.0, 3.0, 4.0]


def test_events_stay_open_when_the_daemons_state_cannot_be_read(vault: Vault) -> None:
    """A status that raised (the index asked, its server gone) ended the stream mid-body:
    the client's read failed (`incomplete chunked read`) and the status bar lost it. It
    stays open, and the next nudge reads the state again."""
    away = [True]

    def info() -> dict[str, Any]:
        if away[0]:
            raise E.IndexUnavailable("cannot reach the index at postgresql://db/x")
        return {"state": "watching", "queue": 0, "lag_seconds": None, "port": PORT}

    app = create_app(vault, TOKEN, info, port=PORT, keepalive_seconds=0.05)
    hub = app.state.hub

    def on_text(text: str) -> bool:
        if text.count(": keep-alive") == 2 and away[0]:  # two looks failed: back
            away[0] = False
            hub.nudge()
        return "event: status" in text

    try:
        text = asyncio.run(_drive(app, on_text))
    finally:
        app.state.close()
    assert text.startswith(": connected\n\n: keep-alive\n\n: keep-alive\n\n"), text
    [status] = _events(text, "status")
    assert status["state"] == "watching" and hub.clients == 0


# -- one real server ------------------------------------------------------------------------------


def test_real_uvicorn_on_loopback(vault: Vault) -> None:
    server_port: list[int] = []
    app = create_app(vault, TOKEN, lambda: {"port": server_port[0]})
    server = HttpServer(app, "127.0.0.1", 0)
    server_port.append(server.port)
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        with httpx.Client(base_url=base, trust_env=False, timeout=10) as c:
            assert c.get("/health").json() == {"ok": True, "version": __version__}
            assert c.post("/search", json={"query": "kiwis"}).status_code == 401
            r = c.post("/search", json={"query": "kiwis"}, headers=AUTH)
            assert r.status_code == 200 and r.json()["hits"][0]["path"] == "people/ana.md"
    finally:
        app.state.close()
        server.stop()


def _closed_by_server(sock: socket.socket, timeout: float = 10.0) -> bool:
    """Whether the server ends this connection within ``timeout`` (EOF or reset)."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_a_connection_that_never_finishes_its_headers_is_closed(vault: Vault) -> None:
    server_port: list[int] = []
    app = create_app(vault, TOKEN, lambda: {"port": server_port[0]})
    server = HttpServer(app, "127.0.0.1", 0, header_seconds=0.5)
    server_port.append(server.port)
    server.start()
    try:
        slow = socket.create_connection(("127.0.0.1", server.port))
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and nothing more
        assert _closed_by_server(slow)
        slow.close()
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", trust_env=False) as c:
            assert c.get("/health").status_code == 200  # a whole request is served as ever
            threading.Event().wait(0.8)  # kept alive past the header deadline: still fine
            assert c.get("/health").status_code == 200
    finally:
        app.state.close()
        server.stop()


def test_past_the_connection_cap_the_oldest_idle_connection_makes_room(vault: Vault) -> None:
    server_port: list[int] = []
    app = create_app(vault, TOKEN, lambda: {"port": server_port[0]})
    server = HttpServer(app, "127.0.0.1", 0, max_connections=8)
    server_port.append(server.port)
    server.start()
    idle = []
    try:
        for _ in range(8):
            s = socket.create_connection(("127.0.0.1", server.port))
            s.sendall(b"GET /health HTTP/1.1\r\n")
            idle.append(s)
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", trust_env=False) as c:
            assert c.get("/health", timeout=10).status_code == 200
        assert _closed_by_server(idle[0])  # the oldest went
        assert not _closed_by_server(idle[-1], timeout=0.2)  # the newest stays
    finally:
        for s in idle:
            s.close()
        app.state.close()
        server.stop()


def test_a_body_that_trickles_is_refused_with_408(vault: Vault) -> None:
    server_port: list[int] = []
    app = create_app(vault, TOKEN, lambda: {"port": server_port[0]}, body_seconds=0.5)
    server = HttpServer(app, "127.0.0.1", 0)
    server_port.append(server.port)
    server.start()
    try:
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(
            f"POST /search HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            'Content-Length: 100\r\n\r\n{"query":'.encode()
        )
        s.settimeout(10)
        answer = b""
        while b"RequestTimeout" not in answer and (chunk := s.recv(4096)):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 408") and b"RequestTimeout" in answer
        s.close()
    finally:
        app.state.close()
        server.stop()


def test_status_serves_the_problems_kept_until_fixed(client: TestClient, vault: Vault) -> None:
    (vault.root / "notes").mkdir()
    (vault.root / "notes" / "binary.md").write_bytes(b"\x00\x01 binary")
    client.post("/sync", json={})
    client.post("/sync", json={})
    problems = {p["path"]: p for p in client.get("/status").json()["problems"]}
    assert problems["notes/binary.md"]["kind"] == "skipped"
    assert "binary" in problems["notes/binary.md"]["reason"]
    assert problems["escape-file.md"]["reason"] == "symlink leads outside the vault"


def test_a_query_parameter_given_twice_is_400_not_the_last_one_alone(vault: Vault) -> None:
    """``?lines=1:2&lines=5:6`` answered lines 5-6 alone, as if the first were not
    asked; a list parameter (``exclude``) still takes every one."""
    from helpers import TOKEN, running_daemon

    with running_daemon(vault) as port:
        base, auth = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {TOKEN}"}
        r = httpx.get(f"{base}/notes/people/ana.md?lines=1:2&lines=5:6", headers=auth)
        assert r.status_code == 400, r.text
        assert r.json()["error"] == {
            "type": "BadRequest",
            "message": "'lines' given more than once: give it once",
        }
        r = httpx.get(f"{base}/related?path=people/ana.md&k=1&k=5", headers=auth)
        assert r.status_code == 400 and "'k' given more than once" in r.text
        r = httpx.get(f"{base}/notes/people/ana.md?lines=1:2", headers=auth)
        assert r.status_code == 200 and r.json()["line_end"] == 2
        r = httpx.get(f"{base}/related?path=people/ana.md&exclude=a&exclude=b", headers=auth)
        assert r.status_code == 200, r.text
