"""Talk to a running daemon over its local HTTP API (docs/HTTP.md).

    client = DaemonClient.find(vault_root)     # None when no daemon answers
    if client is not None:
        with client:
            hits = client.search("database schema", k=5)

``DaemonClient`` is the wire of ``Vault``'s daemon backend (``memvault.backends``):
it takes the values ``Vault`` has already checked (``Filters``, a ``NoteRequest``)
and hands back the same result types (``Hit``, ``Context``, ``NoteText``,
``WriteResult``, ``SyncReport``, the status dict), so an adapter prints the same
thing whether a daemon is up or the vault is opened in-process. An error the daemon reports comes back as
the exception the library would have raised (``UnsafePath``, ``NoteNotFound``,
``NoteExists``, ...; a ``BadRequest`` as ``ValueError``, like the library's
own argument checks); anything else, and a daemon that cannot be reached, is
a ``DaemonError``.

The wire is the standard library's ``http.client``: one short loopback
connection per request, no proxies, no TLS. httpx (with its httpcore, trio
and certifi imports) costs a CLI call more than the search it makes — ~0.3 s
of a budget of 0.3 s — so it is used only when a caller passes its own
``httpx.Client`` (tests pass a ``starlette.testclient.TestClient``).
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import shlex
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit

from memvault import errors as E
from memvault.core.closing import Closes
from memvault.core.ranking import Filters
from memvault.core.results import Context, Hit, NoteRequest, SkippedFile, Source, SyncReport
from memvault.vault import runfile

if TYPE_CHECKING:
    import httpx

    from memvault.core.results import NoteText, WriteResult

HEALTH_TIMEOUT = 0.5  # ``find``: a daemon that does not answer /health this fast is passed over
ANSWER_TIMEOUT = 5.0  # a reader waits this long for a busy daemon before reading in-process
READ_TIMEOUT = 30.0  # search, context, get, related, status
# A write waits for the one writer however busy it is (it queues behind a sync): a
# write that timed out may still be done by the daemon, so it is never sent twice.
WRITE_TIMEOUT = 300.0
SYNC_TIMEOUT = 600.0  # a full reconcile may embed a whole vault
NO_FILTERS = Filters()
# the fields of the memory tool's commands (tool type memory_20250818)
MEMORY_TOOL_FIELDS = frozenset(
    {"command", "path", "view_range", "file_text", "old_str", "new_str", "insert_line",
     "insert_text", "old_path", "new_path"}
)  # fmt: skip

# (method, url, headers, body, timeout) -> (status, body); raises TimeoutError when the
# daemon is too slow and ConnectionError when it cannot be reached.
Send = Callable[[str, str, dict[str, str], bytes | None, float], tuple[int, bytes]]

# seconds a request waits for the daemon of the same process to serve again after it
# started again (config.toml changed): its vault opened anew, its model not yet loaded
AGAIN_WAIT = 15.0

# the routes POSTed that change nothing (a body too big for a query string): a read cut
# off is sent again, as a GET, to the daemon serving the vault now
READS = frozenset({"/search", "/context"})


class PerThread:
    """An attribute whose value each thread sets and reads as its own (``default`` until
    that thread sets one, or the instance's ``fallback`` attribute, when named): the note
    of a call, which another thread's call at the same moment must not replace. Two
    threads searching at once through one ``Vault`` (the HTTP app's worker threads, an
    agent's) read each other's note: one answer missing a note went unsaid, another
    carried a note its hits contradicted."""

    def __init__(self, fallback: str | None = None) -> None:
        self._fallback = fallback
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = f"_per_thread_{name}"

    def _local(self, obj: Any) -> threading.local:
        local: threading.local | None = obj.__dict__.get(self._name)
        if local is None:  # (dict.setdefault is one step under the GIL: two threads get one)
            local = obj.__dict__.setdefault(self._name, threading.local())
        return local

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = getattr(self._local(obj), "value", _UNSET)
        if value is not _UNSET:
            return value
        return getattr(obj, self._fallback) if self._fallback else None

    def __set__(self, obj: Any, value: Any) -> None:
        self._local(obj).value = value


_UNSET = object()

# error.type -> the exception the library raises for it
_ERRORS: dict[str, type[E.MemvaultError]] = {
    name: kind
    for name, kind in vars(E).items()
    if isinstance(kind, type) and issubclass(kind, E.MemvaultError)
}


class DaemonClient(Closes):
    """A running daemon's HTTP API, with ``Vault``'s methods and result types."""

    # the ``note`` of this thread's last search or context (a reader daemon's: what it
    # misses); None before one
    note = PerThread()

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        pid: int | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        """``base_url`` like ``http://127.0.0.1:51234``; ``http``, an ``httpx.Client``,
        replaces the standard-library wire (tests pass a ``TestClient``); it stays the
        caller's to close."""
        self.base_url = base_url.rstrip("/")
        self.pid = pid
        self._token = token
        self._send: Send = _send_stdlib if http is None else _httpx_sender(http)
        # the vault's folder, when found by its daemon.json (``running``): a daemon that
        # started again in its process (config.toml changed) is found again there
        self.root: Path | None = None

    # -- finding a daemon ----------------------------------------------------------

    @classmethod
    def of(cls, info: runfile.DaemonInfo) -> DaemonClient:
        """A client for the daemon that ``info`` (its daemon.json) describes."""
        return cls(info.url, info.token, pid=info.pid)

    @classmethod
    def running(cls, root: str | Path) -> DaemonClient | None:
        """A client for the daemon serving the vault at ``root``, or None when none runs
        (``runfile.running``: daemon.json well formed, its pid alive and holding the
        vault's lock). Asks the daemon nothing: a write goes to it however busy it is,
        since it holds the lock and no other process can do the write."""
        info = runfile.running(Path(root))
        if info is None:
            return None
        client = cls.of(info)
        client.root = Path(root)
        return client

    def _found_again(self) -> bool:
        """After a request the daemon did not take (refused, or its token unknown): the
        daemon serving the vault now, on another port and token, taken as this client's
        — the same process started again (``daemon.start_afresh``: config.toml's new
        settings), waited for up to ``AGAIN_WAIT`` s, or another process (``memvault up``
        run again, a service manager's restart: a long-lived agent's ``Vault`` went dead
        for good without it). False when none serves it."""
        import time

        if self.root is None or self.pid is None:
            return False
        until = time.monotonic() + AGAIN_WAIT
        while True:
            info = runfile.running(self.root)
            if info is not None:
                if info.url == self.base_url and info.token == self._token:
                    return False  # the same daemon: not a restart
                self.base_url, self._token, self.pid = info.url, info.token, info.pid
                return True
            if time.monotonic() > until or not runfile.pid_alive(self.pid):
                return False
            time.sleep(0.1)

    def _gone(self, exc: OSError) -> str:
        """Why a request found no daemon, and what brings one back."""
        said = f"cannot reach the daemon at {self.base_url}: {exc}"
        if self.root is None:
            return said
        return (
            f"{said}: no daemon serves {self.root} now; start one (`memvault up"
            f" {shlex.quote(str(self.root))}`)"
            " and this Vault goes on through it, or close it and open it again (opened"
            " without a daemon, it works in this process)"
        )

    @classmethod
    def find(cls, root: str | Path, timeout: float = HEALTH_TIMEOUT) -> DaemonClient | None:
        """The daemon serving the vault at ``root`` if it answers ``/health`` within
        ``timeout`` seconds, else None (for callers that can do without it)."""
        client = cls.running(root)
        if client is None or not client.healthy(timeout):
            return None
        return client

    def healthy(self, timeout: float = HEALTH_TIMEOUT) -> bool:
        """Whether ``GET /health`` answers ``{"ok": true}`` within ``timeout`` seconds."""
        try:
            status, content = self._send("GET", f"{self.base_url}/health", {}, None, timeout)
            return status == 200 and json.loads(content).get("ok") is True
        except (OSError, ValueError, AttributeError):
            return False

    # -- the operations (same names and results as Vault) ------------------------

    def search(
        self, query: str, k: int | None = None, filters: Filters = NO_FILTERS, group: bool = False
    ) -> list[Hit]:
        """Hybrid search, answered by the daemon."""
        body = {"query": query, "k": k, "group": group or None, **_filters(filters)}
        data = self._request("POST", "/search", body=body)
        self.note = data.get("note")
        return [Hit.from_dict(h) for h in data["hits"]]

    def context(
        self, query: str, budget: int | None = None, filters: Filters = NO_FILTERS
    ) -> Context:
        """MEMORY.md plus the best sections, cited, within ``budget`` tokens."""
        body = {"query": query, "budget": budget, **_filters(filters)}
        data = self._request("POST", "/context", body=body)
        self.note = data.get("note")
        return context_from_dict(data)

    def get(self, path: str, lines: str | None = None, heading: str | None = None) -> NoteText:
        """A note, one section of it, or a line range."""
        from memvault.core.results import NoteText
        from memvault.vault.files import normalize_rel

        normalize_rel(path)  # refuse here exactly as in-process; the daemon checks again
        params = {k: v for k, v in (("lines", lines), ("heading", heading)) if v is not None}
        # Every "/" encoded too, so no URL normalisation can turn a segment into "..".
        data = self._request("GET", f"/notes/{quote(path, safe='')}", params=params)
        return NoteText.from_dict(data)

    def related(self, path: str, k: int = 10, exclude: Sequence[str] = ()) -> list[Hit]:
        """Notes most like ``path``, none from the ``exclude`` folders."""
        params = {"path": path, "k": k, "exclude": list(exclude)}
        data = self._request("GET", "/related", params=params)
        return [Hit.from_dict(h) for h in data["hits"]]

    def add(self, request: NoteRequest) -> WriteResult:
        """Create (or, with ``update``, change) a note through the daemon, the one writer."""
        payload = {
            "category": request.category,
            "title": request.title,
            "summary": request.summary,
            "fields": dict(request.fields) if request.fields else None,
            "body": request.body,
            "update": request.update or None,
            "section": request.section,
        }
        return write_result_from_dict(
            self._request("POST", "/notes", body=payload, timeout=WRITE_TIMEOUT)
        )

    def log(self, text: str) -> WriteResult:
        """Add a timestamped line to today's log through the daemon."""
        return write_result_from_dict(
            self._request("POST", "/log", body={"text": text}, timeout=WRITE_TIMEOUT)
        )

    def memory_tool(self, command: Mapping[str, Any]) -> str:
        """One command of Claude's memory tool, run by the daemon (``POST /memory-tool``);
        only the fields the tool defines are sent."""
        body = {k: v for k, v in command.items() if k in MEMORY_TOOL_FIELDS}
        timeout = READ_TIMEOUT if body.get("command") == "view" else WRITE_TIMEOUT
        data = self._request("POST", "/memory-tool", body=body, timeout=timeout)
        return str(data["result"])

    def status(self, *, timeout: float = READ_TIMEOUT) -> dict[str, Any]:
        """``Vault.status()`` plus the daemon's own state under ``"daemon"``."""
        data = self._request("GET", "/status", timeout=timeout)
        if not isinstance(data, dict):
            raise E.DaemonError("the daemon's /status answer is not an object")
        return data

    def sync(self, paths: Iterable[str] | None = None, *, vectors: bool = True) -> SyncReport:
        """Ask the daemon to reconcile now (all files, or just ``paths``); ``vectors=False``:
        the structure only, its vector lane embeds the new chunks afterwards."""
        body: dict[str, Any] = {} if paths is None else {"paths": list(paths)}
        if not vectors:
            body["vectors"] = False
        return sync_report_from_dict(
            self._request("POST", "/sync", body=body, timeout=SYNC_TIMEOUT)
        )

    # -- plumbing --------------------------------------------------------------------

    def close(self) -> None:
        """Nothing stays open between requests; kept for ``with`` and symmetry with Vault."""

    def _request(
        self,
        method: str,
        route: str,
        *,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        timeout: float = READ_TIMEOUT,
    ) -> Any:
        payload = None if body is None else {k: v for k, v in body.items() if v is not None}
        url = f"{self.base_url}{route}"
        if params:
            url += "?" + urlencode(params, doseq=True)  # a list: the parameter repeated
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/json"}
        data = None
        if payload is not None:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        changes = method != "GET" and route not in READS  # a write: never sent twice
        try:
            status, content = self._send(method, url, headers, data, timeout)
        except TimeoutError:
            maybe = " (it may still make the change: look before sending it again)"
            raise E.DaemonError(
                f"the daemon at {self.base_url} did not answer {method} {route} "
                f"within {timeout:g} s{maybe if changes else ''}"
            ) from None
        except OSError as exc:
            # refused: nothing was sent (a request cut off may have been made: only a read
            # is sent again)
            if changes and not isinstance(exc, ConnectionRefusedError):
                # not looked for a daemon, and not "start one and go on": sent again, a
                # write made before the connection dropped would be made twice
                raise E.DaemonError(
                    f"the connection to the daemon at {self.base_url} was lost during"
                    f" {method} {route}: {exc} (it may have made the change: look before"
                    " sending it again)"
                ) from None
            if self._found_again():  # asked again of the new one
                return self._request(method, route, body=body, params=params, timeout=timeout)
            raise E.DaemonError(self._gone(exc)) from None
        if status == 401 and self._found_again():  # the port given to the new one
            # (out of the ``try``: what the new one answers, a refused write's OSError
            # too, is the caller's, not "cannot reach the daemon")
            return self._request(method, route, body=body, params=params, timeout=timeout)
        if status >= 400:
            raise error_from_response(status, content)
        try:
            return json.loads(content)
        except ValueError:
            raise E.DaemonError(
                f"the daemon answered {method} {route} with something other than JSON", status
            ) from None


# -- the wire ----------------------------------------------------------------------------


def _send_stdlib(
    method: str, url: str, headers: dict[str, str], body: bytes | None, timeout: float
) -> tuple[int, bytes]:
    """One request on a fresh loopback connection (no proxy, no TLS: plain HTTP only)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ConnectionError(f"not a daemon URL: {url}")
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request(method, target, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    except http.client.HTTPException as exc:  # a malformed or cut-off answer
        raise ConnectionError(f"{type(exc).__name__}: {exc}") from None
    finally:
        conn.close()


def _httpx_sender(client: httpx.Client) -> Send:
    import httpx

    def send(
        method: str, url: str, headers: dict[str, str], body: bytes | None, timeout: float
    ) -> tuple[int, bytes]:
        try:
            # The per-request timeout as httpx passes it to its transport; a TestClient
            # refuses the ``timeout=`` argument itself.
            r = client.request(
                method,
                url,
                content=body,
                headers=headers,
                extensions={"timeout": httpx.Timeout(timeout).as_dict()},
            )
        except httpx.TimeoutException as exc:
            raise TimeoutError(str(exc)) from None
        except httpx.HTTPError as exc:
            raise ConnectionError(str(exc)) from None
        return r.status_code, r.content

    return send


# -- wire -> library types ------------------------------------------------------------


def error_from_response(status: int, content: bytes) -> Exception:
    """The exception the library would have raised for a daemon's error answer."""
    kind, message = None, None
    error: Any = None
    try:
        error = json.loads(content)["error"]
        kind, message = str(error["type"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        pass
    if kind == "NoteExists" and error.get("updatable") and isinstance(error.get("path"), str):
        # the library's own words: each adapter says how to update in its own terms
        return E.NoteExists(f"{error['path']} already exists", error["path"], updatable=True)
    if kind == "AmbiguousNote" and message is not None:
        found = error.get("candidates")
        return E.AmbiguousNote(message, tuple(map(str, found)) if isinstance(found, list) else ())
    if message is None:
        text = content.decode("utf-8", "replace").strip()[:200]
        return E.DaemonError(f"the daemon answered HTTP {status}: {text or 'no details'}", status)
    if kind == "BadRequest":
        return ValueError(message)
    if kind == "OSError":  # the disk full, a read-only note: what the write raised here
        name, _, why = message.partition(": ")
        return OSError(None, why, name) if why else OSError(None, message)
    known = _ERRORS.get(kind or "")
    if known is None or known is E.DaemonError:
        return E.DaemonError(f"the daemon answered HTTP {status} ({kind}): {message}", status)
    return known(message)


def _filters(filters: Filters) -> dict[str, Any]:
    """``Filters`` as the daemon's routes take them (docs/HTTP.md)."""
    out: dict[str, Any] = {
        "folder": filters.folder,
        "tags": list(filters.tags) or None,
        "since": filters.since,
        "until": filters.until,
        "where": dict(filters.where) if filters.where else None,
        "path": filters.path,
    }
    return {k: v for k, v in out.items() if v is not None}


def context_from_dict(data: Mapping[str, Any]) -> Context:
    sources = tuple(Source.from_dict(s) for s in data.get("sources", ()))
    return Context(
        query=data["query"],
        budget=data["budget"],
        tokens=data["tokens"],
        text=data["text"],
        sources=sources,
    )


def sync_report_from_dict(data: Mapping[str, Any]) -> SyncReport:
    values: dict[str, Any] = {}
    for f in dataclasses.fields(SyncReport):
        if f.name not in data:
            continue
        value = data[f.name]
        if f.name in ("moved", "attachments_moved", "moved_on"):  # pairs, as tuples
            value = tuple((str(a), str(b)) for a, b in value)
        elif f.name == "skipped":
            value = tuple(SkippedFile(path=s["path"], reason=s["reason"]) for s in value)
        elif isinstance(value, list):
            value = tuple(value)
        values[f.name] = value
    return SyncReport(**values)


def write_result_from_dict(data: Mapping[str, Any]) -> WriteResult:
    from memvault.core.results import WriteResult

    return WriteResult(
        path=data["path"],
        created=bool(data["created"]),
        report=sync_report_from_dict(data.get("report") or {}),
        written=bool(data.get("written", True)),  # (an older daemon says nothing of it)
        note=data.get("note") or None,
    )


__all__ = ["DaemonClient", "PerThread"]
