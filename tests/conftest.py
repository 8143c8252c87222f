"""Shared fixtures: isolation from the user's environment, no leaked threads."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

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
