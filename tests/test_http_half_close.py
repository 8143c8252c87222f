"""Clients that half-close, go silent or trickle, against the daemon's real HTTP server
(service/http_server.HttpServer: uvicorn on loopback), over raw sockets.

A client that sends its request and then shuts its sending side (``SHUT_WR``: some
proxies, HTTP/1.0 clients) is answered, as RFC 9112 9.6 has it: before, asyncio closed
the connection at the client's EOF, and a request answered in a worker thread (POST
/search, GET /status: every endpoint that reads the vault) got nothing at all. Idle and
trickling connections are let go at the header deadline and hold no file after it, the
server answering other clients meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from helpers import eventually, note, open_vault, write
from test_http_edges import TOKEN, _serve


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    root: Path = tmp_path_factory.mktemp("half")
    write(root, "people/ana.md", note("Ana Lopez", "our designer", "Draws kiwis in the orchard."))
    with open_vault(root) as vault:
        vault.sync()
        yield from _serve(vault, header_seconds=2.0)  # (the daemon's: 10 s)


def _search(port: int, version: str = "1.1", close: bool = False, cut: int = 0) -> bytes:
    body = json.dumps({"query": "kiwis orchard", "k": 3}).encode()
    head = (
        f"POST /search HTTP/{version}\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n"
    ).encode()
    return head + body[: len(body) - cut]


def _half_closed(port: int, request: bytes, within: float = 30) -> tuple[bytes, bool]:
    """Send, shut our side, read until the server closes: (the answer, whether it
    closed within ``within`` seconds rather than leaving us waiting)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(request)
        s.shutdown(socket.SHUT_WR)
        s.settimeout(within)
        answer = b""
        try:
            while chunk := s.recv(65536):
                answer += chunk
        except TimeoutError:
            return answer, False
        return answer, True


@pytest.mark.parametrize(
    ("version", "close"), [("1.1", False), ("1.1", True), ("1.0", False)],
    ids=["keep-alive", "connection-close", "http-1.0"],
)  # fmt: skip
def test_a_half_closed_search_is_answered_then_closed(port: int, version: str, close: bool) -> None:
    answer, closed = _half_closed(port, _search(port, version, close))
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    hits = json.loads(answer.split(b"\r\n\r\n", 1)[1])["hits"]
    assert hits and hits[0]["path"] == "people/ana.md"
    assert closed  # then closed: nothing more can come


def test_half_closed_status_and_a_pipelined_pair_are_answered(port: int) -> None:
    status = (
        f"GET /status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
    ).encode()
    answer, closed = _half_closed(port, status + _search(port))
    assert answer.count(b"HTTP/1.1 200 OK") == 2 and closed, answer[:300]


def test_a_body_cut_short_by_the_half_close_is_closed_at_once(port: int) -> None:
    """Its body can never be complete: closed now, not after the body's 30 s."""
    started = time.monotonic()
    answer, closed = _half_closed(port, _search(port, cut=5), within=60)
    assert closed and not answer.startswith(b"HTTP/1.1 200")
    assert time.monotonic() - started < 20  # (the body's limit is 30 s)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_idle_and_trickling_connections_never_hold_the_server(port: int) -> None:
    """200 silent connections and 50 sending a head a byte at a time: another client is
    answered meanwhile, and once the header deadline (2 s here) passed every one of them
    has been closed by the server, its file let go (this process holds both ends)."""
    before = _open_fds()
    silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(200)]
    trickling = [socket.create_connection(("127.0.0.1", port)) for _ in range(50)]
    try:
        for s in trickling:
            s.sendall(b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        with httpx.Client(trust_env=False, timeout=30) as client:
            r = client.post(
                f"http://127.0.0.1:{port}/search",
                json={"query": "kiwis", "k": 3},
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
            assert r.status_code == 200 and r.json()["hits"]
        for s in trickling:  # a byte more: still within the deadline
            s.sendall(b"a")

        def all_closed() -> bool:
            for s in silent + trickling:
                s.settimeout(0.01)
                try:
                    if s.recv(1) != b"":
                        return False
                except TimeoutError:
                    return False
                except OSError:  # reset: closed too
                    pass
            return True

        eventually(all_closed, 60, "the server to close every idle connection")
    finally:
        for s in silent + trickling:
            s.close()
    eventually(lambda: _open_fds() <= before, 30, "the server's files let go")


def _server_holds(port: int, client_port: int) -> bool:
    """Whether the server's end of the connection from ``client_port`` is still open
    (ESTABLISHED, or CLOSE_WAIT: the client gone, the server not closed yet)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, state = fields[1], fields[2], fields[3]
        if (
            int(local.split(":")[1], 16) == port
            and int(remote.split(":")[1], 16) == client_port
            and state in ("01", "08")
        ):
            return True
    return False


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads /proc/net/tcp")
def test_a_stream_whose_client_went_away_ends_at_once(port: int) -> None:
    """A client of /events that closes its connection (its end is an EOF, as a
    half-close is): the stream, its answer under way, ends at once, as before the
    half-close was answered; it held its connection and its place among the streams
    (128, the oldest pushed out) until its next keep-alive (15 s)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(
            f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
        )
        s.settimeout(10)
        got = b""
        while b"event: status" not in got:
            got += s.recv(65536)
        s.settimeout(0.3)
        with contextlib.suppress(TimeoutError):
            while s.recv(65536):
                pass  # (all read: a close, not a reset)
        client_port = s.getsockname()[1]
        assert _server_holds(port, client_port)
    gone = time.monotonic() + 5  # (the keep-alive: 15 s)
    while _server_holds(port, client_port) and time.monotonic() < gone:
        time.sleep(0.05)
    assert not _server_holds(port, client_port)
