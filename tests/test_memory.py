"""One door: ``Vault.open(root, mode=...)`` decides once whether a vault's calls go to
its running daemon or to the vault opened in this process (``memvault.backends``), and
the CLI, the MCP server and the HTTP API all call that one ``Vault``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from helpers import make_vault, note, open_vault, running_daemon, write
from memvault.api import Vault
from memvault.client import DaemonClient
from memvault.engine import Progress
from memvault.errors import LockHeld, MemvaultError
from memvault.index.embedder import HashEmbedder
from memvault.service.daemon import Daemon


def test_a_write_goes_to_a_running_daemon(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v, running_daemon(v), Vault.open(root, mode="write") as m:
        assert isinstance(m.daemon, DaemonClient)
        assert m.log("through the daemon").path.startswith("logs/")


def test_in_process_reads_and_writes(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with Vault.open(root, mode="write") as m:
        assert m.daemon is None
        m.add("people", "Ana Lopez", summary="Runs billing")
    with Vault.open(root, mode="peek") as m:
        assert m.daemon is None and m.status()["notes"] >= 1


def test_reads_while_another_process_writes_but_refuses_writes(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as holder:
        holder.sync()
        with Vault.open(root, mode="read") as m:  # read-only: the index as it is
            assert m.get("MEMORY.md").text
            with pytest.raises(MemvaultError, match="read-only"):
                m.log("refused")
        with pytest.raises(LockHeld), Vault.open(root, mode="write"):
            pass


def test_a_read_syncs_first_when_the_lock_is_free(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    write(root, "people/zed.md", note("Zed Quill", "keeps the lighthouse"))
    with Vault.open(root, mode="read", embedder=HashEmbedder()) as m:
        assert [h.path for h in m.search("lighthouse", k=1)] == ["people/zed.md"]
    with Vault.open(root, mode="peek") as m:  # a peek syncs nothing
        write(root, "people/yan.md", note("Yan Ortiz", "rows the ferry"))
    with Vault.open(root, mode="peek", embedder=HashEmbedder()) as m:
        assert all(h.path != "people/yan.md" for h in m.search("ferry", k=5))


def open_index_files(root: Path) -> int:
    """This process's open descriptors on the vault's index.db (and its -wal, -shm)."""
    index = str(root / ".memvault" / "index.db")
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith(index)
        except OSError:
            continue
    return count


def test_through_a_daemon_the_index_is_opened_here_only_to_read_what_it_does_not_serve(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v, running_daemon(v):
        v.sync()
        before = open_index_files(root)
        with Vault.open(root) as m:
            assert m.daemon is not None
            assert m.search("schema", k=3) and m.status()["notes"] >= 1
            assert open_index_files(root) == before  # the daemon answered: nothing opened here
            assert m.links_check() == []  # the daemon does not serve it: read here
            assert open_index_files(root) > before
            with pytest.raises(MemvaultError, match="served by its daemon"):
                m.save()  # the daemon saves its own vectors


class PacedEmbedder(HashEmbedder):
    """The hash embedder taking a small model's time a call (50 ms; the bundled one
    takes ~100 ms for 32 texts): a sync of a few hundred notes lasts seconds, long
    enough to be seen in progress (4 ms let a sync of the faster structure lane end
    between two of the caller's 0.25 s looks, once in a full run)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(0.05)
        return super().embed(texts)


def test_sync_through_the_daemon_streams_its_progress(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    for i in range(300):
        write(
            root, f"logs/2024-01-{i:03}.md", note(f"Day {i}", body=f"Met team {i} about item {i}.")
        )
    # files already there, no start-up reconcile: the daemon has them to index on request
    vault = Vault.open(root, through_daemon=False, embedder=PacedEmbedder())
    daemon = Daemon(vault, port=0, initial_reconcile=False)
    daemon.start()
    seen: list[Progress] = []
    try:
        with Vault.open(root) as m:
            assert m.daemon is not None
            report = m.sync(progress=seen.append)
        assert len(report.created) >= 300
    finally:
        daemon.shutdown()
    assert seen, "the daemon's progress never reached the caller"
    assert all(isinstance(p, Progress) and 0 <= p.done <= p.total for p in seen)
    assert {p.stage for p in seen} <= {"notes", "vectors"}


def test_the_door_loads_no_engine_until_one_is_opened_here() -> None:
    """A CLI call a daemon answers imports Vault and the client only: numpy, SQLite's
    index and the engine cost it ~0.2 s of CPU (bench/search_latency.py); the note
    parser and YAML (the filters' tag rule once lived in core/notes.py), the MEMORY.md
    upkeep and the wikilinks parser (config read its rules from memory_md) ~0.05 s."""
    import subprocess
    import sys

    code = (
        "import sys, memvault.api, memvault.backends\n"
        "heavy = {'numpy', 'yaml', 'memvault.core.notes', 'memvault.core.memory_md',\n"
        "         'memvault.core.wikilinks', 'memvault.engine', 'memvault.index.embedder'}\n"
        "heavy &= set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "daemon")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
