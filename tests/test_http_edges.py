"""The HTTP API's edges (docs/HTTP.md), over raw sockets to the daemon's real server
(service/http_server.HttpServer: uvicorn on loopback): the headers' size limit, a
request with no Host header, an empty ``heading=``."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import note, open_vault, write
from memvault.api import Vault
from memvault.service.http_api import create_app
from memvault.service.http_server import MAX_HEADER_BYTES, HttpServer

TOKEN = "t0k3n-for-edges-" + "x" * 27


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    root: Path = tmp_path_factory.mktemp("edges")
    write(root, "people/ana.md", note("Ana Lopez", "our designer", "## Work\n\nDraws kiwis."))
    with open_vault(root) as vault:
        vault.sync()
        yield from _serve(vault)


def _serve(vault: Vault) -> Iterator[int]:
    ports: list[int] = []
    app = create_app(vault, TOKEN, lambda: {"port": ports[0]})
    server = HttpServer(app, "127.0.0.1", 0)
    ports.append(server.port)
    server.start()
    try:
        yield server.port
    finally:
        app.state.close()
        server.stop()


def exchange(port: int, request: bytes, *, piece: int = 0) -> bytes:
    """Send ``request`` (in pieces of ``piece`` bytes with a pause between, or at once),
    then read the answer until the server closes; a reset before the answer is read
    raises, as it would for any client."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(15)
        if piece:
            for i in range(0, len(request), piece):
                s.sendall(request[i : i + piece])
                time.sleep(0.001)
        else:
            s.sendall(request)
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
