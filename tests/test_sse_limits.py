"""Leaked /events streams never lock a real client out.

256 open streams (a plugin leaking reconnects) took every connection of the daemon:
`/health` was reset and `memvault log` exited 6 "Broken pipe". Streams are now capped
below the connection cap (half of it) and a new stream ends the oldest. A real uvicorn
on loopback (the daemon's HttpServer), real sockets; the hash embedder.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from helpers import make_vault, open_vault
from memvault.api import Vault
from memvault.service.daemon import HttpServer
from memvault.service.http_api import create_app
from memvault.service.http_server import MAX_CONNECTIONS

TOKEN = "sse-limits-token-" + "x" * 27
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with open_vault(make_vault(tmp_path)) as v:
        v.sync()
        yield v


def open_stream(port: int) -> socket.socket:
    """An /events stream that is connected (its first comment read), then never read."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(
        f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
    )
    got = b""
    while b": connected" not in got:
        chunk = s.recv(4096)
        assert chunk, got
        got += chunk
    return s


def ended(s: socket.socket, timeout: float) -> bool:
    """Whether the server ended this stream: its last chunk (``0\\r\\n\\r\\n``) or EOF."""
    s.settimeout(timeout)
    got = b""
    try:
        while chunk := s.recv(4096):
            got += chunk
            if got.endswith(b"0\r\n\r\n"):
                return True
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_more_streams_than_connections_leave_room_for_real_clients(vault: Vault) -> None:
    port: list[int] = []
    app = create_app(vault, TOKEN, lambda: {"port": port[0], "state": "watching"})
    server = HttpServer(app, "127.0.0.1", 0)
    port.append(server.port)
    server.start()
    streams: list[socket.socket] = []
    try:
        for _ in range(server.max_connections + 4):  # a leaking plugin: more than fit
            streams.append(open_stream(server.port))
        base = f"http://127.0.0.1:{server.port}"
        with httpx.Client(base_url=base, trust_env=False, timeout=10) as c:
            assert c.get("/health").status_code == 200
            r = c.post("/log", json={"text": "a real client got in"}, headers=AUTH)
            assert r.status_code == 200, r.text
        cap = app.state.hub.max_streams
        assert 0 < cap < server.max_connections <= MAX_CONNECTIONS
        assert app.state.hub.clients == cap
        assert ended(streams[0], 10)  # the oldest made room
        assert not ended(streams[-1], 0.3)  # the newest streams on
    finally:
        for s in streams:
            s.close()
        app.state.close()
        server.stop()
    logs = [p.read_text(encoding="utf-8") for p in (vault.root / "logs").glob("*.md")]
    assert any("a real client got in" in text for text in logs)
