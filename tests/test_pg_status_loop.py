"""The daemon's HTTP server answers while the index's PostgreSQL does not: its part of
/status and of the plugin's /events stream (the vector lane's count of chunks waiting:
a query) was read on the server's event loop, so an idle writer whose network to the
server stalled answered nothing, /health included, until that query's deadline
(``pg_timeout``). A server of the test's own (pgserver), the daemon as a process."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx

from helpers import DaemonProcess, daemon_idle, eventually, make_vault
from pg_helpers import StallProxy, fresh_schema, start_server, stop_server

TIMEOUT = 12  # pg_timeout: what the loop waited, before


def _get(info: dict[str, Any], path: str, timeout: float = 30) -> httpx.Response:
    return httpx.get(
        f"http://127.0.0.1:{info['port']}{path}",
        headers={"Authorization": f"Bearer {info['token']}"},
        timeout=timeout,
        trust_env=False,
    )


def test_health_answers_while_an_event_stream_waits_for_a_stalled_index(
    tmp_path: Path,
) -> None:
    own = start_server()
    proxy = StallProxy(own)
    try:
        settings = {
            "MEMVAULT_INDEX_STORE": "postgres",
            "MEMVAULT_INDEX_DSN": proxy.dsn(),
            "MEMVAULT_INDEX_SCHEMA": fresh_schema(own, "status-loop"),
            "MEMVAULT_INDEX_PG_TIMEOUT": str(TIMEOUT),
            "MEMVAULT_DAEMON_RECONCILE_SECONDS": "3600",
        }
        root = make_vault(tmp_path, "team")
        daemon = DaemonProcess(tmp_path, root, **settings)
        try:
            info = daemon.ready(answering=True)
            eventually(
                lambda: (
                    daemon_idle((d := _get(info, "/status").json())["daemon"]) and d["last_sync_at"]
                ),
                60,
                "the start-up sync, and nothing waiting",
            )
            proxy.stall()
            opened, streamed = threading.Event(), threading.Event()

            def stream() -> None:  # the plugin's stream: the daemon's state at its start
                try:
                    with httpx.stream(
                        "GET",
                        f"http://127.0.0.1:{info['port']}/events",
                        headers={"Authorization": f"Bearer {info['token']}"},
                        timeout=3 * TIMEOUT,
                        trust_env=False,
                    ) as s:
                        opened.set()
                        next(s.iter_lines())
                except httpx.HTTPError:
                    pass
                finally:
                    streamed.set()

            threading.Thread(target=stream, daemon=True).start()
            time.sleep(1.0)  # the stream's status asked of the stalled index
            assert not streamed.is_set()  # its status still waits on the stalled index
            # answered before that query's own deadline (pg_timeout), which is when a loop
            # blocked by it would serve anything again: a deadline, not a speed
            try:
                health = _get(info, "/health", timeout=TIMEOUT / 2)
            except httpx.TimeoutException:
                raise AssertionError("/health waited for the stalled index's query") from None
            assert health.status_code == 200
            status = _get(info, "/status", timeout=3 * TIMEOUT)
            assert status.status_code == 200, status.text
            assert status.json()["daemon"]["role"] == "writer"
            assert daemon.proc.poll() is None
        finally:
            proxy.close()
            assert daemon.stop() == 0, daemon.stderr[-3000:]
    finally:
        stop_server(own)
