"""`migrate --no-index` with a daemon up leaves the vectors to it.

It waited 23.6 s for "1153 chunks embedded": the daemon's /sync made every vector
before it answered. With ``vectors: false`` the daemon syncs the structure only and
its vector lane embeds afterwards. The HTTP API on a real loopback socket (uvicorn)
with a daemon.json naming it; the hash embedder.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers import new_vault, open_vault, running_daemon
from memvault.migration import migrate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from make_dump import make_dump


def test_migrate_no_index_through_a_daemon_leaves_the_vectors_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    (root / "dump.md").write_text(make_dump(300, 3), encoding="utf-8")
    with open_vault(root) as daemon_vault:
        daemon_vault.sync()
        with running_daemon(daemon_vault):
            report = migrate(root / "dump.md", root, index=False)
        assert report.sync is not None and report.sync["embedded_chunks"] == 0
        pending, _ = daemon_vault.pending_vectors()
        assert pending > 0 and report.pending_vectors == pending  # left for the vector lane
        assert "[[people/" in (root / "MEMORY.md").read_text(encoding="utf-8")


def test_migrate_with_the_index_through_a_daemon_still_embeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    (root / "dump.md").write_text(make_dump(300, 3), encoding="utf-8")
    with open_vault(root) as daemon_vault:
        daemon_vault.sync()
        with running_daemon(daemon_vault):
            report = migrate(root / "dump.md", root)
        assert report.sync is not None and report.sync["embedded_chunks"] > 0
        assert daemon_vault.pending_vectors()[0] == 0
