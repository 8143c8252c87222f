"""Constants and helpers shared by the ONNX backend's tests (test_embedder_onnx, test_onnx_cache)."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memvault.config import DEFAULT_MODEL
from memvault.index.model_files import (
    BUNDLED_SHA256,
    resolve_model_path,
)
from memvault.index.onnx_cache import (
    RECIPE,
    ModelSpec,
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


@contextmanager
def read_only_not_needed() -> Iterator[None]:
    yield


def fallback_messages(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)


def copy_built(built: Path, to: Path) -> Path:
    to.mkdir(parents=True, exist_ok=True)
    for suffix in (".onnx", ".json"):
        shutil.copy(built / f"{STEM}{suffix}", to / f"{STEM}{suffix}")
    return to


def fake_torch(tmp_path: Path) -> Path:
    """A folder that, first on PYTHONPATH, makes ``import torch`` fail in a child process."""
    site = tmp_path / "no-torch"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("raise ImportError('no torch here')\n")
    return site


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(c) for c in text]
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:  # gone (or going: ESRCH between the open and the read)
        return False
    return state != "Z"


LOADER = (
    "import logging, sys\n"
    "logging.basicConfig(level=logging.WARNING)\n"
    "from memvault.config import IndexSettings\n"
    "from memvault.index.embedder import make_embedder\n"
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
