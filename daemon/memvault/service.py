"""The daemon's life cycle: lock, reconcile, watch, serve, and shut down cleanly.

``Daemon`` owns one open ``Vault`` (so the writer lock), a ``Watcher`` (the
start-up reconcile is its first batch, then events, the periodic reconcile
and the idle save) and an HTTP server (uvicorn on loopback, in a thread).
``.memvault/daemon.json`` says where it listens and holds the token; it is
written 0600 from the first byte and removed at a clean exit, *before* the
lock is released, so a successor's file is never deleted by its predecessor.

The functions below ``Daemon`` are what ``memvault daemon start|stop|status``
call: spawn a detached ``daemon run``, signal it, ask it how it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import logging.handlers
import os
import secrets
import signal
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault import __version__
from memvault.config import STATE_DIR, VaultConfig
from memvault.errors import DaemonError

if TYPE_CHECKING:  # the engine, watchdog and uvicorn load only when a daemon runs
    from memvault.api import Vault
    from memvault.embedder import Embedder

log = logging.getLogger("memvault.daemon")

DAEMON_JSON = "daemon.json"
LOG_FILE = "daemon.log"
STOP_SECONDS = 3.0  # for the batch in flight at SIGTERM (exit within 5 s in all)
PROGRESS_EVENT_SECONDS = 0.25  # /events gets indexing progress at most this often


# -- daemon.json -------------------------------------------------------------------------------


def daemon_json_path(root: Path) -> Path:
    return Path(root) / STATE_DIR / DAEMON_JSON


def write_private_json(path: Path, data: Mapping[str, Any]) -> None:
    """Atomically write ``data`` with mode 0600; the temp file is 0600 from creation."""
    tmp = path.with_name(f".{path.name}.tmp-{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(dict(data), fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def read_daemon_json(root: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(daemon_json_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(data, dict) and isinstance(data.get("pid"), int) and "port" in data
    return data if ok else None


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie child of ours is reaped and counts as gone)."""
    with contextlib.suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def lock_holder(root: Path) -> int | None:
    """The pid holding the vault's writer lock, or None when nobody holds it.

    Linux: from /proc/locks (the kernel's word, immune to a stale pid in the
    lock file after kill -9 and to pid reuse). Elsewhere: the pid the lock file
    names, if that process is alive.
    """
    lock = Path(root) / STATE_DIR / "lock"
    try:
        st = os.stat(lock)
        named = lock.read_text(encoding="ascii").strip()
    except OSError:
        return None
    try:
        table = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return int(named) if named.isdigit() and pid_alive(int(named)) else None
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():  # "1: FLOCK  ADVISORY  WRITE 4242 fe:00:2147128 0 EOF"
        parts = line.split()
        if parts[1:4] == ["FLOCK", "ADVISORY", "WRITE"] and parts[5:6] == [key]:
            return int(parts[4]) if parts[4].isdigit() else None
    return None


def running_daemon(root: Path) -> dict[str, Any] | None:
    """daemon.json of a daemon that really runs: its pid is alive and holds the lock."""
    info = read_daemon_json(root)
    if info is None or not pid_alive(info["pid"]) or lock_holder(root) != info["pid"]:
        return None
    return info


def url_of(info: Mapping[str, Any]) -> str:
    host = info.get("host", "127.0.0.1")
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{info['port']}"


def ask(info: Mapping[str, Any], path: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """GET ``path`` from the daemon ``info`` describes; None when it does not answer.

    urllib, not httpx: `daemon status` should not pay httpx's import time, and
    no proxy may ever see the token.
    """
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(
        url_of(info) + path, headers={"Authorization": f"Bearer {info.get('token', '')}"}
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            data = json.loads(response.read())
    except (OSError, ValueError):  # URLError and timeouts are OSErrors
        return None
    return data if isinstance(data, dict) else None


# -- the HTTP server -----------------------------------------------------------------------------


class HttpServer:
    """uvicorn in a thread. The socket is bound (and listening) in ``__init__``, so
    the port is known before daemon.json is written and early clients just wait
    in the backlog until uvicorn accepts them."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        import uvicorn

        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.sock.bind(("localhost" if host == "localhost" else host, port))
            self.sock.listen(128)
        except OSError as exc:
            self.sock.close()
            raise DaemonError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        self.host = host
        self.port: int = self.sock.getsockname()[1]
        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
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


# -- the daemon ------------------------------------------------------------------------------------


class Daemon:
    """One running daemon over an open, writable ``Vault`` (which it closes at shutdown)."""

    def __init__(self, vault: Vault, *, port: int | None = None, initial_reconcile: bool = True):
        from memvault.watcher import Watcher

        self.vault = vault
        self.config: VaultConfig = vault.config
        settings = self.config.daemon
        self.port_setting = settings.port if port is None else port
        self.initial_reconcile = initial_reconcile
        self.token = secrets.token_urlsafe(32)
        self.pid = os.getpid()
        self.started_at = time.time()
        self._started_mono = time.monotonic()
        self.state = "starting"
        self.progress: dict[str, int] | None = None
        self.model_state = "not loaded"  # loading | ready | failed
        self._last_progress_log = 0.0
        self._last_progress_nudge = 0.0
        self._stop = threading.Event()
        self._closed = False
        self.server: HttpServer | None = None
        self.app: Any = None
        self.watcher = Watcher(
            vault.root,
            self._sync,
            is_ignored=vault.engine.fs.is_ignored,
            debounce_ms=settings.debounce_ms,
            observer=settings.observer,
            reconcile_seconds=settings.reconcile_seconds,
            save=vault.engine.save_vectors,
            idle_save_seconds=min(5.0, float(settings.save_seconds)),
            on_progress=self._on_progress,
            after_first=self._warm_up,
            on_change=self._nudge,
        )

    @classmethod
    def open(
        cls,
        root: str | Path,
        *,
        embedder: Embedder | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        port: int | None = None,
    ) -> Daemon:
        """Open the vault (taking the writer lock: ``LockHeld`` if it is taken)."""
        from memvault.api import Vault

        return cls(Vault.open(root, embedder=embedder, overrides=overrides), port=port)

    @property
    def json_path(self) -> Path:
        return daemon_json_path(self.vault.root)

    def start(self) -> None:
        """Serve first (so `daemon start` sees it up at once), then watch and reconcile."""
        from memvault.http_api import create_app

        for stale in self.json_path.parent.glob(f".{DAEMON_JSON}.tmp-*"):
            stale.unlink(missing_ok=True)  # left by a predecessor killed mid-write
        try:
            self.app = create_app(
                self.vault,
                self.token,
                self.info,
                port=lambda: self.server.port if self.server else None,
            )
            self.server = HttpServer(self.app, self.config.daemon.host, self.port_setting)
            self.server.start()
            write_private_json(
                self.json_path,
                {
                    "pid": self.pid,
                    "host": self.server.host,
                    "port": self.server.port,
                    "token": self.token,
                    "started_at": self.started_at,
                    "version": __version__,
                },
            )
            self.state = "indexing" if self.initial_reconcile else "watching"
            self.watcher.start(initial_reconcile=self.initial_reconcile)
        except BaseException:
            self.shutdown()
            raise
        log.info(
            "memvault daemon %s for %s on %s (pid %d)",
            __version__,
            self.vault.root,
            url_of({"host": self.server.host, "port": self.server.port}),
            self.pid,
        )

    def _sync(self, paths: list[str] | None, progress: Callable[[Any], None]) -> Any:
        try:
            return self.vault.sync(paths, progress=progress)
        finally:
            self.progress = None
            if self.state == "indexing":
                self.state = "watching"

    def _nudge(self) -> None:
        """Tell /events clients that what ``info()`` shows may have changed."""
        hub = getattr(getattr(self.app, "state", None), "hub", None)
        if hub is not None:
            hub.nudge()

    def _warm_up(self) -> None:
        """Load the model after the start-up reconcile, so the first agent's query does
        not pay for importing torch (seconds); a model that cannot load shows in status."""
        started = time.monotonic()
        self.model_state = "loading"
        self._nudge()
        try:
            self.vault.search("memvault warm-up", k=1)
        except Exception as exc:
            self.model_state = "failed"
            self.watcher.record_error(f"warming up the model failed: {exc}")
            log.warning("warming up the model failed: %s", exc)
            return
        self.model_state = "ready"
        self._nudge()
        log.info("model ready in %.1f s", time.monotonic() - started)

    def _on_progress(self, p: Any) -> None:
        self.progress = {"done": p.done, "total": p.total, "embedded": p.embedded}
        now = time.monotonic()
        if now - self._last_progress_nudge >= PROGRESS_EVENT_SECONDS or p.done == p.total:
            self._last_progress_nudge = now
            self._nudge()
        if p.total >= 200 and (now - self._last_progress_log >= 5 or p.done == p.total):
            self._last_progress_log = now
            log.info("indexing: %d/%d notes, %d chunks embedded", p.done, p.total, p.embedded)

    def info(self) -> dict[str, Any]:
        """The daemon's part of /status."""
        state = self.state
        if state == "watching" and self.progress and self.progress["total"] >= 50:
            state = "indexing"
        server = self.server
        hub = getattr(getattr(self.app, "state", None), "hub", None)
        return {
            "state": state,
            "pid": self.pid,
            "version": __version__,
            "host": server.host if server else None,
            "port": server.port if server else None,
            "started_at": self.started_at,
            "uptime_seconds": round(time.monotonic() - self._started_mono, 3),
            "progress": self.progress,
            "model": self.model_state,
            "events_clients": hub.clients if hub is not None else 0,
            **self.watcher.info(),
        }

    def request_stop(self, *_: object) -> None:
        """Ask ``run`` to shut down; safe from a signal handler or any thread."""
        self._stop.set()

    def run(self, on_started: Callable[[Daemon], None] | None = None) -> int:
        """Start, wait for SIGTERM/SIGINT (or ``request_stop``), shut down; return 0."""
        previous: dict[signal.Signals, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, self.request_stop)
        try:
            self.start()
            if on_started is not None:
                on_started(self)
            self._stop.wait()
            log.info("memvault daemon stopping")
        finally:
            self.shutdown()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 0

    def shutdown(self) -> bool:
        """Stop serving and watching, save, remove daemon.json, release the lock.

        False when the batch in flight could not finish in time (a model still
        loading, say): the vault is then left open for the process exit to drop,
        which is as safe as a kill -9 — the next start reconciles.
        """
        if self._closed:
            return True
        self._closed = True
        self.state = "stopping"
        if self.app is not None:
            self.app.state.close()  # ends /events streams so the server can stop
        if self.server is not None:
            self.server.stop(timeout=1.5)
        finished = self.watcher.stop(timeout=STOP_SECONDS)
        info = read_daemon_json(self.vault.root)
        if info is not None and info.get("pid") == self.pid and info.get("token") == self.token:
            self.json_path.unlink(missing_ok=True)
        if not finished:
            log.warning("memvault daemon stopped without waiting for the sync in flight")
            return False
        self.vault.close()
        log.info("memvault daemon stopped")
        return True


def configure_logging(config: VaultConfig, to_file: bool) -> logging.Handler:
    """Log the ``memvault`` (and watchdog) loggers to stderr, or to a rotated daemon.log."""
    handler: logging.Handler
    if to_file:
        handler = logging.handlers.RotatingFileHandler(
            config.state_dir / LOG_FILE,
            maxBytes=config.daemon.log_max_bytes,
            backupCount=config.daemon.log_backups,
            encoding="utf-8",
        )
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    # watchdog warns when a folder moved away and back is watched again: harmless noise
    warnings.filterwarnings("ignore", "Callback with id", RuntimeWarning)
    for name in ("memvault", "watchdog", "uvicorn"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO if name == "memvault" else logging.WARNING)
        logger.propagate = False
    return handler


# -- start / stop / status ---------------------------------------------------------------


def package_parent() -> str:
    """The folder holding the ``memvault`` package (for PYTHONPATH in spawned daemons)."""
    import memvault

    return str(Path(memvault.__file__).resolve().parents[1])


def _until(check: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Poll ``check`` until true or ``timeout``: waiting on another *process*, which
    offers nothing to block on."""
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        threading.Event().wait(interval)


def log_tail(root: Path, lines: int = 20) -> str:
    try:
        text = (Path(root) / STATE_DIR / LOG_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def start_background(root: Path, timeout: float = 60.0) -> dict[str, Any]:
    """Spawn ``memvault daemon run --log-file`` detached; return its daemon.json once
    /health answers. DaemonError (with the log's tail) if it dies or never answers."""
    root = Path(root).resolve()
    (root / STATE_DIR).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent(), env.get("PYTHONPATH")) if p)
    argv = [sys.executable, "-m", "memvault", "daemon", "run", "--vault", str(root), "--log-file"]
    log_path = root / STATE_DIR / LOG_FILE
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, str(log_path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
    ]
    pid = os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
    found: dict[str, Any] = {}

    def up() -> bool:
        info = read_daemon_json(root)
        if info is not None and info["pid"] == pid and ask(info, "/health", 1.0) is not None:
            found.update(info)
            return True
        return not pid_alive(pid)

    if not _until(up, timeout) or not found:
        if pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            raise DaemonError(
                f"the daemon (pid {pid}) did not answer within {timeout:.0f} s; "
                f"last lines of {log_path}:\n{log_tail(root)}"
            )
        raise DaemonError(
            f"the daemon exited at start; last lines of {log_path}:\n{log_tail(root)}"
        )
    return found


def stop_daemon(root: Path, timeout: float = 10.0) -> dict[str, Any] | None:
    """SIGTERM the running daemon and wait for it; None if none was running."""
    info = running_daemon(root)
    if info is None:
        return None
    pid = info["pid"]
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return info
    if not _until(lambda: not pid_alive(pid), timeout):
        raise DaemonError(f"the daemon (pid {pid}) did not stop within {timeout:.0f} s")
    return info


def daemon_status(root: Path) -> dict[str, Any]:
    """Whether a daemon runs for ``root`` and how it is doing."""
    root = Path(root).resolve()
    info = running_daemon(root)
    out: dict[str, Any] = {
        "running": False,
        "vault": str(root),
        "daemon_json": str(daemon_json_path(root)),
    }
    if info is None:
        return out
    health = ask(info, "/health", 2.0)
    status = ask(info, "/status", 5.0) if health is not None else None
    daemon = (status or {}).get("daemon") or {}
    started = float(info.get("started_at") or time.time())
    out.update(
        running=True,
        healthy=health is not None,
        pid=info["pid"],
        url=url_of(info),
        port=info["port"],
        version=info.get("version"),
        uptime_seconds=daemon.get("uptime_seconds", round(time.time() - started, 1)),
        state=daemon.get("state"),
        lag_seconds=daemon.get("lag_seconds"),
        queue=daemon.get("queue"),
        observer=daemon.get("observer"),
        last_error=daemon.get("last_error"),
        notes=(status or {}).get("notes"),
    )
    return out


__all__ = [
    "Daemon",
    "HttpServer",
    "configure_logging",
    "daemon_json_path",
    "daemon_status",
    "lock_holder",
    "pid_alive",
    "read_daemon_json",
    "running_daemon",
    "start_background",
    "stop_daemon",
    "write_private_json",
]
