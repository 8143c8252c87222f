"""onnxruntime writes no telemetry files.

The Linux wheel's telemetry created ``$XDG_CACHE_HOME/Microsoft/DeveloperTools/
.onnxruntime/{deviceid,onnxruntime.db}`` (a device id and queued "ProcessInfo" events)
as soon as onnxruntime was loaded. Real onnxruntime in a child process whose HOME and
XDG_CACHE_HOME are empty temporary folders; afterwards nothing but what memvault itself
wrote may be there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

DAEMON_DIR = Path(__file__).resolve().parents[1] / "daemon"


def run_isolated(tmp_path: Path, script: str) -> tuple[Path, Path]:
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORT_", "MEMVAULT_"))}
    env.update(
        PYTHONPATH=str(DAEMON_DIR), HOME=str(home), XDG_CACHE_HOME=str(cache), HF_HUB_OFFLINE="1"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ok"), done.stdout
    return home, cache


def written(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_loading_onnxruntime_through_memvault_writes_no_telemetry(tmp_path: Path) -> None:
    home, cache = run_isolated(
        tmp_path,
        "from memvault.index.onnx_run import import_onnxruntime\n"
        "import_onnxruntime()\n"
        "import onnxruntime\n"
        "onnxruntime.get_available_providers()\n"
        "print('ok')\n",
    )
    assert written(cache) == []
    assert written(home) == []


@pytest.mark.model
def test_embedding_with_the_onnx_backend_writes_no_telemetry(tmp_path: Path, built: Path) -> None:
    home, cache = run_isolated(
        tmp_path,
        "from memvault.config import IndexSettings\n"
        "from memvault.index.embedder_onnx import load_onnx_embedder\n"
        f"e = load_onnx_embedder(IndexSettings(model_cache={str(built)!r}))\n"
        "assert len(e.embed(['Ana runs ops'])[0]) == 384\n"
        "print('ok')\n",
    )
    assert not (cache / "Microsoft").exists(), written(cache)
    assert written(cache) == []
    assert written(home) == []


@pytest.mark.model
def test_the_models_own_process_writes_no_telemetry(tmp_path: Path, built: Path) -> None:
    """The daemon's model runs in a child process (onnx_run.ChildRun), which imports
    onnxruntime itself: it is started with the switch set too."""
    home, cache = run_isolated(
        tmp_path,
        "import os\n"
        "os.environ.pop('ORT_DISABLE_TELEMETRY', None)\n"
        "from memvault.config import IndexSettings\n"
        "from memvault.index.embedder_onnx import load_onnx_embedder\n"
        f"e = load_onnx_embedder(IndexSettings(model_cache={str(built)!r}), apart=True)\n"
        "assert len(e.embed(['Ana runs ops'])[0]) == 384\n"
        "e.close()\n"
        "print('ok')\n",
    )
    assert not (cache / "Microsoft").exists(), written(cache)
    assert written(cache) == []
    assert written(home) == []
