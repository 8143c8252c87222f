"""A real PostgreSQL for the tests (pgserver: the server binaries with pgvector), and a
TCP proxy that can stop forwarding (a stalled network)."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any


def start_server() -> Any:
    """pgserver's server in a folder of its own under /tmp (run as root, pgserver runs
    the server as its own user, who cannot enter pytest's 0700 folders; ``stop_server``
    removes it). platformdirs warns on import without a private XDG_RUNTIME_DIR (pytest
    makes warnings errors): one is given, mode 0700, removed
    when the process ends."""
    folder = Path(tempfile.mkdtemp(prefix="mv-pg-"))
    folder.chmod(0o755)
    if "XDG_RUNTIME_DIR" not in os.environ:
        runtime = tempfile.mkdtemp(prefix="mv-xdg-")  # mode 0700; one a process
        atexit.register(shutil.rmtree, runtime, ignore_errors=True)
        os.environ["XDG_RUNTIME_DIR"] = runtime
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        try:
            import pgserver
        except ModuleNotFoundError as e:
            raise RuntimeError(
                f"the team tests need pgserver (a PostgreSQL with pgvector), which has wheels "
                f"for Python 3.9-3.12 only (this is {sys.version.split()[0]}): run them under "
                f"3.11 or 3.12 (pyproject.toml's test extra)"
            ) from e

        return pgserver.get_server(folder / "data", cleanup_mode="stop")


def start_tcp_server() -> tuple[Any, int]:
    """A server of its own listening on 127.0.0.1 (pgserver's listens on a unix socket
    only): what a team's machines reach over the network. Its port; ``stop_server``."""
    server = start_server()  # before pgserver's import (XDG_RUNTIME_DIR)
    import pgserver

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    user = {"user": "pgserver"} if os.geteuid() == 0 else {}
    options = f"-h 127.0.0.1 -p {port} -k {socket_dir(server)}"
    pgserver.pg_ctl(["-w", "restart", "-m", "fast", "-o", options], pgdata=server.pgdata, **user)
    return server, port


def vanish(conn: Any) -> None:
    """The machine at the client's end of psycopg's ``conn`` is gone (power cut, cable
    pulled): its socket closes without a word to the server (TCP_REPAIR: no goodbye, no
    FIN), which hears of it only if it asks (a keepalive probe, answered by a reset)."""
    sock = socket.socket(fileno=os.dup(conn.pgconn.socket))
    sock.setsockopt(socket.IPPROTO_TCP, 19, 1)  # TCP_REPAIR (Linux, root): sends nothing
    sock.close()
    with contextlib.suppress(Exception):
        conn.close()


def stop_server(server: Any) -> None:
    folder = Path(server.pgdata).parent
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


def fresh_schema(server: Any, name: str) -> str:
    """A schema name no other test uses (dropped first if a previous run left it)."""
    import psycopg

    schema = "t_" + hashlib.sha256(name.encode()).hexdigest()[:16]
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return schema


def socket_dir(server: Any) -> str:
    return str(server.get_uri()).split("host=", 1)[1].split("&")[0]


TERMINATE = b"X\x00\x00\x00\x04"  # the wire protocol's goodbye from a client


class StallProxy:
    """127.0.0.1:port -> the server's unix socket; ``stall()`` stops forwarding (the
    connections stay open, nothing moves: a network that stops answering). ``linger``:
    a client's goodbye (Terminate) is not passed on and its server session outlives its
    close, as a backend slow to exit (a loaded server, a far network) does for a while."""

    def __init__(self, server: Any, *, linger: bool = False) -> None:
        self.linger = linger
        self.target = os.path.join(socket_dir(server), ".s.PGSQL.5432")
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.listener.settimeout(0.1)  # so the accept loop sees ``closed``
        self.port = self.listener.getsockname()[1]
        self.stalled = threading.Event()
        self.closed = threading.Event()
        self._socks: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, name="stall-proxy", daemon=True)
        self._thread.start()

    def dsn(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def stall(self) -> None:
        self.stalled.set()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.target)
            self._socks += [client, upstream]
            for a, b, ours in ((client, upstream, True), (upstream, client, False)):
                threading.Thread(target=self._pump, args=(a, b, ours), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, from_client: bool) -> None:
        while not self.closed.is_set():
            try:
                data = src.recv(65536)
            except OSError:
                return
            if not data:
                return
            if self.linger and from_client and data.endswith(TERMINATE):
                data = data[: -len(TERMINATE)]
                if not data:
                    continue
            while self.stalled.is_set() and not self.closed.is_set():
                self.closed.wait(0.05)  # hold the bytes: nothing moves
            try:
                dst.sendall(data)
            except OSError:
                return

    def close(self) -> None:
        self.closed.set()
        self._thread.join()
        self.listener.close()
        for s in self._socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def kill_server(server: Any) -> None:
    """Stop the server at once, as a crash does (``pg_ctl stop -m immediate``: no
    checkpoint, recovery on the next start); run as pgserver runs it (its own user
    when we are root)."""
    import pgserver

    user = {"user": "pgserver"} if os.geteuid() == 0 else {}
    pgserver.pg_ctl(["-w", "stop", "-m", "immediate"], pgdata=server.pgdata, **user)


def git_out(root: Path, *args: str) -> str:
    """``git -C root ARGS`` as a person of no name runs it; its stdout (a failure raises)."""
    done = subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=a@x", "-c", "user.name=a", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def committed(root: Path, remote: Path | None = None) -> None:
    """The vault at ``root`` made a git repository of one commit on ``main``, as a team
    keeps it (``.memvault/`` out but its config.toml); ``remote``: a bare clone of it made
    there (not yet ``root``'s upstream)."""
    (root / ".gitignore").write_text(".memvault/*\n!.memvault/config.toml\n", encoding="utf-8")
    git_out(root, "init", "-q", "-b", "main")
    git_out(root, "add", "-A")
    git_out(root, "commit", "-qm", "the vault")
    if remote is not None:
        subprocess.run(["git", "clone", "-q", "--bare", str(root), str(remote)], check=True)


def team_clones(tmp_path: Path) -> tuple[Path, Path]:
    """Machine a's clone (the writer's: the example vault, committed, its upstream a bare
    remote) and machine b's clone of that remote."""
    from helpers import make_vault

    a = make_vault(tmp_path / "machine-a", "team")
    remote = tmp_path / "remote.git"
    committed(a, remote)
    git_out(a, "remote", "add", "origin", str(remote))
    git_out(a, "fetch", "-q", "origin")
    git_out(a, "branch", "-q", "--set-upstream-to=origin/main")
    b = tmp_path / "machine-b" / "team"
    b.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(remote), str(b)], check=True)
    return a, b


def team_settings(dsn: str, monkeypatch: Any) -> dict[str, str]:
    """The team's index settings (store, DSN, the test's schema), set in this process's
    environment by ``monkeypatch`` and returned, for a subprocess's."""
    settings = {
        "MEMVAULT_INDEX_STORE": "postgres",
        "MEMVAULT_INDEX_DSN": dsn,
        "MEMVAULT_INDEX_SCHEMA": os.environ["MEMVAULT_INDEX_SCHEMA"],
    }
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    return settings
