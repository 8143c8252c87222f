"""The daemon file and the one rule for "is a daemon running for this vault?".

``.memvault/daemon.json`` (mode 0600 from its first byte) says where a daemon
listens and holds its token. Everyone who asks whether a daemon runs asks
``running`` here — the CLI, the MCP server, ``DaemonClient.find``, ``memvault
daemon status|stop`` — so they can never disagree:

    a daemon runs  <=>  daemon.json is well formed, its pid is alive,
                        and that pid holds the vault's writer lock.

The lock is the kernel's word (``/proc/locks`` on Linux), so a daemon.json
left by a ``kill -9`` or naming a reused pid does not count. Whether the
daemon *answers* is a separate question (``DaemonClient.healthy``).

Light on purpose: no engine, no httpx, no uvicorn (``memvault search`` with a
daemon up must start fast).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from memvault.config import STATE_DIR
from memvault.vault.lock import lock_holder, pid_alive

DAEMON_FILE = "daemon.json"
LOG_FILE = "daemon.log"  # `daemon run --log-file`, rotated


@dataclass(frozen=True, slots=True)
class DaemonInfo:
    """What daemon.json says."""

    pid: int
    host: str
    port: int
    token: str
    started_at: float | None = None
    version: str | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "host": self.host,
            "port": self.port,
            "token": self.token,
            "started_at": self.started_at,
            "version": self.version,
        }


def daemon_file(root: Path) -> Path:
    return Path(root) / STATE_DIR / DAEMON_FILE


def read(root: Path) -> DaemonInfo | None:
    """daemon.json if it is there and well formed (whatever the process's state), else None."""
    try:
        data = json.loads(daemon_file(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid, host, port, token = (data.get(k) for k in ("pid", "host", "port", "token"))
    if not (_is_int(pid) and _is_int(port) and isinstance(host, str) and isinstance(token, str)):
        return None
    if pid <= 0 or not 0 < port < 65536 or not host or not token:
        return None
    started = data.get("started_at")
    version = data.get("version")
    return DaemonInfo(
        pid,
        host,
        port,
        token,
        float(started) if isinstance(started, int | float) else None,
        version if isinstance(version, str) else None,
    )


def running(root: Path) -> DaemonInfo | None:
    """The daemon serving ``root``, by the one rule in the module docstring; else None."""
    info = read(root)
    if info is None or not pid_alive(info.pid) or lock_holder(root) != info.pid:
        return None
    return info


def write(root: Path, info: DaemonInfo) -> bool:
    """Write daemon.json atomically, mode 0600 from creation. False when the file system
    keeps no permissions (exFAT, FAT: every file is 0777 there): its access token is
    then readable by every user of this machine."""
    path = daemon_file(root)
    write_private_json(path, info.to_dict())
    return not os.stat(path).st_mode & 0o077


def remove_if_ours(root: Path, pid: int, token: str) -> None:
    """Remove daemon.json if it is still this daemon's (never a successor's)."""
    info = read(root)
    if info is not None and info.pid == pid and info.token == token:
        daemon_file(root).unlink(missing_ok=True)


def remove_stale_temp_files(root: Path) -> None:
    """Temp files left by a predecessor killed while writing daemon.json."""
    for stale in daemon_file(root).parent.glob(f".{DAEMON_FILE}.tmp-*"):
        stale.unlink(missing_ok=True)


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


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


__all__ = [
    "DAEMON_FILE",
    "LOG_FILE",
    "DaemonInfo",
    "daemon_file",
    "pid_alive",
    "read",
    "remove_if_ours",
    "running",
    "write",
    "write_private_json",
]
