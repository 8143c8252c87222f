"""Connections that hold a daemon's HTTP API without using it, against a running daemon.

    python bench/http_abuse.py VAULT [--idle 200] [--trickle 200] [--half 20]

Opens ``--idle`` connections that send nothing, ``--trickle`` that send a request's head
a byte a second (slowloris), then asks /health and POST /search as a client would, ``--half``
times each as a half-closed request (its head and body sent, then ``shutdown(SHUT_WR)``),
and says: the latency of the real requests (median, worst), whether each half-closed one
was answered, and the daemon's open files before, while the connections are held, and
once HEADER_SECONDS (10 s) have let them go.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import threading
import time
from pathlib import Path

import httpx


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _half_closed(port: int, token: str) -> bool:
    body = b'{"query": "orchard", "k": 3}'
    head = (
        f"POST /search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head + body)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out.startswith(b"HTTP/1.1 200")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault", type=Path)
    ap.add_argument("--idle", type=int, default=200)
    ap.add_argument("--trickle", type=int, default=200)
    ap.add_argument("--half", type=int, default=20)
    a = ap.parse_args()
    info = json.loads((a.vault / ".memvault" / "daemon.json").read_text())
    port, token, pid = info["port"], info["token"], info["pid"]
    before = _fds(pid)
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(a.idle)]
    trickle = [socket.create_connection(("127.0.0.1", port)) for _ in range(a.trickle)]
    stop = threading.Event()

    def trickling() -> None:
        head = f"GET /status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode()
        i = 0
        while not stop.is_set():
            for s in trickle:
                with contextlib.suppress(OSError):  # the server closed it
                    s.send(head[i : i + 1] if i < len(head) else b"a")
            i += 1
            stop.wait(1.0)

    t = threading.Thread(target=trickling, daemon=True)
    t.start()
    time.sleep(1.0)
    held = _fds(pid)
    client = httpx.Client(
        base_url=f"http://127.0.0.1:{port}",
        headers={"Authorization": f"Bearer {token}"},
        trust_env=False,
        timeout=30,
    )
    times = []
    for _ in range(20):
        started = time.perf_counter()
        client.get("/health").raise_for_status()
        client.post("/search", json={"query": "orchard", "k": 3}).raise_for_status()
        times.append(time.perf_counter() - started)
    answered = sum(_half_closed(port, token) for _ in range(a.half))
    time.sleep(12.0)  # past HEADER_SECONDS: the idle and trickling ones let go
    after = _fds(pid)
    stop.set()
    t.join()
    for s in idle + trickle:
        s.close()
    client.close()
    time.sleep(1.0)
    print(
        json.dumps(
            {
                "held_connections": a.idle + a.trickle,
                "health_plus_search_s": {
                    "median": round(statistics.median(times), 4),
                    "max": round(max(times), 4),
                },
                "half_closed_answered": f"{answered}/{a.half}",
                "daemon_fds": {
                    "before": before,
                    "held": held,
                    "after_12s": after,
                    "end": _fds(pid),
                },
            }
        )
    )


if __name__ == "__main__":
    main()
