"""Helpers shared by engine-level tests."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
from memvault.service import http_api
from memvault.vault import runfile
from memvault.vault.template import init_vault

TEMPLATE = Path(__file__).resolve().parents[1] / "vault-template"
DAEMON_DIR = Path(__file__).resolve().parents[1] / "daemon"  # the source root


def make_vault(tmp_path: Path, name: str = "vault") -> Path:
    """A vault holding the example notes (Sarah Chen, the PostgreSQL decision, ...):
    what `memvault init --example` lays down. Never what a user gets from `init`."""
    root = tmp_path / name
    init_vault(root, example=True)
    return root


def escaping_vault(tmp_path: Path) -> Path:
    """The example vault with a secret beside it, a sibling ``vault-evil`` (a prefix of
    the vault's own name) and symlinks inside it leading out to both: what a path, a
    link or a command must never reach."""
    root = make_vault(tmp_path)
    (tmp_path / "secret.md").write_text("SECRET", encoding="utf-8")
    (tmp_path / "vault-evil").mkdir()
    (tmp_path / "vault-evil" / "secret.md").write_text("SECRET", encoding="utf-8")
    (root / "escape").symlink_to(tmp_path / "vault-evil")
    (root / "escape-file.md").symlink_to(tmp_path / "secret.md")
    return root


def new_vault(tmp_path: Path, name: str = "vault") -> Path:
    """A vault as `memvault init` makes it: structure, templates, settings; no notes."""
    root = tmp_path / name
    init_vault(root)
    return root


def open_vault(root: Path, **kw: Any) -> Vault:
    """``Vault.open`` with the hash embedder; a plain folder of notes is made a vault
    first (its .memvault/ only, so the test's own files stay as they are)."""
    kw.setdefault("embedder", HashEmbedder())
    (root / ".memvault").mkdir(parents=True, exist_ok=True)
    return Vault.open(root, **kw)


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def payment_notes(root: Path, count: int = 14) -> None:
    """Short notes about payments that never name a ticket: the crowd a day log's one
    line naming PAY-4521 is lost in (the rare-word tests of search and context)."""
    for i in range(count):
        write(
            root,
            f"notes/payments-{i}.md",
            f"# Payments {i}\n\nWhat happened with payments this week: the payment retries"
            f" happened again, pay attention to payment {i}.\n",
        )


HOST_LOG = "logs/2026-03-02.md"  # host_log's day log: kestrel-db-04 on its line 13


def host_log(root: Path, filler: str = "Roadmap review, item {h}: onboarding copy.") -> str:
    """A day log of thirty lines (``filler`` each, ``{h}`` its number) naming the host
    kestrel-db-04 once, on line 13: the second identifier of the rare-word tests."""
    lines = [f"- 1{h % 10}:0{h % 10} " + filler.format(h=h) for h in range(30)]
    lines.insert(10, "- 15:05 Restarted kestrel-db-04 twice overnight.")
    write(root, HOST_LOG, "# 2026-03-02\n\n" + "\n".join(lines) + "\n")
    return HOST_LOG


def note(title: str, summary: str = "", body: str = "", **fields: str) -> str:
    fm = [f"title: {title}"] + ([f"summary: {summary}"] if summary else [])
    fm += [f"{k}: {v}" for k, v in fields.items()]
    return (
        "---\n" + "\n".join(fm) + "\n---\n# " + title + "\n\n" + (body or f"About {title}.") + "\n"
    )


def unmarked(text: str) -> str:
    """A listing with each next page's mark (core.page_marks: a command's second number,
    seven digits) written ``M``: ``view_range [41, M]``."""
    return re.sub(r"(with view_range \[\d+, )\d{7}\]", r"\1M]", text)


def snapshot(vault: Vault) -> dict[str, Any]:
    """What an index holds, independent of labels and timestamps."""
    store = vault.engine.store
    notes = {n.path: (n.sha256, n.kind, n.title, n.summary, n.tags) for n in store.notes()}
    chunks = {}
    for path in notes:
        chunks[path] = [
            (c.ord, c.heading, c.line_start, c.line_end, c.text, c.sha)
            for c in store.chunks_of(path)
        ]
    vectors = vault.engine.embedding.vectors
    labels = store.labels()
    assert vectors.labels() == labels, "vector index and db disagree"
    return {
        "notes": notes,
        "chunks": chunks,
        "links": sorted((r.source, r.line, r.target) for r in store.links()),
    }


def rebuilt_snapshot(root: Path, tmp_path: Path) -> dict[str, Any]:
    """Index a copy of the vault from scratch and snapshot it."""
    copy = tmp_path / f"rebuild-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    with open_vault(copy) as v:
        v.sync()
        return snapshot(v)


TOKEN = "t" * 43

MEMORY_UPDATED = "/memories/MEMORY.md was updated too: view it again before editing it"


def as_the_reference_answers(command: dict[str, Any], answer: tuple[bool, str]) -> tuple[bool, str]:
    """A memory-tool answer without what memvault adds to the SDK reference's on purpose:
    a rename's last line saying MEMORY.md changed (docs/AGENTS.md)."""
    ok, text = answer
    if ok and command.get("command") == "rename" and text.endswith("\n" + MEMORY_UPDATED):
        return ok, text[: -len(MEMORY_UPDATED) - 1]
    return answer


def eventually(
    check: Callable[[], Any], timeout: float = 60.0, what: str = "", every: float = 0.05
) -> Any:
    """Poll ``check`` until it gives something true (returned) or ``timeout`` passes:
    waiting on another thread or process, which offers nothing to block on. The one
    wait of the tests: the timeout is generous (a loaded machine), only a failure waits
    it out."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        threading.Event().wait(every)


def run_namespaced(
    namespace: Sequence[str], script: str, *args: str, home: Path | None = None
) -> dict[str, Any]:
    """``python -c script args`` under ``namespace`` (an ``unshare`` command line), with
    memvault from this checkout and no MEMVAULT_ settings; its last line of output read as
    JSON. For what needs the kernel's own rules: a tiny full disk, chmod binding as a user."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "daemon")
    if home is not None:
        env["HOME"] = str(home)
    run = subprocess.run(
        [*namespace, sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    out: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return out


def run_on_tmpfs(tmp_path: Path, size: str, script: str, *args: str) -> dict[str, Any]:
    """``script`` run as ``run_namespaced`` does, in a user and mount namespace of its own
    where ``sys.argv[1]`` (``tmp_path/disk``) is a fresh tmpfs of ``size`` (``"4m"``): a
    real full disk with no root outside it. Its last line of output read as JSON."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = (
        "import subprocess as _sp, sys as _sys\n"
        f"_sp.run(['mount', '-t', 'tmpfs', '-o', 'size={size}', 'tmpfs', _sys.argv[1]], check=True)\n"
    )
    namespace = ["unshare", "--user", "--map-root-user", "--mount"]
    return run_namespaced(namespace, mount + script, str(disk), *args, home=tmp_path / "home")


def memvault_env(tmp_path: Path, model: str | None = "hash", **settings: str) -> dict[str, str]:
    """The environment of a memvault subprocess: this checkout's code, a home of its own
    under ``tmp_path``, no MEMVAULT_ settings but ``settings`` (and the ``model``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(PYTHONPATH=str(DAEMON_DIR), HOME=str(tmp_path / "home"))
    if model:
        env["MEMVAULT_INDEX_MODEL"] = model
    env.update(settings)
    return env


def run_memvault(
    *args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 120, **kw: Any
) -> subprocess.CompletedProcess[str]:
    """``python -m memvault ARGS`` to its end, its output kept (text)."""
    return subprocess.run(
        [sys.executable, "-m", "memvault", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )


class DaemonProcess:
    """``memvault daemon run --vault ROOT`` (or the memvault command ``args``) in a
    subprocess, hash embedder by default, its stderr in a file under ``tmp_path``.
    The one daemon subprocess of the tests."""

    def __init__(
        self,
        tmp_path: Path,
        root: Path,
        *args: str,
        model: str | None = "hash",
        preexec: Callable[[], None] | None = None,
        stdout: bool = False,  # kept for reading (text), else thrown away
        **settings: str,
    ) -> None:
        self.root = root
        self.err_path = tmp_path / f"daemon-stderr-{time.monotonic_ns()}.txt"
        self.err = open(self.err_path, "w")  # noqa: SIM115 - closed in stop()
        argv = [
            sys.executable,
            "-m",
            "memvault",
            *(args or ("daemon", "run", "--vault", str(root))),
        ]
        self.proc = subprocess.Popen(
            argv,
            env=memvault_env(tmp_path, model, **settings),
            stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
            stderr=self.err,
            preexec_fn=preexec,
            text=True,
        )

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")

    def ready(self, timeout: float = 60, answering: bool = False) -> dict[str, Any]:
        """Its daemon.json once written (``answering``: and once /health answers)."""

        def up() -> dict[str, Any] | None:
            code = self.proc.poll()
            assert code is None, f"the daemon exited with {code}: {self.stderr[-2000:]}"
            info = daemon_json(self.root)
            if info is None or info["pid"] != self.proc.pid:
                return None
            if answering:
                import httpx

                try:
                    health = f"http://127.0.0.1:{info['port']}/health"
                    httpx.get(health, timeout=1, trust_env=False).raise_for_status()
                except httpx.HTTPError:
                    return None
            return info

        info: dict[str, Any] = eventually(up, timeout, "the daemon to answer")
        return info

    def kill(self) -> None:
        """SIGKILL: no clean-up of its own (a crash, a power cut)."""
        self.proc.kill()
        self.proc.wait()
        self._close()

    def _close(self) -> None:
        if self.proc.stdout:
            self.proc.stdout.close()
        self.err.close()

    def stop(self, within: float = 30) -> int | None:
        """SIGTERM, and its exit code within ``within`` seconds (None: it had to be
        killed, so it is never left running into the next test)."""
        code: int | None = self.proc.poll()
        if code is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(within)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._close()
        return code


def daemon_idle(d: dict[str, Any]) -> bool:
    """Whether a daemon's part of /status (``Daemon.info()``) says it is idle, the one
    test of it for every wait that then reads what the daemon writes: watching, nothing
    queued, no batch in flight (``lag_seconds``: a batch's sync leaves the queue empty and
    MEMORY.md as it was until it writes it), and no MEMORY.md due at the daemon's next
    catch-up tick (``memory_due``: git done with no file event, a checkout of the same
    commit, a rebase's last commit; the tick is 2 s away, and a wait that took the daemon
    for idle meanwhile read the stale MEMORY.md or folder note)."""
    return bool(
        d.get("state") == "watching"
        and not d.get("queue")
        and d.get("lag_seconds") is None
        and not d.get("memory_due")
    )


def daemon_json(root: Path) -> dict[str, Any] | None:
    """The daemon file's JSON as written, if ``runfile.read`` finds it well formed."""
    if runfile.read(root) is None:
        return None
    data: dict[str, Any] = json.loads(runfile.daemon_file(root).read_text(encoding="utf-8"))
    return data


def daemon_info(port: int) -> dict[str, Any]:
    return {
        "state": "running",
        "pid": os.getpid(),
        "port": port,
        "uptime_seconds": 0.0,
        "observer": "none",
        "queue": 0,
        "lag_seconds": None,
        "last_error": None,
    }


@contextmanager
def running_daemon(vault: Vault, token: str = TOKEN) -> Iterator[int]:
    """The HTTP API on a real loopback socket in a thread, with a daemon.json naming it."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = http_api.create_app(vault, token, lambda: daemon_info(port), port=port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="test-daemon")
    thread.start()
    deadline = time.monotonic() + 60  # (its start, waited for: a loaded machine)
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not server.started:
        server.should_exit = True
        thread.join()
        raise AssertionError("the test daemon's server did not start")
    info = vault.root / ".memvault" / "daemon.json"
    info.write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "host": "127.0.0.1",
                "port": port,
                "token": token,
                "started_at": time.time(),
                "version": "0.1.0",
            }
        ),
        encoding="utf-8",
    )
    try:
        yield port
    finally:
        info.unlink(missing_ok=True)
        server.should_exit = True
        thread.join(10)
        app.state.close()
        sock.close()


def sqlite_pages(path: Path) -> tuple[int, int]:
    """A SQLite file's (pages, free pages among them), read by a connection of its own."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return (
            conn.execute("PRAGMA page_count").fetchone()[0],
            conn.execute("PRAGMA freelist_count").fetchone()[0],
        )
    finally:
        conn.close()


def nearest(index: Any, vector: Any) -> tuple[int, float]:
    """The label a vector index holds nearest ``vector`` and its similarity, asked of
    every label it holds. A walk of hnswlib's graph is approximate: a build on several
    threads (add_items' default) can leave a node that no link reaches, and on random
    vectors with m=8 a full run once found a node's own vector missing from its first
    hits (0.57 against the 1.0 there). Asked for every label, the walk either returns
    all it holds or cannot, when the index answers by its exact search: so the answer
    checks what the index holds, not one walk's luck."""
    return index.query(vector, len(index.labels()))[0]
