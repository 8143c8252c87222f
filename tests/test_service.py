"""The daemon's life cycle: real subprocesses (hash embedder) and one in-process daemon."""

from __future__ import annotations

import json
import os
import plistlib
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from helpers import (
    DaemonProcess,
    daemon_idle,
    daemon_json,
    eventually,
    make_vault,
    memvault_env,
    note,
    open_vault,
    rebuilt_snapshot,
    run_memvault,
    snapshot,
    write,
)
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
from memvault.interfaces.cli import app as cli_app
from memvault.service.daemon import Daemon
from memvault.service.units import install_service, service_name
from memvault.vault import runfile
from memvault.vault.lock import lock_holder
from memvault.vault.runfile import daemon_file

FIELDS = {"pid", "host", "port", "token", "started_at", "version"}


def cli(
    tmp_path: Path, *args: str, timeout: float = 60, **kw: Any
) -> subprocess.CompletedProcess[str]:
    return run_memvault(*args, env=memvault_env(tmp_path, **kw), timeout=timeout)


class Proc(DaemonProcess):
    """A `memvault daemon run` subprocess (or ``args``), its stderr in a file, its
    stdout kept."""

    def __init__(self, tmp_path: Path, root: Path, *args: str, model: str | None = "hash") -> None:
        super().__init__(tmp_path, root, *args, model=model, stdout=True)

    def info(self, timeout: float = 60) -> dict[str, Any]:  # (a start on a loaded machine)
        return self.ready(timeout, answering=True)


def url(info: dict[str, Any], path: str) -> str:
    return f"http://127.0.0.1:{info['port']}{path}"


def api(info: dict[str, Any], method: str, path: str, **kw: Any) -> httpx.Response:
    return httpx.request(
        method,
        url(info, path),
        trust_env=False,
        timeout=30,
        headers={"Authorization": f"Bearer {info['token']}"},
        **kw,
    )


def settled(info: dict[str, Any]) -> dict[str, Any] | None:
    """The daemon's part of /status once it is idle (``helpers.daemon_idle``), else None."""
    d: dict[str, Any] = api(info, "GET", "/status").json()["daemon"]
    return d if daemon_idle(d) else None


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[Proc, dict[str, Any]]]:
    root = make_vault(tmp_path)
    proc = Proc(tmp_path, root)
    try:
        yield proc, proc.info()
    finally:
        proc.stop()


def test_daemon_starts_with_a_private_daemon_json_and_answers(
    running: tuple[Proc, dict[str, Any]],
) -> None:
    proc, info = running
    path = daemon_file(proc.root)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert set(info) == FIELDS and info["host"] == "127.0.0.1" and len(info["token"]) == 43
    assert info["version"] == httpx.get(url(info, "/health"), trust_env=False).json()["version"]
    d = eventually(lambda: settled(info), what="the start-up reconcile")
    assert d["pid"] == proc.proc.pid and d["observer"] == "inotify" and d["last_error"] is None
    eventually(lambda: api(info, "GET", "/status").json()["daemon"]["model"] == "ready")
    assert not list(path.parent.glob(".daemon.json.tmp-*"))


def test_a_second_daemon_refuses_naming_the_pid(
    tmp_path: Path, running: tuple[Proc, dict[str, Any]]
) -> None:
    proc, info = running
    second = cli(tmp_path, "daemon", "run", "--vault", str(proc.root), timeout=30)
    assert second.returncode == 1
    assert str(proc.proc.pid) in second.stderr and "already running" in second.stderr
    assert daemon_json(proc.root) == info  # the running daemon's file is untouched


@pytest.mark.slow
def test_200_parallel_logs_with_the_daemon_up_all_succeed_each_once(
    tmp_path: Path, running: tuple[Proc, dict[str, Any]]
) -> None:
    """under load a 0.5 s /health probe timed out, the CLI fell back to an
    in-process writer, and 14-17 of 200 exited 6 ("already writing")."""
    from concurrent.futures import ThreadPoolExecutor

    proc, _ = running

    def log(i: int) -> subprocess.CompletedProcess[str]:
        return cli(
            tmp_path, "log", f"load entry {i:03} done", "--vault", str(proc.root), timeout=600
        )

    with ThreadPoolExecutor(50) as pool:
        results = list(pool.map(log, range(200)))
    failed = [(r.returncode, r.stderr[-300:]) for r in results if r.returncode != 0]
    assert failed == []
    text = "".join(p.read_text(encoding="utf-8") for p in (proc.root / "logs").glob("*.md"))
    counts = [text.count(f"load entry {i:03} done") for i in range(200)]
    assert counts == [1] * 200  # each once: a write that reached the daemon is never resent
    assert proc.proc.poll() is None  # and the daemon is still the one writer


def test_sigterm_mid_burst_exits_zero_fast_and_leaves_a_consistent_vault(
    tmp_path: Path, running: tuple[Proc, dict[str, Any]]
) -> None:
    proc, info = running
    eventually(lambda: settled(info))
    for i in range(60):
        write(proc.root, f"burst/n{i}.md", note(f"Burst {i}", body=f"word{i}"))
    started = time.monotonic()
    proc.proc.send_signal(signal.SIGTERM)
    assert proc.proc.wait(5) == 0, proc.stderr
    assert time.monotonic() - started < 5
    assert not daemon_file(proc.root).exists()
    assert lock_holder(proc.root) is None
    with open_vault(proc.root) as v:  # the lock is free; catching up converges
        v.sync()
        assert snapshot(v) == rebuilt_snapshot(proc.root, tmp_path)


def test_sigint_exits_cleanly(running: tuple[Proc, dict[str, Any]]) -> None:
    proc, _ = running
    proc.proc.send_signal(signal.SIGINT)
    assert proc.proc.wait(5) == 0
    assert not daemon_file(proc.root).exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tgkill(2) is Linux's")
@pytest.mark.parametrize(("sig", "which"), [(signal.SIGTERM, -1), (signal.SIGINT, 0)])
def test_a_stop_signal_taken_by_another_thread_still_stops_the_daemon(
    running: tuple[Proc, dict[str, Any]], sig: signal.Signals, which: int
) -> None:
    """CI: a daemon still running 30 s after SIGTERM. The kernel gives a process's
    signal to any thread; one that is not the main thread only flags it, and the main
    thread, asleep in a lock's wait, never looked. Sent here to one thread on purpose."""
    import ctypes

    proc, _ = running
    pid = proc.proc.pid
    others = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
    assert others  # uvicorn's, the watcher's, the vector lane's
    tgkill = ctypes.CDLL(None, use_errno=True).tgkill
    assert tgkill(pid, others[which], int(sig)) == 0, os.strerror(ctypes.get_errno())
    assert proc.proc.wait(10) == 0, proc.stderr
    assert not daemon_file(proc.root).exists()
    assert lock_holder(proc.root) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tgkill(2) is Linux's")
def test_signal_wait_reads_the_signal_whichever_thread_took_it() -> None:
    """In-process: the handler here does nothing, so only the wakeup fd can end the wait."""
    import ctypes

    from memvault.service.daemon import SignalWait

    done, timed_out = threading.Event(), threading.Event()
    tid: list[int] = []
    asleep = threading.Event()

    def sleeper() -> None:
        tid.append(threading.get_native_id())
        asleep.set()
        done.wait(30)

    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    waiting = SignalWait()
    guard = threading.Timer(20, lambda: (timed_out.set(), done.set(), waiting.wake()))
    try:
        threading.Thread(target=sleeper, daemon=True).start()
        assert asleep.wait(10)
        guard.start()
        assert ctypes.CDLL(None).tgkill(os.getpid(), tid[0], int(signal.SIGTERM)) == 0
        waiting.wait(done)
        assert done.is_set() and not timed_out.is_set()
    finally:
        guard.cancel()
        waiting.close()
        signal.signal(signal.SIGTERM, previous)
        done.set()


def test_signal_wait_ends_when_another_thread_asks() -> None:
    from memvault.service.daemon import SignalWait

    done = threading.Event()
    waiting = SignalWait()
    try:
        threading.Timer(0.1, lambda: (done.set(), waiting.wake())).start()
        waiting.wait(done)  # returns: the wake byte ends select(), and done is set
        assert done.is_set()
    finally:
        waiting.close()
    waiting.wake()  # after close: a no-op, never an error


@pytest.mark.parametrize("how", ["renamed", "deleted"])
def test_a_daemon_whose_vault_folder_goes_stops_and_leaves_no_folder_behind(
    tmp_path: Path, running: tuple[Proc, dict[str, Any]], how: str
) -> None:
    """Obsidian's "Manage vaults" renames the vault folder. The daemon went on: its next
    sync read the vault as empty (every note dropped from the index), wrote a new
    MEMORY.md and .memvault/ at the old path, and answered for an empty index."""
    import shutil

    proc, info = running
    eventually(lambda: settled(info))
    moved = tmp_path / "renamed-vault"
    shutil.move(proc.root, moved)
    if how == "deleted":
        shutil.rmtree(moved)
    else:  # a save in the renamed vault: the events still come
        write(moved, "people/after.md", note("After", body="written after the rename"))
    assert proc.proc.wait(15) == 75, proc.stderr
    assert "is gone" in proc.stderr
    assert not proc.root.exists()  # nothing made at the old path
    if how == "renamed":
        assert runfile.running(moved) is None  # (its daemon.json, at the new path, is stale)
        with open_vault(moved) as v:  # the index was left whole: only the new note to add
            report = v.sync()
            assert report.created == ("people/after.md",) and report.deleted == ()


def test_a_daemon_whose_memvault_folder_is_deleted_starts_afresh_and_stays_the_one_writer(
    tmp_path: Path, running: tuple[Proc, dict[str, Any]]
) -> None:
    """`rm -rf .memvault` (or `git clean -fdx`) took the lock file with it: `memvault
    daemon start` then started a second daemon beside the first, which went on writing
    MEMORY.md into an index no one could see, invisible to `daemon status` and `stop`."""
    import shutil

    proc, info = running
    eventually(lambda: settled(info))
    shutil.rmtree(proc.root / ".memvault")

    def afresh() -> dict[str, Any] | None:
        assert proc.proc.poll() is None, proc.stderr
        new = daemon_json(proc.root)
        return new if new is not None and new["token"] != info["token"] else None

    info2 = eventually(afresh, 30, "the daemon to start afresh")
    assert "deleted or replaced" in proc.stderr
    assert info2["pid"] == proc.proc.pid == lock_holder(proc.root)  # the same process
    second = cli(tmp_path, "daemon", "run", "--vault", str(proc.root), timeout=30)
    assert second.returncode == 1 and "already running" in second.stderr
    eventually(lambda: settled(info2))
    write(proc.root, "people/after.md", note("After", body="okapi"))
    eventually(lambda: "[[people/after]]" in (proc.root / "MEMORY.md").read_text("utf-8"))
    hits = api(info2, "POST", "/search", json={"query": "PostgreSQL"}).json()["hits"]
    assert hits


def test_a_config_change_starts_the_daemon_again_on_the_new_settings(
    tmp_path: Path, running: tuple[Proc, dict[str, Any]]
) -> None:
    """A field test: a person edited config.toml under a running daemon; nothing
    happened and nothing said so. Then (the git field test) a pull brought a teammate's
    settings and the daemon wrote MEMORY.md back to its own. It now starts again on
    settings that changed, once they load; a comment is no change, and settings that
    do not load are said and wait, the daemon serving on its own meanwhile."""
    proc, info = running
    eventually(lambda: settled(info))
    config = proc.root / ".memvault" / "config.toml"
    original = config.read_bytes()
    # a Vault opened through the daemon before (the Python API's, a script's) lost it at
    # the restart for good: "cannot reach the daemon" (its new port and token unknown)
    kept = Vault.open(proc.root)
    assert kept.daemon is not None
    assert api(info, "GET", "/status").json()["daemon"]["config_changed"] is False
    config.write_bytes(original + b"\n# a comment changes no setting\n")
    time.sleep(5)  # the daemon looks every 2 s
    assert daemon_json(proc.root)["token"] == info["token"]
    assert api(info, "GET", "/status").json()["daemon"]["config_changed"] is False
    config.write_bytes(b"[memory\n")  # no longer parses: said, and waits
    eventually(lambda: api(info, "GET", "/status").json()["daemon"]["config_changed"])
    said = cli(tmp_path, "daemon", "status", "--vault", str(proc.root))
    assert said.returncode == 0 and "config.toml changed since the daemon started" in said.stdout
    eventually(lambda: "config.toml changed, but the daemon keeps its settings" in proc.stderr)
    assert daemon_json(proc.root)["token"] == info["token"] and proc.proc.poll() is None
    assert b"max_lines = 80" in original
    config.write_bytes(original.replace(b"max_lines = 80", b"max_lines = 60"))

    def again() -> dict[str, Any] | None:
        now = daemon_json(proc.root)
        return now if now is not None and now["token"] != info["token"] else None

    info2 = eventually(again, 30, "the daemon to start again")
    assert info2["pid"] == proc.proc.pid
    assert "started afresh: config.toml changed: on its new settings" in proc.stderr
    eventually(lambda: settled(info2))
    d = api(info2, "GET", "/status").json()
    assert d["daemon"]["config_changed"] is False and d["memory"]["max_lines"] == 60
    with kept:
        assert kept.status()["memory"]["max_lines"] == 60
        assert kept.log("a line through the daemon started again").path


def test_a_daemon_whose_memvault_folder_is_deleted_puts_back_config_toml(
    tmp_path: Path, running: tuple[Proc, dict[str, Any]]
) -> None:
    """`rm -rf .memvault` under a running daemon took the person's config.toml with it;
    the daemon started afresh on the defaults, silently. It now puts back the text it
    last saw, edits made while it ran included, and says so in the new log."""
    import shutil

    proc, info = running
    eventually(lambda: settled(info))
    config = proc.root / ".memvault" / "config.toml"
    edited = config.read_bytes().replace(b"max_lines = 80", b"max_lines = 60  # mine")
    config.write_bytes(edited)
    eventually(
        lambda: (daemon_json(proc.root) or info)["token"] != info["token"], 30, "a new start"
    )
    info = daemon_json(proc.root)  # on the edited settings
    config.write_bytes(edited + b"# and a comment since\n")
    time.sleep(3)  # seen (a comment: no new start)
    shutil.rmtree(proc.root / ".memvault")

    def afresh() -> dict[str, Any] | None:
        assert proc.proc.poll() is None, proc.stderr
        new = daemon_json(proc.root)
        return new if new is not None and new["token"] != info["token"] else None

    info2 = eventually(afresh, 30, "the daemon to start afresh")
    assert config.read_bytes() == edited + b"# and a comment since\n"
    assert "started afresh: .memvault/ was deleted under the daemon; config.toml put back" in (
        proc.stderr
    )
    # what it runs on now is that file: no change to say
    assert api(info2, "GET", "/status").json()["daemon"]["config_changed"] is False
    assert not list(config.parent.glob(".config.toml.*"))


def test_a_link_a_rename_could_not_follow_is_said_by_the_daemon(
    tmp_path: Path, running: tuple[Proc, dict[str, Any]]
) -> None:
    """A field test: `memvault sync` warns when a rename leaves a link as it is (a name
    with `#` no wikilink can hold); the daemon, syncing the same rename, said nothing,
    in its log or in `status`."""
    proc, info = running
    eventually(lambda: settled(info))
    write(proc.root, "people/links.md", "# Links\n\n- [[russian2]]\n")
    write(proc.root, "people/russian2.md", "# R\n\nx\n")
    eventually(lambda: settled(info))
    (proc.root / "people" / "russian2.md").rename(proc.root / "people" / "Russian #3.md")

    def warned() -> list[str]:
        said = api(info, "GET", "/status").json()["daemon"]["warnings"]
        return [w for w in said if "left as it is" in w]

    said = eventually(warned, what="the warning in /status")
    (mine,) = [w for w in said if w.startswith("people/links.md: a link to 'russian2' was left")]
    assert "a wikilink cannot hold any of # | ^ [ ]" in mine
    eventually(lambda: "left as it is" in proc.stderr)
    status = cli(tmp_path, "status", "--vault", str(proc.root))
    assert "the last syncs warned:" in status.stdout and mine in status.stdout, status.stdout
    assert "[[russian2]]" in (proc.root / "people" / "links.md").read_text("utf-8")


def test_restart_after_kill_picks_up_changes_made_while_down(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    first = Proc(tmp_path, root)
    first.info()
    first.kill()
    first.stop()
    write(root, "people/offline.md", note("Offline", body="written while down: ocelot"))
    second = Proc(tmp_path, root)
    try:
        info = second.info()  # the stale daemon.json of the killed one is replaced
        assert info["pid"] == second.proc.pid
        hits = eventually(
            lambda: [
                h
                for h in api(info, "POST", "/search", json={"query": "ocelot"}).json()["hits"]
                if "ocelot" in h["text"]
            ]
        )
        assert hits[0]["path"] == "people/offline.md"
    finally:
        second.stop()


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            st = os.stat(os.path.join(dirpath, name))
            out[os.path.join(dirpath, name)] = (st.st_mtime_ns, st.st_size)
    return out


@pytest.mark.slow
def test_an_idle_daemon_writes_nothing(running: tuple[Proc, dict[str, Any]]) -> None:
    proc, info = running
    eventually(lambda: settled(info))
    vectors = proc.root / ".memvault" / "vectors.bin"
    # settled is the structure's; the vector lane saves its file after, once idle
    eventually(vectors.exists, 30, "the first index's vectors saved")
    saved = vectors.stat().st_mtime_ns
    write(proc.root, "people/last.md", note("Last", body="the last change: narwhal"))
    eventually(
        lambda: (
            "narwhal" in json.dumps(api(info, "POST", "/search", json={"query": "narwhal"}).json())
        )
    )
    # the burst's vectors are saved once the vault is quiet, not only at the next event
    eventually(lambda: vectors.stat().st_mtime_ns != saved, 15, "the idle save")
    eventually(lambda: settled(info))
    before = _tree(proc.root)
    threading.Event().wait(10)  # the observation window itself
    assert _tree(proc.root) == before
    assert proc.proc.poll() is None


def test_events_stream_reports_a_file_written_on_disk(
    running: tuple[Proc, dict[str, Any]],
) -> None:
    proc, info = running
    eventually(lambda: settled(info))
    headers = {"Authorization": f"Bearer {info['token']}"}
    with httpx.stream(
        "GET", url(info, "/events"), headers=headers, trust_env=False, timeout=20
    ) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        lines = r.iter_lines()
        assert next(lines) == ": connected"
        write(proc.root, "people/sse.md", note("Sse"))
        kind = None
        for line in lines:
            if line.startswith("event: "):
                kind = line[7:]
            if line.startswith("data: ") and kind == "sync":
                assert json.loads(line[6:])["created"] == ["people/sse.md"]
                break


def _sse_events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    kind = ""
    for line in lines:
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            yield kind, json.loads(line[6:])


def test_events_report_indexing_progress_then_watching(
    running: tuple[Proc, dict[str, Any]],
) -> None:
    """What a status bar shows, live: a burst of notes is `indexing` with its counts,
    while it lasts, then `watching` with nothing pending."""
    proc, info = running
    eventually(lambda: settled(info))
    headers = {"Authorization": f"Bearer {info['token']}"}
    burst = 1500
    statuses: list[dict[str, Any]] = []
    with httpx.stream(
        "GET", url(info, "/events"), headers=headers, trust_env=False, timeout=60
    ) as r:
        events = _sse_events(r.iter_lines())
        kind, first = next(events)
        assert kind == "status" and first["state"] == "watching" and first["progress"] is None
        assert first["failed_batches"] == 0 and first["observer_alive"] is True
        for i in range(burst):
            write(proc.root, f"projects/burst-{i:04d}.md", note(f"Burst {i}", body=f"item {i}"))
        created = 0  # the burst may come in more than one batch
        for kind, data in events:
            if kind == "sync":
                created += len(data["created"])
            elif kind == "status":
                statuses.append(data)
                idle = data["state"] == "watching" and data["lag_seconds"] is None
                if created == burst and idle:
                    break
    indexing = [s for s in statuses if s["state"] == "indexing"]
    assert indexing, statuses
    # indexing is either lane at work: the structure's notes (done counts notes committed:
    # 0 until the first batch is in), or the vector lane's chunks
    for s in indexing:
        notes, vectors = s["progress"], s["vectors"]["progress"]
        assert notes is not None or vectors is not None, s
        if notes is not None:
            assert 0 <= notes["done"] <= notes["total"] <= burst
        if vectors is not None:
            assert vectors["stage"] == "vectors" and 0 <= vectors["done"] <= vectors["total"]
    assert any(s["lag_seconds"] is not None for s in statuses)
    assert statuses[-1]["progress"] is None and statuses[-1]["queue"] == 0


def test_start_status_stop_round_trip(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    vault = str(root)
    try:
        r = cli(tmp_path, "daemon", "status", "--vault", vault)
        assert r.returncode == 1 and "no memvault daemon" in r.stdout
        r = cli(tmp_path, "daemon", "start", "--vault", vault)
        assert r.returncode == 0, r.stderr
        info = daemon_json(root)
        assert info is not None and str(info["pid"]) in r.stdout
        r = cli(tmp_path, "daemon", "status", "--vault", vault, "--json")
        data = json.loads(r.stdout)
        assert r.returncode == 0 and data["running"] and data["healthy"]
        assert data["pid"] == info["pid"] and data["port"] == info["port"]
        assert "uptime_seconds" in data and "lag_seconds" in data
        r = cli(tmp_path, "daemon", "start", "--vault", vault)
        assert r.returncode == 1 and str(info["pid"]) in r.stderr
        r = cli(tmp_path, "daemon", "stop", "--vault", vault)
        assert r.returncode == 0 and "stopped" in r.stdout
        assert runfile.running(root) is None and not daemon_file(root).exists()
        assert "memvault daemon stopped" in (root / ".memvault" / "daemon.log").read_text()
        assert cli(tmp_path, "daemon", "stop", "--vault", vault).returncode == 1
        assert cli(tmp_path, "daemon", "status", "--vault", vault).returncode == 1
    finally:
        left = runfile.running(root)
        if left is not None:
            os.kill(left.pid, signal.SIGKILL)


def test_start_shows_the_log_when_the_daemon_dies(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    (root / ".memvault" / "config.toml").write_text("[daemon]\nport = 'many'\n")
    r = cli(tmp_path, "daemon", "start", "--vault", str(root))
    assert r.returncode == 3  # the daemon's own exit code: a config error, as `daemon run`'s
    assert "exited at start" in r.stderr and "daemon.port" in r.stderr
    # fixed, then another mistake: this start's lines only, not the last one's (a field
    # test was shown the error it had fixed already)
    (root / ".memvault" / "config.toml").write_text("[vault]\nquiet_ms = 'fast'\n")
    r = cli(tmp_path, "daemon", "start", "--vault", str(root))
    assert r.returncode == 3 and "vault.quiet_ms" in r.stderr
    assert "daemon.port" not in r.stderr


def test_start_exits_with_the_code_of_a_daemon_that_cannot_take_the_lock(tmp_path: Path) -> None:
    # a field test found 1 ("found problems") here, where `daemon run`, `up`, `sync` and
    # `log` exit 7 (storage): a service manager restarts on 7
    root = make_vault(tmp_path)
    lock = root / ".memvault" / "lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()
    r = cli(tmp_path, "daemon", "start", "--vault", str(root))
    assert r.returncode == 7, r.stderr
    assert "exited at start" in r.stderr and "cannot open the writer's lock" in r.stderr
    assert cli(tmp_path, "daemon", "run", "--vault", str(root)).returncode == 7


@pytest.mark.parametrize("case", ["log-is-a-folder", "lock-is-a-fifo", "config-is-a-folder"])
def test_start_says_what_is_wrong_with_memvaults_own_files(tmp_path: Path, case: str) -> None:
    """Found by a field test: a folder where the log goes named Python's binary (exit 1);
    a FIFO where the lock goes hung `daemon start` for good (its read of the lock file
    blocked); a folder where config.toml goes was taken for defaults (exit 0)."""
    root = make_vault(tmp_path)
    state = root / ".memvault"
    if case == "log-is-a-folder":
        (state / "daemon.log").mkdir()
        code, said = 7, "daemon.log: cannot open the daemon's log"
    elif case == "lock-is-a-fifo":
        (state / "lock").unlink(missing_ok=True)
        os.mkfifo(state / "lock")
        code, said = 7, "cannot open the writer's lock (not a regular file)"
    else:
        (state / "config.toml").unlink()
        (state / "config.toml").mkdir()
        code, said = 3, "config.toml: not a file"
    r = cli(tmp_path, "daemon", "start", "--timeout", "20", "--vault", str(root), timeout=60)
    assert r.returncode == code, r.stderr
    assert said in r.stderr
    assert runfile.running(root) is None


def test_up_inits_indexes_and_serves(tmp_path: Path) -> None:
    root = tmp_path / "fresh"  # a folder of a person's notes, not yet a vault
    write(root, "decisions/db.md", note("Database", body="We chose postgres for the users."))
    proc = Proc(tmp_path, root, "up", str(root))
    try:
        info = proc.info()
        assert (root / "MEMORY.md").is_file()
        hits = api(info, "POST", "/search", json={"query": "postgres"}).json()["hits"]
        assert [h["path"] for h in hits] == ["decisions/db.md"]  # theirs, no example notes
        eventually(
            lambda: str(daemon_file(root)) in proc.stderr and f":{info['port']}" in proc.stderr
        )
        proc.proc.send_signal(signal.SIGINT)
        assert proc.proc.wait(5) == 0
        assert proc.proc.stdout is not None
        said = proc.proc.stdout.read()
        assert "1 note was already here, kept as it is" in said and "+ MEMORY.md" in said
        assert "next: memvault up" not in said  # it is running already
    finally:
        proc.stop()


def _indexed_notes(root: Path) -> int:
    """How many notes a running daemon's index holds so far (0 while it has none)."""
    db = root / ".memvault" / "index.db"
    if not db.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM notes WHERE kind = 'note'").fetchone()[0])
    except sqlite3.Error:  # not made yet, or mid-migration
        return 0


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_ups_first_indexing_stops_it_cleanly_with_exit_0(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """SIGTERM during the first indexing exited 143 with no message."""
    root = tmp_path / "many"
    for i in range(2000):
        write(root, f"notes/n{i:04}.md", note(f"Note {i}", body=f"Paragraph about topic {i}."))
    proc = Proc(tmp_path, root, "up", str(root))
    try:
        # as soon as the first batch is in: 2,000 notes take longer to index than this
        # takes to notice it (a pause here let a quiet machine finish indexing and serve
        # before the signal); up serves from its first second, so index.db alone can
        # exist before any note is committed
        eventually(lambda: _indexed_notes(root) > 0, what="the first batch of notes")
        proc.proc.send_signal(sig)
        assert proc.proc.wait(30) == 0, proc.stderr
    finally:
        proc.stop()
    said = re.search(
        r"stopped \((\w+)\) while indexing: ([\d,]+) of 2,000 notes indexed; the rest",
        proc.stderr,
    )
    # on a busy machine the signal may come once the notes are in and only their
    # vectors are being made: said as such, never as a count of notes
    embedding = re.search(
        r"stopped \((\w+)\) while embedding: every note is indexed .*; ([\d,]+) of "
        r"([\d,]+) chunks have their vectors",
        proc.stderr,
    )
    assert said or embedding, proc.stderr
    assert (said or embedding).group(1) == sig.name  # type: ignore[union-attr]
    assert not daemon_file(root).exists() and lock_holder(root) is None
    with open_vault(root, read_only=True) as v:  # what it said is what the index holds
        files = len(v.engine.store.manifest())  # notes and MEMORY.md
        if said:
            assert files == int(said.group(2).replace(",", "")) > 0
        else:
            assert embedding is not None and files == 2001
            done, total = (int(embedding.group(i).replace(",", "")) for i in (2, 3))
            assert v.pending_vectors()[0] == total - done > 0
    done = cli(tmp_path, "sync", "--vault", str(root), "--json")  # the rest, at the next run
    assert done.returncode == 0, done.stderr
    status = json.loads(cli(tmp_path, "status", "--vault", str(root), "--json").stdout)
    assert status["notes"] == 2000 and status["index"]["matches_disk"]


# -- install --------------------------------------------------------------------------------------


def test_install_writes_a_systemd_user_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault(tmp_path, "My Vault")
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    runner = CliRunner()
    r = runner.invoke(cli_app, ["daemon", "install", "--vault", str(root)])
    assert r.exit_code == 0, r.output
    # the folder's name and a hash of its path (names collided)
    unit = home / ".config" / "systemd" / "user" / f"memvault-{service_name(root)}.service"
    assert unit.name.startswith("memvault-my-vault-")
    text = unit.read_text()
    assert (
        f'ExecStart="{Path(sys.executable).absolute()}" "-m" "memvault" "daemon" "run" '
        f'"--vault" "{root.resolve()}"' in text
    )
    assert "Restart=on-failure" in text and "WantedBy=default.target" in text
    assert (
        f"systemctl --user daemon-reload && systemctl --user enable --now {unit.name}" in r.output
    )
    r = runner.invoke(cli_app, ["daemon", "install", "--vault", str(root)])
    assert r.exit_code == 0 and "already up to date" in r.output
    unit.write_text("[Service]\nExecStart=/bin/other\n")
    r = runner.invoke(cli_app, ["daemon", "install", "--vault", str(root)])
    assert r.exit_code == 5 and "--force" in r.output  # refused: 5, not the lock's 6
    assert unit.read_text() == "[Service]\nExecStart=/bin/other\n"
    r = runner.invoke(cli_app, ["daemon", "install", "--vault", str(root), "--force"])
    assert r.exit_code == 0 and unit.read_text() == text


def test_install_respects_xdg_config_home_and_writes_a_launchd_plist(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    xdg = tmp_path / "xdg"
    got = install_service(
        root, platform="linux", env={"HOME": str(tmp_path / "h"), "XDG_CONFIG_HOME": str(xdg)}
    )
    name = f"memvault-{service_name(root)}.service"
    assert got.path == xdg / "systemd" / "user" / name and got.written
    mac = install_service(root, platform="darwin", env={"HOME": str(tmp_path / "h")})
    assert mac.path.parent == tmp_path / "h" / "Library" / "LaunchAgents"
    plist = plistlib.loads(mac.path.read_bytes())
    assert plist["ProgramArguments"][1:] == [
        "-m",
        "memvault",
        "daemon",
        "run",
        "--vault",
        str(root.resolve()),
        "--log-file",
    ]
    assert plist["RunAtLoad"] is True and "launchctl" in mac.enable


# -- in process -----------------------------------------------------------------------------------


def test_in_process_daemon_serves_watches_and_stops_clean(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    daemon = Daemon.open(root, embedder=HashEmbedder(), port=0)
    daemon.start()
    try:
        info = daemon_json(root)
        assert info is not None and info["pid"] == os.getpid() and info["token"] == daemon.token
        write(root, "people/inproc.md", note("Inproc", body="capybara"))
        eventually(
            lambda: any(
                "capybara" in h["text"]
                for h in api(info, "POST", "/search", json={"query": "capybara"}).json()["hits"]
            )
        )
        d = eventually(lambda: daemon.info()["batches"] >= 2 and daemon.info())
        assert d["state"] == "watching" and d["port"] == info["port"]
    finally:
        daemon.shutdown()
    assert not daemon_file(root).exists() and lock_holder(root) is None


def test_status_says_the_daemon_is_failing_to_sync_and_why_until_it_recovers(
    tmp_path: Path,
) -> None:
    """The disk full (here: the index's files made immutable): the index falls behind,
    and `memvault status` said only "index is behind" and "daemon: watching" -- the
    reason was in a log that may be on that same full disk."""
    root = make_vault(tmp_path)
    daemon = Daemon.open(root, embedder=HashEmbedder(), port=0)
    daemon.start()
    state = root / ".memvault"
    frozen = [state / "index.db", state / "index.db-wal"]
    try:
        eventually(lambda: daemon.info()["state"] == "watching" and daemon.info()["batches"])
        subprocess.run(["chattr", "+i", *map(str, frozen)], check=True)
        write(root, "people/stuck.md", note("Stuck", body="waits for the disk"))
        eventually(lambda: daemon.info()["failed_batches"] >= 1, what="a failed sync")
        shown = CliRunner().invoke(cli_app, ["status", "--vault", str(root)])
        assert re.search(
            r"failing: \d+ syncs in a row, retrying; last error: sync failed", shown.output
        ), shown.output
        subprocess.run(["chattr", "-i", *map(str, frozen)], check=True)
        eventually(lambda: daemon.info()["failed_batches"] == 0, 90, "the retry to succeed")
        shown = CliRunner().invoke(cli_app, ["status", "--vault", str(root)])
        assert "syncs in a row" not in shown.output and "index matches the files" in shown.output
    finally:
        subprocess.run(["chattr", "-i", *map(str, frozen)], check=False)
        daemon.shutdown()


def test_a_vector_save_that_fails_leaves_the_vector_lane_running(tmp_path: Path) -> None:
    """vectors.bin made immutable (a full disk's stand-in): the lane's save raised out
    of its thread, which died, and no later note got its vectors until a restart."""
    root = make_vault(tmp_path)
    daemon = Daemon.open(root, embedder=HashEmbedder(), port=0)
    daemon.start()
    frozen = root / ".memvault" / "vectors.bin"
    lane = daemon.vectors
    try:
        eventually(lambda: frozen.exists() and not lane.info()["pending"], what="vectors")
        subprocess.run(["chattr", "+i", str(frozen)], check=True)
        write(root, "people/first.md", note("First", body="embedded while the file is frozen"))
        eventually(lambda: "saving the vectors failed" in (lane.last_error or ""), what="a save")
        subprocess.run(["chattr", "-i", str(frozen)], check=True)
        thawed = frozen.stat().st_mtime_ns
        write(root, "people/second.md", note("Second", body="embedded once it thaws"))
        eventually(lambda: frozen.stat().st_mtime_ns > thawed, 60, "vectors.bin saved again")
        assert lane._thread.is_alive() and not lane.info()["pending"]
        assert lane.last_error is None
    finally:
        subprocess.run(["chattr", "-i", str(frozen)], check=False)
        daemon.shutdown()


def test_run_returns_zero_when_asked_to_stop(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    daemon = Daemon.open(root, embedder=HashEmbedder(), port=0)
    started = threading.Event()
    result: list[int] = []
    t = threading.Thread(target=lambda: result.append(daemon.run(lambda d: started.set())))
    t.start()
    assert started.wait(20)
    daemon.request_stop()
    t.join(10)
    assert result == [0] and not daemon_file(root).exists()


# -- the real model -------------------------------------------------------------------------------


@pytest.mark.model
@pytest.mark.slow
def test_daemon_with_the_real_model_finds_an_edit_by_meaning(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    proc = Proc(tmp_path, root, model=None)
    try:
        info = proc.info(120)
        eventually(lambda: settled(info), 120)
        write(root, "people/kim.md", note("Kim Park", body="Kim repairs old sailing boats."))

        def found() -> bool:
            hits = api(info, "POST", "/search", json={"query": "who fixes vessels", "k": 3})
            return any(h["path"] == "people/kim.md" for h in hits.json()["hits"])

        eventually(found, 60, "a semantic hit")
        ctx = api(info, "POST", "/context", json={"query": "boat repair", "budget": 400}).json()
        assert ctx["tokens"] <= 400 and "people/kim.md" in {s["path"] for s in ctx["sources"]}
        status = api(info, "GET", "/status").json()
        assert "MiniLM" in status["index"]["model"]
    finally:
        proc.stop()


@pytest.mark.model
@pytest.mark.slow
def test_up_with_the_real_model_serves_context_and_exits_fast(tmp_path: Path) -> None:
    root = tmp_path / "memory"  # a person's notes; `up` makes the folder a vault
    write(root, "decisions/db.md", note("Database", body="We picked PostgreSQL for the users."))
    proc = Proc(tmp_path, root, "up", str(root), model=None)
    try:
        info = proc.info(180)
        ctx = api(
            info, "POST", "/context", json={"query": "why did we pick PostgreSQL?", "budget": 500}
        ).json()
        assert ctx["tokens"] <= 500
        assert any(s["path"].startswith("decisions/") for s in ctx["sources"])
        started = time.monotonic()
        proc.proc.send_signal(signal.SIGTERM)
        assert proc.proc.wait(5) == 0  # torch loaded: the interpreter's teardown is skipped
        assert time.monotonic() - started < 5
        assert not daemon_file(root).exists()
    finally:
        proc.stop()
