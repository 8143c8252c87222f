"""Vault.open, the public Python API: which folders are vaults, and a running daemon.

the README's Python example crashed (``LockHeld``) while the daemon the
README says to keep running was up; ``--vault`` on any folder made it a vault.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import make_vault, run_memvault
from memvault.api import Vault
from memvault.errors import LockHeld, VaultNotFound
from memvault.index.embedder import HashEmbedder
from memvault.vault.lock import WriterLock

ROOT = Path(__file__).resolve().parents[1]


def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    out.update(
        PYTHONPATH=str(ROOT / "daemon"), HOME=str(tmp_path / "home"), MEMVAULT_INDEX_MODEL="hash"
    )
    return out


def memvault(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_memvault(*args, env=env(tmp_path), cwd=tmp_path)


def readme_python() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", text, re.S)
    return block


def run_readme_example(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", readme_python()],
        env=env(tmp_path),
        cwd=tmp_path,  # the example opens "my-memory", relative to where it runs
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_folder_that_is_not_a_vault_is_refused_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# an agent's own memory\n", encoding="utf-8")
    with pytest.raises(VaultNotFound, match="memvault init"):
        Vault.open(tmp_path, embedder=HashEmbedder())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]


def test_create_makes_a_vault_as_init_does(tmp_path: Path) -> None:
    with Vault.open(tmp_path / "new", create=True, embedder=HashEmbedder()) as v:
        v.sync()
        assert v.status()["notes"] == 0  # no example notes
    assert (tmp_path / "new" / "templates" / "decision.md").is_file()


def test_another_writer_that_is_not_a_daemon_is_still_lock_held(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    lock = WriterLock(root / ".memvault" / "lock")
    lock.acquire()
    try:
        with pytest.raises(LockHeld):
            Vault.open(root, embedder=HashEmbedder())
    finally:
        lock.release()


@pytest.mark.slow
def test_the_readme_python_example_runs_as_written_with_and_without_a_daemon(
    tmp_path: Path,
) -> None:
    assert "Vault.open(" in readme_python()
    created = memvault(tmp_path, "init", "my-memory", "--example")
    assert created.returncode == 0, created.stderr
    alone = run_readme_example(tmp_path)
    assert alone.returncode == 0, alone.stderr
    assert "# Memory Index" in alone.stdout
    started = memvault(tmp_path, "daemon", "start", "--vault", "my-memory")
    assert started.returncode == 0, started.stderr
    try:
        (tmp_path / "my-memory" / "people" / "ana.md").write_text(
            "---\ntitle: Ana\nsummary: Owns the database schema.\n---\n# Ana\n", encoding="utf-8"
        )
        served = run_readme_example(tmp_path)
        assert served.returncode == 0, served.stderr  # was: LockHeld
        assert "# Memory Index" in served.stdout and "[[people/ana]]" in served.stdout
        # its writes went to the daemon, the one writer: it still holds the lock
        status = memvault(tmp_path, "daemon", "status", "--vault", "my-memory")
        assert status.returncode == 0, status.stdout
    finally:
        memvault(tmp_path, "daemon", "stop", "--vault", "my-memory")


def test_vault_open_with_a_daemon_up_writes_through_it(tmp_path: Path) -> None:
    from helpers import open_vault, running_daemon

    root = make_vault(tmp_path)
    with open_vault(root) as daemon_vault, running_daemon(daemon_vault):
        daemon_vault.sync()
        # the test daemon runs in this process: make runfile.running() find it by pid
        with Vault.open(root, embedder=HashEmbedder()) as v:
            assert v.daemon is not None
            result = v.log("met Ana about the schema")
            assert result.path.startswith("logs/")
            assert v.add("people", "Ana", summary="Owns the schema.").created
            assert "[[people/ana]]" in (root / "MEMORY.md").read_text(encoding="utf-8")
            assert v.search("schema", k=3)
            assert v.links_check() == []
