"""A model's process stopped (SIGSTOP, a debugger, a swap storm) or hung under a daemon
that runs for months (index/child_watch.py, index/onnx_run.py).

Before: the vector lane's batch (~130 KB of word pieces, twice a pipe's 64 KB) blocked
for good in its write to a stopped child, holding the model's lock: every search through
the daemon waited on it (the CLI gave up after 30 s, exit 6; each held an HTTP worker),
status said the model was "ready", and the daemon's exit left the stopped child behind.

Real child processes running the real onnxruntime on the model built from the bundled
weights, real signals, a real daemon; waits are on conditions with generous deadlines.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from helpers import DaemonProcess, eventually, memvault_env, new_vault, run_memvault, write
from memvault.api import Vault
from memvault.config import IndexSettings
from memvault.errors import ModelAway
from memvault.index import child_watch
from memvault.index.embedder_onnx import OnnxEmbedder, load_onnx_embedder
from memvault.index.onnx_run import ChildRun
from onnx_helpers import alive

pytestmark = pytest.mark.model

# 32 texts of ~250 word pieces: one batch whose request (32 x 256 x 16 bytes) is
# twice what a pipe holds
LONG = [f"text {i}: " + " ".join(f"word{i}x{j}" for j in range(120)) for i in range(32)]


def _run(emb: OnnxEmbedder) -> ChildRun:
    run = emb._run
    assert isinstance(run, ChildRun)
    return run


def _gone(pid: int, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def _embed_in_thread(emb: OnnxEmbedder, texts: list[str]) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def go() -> None:
        try:
            out["vectors"] = emb.embed(texts)
        except Exception as exc:  # said by the test
            out["error"] = exc

    thread = threading.Thread(target=go, name="test-embed", daemon=True)
    thread.start()
    return thread, out


def test_a_batch_sent_to_a_stopped_child_is_answered_by_a_new_one(built: Path) -> None:
    emb = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    run = _run(emb)
    try:
        first = emb.embed(LONG)
        pid = run.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        started = time.monotonic()
        thread, out = _embed_in_thread(emb, LONG)
        thread.join(90)  # stopped: given up on after STOPPED_MOST (5 s), not its time
        if thread.is_alive():  # (the code before: blocked in the write for good)
            os.kill(pid, signal.SIGKILL)
            thread.join(30)
            pytest.fail("the batch to a stopped child never ended")
        assert "error" not in out, out
        assert np.array_equal(out["vectors"], first)  # the lost batch sent again
        assert time.monotonic() - started < 60
        assert _gone(pid) and run.pid not in (None, pid)
        info = emb.process_info()
        assert info is not None and info["restarts"] == 1
        assert "stopped for 5 s (SIGSTOP or a debugger), killed" in str(info["last_restart"])
    finally:
        emb.close()


def test_the_time_a_batch_is_given_grows_with_the_work_sent() -> None:
    query = child_watch.reply_seconds(1, 12)
    batch = child_watch.reply_seconds(32, 256)
    assert 10 <= query < 20  # a query's: not minutes
    # 32 x 256 pieces take ~1.5 s of model time on this machine's core: 25x that at least
    assert batch >= query + 25 * 1.5


def test_a_child_that_keeps_failing_rests_and_a_search_answers_by_keywords(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every child stopped as soon as it runs (a debugger attached to each): the batch
    is tried on a new child once, then ModelAway and a rest during which no child is
    started; a search meanwhile answers by keywords, each hit said `pending`."""
    monkeypatch.setattr(child_watch, "STOPPED_MOST", 1.0)
    root = tmp_path / "v"
    write(root, "people/ana.md", "# Ana\n\nAna runs the billing migration to PostgreSQL.\n")
    write(root, "projects/atlas.md", "# Atlas\n\nThe search project: ranking and recall.\n")
    (root / ".memvault").mkdir()
    overrides = {"index": {"model_cache": str(built)}}
    with Vault.open(root, through_daemon=False, overrides=overrides) as v:  # a daemon's
        v.sync()
        assert [h.pending for h in v.search("billing migration")] == [False, False]
        run = _run(v.engine.embedding.embedder)
        seen: set[int] = set()
        stopping = threading.Event()

        def stop_every_child() -> None:
            while not stopping.is_set():
                pid = run.pid
                if pid is not None and pid not in seen:
                    seen.add(pid)
                    os.kill(pid, signal.SIGSTOP)
                time.sleep(0.01)

        stopper = threading.Thread(target=stop_every_child, name="test-stopper", daemon=True)
        stopper.start()
        try:
            eventually(lambda: run.pid in seen, 10, "the first child stopped")
            with pytest.raises(ModelAway, match="and again once started again") as away:
                # ~1.5 s of model time: the child started again is stopped in its midst
                v.engine.embedding.embedder.embed(LONG)
            assert "out of memory" not in str(away.value)  # stopped: not a guess at memory
            assert len(seen) == 2  # the first and the one started again: no more
            hits = v.search("billing migration")  # at once: no child started meanwhile
            assert hits and hits[0].path == "people/ana.md"
            assert all(h.pending for h in hits)  # ranked by keywords alone, said so
            assert len(seen) == 2 and run.pid is None
            info = v.engine.embedding.process_info()
            assert info is not None and info["restarts"] == 1 and info["resting_seconds"]
        finally:
            stopping.set()
            stopper.join(10)
            for pid in seen:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)


def _post(info: dict, path: str, body: dict, timeout: float) -> httpx.Response:
    return httpx.post(
        f"http://127.0.0.1:{info['port']}{path}",
        json=body,
        headers={"Authorization": f"Bearer {info['token']}"},
        timeout=timeout,
        trust_env=False,
    )


def _status(info: dict) -> dict:
    r = httpx.get(
        f"http://127.0.0.1:{info['port']}/status",
        headers={"Authorization": f"Bearer {info['token']}"},
        timeout=30,
        trust_env=False,
    )
    r.raise_for_status()
    return r.json()


def _child_of(pid: int) -> int | None:
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text().split()
        if children:
            return int(children[0])
    return None


def test_a_daemon_whose_model_process_is_stopped_saves_searches_says_and_stops(
    built: Path, tmp_path: Path
) -> None:
    root = new_vault(tmp_path)
    for i in range(30):
        write(root, f"projects/p{i}.md", f"# Project {i}\n\nPlanning the orchard {i}.\n")
    daemon = DaemonProcess(tmp_path, root, model=None, MEMVAULT_VAULT_QUIET_MS="30")
    child: int | None = None
    try:
        info = daemon.ready(answering=True)
        eventually(  # loaded, and the first vectors in: a search then needs the model
            lambda: (
                (d := _status(info)["daemon"])["model"] == "ready"
                and d["vectors"]["pending"] == 0
                and not d["vectors"]["busy"]
            ),
            120,
            "the first vectors",
        )
        child = eventually(lambda: _child_of(daemon.proc.pid), 30, "the model's process")
        os.kill(child, signal.SIGSTOP)
        for i in range(3):  # a step for the lane: a batch larger than the pipe holds
            write(root, f"people/kumquat{i}.md", f"# Kumquat {i}\n\n" + " ".join(LONG))
        listed = [root / "MEMORY.md", root / "people" / "people.md"]
        eventually(  # the structure lane never waits for the model
            lambda: any(f.exists() and "kumquat2" in f.read_text() for f in listed),
            30,
            "the note listed",
        )
        r = _post(info, "/search", {"query": "kumquat orchard", "k": 5}, timeout=90)
        assert r.status_code == 200, r.text
        assert r.json()["hits"]
        lane = eventually(
            lambda: (
                (p := _status(info)["daemon"]["vectors"]["model_process"])
                and p["restarts"] >= 1
                and p
            ),
            60,
            "the restart said in status",
        )
        assert "stopped" in lane["last_restart"]
        said = run_memvault("status", "--vault", str(root), env=memvault_env(tmp_path, None))
        assert re.search(r"the model's process was started again (once|\d+ times)", said.stdout)
        assert "(SIGSTOP or a debugger)" in said.stdout
        assert _gone(child)
        child = _child_of(daemon.proc.pid)  # the new one: stopped too, then SIGTERM
        assert child is not None
        os.kill(child, signal.SIGSTOP)
        write(root, "people/last.md", "# Last\n\n" + " ".join(LONG))
        time.sleep(0.5)  # (not a measure: the lane takes the step meanwhile, or not)
        assert daemon.stop(within=30) == 0
        assert _gone(child, 10), (
            "the stopped model's process outlived the daemon",
            Path(f"/proc/{child}/stat").read_text(),
            daemon.stderr[-3000:],
        )
    finally:
        daemon.stop(within=30)
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)


def test_a_healthy_child_slower_than_its_time_is_waited_for_not_killed(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch that takes longer than the time it is given (a larger model configured,
    fp32, a machine loaded by a first index or swapping) while the child works on it:
    the child is waited for while it uses the CPU, not killed twice over (the vault's
    vectors then never came: ModelAway, a rest, the same batch killed again)."""
    emb = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    run = _run(emb)
    try:
        first = emb.embed(LONG)  # ~1.5 s of model time, 32 x 256 word pieces
        monkeypatch.setattr(child_watch, "REPLY_BASE", 0.05)  # far less than that
        monkeypatch.setattr(child_watch, "REPLY_PER_PIECE", 0.0)
        monkeypatch.setattr(child_watch, "WORKING_MOST", 10_000, raising=False)
        pid = run.pid
        assert np.array_equal(emb.embed(LONG), first)
        assert run.pid == pid  # the same child: never killed
        info = emb.process_info()
        assert info is not None and info["restarts"] == 0
    finally:
        emb.close()


def _process(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code])


def test_a_child_past_its_time_is_given_up_once_it_does_no_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past its time, a child asleep (a deadlock: no CPU used, not running) is given up
    once it has done nothing for STALL seconds; one busy for ever (spinning) once
    WORKING_MOST times its time have passed."""
    monkeypatch.setattr(child_watch, "STALL", 1.0, raising=False)
    monkeypatch.setattr(child_watch, "WORKING_MOST", 6.0, raising=False)
    asleep = _process("import time; time.sleep(600)")
    busy = _process("while True: pass")
    try:
        eventually(  # asleep, its start done (a start is work)
            lambda: (seen := child_watch._look(asleep.pid)) is not None and seen[0] == b"S",
            30,
            "the process asleep",
        )
        waits = {p.pid: child_watch.Deadline(p.pid, 0.5, "a test") for p in (asleep, busy)}
        given_up: dict[int, tuple[float, str]] = {}
        started = time.monotonic()
        while len(given_up) < 2 and time.monotonic() - started < 30:
            for pid, wait in waits.items():
                if pid not in given_up and (why := wait.passed()):
                    given_up[pid] = (time.monotonic() - started, why)
            time.sleep(child_watch.POLL / 5)
        slept_for, why_asleep = given_up[asleep.pid]
        busy_for, why_busy = given_up[busy.pid]
        assert 0.9 <= slept_for < 2.5, given_up  # its time, then STALL with no work
        assert "silent past its time" in why_asleep
        assert busy_for >= 2.9, given_up  # waited while it worked, to 6 x 0.5 s
        assert "working past" in why_busy
    finally:
        for p in (asleep, busy):
            p.kill()
            p.wait()
