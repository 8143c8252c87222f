"""The daemon's local HTTP API (docs/HTTP.md): a Starlette app over one open ``Vault``.

Every request passes ``Guard`` first, a plain ASGI middleware (so streaming
responses stay untouched): the Host header must name loopback with the
daemon's port (DNS rebinding), an Origin other than ``app://obsidian.md`` is
refused, a bearer token is required (except ``GET /health``), and bodies are
capped by Content-Length *and* by the bytes actually received. Routes are a
few lines each: validate the JSON against a small schema (unknown fields and
wrong types are a 400), call the library in a worker thread (engine calls
block), and map memvault's errors to statuses. Anything unexpected is a JSON
500 and the daemon carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import secrets
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memvault import __version__
from memvault import errors as E
from memvault.api import Vault
from memvault.core.results import SyncReport
from memvault.service.http_schema import (
    CATEGORIES,
    FILTERS,
    ApiError,
    from_query,
    noted,
    openapi_schema,
    validate,
    with_note,
)
from memvault.vault.files import normalize_rel, safe_join

log = logging.getLogger("memvault.http")

OBSIDIAN_ORIGIN = "app://obsidian.md"
KEEPALIVE_SECONDS = 15.0
BODY_SECONDS = 30.0  # for a request's body to arrive, once its headers have
BUSY_SECONDS = 1.0  # while the daemon is busy, /events re-sends its status this often (lag grows)
EVENT_QUEUE = 256  # per SSE client; the oldest event is dropped when a client lags
MAX_STREAMS = 128  # /events at most (HttpServer: half its cap); a new one ends the oldest
STATUS_NUDGE = "\x00status"  # queued to say "the daemon's state may have changed"
# The daemon's state as `event: status` carries it: what a status bar shows.
STATUS_FIELDS = (
    "state",
    "role",  # writer, or reader: the index in PostgreSQL written elsewhere (docs/TEAM.md)
    "progress",
    "queue",
    "lag_seconds",
    "last_error",
    "model",
    "observer_alive",
    "failed_batches",
    "vectors",  # the vector lane: pending chunks, their lag, its progress
)


def error_response(
    status: int,
    kind: str,
    message: str,
    headers: Mapping[str, str] | None = None,
    **details: Any,
) -> JSONResponse:
    error = {"type": kind, "message": message, **details}
    return JSONResponse({"error": error}, status, headers=headers)


def _query(request: Request, schema: str) -> dict[str, Any]:
    return from_query(request.query_params.multi_items(), schema)


async def _body(request: Request, schema: str) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        data: Any = {}
    else:
        try:
            data = json.loads(raw, parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:
            raise ApiError(400, "BadRequest", f"the body is not valid JSON: {exc}") from None
    return validate(data, schema)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _safe(root: Path, path: str) -> str:
    """Refuse an unsafe path (symlinks leading out included) before the library
    sees it; the library checks again wherever it touches the disk."""
    safe_join(root, path)
    return normalize_rel(path)


def _filters(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in FILTERS if k in data}


Handler = Callable[[Request], Awaitable[Response]]


def _os_message(exc: OSError, root: Path) -> str:
    """``path: No space left on device``, the path relative to the vault when inside it."""
    name = "" if exc.filename is None else os.fsdecode(exc.filename)
    with contextlib.suppress(ValueError):
        rel = os.path.relpath(name, root) if name else ""
        name = rel if rel and not rel.startswith("..") else name
    return f"{name}: {exc.strerror}" if name else str(exc.strerror)


def _endpoint(fn: Handler) -> Handler:
    """Map errors to JSON responses: known ones to their status, the rest to 500."""

    async def wrapper(request: Request) -> Response:
        try:
            return await fn(request)
        except ApiError as exc:
            return error_response(exc.status, exc.kind, exc.message)
        except Exception as exc:
            if isinstance(exc, E.NoteExists) and exc.updatable:
                return error_response(
                    409,
                    "NoteExists",
                    f'{exc} (send "update": true to change it)',
                    path=exc.path,
                    updatable=True,
                )
            found = E.outcome(exc)  # the library's errors: one table with the CLI's codes
            if found is not None:  # with its details (an ambiguous name's candidates)
                return error_response(found[1], type(exc).__name__, str(exc), **E.details(exc))
            if isinstance(exc, ValueError):
                return error_response(400, "BadRequest", str(exc))
            if isinstance(exc, OSError) and exc.strerror:
                # the disk full, a folder made read-only: the person can act on it (and
                # the log the old answer sent them to may be on that full disk)
                log.warning("http: %s %s failed: %s", request.method, request.url.path, exc)
                return error_response(
                    507 if exc.errno in (errno.ENOSPC, errno.EDQUOT) else 500,
                    "OSError",
                    _os_message(exc, request.app.state.root),
                )
            log.exception("http: %s %s failed", request.method, request.url.path)
            return error_response(
                500, "InternalError", f"internal error ({type(exc).__name__}); see the daemon log"
            )

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


# -- server-sent events -------------------------------------------------------------------


class _Events(asyncio.Queue[str | None]):
    """One SSE client's queue; ``nudged`` while a status nudge waits in it."""

    nudged = False


def _offer(q: _Events, item: str | None) -> None:
    if item == STATUS_NUDGE:
        if q.nudged or q.full():
            return  # one pending nudge is enough, and a nudge never pushes out a sync
        q.nudged = True
    if q.full() and q.get_nowait() == STATUS_NUDGE:
        q.nudged = False  # a lagging client loses the oldest event, never blocks a sync
    q.put_nowait(item)


def status_event(info: Mapping[str, Any]) -> dict[str, Any]:
    """The part of the daemon's state that `event: status` carries."""
    return {name: info.get(name) for name in STATUS_FIELDS}


def busy(status: Mapping[str, Any]) -> bool:
    """Whether the daemon has work in hand (then its lag grows and is worth re-sending)."""
    return bool(
        status.get("state") in ("starting", "indexing")
        or status.get("progress")
        or status.get("queue")
        or status.get("lag_seconds") is not None
        or bool((status.get("vectors") or {}).get("busy"))
    )


class EventHub:
    """Fans ``SyncReport``s out to SSE clients; each has its own bounded queue.

    ``publish`` runs on whatever thread synced (an engine listener) and only
    schedules a put on each client's event loop, so a slow client never
    holds up a sync. ``nudge`` says the daemon's state may have changed: each
    stream then reads it once and sends `event: status` if it differs from the
    last one that stream sent (nudges are cheap; the daemon throttles its own).
    """

    def __init__(self, maxsize: int = EVENT_QUEUE, max_streams: int = MAX_STREAMS) -> None:
        self.maxsize = maxsize
        self.max_streams = max_streams
        self._lock = threading.Lock()
        self._subs: dict[_Events, asyncio.AbstractEventLoop] = {}
        self._closed = False

    def subscribe(self) -> _Events:
        q = _Events(self.maxsize)
        with self._lock:
            if self._closed:
                q.put_nowait(None)
            while self._subs and len(self._subs) >= max(1, self.max_streams):
                oldest = next(iter(self._subs))  # a stream makes room, never a request
                with contextlib.suppress(RuntimeError):  # that client's loop is gone
                    self._subs.pop(oldest).call_soon_threadsafe(_offer, oldest, None)
            self._subs[q] = asyncio.get_running_loop()
        return q

    def unsubscribe(self, q: _Events) -> None:
        with self._lock:
            self._subs.pop(q, None)

    @property
    def clients(self) -> int:
        with self._lock:
            return len(self._subs)

    def publish(self, report: SyncReport) -> None:
        self._send(json.dumps(report.to_dict(), ensure_ascii=False, default=str))

    def nudge(self) -> None:
        """The daemon's state may have changed (a batch began or ended, progress, an error)."""
        self._send(STATUS_NUDGE)

    def close(self) -> None:
        """End every stream (at shutdown)."""
        with self._lock:
            self._closed = True
        self._send(None)

    def _send(self, item: str | None) -> None:
        with self._lock:
            subs = list(self._subs.items())
        for q, loop in subs:
            try:
                loop.call_soon_threadsafe(_offer, q, item)
            except RuntimeError:  # that client's loop is gone
                self.unsubscribe(q)


# -- the guard ------------------------------------------------------------------------------


class Guard:
    """Host, Origin, token and body-size checks in front of every route."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        port: Callable[[], int | None],
        max_body: int,
        body_seconds: float = BODY_SECONDS,
    ) -> None:
        self.app = app
        self.token = f"Bearer {token}".encode()
        self.port = port
        self.max_body = max_body
        self.body_seconds = body_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin == OBSIDIAN_ORIGIN:
            send = _with_cors(send)

        async def refuse(status: int, kind: str, message: str, **extra: str) -> None:
            await error_response(status, kind, message, extra or None)(scope, receive, send)

        if not self._host_ok(headers.get("host"), scope.get("http_version")):
            return await refuse(
                403,
                "Forbidden",
                "the Host header must name this daemon on "
                "loopback (127.0.0.1, localhost or [::1] with its port)",
            )
        if origin is not None and origin != OBSIDIAN_ORIGIN:
            return await refuse(403, "Forbidden", f"requests from origin {origin!r} are refused")
        method = scope["method"]
        if method == "OPTIONS" and origin and "access-control-request-method" in headers:
            await Response(
                status_code=204,
                headers={
                    "Access-Control-Allow-Methods": "GET, POST",
                    "Access-Control-Allow-Headers": "Authorization, Content-Type",
                    "Access-Control-Max-Age": "600",
                },
            )(scope, receive, send)
            return
        if not (scope["path"] == "/health" and method in ("GET", "HEAD")):
            given = headers.get("authorization", "").encode()
            if not secrets.compare_digest(given, self.token):
                return await refuse(
                    401,
                    "Unauthorized",
                    "missing or wrong bearer token (it is in .memvault/daemon.json)",
                    **{"WWW-Authenticate": "Bearer"},
                )
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                return await refuse(400, "BadRequest", "bad Content-Length")
            if int(length) > self.max_body:
                return await refuse(
                    413, "RequestTooLarge", f"the body is larger than {self.max_body} bytes"
                )
        if method in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        body = bytearray()
        deadline = asyncio.get_running_loop().time() + self.body_seconds
        while True:
            try:  # a body that trickles in would hold a connection and a task forever
                message = await asyncio.wait_for(
                    receive(), deadline - asyncio.get_running_loop().time()
                )
            except TimeoutError:
                return await refuse(
                    408, "RequestTimeout", f"the body did not arrive within {self.body_seconds:g} s"
                )
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.max_body:
                return await refuse(
                    413, "RequestTooLarge", f"the body is larger than {self.max_body} bytes"
                )
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(bytes(body), receive), send)

    def _host_ok(self, host: str | None, version: str | None) -> bool:
        """Host names us on loopback (DNS rebinding); HTTP/1.0 may have none (browsers send it)."""
        if host is None:
            return version == "1.0"
        port = self.port()
        host = host.lower()
        names = ("127.0.0.1", "localhost", "[::1]")
        if port is None:
            return any(host == n or host.startswith(n + ":") for n in names)
        return host in {f"{n}:{port}" for n in names}


def _with_cors(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            headers += [
                (b"access-control-allow-origin", OBSIDIAN_ORIGIN.encode()),
                (b"vary", b"Origin"),
            ]
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # later calls: wait for the disconnect as usual

    return replay


# -- the app ----------------------------------------------------------------------------------


def create_app(
    vault: Vault,
    token: str,
    daemon_info: Callable[[], dict[str, Any]],
    *,
    port: int | Callable[[], int | None] | None = None,
    max_request_bytes: int | None = None,
    keepalive_seconds: float = KEEPALIVE_SECONDS,
    busy_seconds: float = BUSY_SECONDS,
    body_seconds: float = BODY_SECONDS,
    sync_now: Callable[[list[str] | None, bool], SyncReport] | None = None,
) -> Starlette:
    """The HTTP API over ``vault``. ``port`` (a number, or a function giving it once the
    socket is bound; default: ``daemon_info()['port']``) is the one the Host header
    must name. ``sync_now(paths, vectors)`` runs a ``POST /sync`` (the daemon's shows its
    progress in ``/status``; default: ``vault.sync``). Call ``app.state.close()`` at
    shutdown: it ends /events streams and stops listening to the engine."""
    hub = EventHub()
    vault.subscribe(hub.publish)
    limit = max_request_bytes or vault.config.daemon.max_request_bytes

    def current_port() -> int | None:
        if callable(port):
            return port()
        return port if port is not None else daemon_info().get("port")

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "version": __version__})

    async def status(request: Request) -> Response:
        data = await run_in_threadpool(vault.status)
        data["daemon"] = await run_in_threadpool(daemon_info)  # a query: off the loop
        return JSONResponse(data)

    async def sync(request: Request) -> Response:
        data = await _body(request, "sync")
        paths = [_safe(vault.root, p) for p in data["paths"]] if "paths" in data else None
        vectors = data.get("vectors", True)
        if sync_now is None:
            report = await run_in_threadpool(lambda: vault.sync(paths, vectors=vectors))
        else:
            report = await run_in_threadpool(sync_now, paths, vectors)
        return JSONResponse(report.to_dict())

    async def search(request: Request) -> Response:
        data = await _body(request, "search")
        k, group = data.get("k"), data.get("group", False)
        find = lambda: vault.search(data["query"], k, group=group, **_filters(data))  # noqa: E731
        hits, note = await run_in_threadpool(with_note, vault, find)
        return JSONResponse(noted({"hits": [h.to_dict() for h in hits]}, note))

    async def context(request: Request) -> Response:
        data = await _body(request, "context")
        ask = lambda: vault.context(data["query"], data.get("budget"), **_filters(data))  # noqa: E731
        ctx, note = await run_in_threadpool(with_note, vault, ask)
        return JSONResponse(noted(ctx.to_dict(), note))

    async def get_note(request: Request) -> Response:
        path = request.path_params["path"]
        _safe(vault.root, path)  # read as spelt, as in-process: NFC and NFD twins are two files
        q = _query(request, "get")
        note = await run_in_threadpool(vault.get, path, q.get("lines"), q.get("heading"))
        return JSONResponse(note.to_dict())

    async def add_note(request: Request) -> Response:
        data = await _body(request, "add")
        if data["category"] not in CATEGORIES:
            raise ApiError(400, "BadRequest", f"category must be one of {', '.join(CATEGORIES)}")
        result = await run_in_threadpool(
            lambda: vault.add(
                data["category"],
                data["title"],
                summary=data.get("summary"),
                fields=data.get("fields"),
                body=data.get("body"),
                update=data.get("update", False),
                section=data.get("section"),
            )
        )
        return JSONResponse(result.to_dict(), 201 if result.created else 200)

    async def log_entry(request: Request) -> Response:
        data = await _body(request, "log")
        result = await run_in_threadpool(vault.log, data["text"])
        return JSONResponse(result.to_dict())

    async def memory_tool(request: Request) -> Response:
        data = await _body(request, "memory-tool")
        result = await run_in_threadpool(vault.memory_tool, data)
        return JSONResponse({"result": result})

    async def related(request: Request) -> Response:
        q = _query(request, "related")
        path = _safe(vault.root, q["path"])
        hits = await run_in_threadpool(vault.related, path, q.get("k", 10), q.get("exclude", ()))
        return JSONResponse({"hits": [h.to_dict() for h in hits]})

    async def events(request: Request) -> Response:
        async def stream() -> Any:
            q = hub.subscribe()
            sent: dict[str, Any] | None = None
            failed = ""  # why the daemon's state could not be read, said once in the log

            def fresh_status() -> str:  # the state, if it changed: run off the loop (a query)
                nonlocal sent, failed
                try:  # never the stream's end (its client's status bar): the next look reads it
                    now, failed = status_event(daemon_info()), ""
                except Exception as exc:
                    if failed != (failed := repr(exc)):  # said once a reason
                        log.exception("/events: the daemon's state could not be read")
                    return ""
                if now == sent:
                    return ""
                sent = now
                return f"event: status\ndata: {json.dumps(now, ensure_ascii=False)}\n\n"

            try:
                # once seen, the client is subscribed; then the state as it is now
                yield ": connected\n\n" + await run_in_threadpool(fresh_status)
                while True:
                    wait = busy_seconds if sent is not None and busy(sent) else keepalive_seconds
                    try:
                        item = await asyncio.wait_for(q.get(), wait)
                    except TimeoutError:
                        yield await run_in_threadpool(fresh_status) or ": keep-alive\n\n"
                        continue
                    if item is None:
                        return
                    if item == STATUS_NUDGE:
                        q.nudged = False
                        if text := await run_in_threadpool(fresh_status):
                            yield text
                        continue
                    yield f"event: sync\ndata: {item}\n\n" + await run_in_threadpool(fresh_status)
            finally:
                hub.unsubscribe(q)

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_schema())

    routes = [
        Route("/health", _endpoint(health), methods=["GET"]),
        Route("/status", _endpoint(status), methods=["GET"]),
        Route("/sync", _endpoint(sync), methods=["POST"]),
        Route("/search", _endpoint(search), methods=["POST"]),
        Route("/context", _endpoint(context), methods=["POST"]),
        Route("/notes/{path:path}", _endpoint(get_note), methods=["GET"]),
        Route("/notes", _endpoint(add_note), methods=["POST"]),
        Route("/log", _endpoint(log_entry), methods=["POST"]),
        Route("/related", _endpoint(related), methods=["GET"]),
        Route("/memory-tool", _endpoint(memory_tool), methods=["POST"]),
        Route("/events", _endpoint(events), methods=["GET"]),
        Route("/openapi.json", _endpoint(openapi), methods=["GET"]),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: _http_error},  # type: ignore[dict-item]
        middleware=[
            Middleware(
                Guard, token=token, port=current_port, max_body=limit, body_seconds=body_seconds
            )
        ],
    )
    app.state.hub = hub
    app.state.root = vault.root  # error messages name files relative to it

    def close() -> None:
        hub.close()
        vault.unsubscribe(hub.publish)

    app.state.close = close
    return app


async def _http_error(request: Request, exc: HTTPException) -> Response:
    kind = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "BadRequest")
    message = {
        404: f"no route {request.url.path}",
        405: f"{request.method} is not allowed on {request.url.path}",
    }.get(exc.status_code, str(exc.detail))
    return error_response(exc.status_code, kind, message, exc.headers)


__all__ = ["STATUS_FIELDS", "EventHub", "Guard", "create_app", "status_event"]
