"""The HTTP server under the daemon's API: uvicorn in a thread, bounded.

Anyone on the machine can open a connection to the daemon's port, token or not.
An idle or trickling connection costs a file handle, and the daemon has a fixed
number of them (often 1,024) that the watcher, SQLite and the index also need.
So the server:

- holds at most ``max_connections`` connections; a new one past the cap pushes
  out the oldest connection that has no request in flight (an idle keep-alive,
  or one still sending its headers), so a real client always gets in;
- closes a connection whose request headers are not complete ``header_seconds``
  after it opened, or after its previous response (uvicorn itself has no such
  limit); the body has its own limit in ``http_api.Guard``;
- caps a request's headers at ``MAX_HEADER_BYTES`` however they arrive (h11's own
  limit applies only to headers still incomplete after a read, so up to a read's
  worth, 256 KB, went through in one piece): past it a 431, the connection then
  drained for up to ``LINGER_SECONDS`` before it closes, so that the client reads the
  answer rather than a reset; and caps idle keep-alive time;
- accepts at most ``BACKLOG`` connections per wake-up (asyncio accepts that many
  before any is handled), so a burst cannot use up the files before the cap acts;
- raises the process's soft limit on open files to its hard limit at start;
- answers a request whose client shut its sending side after it (``SHUT_WR``, as
  some proxies and HTTP/1.0 clients do; RFC 9112 9.6), then closes: asyncio closed
  such a connection at once, and an answer made in a worker thread was never sent.

uvicorn's main loop is also made quiet: it ticks once a second instead of ten
times, and is woken at once to stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import re
import resource
import socket
import threading
import time
from typing import Any

from memvault.errors import DaemonError

log = logging.getLogger("memvault.service")

MAX_CONNECTIONS = 256
HEADER_SECONDS = 10.0  # to send a request's headers, from connect or the last response
KEEPALIVE_SECONDS = 5  # an idle connection between requests
MAX_HEADER_BYTES = 16_384
LINGER_SECONDS = 2.0  # a refused request's rest read and dropped, so the answer arrives
_BLANK_LINE = re.compile(rb"\n\r?\n")  # the end of a head, as h11 finds it
# asyncio accepts up to ``backlog`` connections per wake-up before any is handled (or
# pushed out): the listen queue is kept short so that a burst cannot run out the files
BACKLOG = 128
FILES_RESERVED = 256  # open files kept for the vault (SQLite, inotify, logs, threads)


def raise_open_file_limit() -> int:
    """Raise the soft limit on open files to the hard one; return the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = max(soft, 65_536) if soft != resource.RLIM_INFINITY else 65_536
    if soft == resource.RLIM_INFINITY or soft >= hard:
        return int(hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return int(soft)


def connection_cap(open_files: int, wanted: int = MAX_CONNECTIONS) -> int:
    """How many connections fit beside what the vault itself needs."""
    return max(8, min(wanted, open_files - FILES_RESERVED - BACKLOG))


def guarded(base: type[asyncio.Protocol], cap: int, header_seconds: float) -> type:
    """uvicorn's HTTP protocol with the connection cap, the header deadline and the
    headers' size limit."""
    import h11

    class Guarded(base):  # type: ignore[valid-type, misc]
        _deadline: asyncio.TimerHandle | None = None
        _since = 0.0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._since = time.monotonic()
            self._arm()
            if len(self.connections) > cap:
                self._make_room()

        _refused = False

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return  # read and dropped: the 431 is sent, the connection closing
            super().data_received(data)
            if self._in_request():
                self._disarm()  # the headers are complete: the app has it now

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # each event h11 reads goes by the check: new data, a pipelined request, and
            # one read on within handle_events' loop (the answer sent before the body
            # was read, a 401: the next head came with the body, past the limit)
            read = self.conn.next_event

            def next_event() -> Any:
                if self._refused or self._head_too_large():
                    return h11.NEED_DATA  # (handle_events stops)
                return read()

            self.conn.next_event = next_event

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._since = time.monotonic()
            if self._half_closed and not self._in_request():  # (a pipelined one: answered)
                self._disarm()
                self.transport.close()  # nothing more can come: the answer flushed, then closed
                return
            self._arm()  # the next request's headers have the same deadline

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _in_request(self) -> bool:
            cycle = self.cycle
            return cycle is not None and not cycle.response_complete

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(header_seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if not self._in_request() and not self.transport.is_closing():
                self.transport.close()

        def _head_too_large(self) -> bool:
            """Whether the request head h11 is reading is past ``MAX_HEADER_BYTES``,
            complete or not; if so, answer 431 and close, reading the rest meanwhile."""
            if self.conn.their_state is not h11.IDLE:
                return False  # a body, or a connection done: not a head
            buf = self.conn.trailing_data[0].lstrip(b"\r\n")
            end = _BLANK_LINE.search(buf, 0, MAX_HEADER_BYTES)  # (it ends within)
            if end is not None or len(buf) <= MAX_HEADER_BYTES:
                return False
            self._refused = True
            self._disarm()
            body = json.dumps(
                {
                    "error": {
                        "type": "HeadersTooLarge",
                        "message": f"the request's headers are past {MAX_HEADER_BYTES} bytes",
                    }
                }
            ).encode()
            self.transport.write(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                b"content-type: application/json\r\nconnection: close\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(body), body)
            )
            with contextlib.suppress(OSError, RuntimeError, NotImplementedError):
                self.transport.write_eof()  # answered; the rest read and dropped meanwhile
            self.loop.call_later(LINGER_SECONDS, self.transport.close)
            if self.flow is not None:
                self.flow.resume_reading()  # (a pipelined request paused reading)
            return True

        _half_closed = False

        def eof_received(self) -> bool | None:
            if self._refused:
                self.transport.close()  # the client is done sending: no reset to fear
            elif self._unanswered() and self.conn.their_state in (h11.DONE, h11.MUST_CLOSE):
                # Sent its request, then shut its side (SHUT_WR: some proxies, HTTP/1.0
                # clients): RFC 9112 9.6 has it answered. asyncio closes a transport
                # whose protocol does not keep it open, and the answer of a request
                # still running (any endpoint in a worker thread) was never sent.
                self._half_closed = True
                return True  # the rest is written; closed once answered
            # (idle, or a head or body cut short: it can never be complete, closed now;
            # an answer under way, a stream (/events): its client gone as likely as
            # half-closed, it ends now, not at its next keep-alive's failed write)
            return super().eof_received()

        def _unanswered(self) -> bool:
            """A request in flight whose answer has not begun."""
            return self._in_request() and not self.cycle.response_started

        def _make_room(self) -> None:
            """Past the cap: close the oldest connection with no request in flight
            (this new one if every other is busy)."""
            open_ = [c for c in self.connections if not c.transport.is_closing()]
            if len(open_) <= cap:
                return  # the ones over the cap are closing already
            idle = [c for c in open_ if isinstance(c, Guarded) and not c._in_request()]
            victim = min(idle, key=lambda c: c._since) if idle else self
            victim._disarm()
            victim.transport.abort()  # no goodbye: it sent no complete request

    Guarded.__name__ = f"Guarded{base.__name__}"
    return Guarded


class HttpServer:
    """uvicorn in a thread. The socket is bound (and listening) in ``__init__``, so
    the port is known before daemon.json is written and early clients just wait
    in the backlog until uvicorn accepts them."""

    def __init__(
        self,
        app: Any,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_connections: int = MAX_CONNECTIONS,
        header_seconds: float = HEADER_SECONDS,
    ) -> None:
        import uvicorn
        from uvicorn.protocols.http.h11_impl import H11Protocol

        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.sock.bind(("localhost" if host == "localhost" else host, port))
            self.sock.listen(BACKLOG)
        except OSError as exc:
            self.sock.close()
            fix = (
                ": set daemon.port in .memvault/config.toml (or $MEMVAULT_DAEMON_PORT) to "
                "another port, or to 0 to have a free one picked"
                if port and exc.errno in (errno.EADDRINUSE, errno.EACCES)
                else ""
            )
            raise DaemonError(f"cannot listen on {host}:{port}: {exc.strerror}{fix}") from None
        self.host = host
        self.port: int = self.sock.getsockname()[1]
        self.max_connections = connection_cap(raise_open_file_limit(), max_connections)
        hub = getattr(getattr(app, "state", None), "hub", None)  # /events: half at most,
        if hub is not None:  # so that streams can never take every connection
            hub.max_streams = max(1, min(hub.max_streams, self.max_connections // 2))
        config = uvicorn.Config(
            app,
            http=guarded(H11Protocol, self.max_connections, header_seconds),
            log_config=None,
            access_log=False,
            lifespan="off",
            backlog=BACKLOG,
            timeout_graceful_shutdown=1,
            timeout_keep_alive=KEEPALIVE_SECONDS,
            h11_max_incomplete_event_size=MAX_HEADER_BYTES,
            log_level="warning",
        )
        self.server = _quiet_server(uvicorn.Server)(config)
        self._thread = threading.Thread(target=self._serve, name="memvault-http", daemon=True)

    def _serve(self) -> None:
        try:
            self.server.run(sockets=[self.sock])
        except Exception:
            log.exception("http: the server stopped with an error")

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 3.0) -> None:
        self.server.should_exit = True
        self.server.wake()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.sock.close()


def _quiet_server(base: type) -> Any:
    """uvicorn's main loop wakes ten times a second to look at ``should_exit``; an idle
    daemon should not. This one ticks once a second (the Date header's resolution)
    and is woken at once by ``wake()`` to stop."""

    class QuietServer(base):
        _loop: asyncio.AbstractEventLoop | None = None
        _wake: asyncio.Event | None = None

        async def main_loop(self) -> None:
            self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
            counter = 0  # a multiple of 10: on_tick refreshes the Date header every call
            while not await self.on_tick(counter):
                counter = (counter + 10) % 864000
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), 1.0)

        def wake(self) -> None:
            loop, event = self._loop, self._wake
            if loop is not None and event is not None:
                with contextlib.suppress(RuntimeError):  # the loop already closed
                    loop.call_soon_threadsafe(event.set)

    return QuietServer


__all__ = ["HttpServer", "connection_cap", "guarded", "raise_open_file_limit"]
