"""embedder_onnx.py + onnx_cache.py: the int8 ONNX backend, its cache, its fallback to torch.

Tests marked ``model`` run the real onnxruntime on the model built from the
bundled weights; the session's user cache (conftest) holds the build, so the
first such test pays for it once (~15-60 s). Tests that must build again
(a damaged file, interrupted builds, two processes) are also marked ``slow``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from memvault.config import DEFAULT_MODEL, IndexSettings
from memvault.embedder import (
    BUNDLED_SHA256,
    Embedder,
    SentenceTransformerEmbedder,
    file_sha256,
    make_embedder,
    model_id_for,
    resolve_model_path,
)
from memvault.embedder_onnx import (
    OnnxEmbedder,
    _batches,
    load_onnx_embedder,
    onnx_model_id_for,
    support_problem,
)
from memvault.onnx_cache import (
    RECIPE,
    ModelSpec,
    cache_dir,
    default_cache_dir,
    failed_log,
    likely_usable,
    look,
)

DAEMON = Path(__file__).resolve().parents[1] / "daemon"
TORCH_ID = f"{DEFAULT_MODEL}@{BUNDLED_SHA256[:12]}"
ONNX_ID = f"{TORCH_ID}+{RECIPE}"
STEM = f"all-MiniLM-L6-v2-{BUNDLED_SHA256[:12]}-{RECIPE}"
TEXTS = [
    "We chose PostgreSQL as the main database for the user service.",
    "Postgres was picked for our data store.",
    "My cat likes to sleep in the sun.",
    "short",
    "naïve café résumé — 東京 🎉 ERR_CONN_RESET 0x0000dead",
    "```python\nx = {'a': [1, 2]}\n```",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "word " * 600,  # past the window of 256 word pieces
]


def spec() -> ModelSpec:
    return ModelSpec(resolve_model_path(DEFAULT_MODEL, verify=False), TORCH_ID)


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(DAEMON), **env}
    return subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=600
    )


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` cannot be written, even by root (chattr +i where chmod does not bind)."""
    folder.chmod(0o555)
    immutable = os.geteuid() == 0
    if immutable:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    try:
        with pytest.raises(OSError):
            (folder / "probe").write_text("x")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


def fallback_messages(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)


# --- where the model lives, what it is called (no model needed) --------------------------------


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


def test_the_bundled_model_is_one_the_onnx_backend_runs() -> None:
    assert support_problem(resolve_model_path(DEFAULT_MODEL, verify=False)) is None


@pytest.mark.parametrize(
    ("model_type", "pooling"),
    [("bert", "pooling_mode_cls_token"), ("xlm-roberta", "pooling_mode_mean_tokens")],
)
def test_other_kinds_of_model_are_named_and_left_to_torch(
    tmp_path: Path, model_type: str, pooling: str
) -> None:
    bundled = resolve_model_path(DEFAULT_MODEL, verify=False)
    for name in ("modules.json", "tokenizer.json"):
        shutil.copy(bundled / name, tmp_path / name)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": model_type}))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({pooling: True}))
    problem = support_problem(tmp_path)
    assert problem is not None and str(tmp_path) in problem
    assert 'index.backend = "torch"' in problem


# --- batching -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lengths", "size", "tokens", "expected"),
    [
        ([3, 3, 3, 3], 32, 512, [[0, 1, 2, 3]]),
        ([3, 3, 3, 3], 2, 512, [[0, 1], [2, 3]]),
        ([100, 100, 200, 256, 256], 32, 512, [[0, 1], [2, 3], [4]]),  # padded to the longest
        ([600], 32, 512, [[0]]),  # a text past the budget still runs, alone
        ([], 32, 512, []),
    ],
)
def test_batches_keep_to_the_size_and_the_padded_token_budget(
    lengths: list[int], size: int, tokens: int, expected: list[list[int]]
) -> None:
    lens = np.array(lengths, dtype=np.int64)
    order = np.argsort(lens, kind="stable")
    assert [b.tolist() for b in _batches(order, lens, size, tokens)] == expected


# --- the identity the engine expects, before anything loads -------------------------------------


def test_the_identity_is_known_without_importing_onnxruntime_or_torch(tmp_path: Path) -> None:
    result = run_python(
        "import sys\n"
        "from memvault.config import IndexSettings\n"
        "from memvault.embedder import model_id_for\n"
        f"print(model_id_for(IndexSettings(model_cache={str(tmp_path / 'c')!r})))\n"
        "heavy = [m for m in ('onnxruntime', 'torch', 'transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ONNX_ID


def test_the_backend_and_the_precision_are_part_of_the_identity(tmp_path: Path) -> None:
    onnx = IndexSettings(model_cache=str(tmp_path))
    torch = IndexSettings(backend="torch")
    assert (model_id_for(onnx), model_id_for(torch)) == (ONNX_ID, TORCH_ID)
    ids = {
        p: model_id_for(IndexSettings(model_cache=str(tmp_path), onnx_precision=p))
        for p in ("int8", "fp32")
    }
    assert ids == {p: f"{TORCH_ID}+onnx-{p}-v1" for p in ids}
    stems = {ModelSpec(spec().source, TORCH_ID, p).stem for p in ids}
    assert len(stems) == 2  # two files: a precision never reads another's model


def test_the_identity_expects_torch_when_onnxruntime_is_not_installed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "onnxruntime" else real(name, *a),
    )
    assert onnx_model_id_for(IndexSettings(model_cache=str(tmp_path))) == TORCH_ID


def test_the_identity_expects_torch_when_the_cache_cannot_be_written(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where a folder should be")
    assert onnx_model_id_for(IndexSettings(model_cache=str(blocked / "onnx"))) == TORCH_ID
    folder = tmp_path / "ro"
    folder.mkdir()
    with read_only(folder):
        assert onnx_model_id_for(IndexSettings(model_cache=str(folder))) == TORCH_ID


def test_the_identity_expects_torch_after_a_failed_build(tmp_path: Path) -> None:
    settings = IndexSettings(model_cache=str(tmp_path))
    assert onnx_model_id_for(settings) == ONNX_ID
    failed_log(tmp_path, spec()).write_text("Traceback ...")
    assert onnx_model_id_for(settings) == TORCH_ID


# --- the real model --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(user_cache: Path) -> Path:
    """The session's cache folder, holding the model built from the bundled weights."""
    folder = user_cache / "memvault" / "onnx"
    load_onnx_embedder(IndexSettings(model_cache=str(folder)))
    return folder


@pytest.fixture(scope="module")
def onnx(built: Path) -> OnnxEmbedder:
    return load_onnx_embedder(IndexSettings(model_cache=str(built)))


@pytest.fixture(scope="module")
def torch_model() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def copy_built(built: Path, to: Path) -> Path:
    to.mkdir(parents=True, exist_ok=True)
    for suffix in (".onnx", ".json"):
        shutil.copy(built / f"{STEM}{suffix}", to / f"{STEM}{suffix}")
    return to


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
def test_onnx_embedder_identity_window_and_protocol(onnx: OnnxEmbedder) -> None:
    assert (onnx.model_id, onnx.dim, onnx.max_tokens) == (ONNX_ID, 384, 254)
    assert isinstance(onnx, Embedder)
    assert make_embedder(IndexSettings(model_cache=str(onnx.model_file.parent))).model_id == ONNX_ID


@pytest.mark.model
def test_onnx_vectors_are_normalized_float32_rows(onnx: OnnxEmbedder) -> None:
    out = onnx.embed(TEXTS)
    assert out.shape == (len(TEXTS), 384) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    empty = onnx.embed([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


@pytest.mark.model
def test_onnx_rows_follow_input_order_whatever_the_batching(onnx: OnnxEmbedder) -> None:
    forwards = onnx.embed(TEXTS)
    backwards = onnx.embed(TEXTS[::-1])[::-1]
    assert np.allclose(forwards, backwards, atol=1e-6)  # same batches, rows put back in order
    alone = np.vstack([onnx.embed([t]) for t in TEXTS])
    # int8 activations are quantized per batch: a text alone differs a little, never much
    assert ((forwards * alone).sum(axis=1) > 0.97).all()


@pytest.mark.model
def test_onnx_vectors_are_close_to_pytorch(
    onnx: OnnxEmbedder, torch_model: SentenceTransformerEmbedder
) -> None:
    cosines = (onnx.embed(TEXTS) * torch_model.embed(TEXTS)).sum(axis=1)
    assert cosines.min() > 0.97 and cosines.mean() > 0.985, cosines
    v = onnx.embed(TEXTS[:3])
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3


@pytest.mark.model
def test_onnx_runs_the_word_pieces_sentence_transformers_runs(
    onnx: OnnxEmbedder, torch_model: SentenceTransformerEmbedder
) -> None:
    reference = torch_model._model.tokenize(TEXTS)
    for i, ours in enumerate(onnx.token_ids(TEXTS)):
        n = int(reference["attention_mask"][i].sum())
        assert ours == reference["input_ids"][i][:n].tolist(), TEXTS[i][:40]
    assert len(onnx.token_ids([TEXTS[-1]])[0]) == 256  # truncated at the window, not at 128
    for text in TEXTS:
        assert onnx.count_tokens(text) == torch_model.count_tokens(text)


@pytest.mark.model
def test_the_embedding_path_imports_no_torch(built: Path) -> None:
    result = run_python(
        "import sys\n"
        "from memvault.config import IndexSettings\n"
        "from memvault.embedder import make_embedder\n"
        f"emb = make_embedder(IndexSettings(model_cache={str(built)!r}))\n"
        "assert type(emb).__name__ == 'OnnxEmbedder', type(emb)\n"
        "emb.embed(['a query', 'and a longer text to embed with it'])\n"
        "emb.count_tokens('hello world')\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "print('ok')\n"
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


@pytest.mark.model
def test_threads_reach_onnxruntime(built: Path) -> None:
    one = load_onnx_embedder(IndexSettings(model_cache=str(built), threads=1))
    assert one._session.get_session_options().intra_op_num_threads == 1


@pytest.mark.model
def test_the_torch_backend_is_still_there(built: Path) -> None:
    emb = make_embedder(IndexSettings(backend="torch", model_cache=str(built)))
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.model_id == TORCH_ID


@pytest.mark.model
def test_a_read_only_cache_holding_the_model_is_used(built: Path, tmp_path: Path) -> None:
    folder = copy_built(built, tmp_path / "ro")
    with read_only(folder):
        emb = load_onnx_embedder(IndexSettings(model_cache=str(folder)))
        assert emb.model_id == ONNX_ID and emb.embed(["works"]).shape == (1, 384)


# --- bad input: a clear message, the PyTorch backend, never wrong vectors --------------------------


@pytest.mark.model
def test_without_onnxruntime_torch_is_used_and_the_fix_is_named(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, built: Path
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime -> ImportError
    emb = make_embedder(IndexSettings(model_cache=str(built)))
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.model_id == TORCH_ID
    said = fallback_messages(caplog)
    assert "pip install onnxruntime" in said and "PyTorch backend" in said


@pytest.mark.model
def test_an_onnxruntime_that_cannot_load_falls_back_to_torch(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, built: Path, tmp_path: Path
) -> None:
    fake = tmp_path / "site" / "onnxruntime"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ImportError('libonnxruntime.so.1: cannot open shared object file')\n"
    )
    monkeypatch.delitem(sys.modules, "onnxruntime", raising=False)
    monkeypatch.syspath_prepend(str(fake.parent))
    emb = make_embedder(IndexSettings(model_cache=str(built)))
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.model_id == TORCH_ID
    said = fallback_messages(caplog)
    assert "cannot be loaded on this machine" in said and "libonnxruntime.so.1" in said
    assert "pip install --force-reinstall onnxruntime" in said and "PyTorch backend" in said


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


@contextmanager
def read_only_not_needed() -> Iterator[None]:
    yield


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
def test_a_model_onnxruntime_cannot_load_falls_back_and_says_how_to_fix(
    caplog: pytest.LogCaptureFixture, built: Path, tmp_path: Path
) -> None:
    folder = copy_built(built, tmp_path / "c")
    model = folder / f"{STEM}.onnx"
    model.write_bytes(b"not an onnx graph" * 100)
    manifest = json.loads((folder / f"{STEM}.json").read_text())
    manifest.update(sha256=file_sha256(model), bytes=model.stat().st_size)
    (folder / f"{STEM}.json").write_text(json.dumps(manifest))  # consistent, yet unloadable
    emb = make_embedder(IndexSettings(model_cache=str(folder)))
    assert isinstance(emb, SentenceTransformerEmbedder)
    said = fallback_messages(caplog)
    assert f"onnxruntime cannot load {model}" in said and "delete it to have it rebuilt" in said


def fake_torch(tmp_path: Path) -> Path:
    """A folder that, first on PYTHONPATH, makes ``import torch`` fail in a child process."""
    site = tmp_path / "no-torch"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("raise ImportError('no torch here')\n")
    return site


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


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(c) for c in text]
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


LOADER = (
    "import logging, sys\n"
    "logging.basicConfig(level=logging.WARNING)\n"
    "from memvault.config import IndexSettings\n"
    "from memvault.embedder import make_embedder\n"
    "emb = make_embedder(IndexSettings(model_cache=sys.argv[1]))\n"
    "print(type(emb).__name__, emb.model_id, flush=True)\n"
)


def start_loader(folder: Path, stderr: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(DAEMON)}
    with stderr.open("w") if stderr else open(os.devnull, "w") as err_file:
        return subprocess.Popen(
            [sys.executable, "-c", LOADER, str(folder)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=err_file if stderr else subprocess.PIPE,
            text=True,
        )


def wait_for_export(folder: Path, proc: subprocess.Popen[str]) -> Path:
    """The build folder, once the child has started writing the model into it."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for work in folder.glob("*.build-*"):
            if any(work.glob("*.onnx")):
                return work
        time.sleep(0.05)
    raise AssertionError("the build never started writing")


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


# --- the engine: vectors of two backends never meet --------------------------------------------


@pytest.mark.model
def test_a_switch_of_backend_re_embeds_every_note(built: Path, tmp_path: Path) -> None:
    from helpers import make_vault, note, write
    from memvault.api import Vault

    root = make_vault(tmp_path)
    write(root, "people/kim.md", note("Kim Park", body="Kim repairs old sailing boats."))
    with Vault.open(root, overrides={"index": {"backend": "torch"}}) as v:
        first = v.sync()
        chunks = v.engine.store.counts()["chunks"]
    with Vault.open(root, overrides={"index": {"model_cache": str(built)}}) as v:
        report = v.sync()
        assert v.engine.store.meta("model_id") == ONNX_ID
        assert any("embedding model changed" in w for w in report.warnings)
        assert report.embedded_chunks == chunks == first.embedded_chunks
        assert [h.path for h in v.search("who fixes vessels", k=1)] == ["people/kim.md"]


@pytest.mark.model
def test_a_fallback_found_when_the_model_loads_never_mixes_vectors(
    monkeypatch: pytest.MonkeyPatch, built: Path, tmp_path: Path
) -> None:
    from helpers import make_vault, note, write
    from memvault.api import Vault

    root = make_vault(tmp_path)
    write(root, "people/kim.md", note("Kim Park", body="Kim repairs old sailing boats."))
    write(root, "people/ana.md", note("Ana Lima", body="Ana bakes sourdough bread at dawn."))
    with Vault.open(root, overrides={"index": {"model_cache": str(built)}}) as v:
        v.sync()
        assert v.engine.store.meta("model_id") == ONNX_ID
    # an empty cache whose build will fail: the engine expects ONNX, the embedder is torch
    monkeypatch.setenv("PYTHONPATH", str(fake_torch(tmp_path)))
    broken = {"index": {"model_cache": str(tmp_path / "empty-cache")}}
    with Vault.open(root, overrides=broken) as v:
        store = v.engine.store
        assert v.engine.model_id() == ONNX_ID  # the guess, before anything loads
        onnx_labels = v.engine.vectors.labels()  # opened: the ONNX vectors
        assert onnx_labels == store.labels() and onnx_labels
        v.search("bread baking")  # the query loads the model: torch, not ONNX
        assert isinstance(v.engine.embedder, SentenceTransformerEmbedder)
        assert store.meta("model_id") == TORCH_ID  # said, and the index reset for it
        assert not v.engine.vectors.labels() & onnx_labels, "ONNX vectors met a torch query"
        report = v.sync()  # everything is embedded again, with torch
        assert report.embedded_chunks == len(store.labels())
        shas = set(store.label_shas().values())
        assert set(store.cached(TORCH_ID, shas)) == shas
        assert v.engine.vectors.labels() == store.labels()
        assert [h.path for h in v.search("who fixes vessels", k=1)] == ["people/kim.md"]
        assert [h.path for h in v.search("bread baking", k=1)] == ["people/ana.md"]


@pytest.mark.model
def test_the_model_can_be_built_ahead_of_time_from_the_command_line(
    built: Path, tmp_path: Path
) -> None:
    vault = tmp_path / "v"
    (vault / ".memvault").mkdir(parents=True)
    (vault / ".memvault" / "config.toml").write_text(f"[index]\nmodel_cache = {str(built)!r}\n")
    result = subprocess.run(
        [sys.executable, "-m", "memvault.onnx_model", "--vault", str(vault)],
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
        [sys.executable, "-m", "memvault.onnx_model", "--vault", str(tmp_path)],
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


@pytest.mark.model
@pytest.mark.slow
def test_the_fp32_precision_gives_pytorchs_vectors_without_torch(
    torch_model: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    emb = load_onnx_embedder(IndexSettings(model_cache=str(tmp_path), onnx_precision="fp32"))
    assert emb.model_id == f"{TORCH_ID}+onnx-fp32-v1"
    assert emb.model_file.name == f"all-MiniLM-L6-v2-{BUNDLED_SHA256[:12]}-onnx-fp32-v1.onnx"
    manifest = json.loads(emb.model_file.with_suffix(".json").read_text())
    assert manifest["kept_fp32"] == [] and manifest["bytes"] > 80e6
    cosines = (emb.embed(TEXTS) * torch_model.embed(TEXTS)).sum(axis=1)
    assert cosines.min() > 0.9999, cosines
