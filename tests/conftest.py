"""Shared fixtures: isolation from the user's environment, no leaked threads."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from casefs import casefs, place  # noqa: F401 (fixtures: a disk that folds case)

# Threads that libraries keep for the life of the process (torch, asyncio pools).
_LIBRARY_THREADS = ("ThreadPoolExecutor", "asyncio_", "AnyIO", "Dummy-", "pydevd")


@pytest.fixture(scope="session")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's user cache folder: the ONNX model is built there once per test run."""
    return tmp_path_factory.mktemp("user-cache")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, user_cache: Path) -> None:
    """No test reads the developer's vault, config, model cache or Hugging Face cache."""
    for name in list(os.environ):
        if name.startswith("MEMVAULT_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache))


@pytest.fixture(autouse=True)
def _no_thread_leaks() -> Iterator[None]:
    """A test that leaves a thread of ours running fails (watchdog's habit)."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5
    while True:
        leaked = [
            t
            for t in threading.enumerate()
            if t not in before and t.is_alive() and not t.name.startswith(_LIBRARY_THREADS)
        ]
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not leaked, f"threads leaked: {[t.name for t in leaked]}"


# --- the ONNX backend's model, built once per session ---------------------------------------


@pytest.fixture(scope="session")
def built(user_cache: Path) -> Path:
    """The session's cache folder, holding the model built from the bundled weights."""
    from memvault.config import IndexSettings
    from memvault.index.embedder_onnx import load_onnx_embedder

    folder = user_cache / "memvault" / "onnx"
    load_onnx_embedder(IndexSettings(model_cache=str(folder)))
    return folder


@pytest.fixture(scope="session")
def onnx(built: Path) -> Any:
    """The default (int8) ONNX embedder."""
    from memvault.config import IndexSettings
    from memvault.index.embedder_onnx import load_onnx_embedder

    return load_onnx_embedder(IndexSettings(model_cache=str(built)))


@pytest.fixture(scope="session")
def torch_model() -> Any:
    """The PyTorch embedder of the bundled model (the reference)."""
    from memvault.index.embedder import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


# --- a real PostgreSQL server with pgvector (pgserver), started once per session --------------


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A PostgreSQL server (pgserver's binaries, pgvector included) for the session."""
    from pg_helpers import start_server, stop_server

    server = start_server()
    yield server
    stop_server(server)


@pytest.fixture
def pg_dsn(pg_server: Any, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    """The session server's DSN, and the test's own schema (``MEMVAULT_INDEX_SCHEMA``)."""
    from pg_helpers import fresh_schema

    monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", fresh_schema(pg_server, request.node.name))
    return str(pg_server.get_uri())
