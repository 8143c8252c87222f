"""onnx_run.py: a daemon runs the int8 model in a process of its own (issue 27: an idle
daemon gives back all that onnxruntime held, bench/RESULTS.md).

Real child processes running the real onnxruntime on the model built from the bundled
weights (``model``); the vault tests open real vaults the way the daemon and the CLI do.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from memvault.api import Vault
from memvault.config import IndexSettings
from memvault.errors import ModelError
from memvault.index.embedder import make_embedder
from memvault.index.embedder_onnx import OnnxEmbedder, load_onnx_embedder
from memvault.index.onnx_run import ChildRun, LocalRun
from onnx_helpers import DAEMON, TEXTS, alive, run_python
from test_model_release import _vault

pytestmark = pytest.mark.model


def _gone(pid: int, within: float = 10.0) -> bool:
    """The process has ended within ``within`` seconds (reaped, or a zombie)."""
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def _child_of(emb: OnnxEmbedder) -> ChildRun:
    run = emb._run
    assert isinstance(run, ChildRun)
    return run


def test_the_child_gives_the_vectors_this_process_gives(built: Path) -> None:
    here = load_onnx_embedder(IndexSettings(model_cache=str(built)))
    apart = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    try:
        assert isinstance(here._run, LocalRun)
        assert apart.model_id == here.model_id and apart.dim == here.dim == 384
        assert np.array_equal(apart.embed(TEXTS), here.embed(TEXTS))  # the same batches
        assert apart.embed([]).shape == (0, 384)
    finally:
        apart.close()


def test_the_parent_of_the_child_never_loads_onnxruntime(built: Path) -> None:
    result = run_python(
        "import sys\n"
        "from memvault.config import IndexSettings\n"
        "from memvault.index.embedder import make_embedder\n"
        f"emb = make_embedder(IndexSettings(model_cache={str(built)!r}), apart=True)\n"
        "assert type(emb).__name__ == 'OnnxEmbedder', type(emb)\n"
        "assert emb.embed(['a query', 'a longer text to embed with it']).shape == (2, 384)\n"
        "assert emb.count_tokens('hello world') == 2\n"
        "heavy = [m for m in ('onnxruntime', 'torch') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "print('ok')\n"
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_the_child_loads_only_what_running_the_model_needs(built: Path) -> None:
    """The child imports onnx_session, not onnx_run and through it onnx_cache, config,
    model_files: their libraries (hashlib's OpenSSL, subprocess, unicodedata) cost it
    4-5 MiB for as long as it ran (bench/RESULTS.md)."""
    emb = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    try:
        emb.embed(TEXTS[:3])
        pid = _child_of(emb).pid
        with open(f"/proc/{pid}/maps") as fh:
            loaded = {line.rsplit("/", 1)[-1].split(".")[0] for line in fh if ".so" in line}
        assert "onnxruntime_pybind11_state" in loaded  # the model runs there
        assert not loaded & {"_hashlib", "_posixsubprocess", "unicodedata", "select"}
    finally:
        emb.close()


def test_close_ends_the_child_and_the_next_call_starts_another(built: Path) -> None:
    emb = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    run = _child_of(emb)
    first = emb.embed(TEXTS[:3])
    pid = run.pid
    assert pid is not None
    emb.close()
    assert run.pid is None and _gone(pid)
    assert np.array_equal(emb.embed(TEXTS[:3]), first)  # a new child, the same vectors
    assert run.pid not in (None, pid)
    emb.close()


@pytest.mark.parametrize(
    ("sig", "said"),
    [
        (signal.SIGKILL, "process ended (killed by SIGKILL); starting it again"),
        (
            signal.SIGSTOP,
            "process ended (stopped for 5 s (SIGSTOP or a debugger), killed); starting it again",
        ),
    ],
    ids=["killed", "stopped"],
)
def test_a_child_killed_or_stopped_between_calls_leaves_the_batch_to_a_new_one(
    built: Path,
    caplog: pytest.LogCaptureFixture,
    sig: signal.Signals,
    said: str,
) -> None:
    emb = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    run = _child_of(emb)
    try:
        first = emb.embed(TEXTS)
        pid = run.pid
        assert pid is not None
        os.kill(pid, sig)  # gone, or alive and silent
        with caplog.at_level(logging.WARNING, logger="memvault"):
            assert np.array_equal(emb.embed(TEXTS), first)
        assert _gone(pid) and run.pid not in (None, pid)
        assert said in " ".join(r.getMessage() for r in caplog.records)
    finally:
        emb.close()


def test_close_never_waits_for_a_stopped_child_for_good(built: Path) -> None:
    emb = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    pid = _child_of(emb).pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    started = time.monotonic()
    emb.close()
    assert time.monotonic() - started < 30 and _gone(pid)


def test_a_batch_onnxruntime_refuses_is_an_error_and_the_child_lives_on(built: Path) -> None:
    emb = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    run = _child_of(emb)
    try:
        pid = run.pid
        bad = np.full((1, 4), 10**9, dtype=np.int64)  # word pieces past the vocabulary
        with pytest.raises(ModelError, match="onnxruntime failed on a batch"):
            run.run(bad, np.ones_like(bad), last=True)
        assert run.pid == pid
        assert emb.embed(["still fine"]).shape == (1, 384)
    finally:
        emb.close()


def test_the_child_ends_when_its_parent_dies(built: Path, tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "from memvault.config import IndexSettings\n"
        "from memvault.index.embedder_onnx import load_onnx_embedder\n"
        f"emb = load_onnx_embedder(IndexSettings(model_cache={str(built)!r}), apart=True)\n"
        "emb.embed(['warm'])\n"
        "print(emb._run.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(DAEMON)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as parent:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        parent.kill()  # no clean-up of its own: the pipe's end is all the child sees
        parent.wait()
    assert _gone(child), "the model's process outlived the daemon"


def test_a_daemons_vault_runs_the_model_apart_and_letting_it_go_ends_that_process(
    built: Path, tmp_path: Path
) -> None:
    overrides = {"index": {"model_cache": str(built)}}
    root = _vault(tmp_path)
    with Vault.open(root, overrides=overrides) as cli:  # a CLI's: the model here
        cli.sync()
        assert isinstance(cli.engine.embedding.embedder._run, LocalRun)
        hits_here = [(h.path, round(h.score, 5)) for h in cli.search("billing migration")]
    with Vault.open(root, through_daemon=False, overrides=overrides) as v:  # the daemon's
        embedding = v.engine.embedding
        hits = [(h.path, round(h.score, 5)) for h in v.search("billing migration")]
        assert hits == hits_here and hits[0][0] == "people/ana.md"
        run = embedding.embedder._run
        assert isinstance(run, ChildRun) and run.pid is not None
        pid = run.pid
        assert embedding.release_model(0)
        assert _gone(pid), "the model's process outlived the model let go"
        again = [(h.path, round(h.score, 5)) for h in v.search("billing migration")]
        assert again == hits  # loaded again, in a new process
        new = embedding.embedder._run
        assert isinstance(new, ChildRun) and new.pid not in (None, pid)


def test_where_no_process_can_be_started_the_model_runs_here(
    built: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python3")  # Popen: FileNotFoundError
    with caplog.at_level(logging.WARNING, logger="memvault"):
        emb = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    assert isinstance(emb._run, LocalRun) and emb.embed(["works"]).shape == (1, 384)
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "runs inside this process" in said and "/nonexistent/python3" in said


def test_what_else_writes_to_the_childs_stdout_never_garbles_the_vectors(
    built: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A site customisation printing as Python starts, and a write to the descriptor
    itself once the child runs (as a native library might): neither is read as a
    reply."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os, sys\n"
        "print('hello from a sitecustomize')\n"
        "sys.stdout.flush()\n"
        "import threading\n"
        "t = threading.Timer(1.0, lambda: os.write(1, b'a native write on fd 1\\n'))\n"
        "t.daemon = True\n"
        "t.start()\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    here = load_onnx_embedder(IndexSettings(model_cache=str(built)))
    apart = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    try:
        run = _child_of(apart)
        assert run.pid is not None
        assert np.array_equal(apart.embed(TEXTS), here.embed(TEXTS))
        time.sleep(2.0)  # the child's timer has written meanwhile
        assert np.array_equal(apart.embed(TEXTS[:2]), here.embed(TEXTS[:2]))
    finally:
        apart.close()


def test_a_child_silent_as_it_starts_is_tried_again_then_an_error_not_torch(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A start that fails for the moment (killed, or slower than its time) must not
    switch the daemon to PyTorch for good (a re-embed of the whole vault): the vector
    lane tries again later."""
    from memvault.index import child_watch, onnx_run

    monkeypatch.setattr(onnx_run, "START_TIMEOUT", 0.01)
    monkeypatch.setattr(child_watch, "WORKING_MOST", 1.0)  # (working, it is waited for)
    with pytest.raises(ModelError, match=r"did not start .*(silent|working) past"):
        make_embedder(IndexSettings(model_cache=str(built)), apart=True)
    monkeypatch.setattr(onnx_run, "START_TIMEOUT", 120.0)
    emb = make_embedder(IndexSettings(model_cache=str(built)), apart=True)
    assert isinstance(emb, OnnxEmbedder) and isinstance(emb._run, ChildRun)
    emb.close()


def test_a_child_that_exits_with_an_error_of_its_own_leaves_the_model_here(
    built: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """Python fails in the child before it can answer (here: a broken numpy first on its
    path): starting another would fail alike, so the model runs in this process."""
    broken = tmp_path / "site" / "numpy"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('a numpy that cannot load')\n")
    monkeypatch.setenv("PYTHONPATH", str(broken.parent))
    with caplog.at_level(logging.WARNING, logger="memvault"):
        emb = load_onnx_embedder(IndexSettings(model_cache=str(built)), apart=True)
    assert isinstance(emb._run, LocalRun) and emb.embed(["works"]).shape == (1, 384)
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "runs inside this process" in said and "exit status 1" in said


def test_closing_a_vault_ends_its_model_process(built: Path, tmp_path: Path) -> None:
    v = Vault.open(
        _vault(tmp_path), through_daemon=False, overrides={"index": {"model_cache": str(built)}}
    )
    v.search("billing migration")
    run = v.engine.embedding.embedder._run
    assert isinstance(run, ChildRun) and run.pid is not None
    pid = run.pid
    v.close()
    assert _gone(pid), "the model's process outlived its vault"
