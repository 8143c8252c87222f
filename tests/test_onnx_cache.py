"""onnx_cache.py (+ onnx_model.py): where the built model lives, its sha256, building it once.

Tests that must build again (a damaged file, interrupted builds, two
processes) are marked ``slow`` as well as ``model``: each build is ~15 s here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from memvault.config import IndexSettings
from memvault.index.embedder import (
    SentenceTransformerEmbedder,
    make_embedder,
    model_id_for,
)
from memvault.index.embedder_onnx import (
    OnnxEmbedder,
    load_onnx_embedder,
)
from memvault.index.model_files import file_sha256
from memvault.index.onnx_cache import (
    RECIPE,
    ModelSpec,
    cache_dir,
    default_cache_dir,
    failed_log,
    likely_usable,
    look,
)
from onnx_helpers import (
    DAEMON,
    ONNX_ID,
    STEM,
    TEXTS,
    TORCH_ID,
    alive,
    children_of,
    copy_built,
    fake_torch,
    fallback_messages,
    read_only,
    read_only_not_needed,
    spec,
    start_loader,
    wait_for_export,
)


def test_the_file_stem_names_the_model_its_weights_and_the_recipe() -> None:
    assert spec().stem == STEM
    assert ModelSpec(Path("/m"), "my model/with:odd*chars@0123456789ab").stem == (
        f"with-odd-chars-0123456789ab-{RECIPE}"
    )


def test_the_default_cache_folder_follows_xdg_then_the_home_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    xdg = str(tmp_path / "xdg")
    assert default_cache_dir({"XDG_CACHE_HOME": xdg}) == Path(xdg) / "memvault" / "onnx"
    home = tmp_path / "home" / ".cache" / "memvault" / "onnx"
    assert default_cache_dir({}) == home
    assert default_cache_dir({"XDG_CACHE_HOME": "relative/ignored"}) == home
    monkeypatch.setattr(sys, "platform", "darwin")
    assert default_cache_dir({}) == tmp_path / "home" / "Library" / "Caches" / "memvault" / "onnx"


def test_a_configured_cache_folder_wins_and_expands_the_home_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir("~/models", {"XDG_CACHE_HOME": "/elsewhere"}) == tmp_path / "models"
    assert cache_dir("", {"XDG_CACHE_HOME": "/elsewhere"}) == Path("/elsewhere/memvault/onnx")


@pytest.mark.model
def test_the_built_model_is_recorded_with_its_sha256(built: Path) -> None:
    cached = look(built, spec())
    assert cached.model == built / f"{STEM}.onnx" and cached.damaged is None
    manifest = json.loads((built / f"{STEM}.json").read_text())
    assert manifest["sha256"] == file_sha256(built / f"{STEM}.onnx")
    assert manifest["recipe"] == RECIPE and manifest["model_id"] == TORCH_ID
    assert manifest["min_cosine"] >= 0.95  # the build's own check against sentence-transformers
    assert manifest["fusion"]["Attention"] == 6  # all six layers fused
    assert 15e6 < manifest["bytes"] < 30e6  # int8: a quarter of the 90 MB float32 weights
    assert manifest["kept_fp32"] == ["/encoder/encoder/layer.0/output/dense/MatMul"]
    assert likely_usable(built, spec())


@pytest.mark.model
def test_a_read_only_cache_holding_the_model_is_used(built: Path, tmp_path: Path) -> None:
    folder = copy_built(built, tmp_path / "ro")
    with read_only(folder):
        emb = load_onnx_embedder(IndexSettings(model_cache=str(folder)))
        assert emb.model_id == ONNX_ID and emb.embed(["works"]).shape == (1, 384)


@pytest.mark.model
@pytest.mark.parametrize("how", ["read-only folder", "a file in the way"])
def test_an_unwritable_cache_folder_falls_back_to_torch_naming_it(
    caplog: pytest.LogCaptureFixture, tmp_path: Path, how: str
) -> None:
    if how == "a file in the way":
        (tmp_path / "cache").write_text("not a folder")
        folder, guard = tmp_path / "cache" / "onnx", read_only_not_needed()
    else:
        folder = tmp_path / "cache"
        folder.mkdir()
        guard = read_only(folder)
    with guard:
        emb = make_embedder(IndexSettings(model_cache=str(folder)))
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.model_id == TORCH_ID
    said = fallback_messages(caplog)
    assert f"the model cache folder {folder}" in said and "is not writable" in said
    assert "index.model_cache" in said and "PyTorch backend" in said


@pytest.mark.model
def test_a_damaged_model_in_a_read_only_cache_is_never_used(
    caplog: pytest.LogCaptureFixture, built: Path, tmp_path: Path
) -> None:
    folder = copy_built(built, tmp_path / "ro")
    model = folder / f"{STEM}.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one bit pattern in the weights: still a loadable graph
    model.write_bytes(bytes(data))
    with read_only(folder):
        emb = make_embedder(IndexSettings(model_cache=str(folder)))
    assert isinstance(emb, SentenceTransformerEmbedder)
    said = fallback_messages(caplog)
    assert "failed its sha256 check" in said and "is not writable" in said


@pytest.mark.model
def test_a_failed_build_is_kept_reported_and_not_tried_again(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(fake_torch(tmp_path)))  # the build child's torch
    folder = tmp_path / "cache"
    settings = IndexSettings(model_cache=str(folder))
    emb = make_embedder(settings)
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.model_id == TORCH_ID
    kept = failed_log(folder, spec())
    assert "no torch here" in kept.read_text()
    said = fallback_messages(caplog)
    assert "building the ONNX model failed (exit status 1: ImportError: no torch here)" in said
    assert str(kept) in said and "PyTorch backend" in said
    assert not list(folder.glob("*.build-*")) and not (folder / f"{STEM}.onnx").exists()

    caplog.clear()
    started = time.monotonic()
    assert isinstance(make_embedder(settings), SentenceTransformerEmbedder)
    assert "the last build of the ONNX model failed" in fallback_messages(caplog)
    assert "building the int8" not in fallback_messages(caplog)  # not tried again
    assert model_id_for(settings) == TORCH_ID
    assert time.monotonic() - started < 60  # a torch load, no build
    kept.unlink()
    assert model_id_for(settings) == ONNX_ID  # deleting the log is how to try again


@pytest.mark.model
@pytest.mark.slow
def test_a_damaged_model_file_is_rebuilt_never_used(
    caplog: pytest.LogCaptureFixture, built: Path, onnx: OnnxEmbedder, tmp_path: Path
) -> None:
    folder = copy_built(built, tmp_path / "c")
    model = folder / f"{STEM}.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    model.write_bytes(bytes(data))
    rebuilt = load_onnx_embedder(IndexSettings(model_cache=str(folder)))
    assert "failed its sha256 check" in fallback_messages(caplog)
    assert look(folder, spec()).model == model
    # the build is deterministic: the same vectors as the session's model, bit for bit
    assert np.array_equal(rebuilt.embed(TEXTS), onnx.embed(TEXTS))


@pytest.mark.model
@pytest.mark.slow
def test_interrupted_builds_leave_nothing_used_and_the_next_load_resumes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "cache"
    # 1. SIGTERM to the build child: its parent says so and uses torch for now
    proc = start_loader(folder)
    wait_for_export(folder, proc)
    (child,) = children_of(proc.pid)
    os.kill(child, signal.SIGTERM)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert out.split() == ["SentenceTransformerEmbedder", TORCH_ID]
    assert "interrupted (signal 15)" in err and "PyTorch backend" in err
    assert not (folder / f"{STEM}.json").exists() and not (folder / f"{STEM}.onnx").exists()
    assert not failed_log(folder, spec()).exists()  # killed is not failed: it is tried again

    # 2. kill -9 of the loading process itself: the child dies with it
    proc = start_loader(folder)
    work = wait_for_export(folder, proc)
    (child,) = children_of(proc.pid)
    proc.kill()
    proc.communicate()
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the build outlived the process that started it"
    assert work.exists()  # a leftover; the next build removes it
    assert not (folder / f"{STEM}.json").exists()

    # 3. the next load builds from scratch, and cleans up
    emb = load_onnx_embedder(IndexSettings(model_cache=str(folder)))
    assert emb.model_id == ONNX_ID and emb.embed(["resumed"]).shape == (1, 384)
    assert look(folder, spec()).model is not None
    assert not list(folder.glob("*.build-*"))


@pytest.mark.model
@pytest.mark.slow
def test_two_processes_never_build_at_once(tmp_path: Path) -> None:
    import fcntl

    folder = tmp_path / "cache"
    folder.mkdir()
    # hold the build lock, as a builder would, until both loaders are waiting for it
    fd = os.open(folder / f"{STEM}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    errs = [tmp_path / f"stderr-{i}" for i in range(2)]
    procs = [start_loader(folder, err) for err in errs]
    try:
        deadline = time.monotonic() + 120
        while not all("waiting for another process" in e.read_text() for e in errs):
            assert all(p.poll() is None for p in procs), [e.read_text() for e in errs]
            assert time.monotonic() < deadline, "the loaders never waited for the lock"
            time.sleep(0.1)
        assert not list(folder.glob("*.build-*"))  # nobody builds while the lock is held
    finally:
        os.close(fd)  # releases the lock: one of them builds, the other waits and uses it
    for p in procs:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, [e.read_text() for e in errs]
        assert out.split() == ["OnnxEmbedder", ONNX_ID]
    said = [e.read_text() for e in errs]
    assert sum("building the int8 ONNX embedding model" in text for text in said) == 1, said
    assert look(folder, spec()).model is not None


@pytest.mark.model
def test_the_model_can_be_built_ahead_of_time_from_the_command_line(
    built: Path, tmp_path: Path
) -> None:
    vault = tmp_path / "v"
    (vault / ".memvault").mkdir(parents=True)
    (vault / ".memvault" / "config.toml").write_text(f"[index]\nmodel_cache = {str(built)!r}\n")
    result = subprocess.run(
        [sys.executable, "-m", "memvault.index.onnx_model", "--vault", str(vault)],
        env={**os.environ, "PYTHONPATH": str(DAEMON)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    said = json.loads(result.stdout)
    assert said["model_id"] == ONNX_ID and said["path"] == str(built / f"{STEM}.onnx")
    assert said["sha256"] == file_sha256(built / f"{STEM}.onnx")


def test_the_command_line_build_says_why_it_cannot_run(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("in the way")
    result = subprocess.run(
        [sys.executable, "-m", "memvault.index.onnx_model", "--vault", str(tmp_path)],
        env={
            **os.environ,
            "PYTHONPATH": str(DAEMON),
            "MEMVAULT_INDEX_MODEL_CACHE": str(tmp_path / "file" / "onnx"),
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 7
    assert "is not writable" in result.stderr and "index.model_cache" in result.stderr
