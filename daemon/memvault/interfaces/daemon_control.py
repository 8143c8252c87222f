"""Starting, stopping and asking after a daemon from another process.

What ``memvault daemon start|stop|status`` call: spawn a detached ``daemon
run``, signal it, ask it how it is. Whether one runs is ``runfile.running``'s
answer (the one rule); talking to it is ``DaemonClient``'s (the one wire).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memvault.client import DaemonClient
from memvault.config import STATE_DIR
from memvault.errors import DaemonError, MemvaultError, StorageError
from memvault.service.units import package_parent
from memvault.vault import runfile
from memvault.vault.lock import pid_alive, stopping_daemon
from memvault.vault.runfile import LOG_FILE
from memvault.vault.state_dir import ensure_state_dir


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


def log_tail(root: Path, lines: int = 20, since: int = 0) -> str:
    """The log's last ``lines``, of what it gained past byte ``since`` (a start's own
    lines, not an earlier run's; all of it if it was rotated meanwhile)."""
    try:
        with (Path(root) / STATE_DIR / LOG_FILE).open("rb") as fh:
            if since and os.fstat(fh.fileno()).st_size >= since:
                fh.seek(since)
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(nothing in the log)"


def start_background(root: Path, timeout: float = 60.0) -> runfile.DaemonInfo:
    """Spawn ``memvault daemon run --log-file`` detached; return its daemon.json once
    /health answers. DaemonError (with the log's tail) if it dies or never answers."""
    root = Path(root).resolve()
    ensure_state_dir(root / STATE_DIR)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent(), env.get("PYTHONPATH")) if p)
    argv = [sys.executable, "-m", "memvault", "daemon", "run", "--vault", str(root), "--log-file"]
    log_path = root / STATE_DIR / LOG_FILE
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, str(log_path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
    ]
    try:  # the spawn's own error would name Python, not the log (a field test)
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        since = os.fstat(fd).st_size  # what is said of this start comes after
        os.close(fd)
    except OSError as exc:
        raise StorageError(f"{log_path}: cannot open the daemon's log: {exc.strerror}") from None
    pid = os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
    found: list[runfile.DaemonInfo] = []
    exited: list[int] = []  # its exit code, once it has exited

    def up() -> bool:
        info = runfile.running(root)
        if info is not None and info.pid == pid and DaemonClient.of(info).healthy(1.0):
            found.append(info)
            return True
        try:  # our child: reaped here (not by pid_alive), its exit code kept
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped already: gone, its code unknown
            return True
        if done == pid:
            exited.append(os.waitstatus_to_exitcode(status))
        return bool(exited)

    if not _until(up, timeout) or not found:
        if pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            raise DaemonError(
                f"the daemon (pid {pid}) did not answer within {timeout:.0f} s; "
                f"last lines of {log_path}:\n{log_tail(root, since=since)}"
            )
        code = exited[0] if exited else None
        raise DaemonError(
            f"the daemon exited at start; its lines in {log_path}:\n{log_tail(root, since=since)}",
            exit_code=code if code is not None and code > 0 else None,
        )
    return found[0]


def stop_daemon(root: Path, timeout: float = 10.0) -> int | None:
    """SIGTERM the running daemon and wait for it, or wait for one stopping already (its
    daemon.json gone, its batch and save to come: a second ``daemon stop``); its pid,
    None if none was running."""
    info = runfile.running(root)
    pid = info.pid if info is not None else stopping_daemon(root)
    if pid is None:
        return None
    if info is not None:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return pid
    if not _until(lambda: not pid_alive(pid), timeout):
        raise DaemonError(f"the daemon (pid {pid}) did not stop within {timeout:.0f} s")
    return pid


def daemon_status(root: Path) -> dict[str, Any]:
    """Whether a daemon runs for ``root`` and how it is doing."""
    root = Path(root).resolve()
    info = runfile.running(root)
    out: dict[str, Any] = {
        "running": False,
        "vault": str(root),
        "daemon_json": str(runfile.daemon_file(root)),
    }
    if info is None:
        stopping = stopping_daemon(root)  # daemon.json removed, its batch and save to come
        if stopping is not None:
            out.update(stopping=True, pid=stopping)
        return out
    client = DaemonClient.of(info)
    healthy = client.healthy(2.0)
    status: dict[str, Any] = {}
    if healthy:
        with contextlib.suppress(MemvaultError):
            status = client.status(timeout=5.0)
    daemon = status.get("daemon") or {}
    started = info.started_at or time.time()
    out.update(
        running=True,
        healthy=healthy,
        pid=info.pid,
        url=info.url,
        port=info.port,
        version=info.version,
        uptime_seconds=daemon.get("uptime_seconds", round(time.time() - started, 1)),
        state=daemon.get("state"),
        role=daemon.get("role"),  # reader: the index in PostgreSQL written elsewhere
        lag_seconds=daemon.get("lag_seconds"),
        vectors_pending=(status.get("index") or {}).get("vectors_pending"),
        queue=daemon.get("queue"),
        observer=daemon.get("observer"),
        last_error=daemon.get("last_error"),
        config_changed=bool(daemon.get("config_changed")),
        notes=status.get("notes"),
    )
    return out


__all__ = ["daemon_status", "log_tail", "start_background", "stop_daemon"]
