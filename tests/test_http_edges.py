"""The HTTP API's edges (docs/HTTP.md), over raw sockets to the daemon's real server
(service/http_server.HttpServer: uvicorn on loopback): the headers' size limit, a
request with no Host header, an empty ``heading=``."""

from __future__ import annotations

import socket
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers import note, open_vault, write
from memvault.api import Vault
from memvault.service.http_api import create_app
from memvault.service.http_server import HEADER_SECONDS, MAX_HEADER_BYTES, HttpServer

TOKEN = "t0k3n-for-edges-" + "x" * 27


@pytest.fixture(scope="module")
def edges_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root: Path = tmp_path_factory.mktemp("edges")
    body = "## Work\n\nDraws kiwis.\n\n## 工作 安排\n\n中文"
    write(root, "people/ana.md", note("Ana Lopez", "our designer", body))
    return root


@pytest.fixture(scope="module")
def port(edges_vault: Path) -> Iterator[int]:
    with open_vault(edges_vault) as vault:
        vault.sync()
        yield from _serve(vault)


def _serve(vault: Vault, header_seconds: float = HEADER_SECONDS) -> Iterator[int]:
    ports: list[int] = []
    app = create_app(vault, TOKEN, lambda: {"port": ports[0]})
    server = HttpServer(app, "127.0.0.1", 0, header_seconds=header_seconds)
    ports.append(server.port)
    server.start()
    try:
        yield server.port
    finally:
        app.state.close()
        server.stop()


def exchange(port: int, request: bytes, *, piece: int = 0, half_close: bool = True) -> bytes:
    """Send ``request`` (in pieces of ``piece`` bytes with a pause between, or at once),
    say it is all (``half_close``), then read the answer until the server closes; a
    reset before the answer is read raises, as it would for any client."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(15)
        if piece:
            for i in range(0, len(request), piece):
                s.sendall(request[i : i + piece])
                time.sleep(0.001)
        else:
            s.sendall(request)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
        return answer


def head(port: int, pad: int, path: str = "/health", version: str = "1.1") -> bytes:
    padding = f"X-Pad: {'a' * pad}\r\n" if pad else ""
    return f"GET {path} HTTP/{version}\r\nHost: 127.0.0.1:{port}\r\n{padding}\r\n".encode()


# -- the headers' size limit ----------------------------------------------------------------------


@pytest.mark.parametrize("piece", [0, 1000], ids=["at once", "in pieces"])
def test_headers_within_the_limit_are_served(port: int, piece: int) -> None:
    answer = exchange(port, head(port, MAX_HEADER_BYTES - 200), piece=piece)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]


@pytest.mark.parametrize("piece", [0, 1000], ids=["at once", "in pieces"])
@pytest.mark.parametrize("extra", [0, 1, 2, 3])
def test_the_limit_is_16384_bytes_to_the_blank_line_however_they_arrive(
    port: int, piece: int, extra: int
) -> None:
    """A head of 16,385 to 16,387 bytes was served (its end searched 3 bytes past the
    limit), at once or in pieces."""
    at_limit = head(port, MAX_HEADER_BYTES - len(head(port, 1)) + 1)
    assert len(at_limit) == MAX_HEADER_BYTES
    request = head(port, MAX_HEADER_BYTES - len(head(port, 1)) + 1 + extra)
    answer = exchange(port, request, piece=piece)
    assert answer.startswith(b"HTTP/1.1 431 " if extra else b"HTTP/1.1 200 "), answer[:100]


@pytest.mark.parametrize(
    ("pad", "piece"),
    [
        *((pad, 0) for pad in (MAX_HEADER_BYTES + 100, 60_000, 100_000, 300_000, 2_000_000)),
        *((pad, 1000) for pad in (MAX_HEADER_BYTES + 100, 60_000)),
    ],
)
def test_headers_past_the_limit_are_431_however_they_arrive(
    port: int, pad: int, piece: int
) -> None:
    """h11 limits only a head still incomplete after a read: up to ~64 KB sent at once
    were served, past ~200 KB the client got a reset instead of an answer."""
    answer = exchange(port, head(port, pad), piece=piece)
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer[:200]
    assert answer.endswith(
        b'{"error": {"type": "HeadersTooLarge", "message": '
        b'"the request\'s headers are past 16384 bytes"}}'
    )
    assert exchange(port, head(port, 0)).startswith(b"HTTP/1.1 200 ")  # the server is fine


def test_a_pipelined_request_past_the_limit_is_431_after_the_first_is_answered(
    port: int,
) -> None:
    answer = exchange(port, head(port, 0) + head(port, 100_000))
    first, _, rest = answer.partition(b'{"ok":true,"version"')
    assert first.startswith(b"HTTP/1.1 200 ")
    assert b"HTTP/1.1 431 " in rest and rest.count(b"HTTP/1.1 ") == 1


def test_a_request_past_the_limit_sent_with_the_body_of_one_already_answered_is_431(
    port: int,
) -> None:
    """A 401 is sent before the body is read; the next head came with that body, and
    h11 read it on within one call: 40 KB of headers were served (200)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(15)
        s.sendall(
            f"POST /sync HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 5\r\n\r\n".encode()
        )
        first = b""
        while b"\r\n\r\n" not in first or not first.rstrip().endswith(b"}"):
            first += s.recv(65536)
        assert first.startswith(b"HTTP/1.1 401 "), first[:200]
        s.sendall(b"hello" + head(port, 40_000))
        s.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]


# -- a request with no Host header ----------------------------------------------------------------


def test_http_1_0_without_a_host_is_served_and_still_needs_the_token(port: int) -> None:
    """HTTP/1.0 has no Host (curl -0, old probes): it got 403 even on /health. A browser
    always sends Host (DNS rebinding comes through one), so its absence is no attack;
    the token is still asked for."""
    health = exchange(port, b"GET /health HTTP/1.0\r\n\r\n")
    assert health.startswith(b"HTTP/1.1 200 ") and health.endswith(b'{"ok":true,"version":"0.1.0"}')
    status = exchange(port, b"GET /status HTTP/1.0\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 401 ") and b'"Unauthorized"' in status
    auth = f"GET /status HTTP/1.0\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()
    answer = exchange(port, auth, half_close=False)
    assert answer.startswith(b"HTTP/1.1 200 ") and b'"daemon"' in answer


@pytest.mark.parametrize(
    "request_",
    [
        b"GET /health HTTP/1.0\r\nHost: evil.com\r\n\r\n",  # a Host given must be ours
        b"GET /health HTTP/1.0\r\nHost: \r\n\r\n",
        b"GET /health HTTP/1.0\r\nHost: 127.0.0.1:1\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: evil.com\r\n\r\n",
    ],
)
def test_a_foreign_or_empty_host_is_still_403(port: int, request_: bytes) -> None:
    answer = exchange(port, request_)
    assert answer.startswith(b"HTTP/1.1 403 ") and b'"Forbidden"' in answer, answer[:200]


def test_http_1_1_without_a_host_is_400(port: int) -> None:
    """HTTP/1.1 requires Host (RFC 9112 3.2): the server refuses it before the API."""
    answer = exchange(port, b"GET /health HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ") and answer.endswith(
        b"Invalid HTTP request received."
    )


# -- an empty heading= ----------------------------------------------------------------------------


def _get(port: int, query: str) -> tuple[int, dict[str, Any]]:
    r = httpx.get(
        f"http://127.0.0.1:{port}/notes/people/ana.md?{query}",
        headers={"Authorization": f"Bearer {TOKEN}"},
        trust_env=False,
        timeout=30,
    )
    return r.status_code, r.json()


@pytest.mark.parametrize("query", ["heading=", "heading=%20%20", "lines=", "lines=&heading=Work"])
def test_an_empty_heading_or_lines_is_400_not_the_whole_note(port: int, query: str) -> None:
    """``heading=`` (a client's variable left empty) answered the whole note, as if
    asked for it: a caller reading one section got every other too."""
    status, body = _get(port, query)
    name = query.split("=")[0]
    assert (status, body["error"]["type"]) == (400, "BadRequest"), body
    assert body["error"]["message"] == (
        f"{name} is empty: give the {name} to read, or leave {name} out for the whole note"
    )


def test_a_heading_is_still_read_in_any_script(port: int) -> None:
    status, body = _get(port, "heading=" + urllib.parse.quote("工作 安排"))
    assert status == 200 and body["heading"] == "工作 安排" and body["text"].endswith("中文")
    status, body = _get(port, "heading=Work")
    assert status == 200 and body["text"] == "## Work\n\nDraws kiwis.\n"


def test_the_python_api_and_the_cli_refuse_an_empty_heading_alike(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from memvault import errors as E
    from memvault.interfaces.cli.app import app

    write(tmp_path, "people/ana.md", note("Ana Lopez", "our designer", "## Work\n\nDraws."))
    with open_vault(tmp_path) as vault:
        vault.sync()
        with pytest.raises(E.BadRequest, match="heading is empty"):
            vault.get("people/ana.md", heading="")
    result = CliRunner().invoke(
        app, ["get", "people/ana.md", "--heading", "", "--vault", str(tmp_path), "--json"]
    )
    assert result.exit_code == 2, result.output
    assert "heading is empty" in result.output
