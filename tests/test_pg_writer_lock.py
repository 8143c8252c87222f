"""The writer's lock of a team's index in PostgreSQL (index/pg_writer.py, pg_store.py), as
a first day's, a careless and a hostile user meet it (docs/TEAM.md). A real server
(pgserver), never a mock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import make_vault, open_vault
from memvault.config import VaultConfig
from memvault.engine.index_move import move_index, with_store
from memvault.index.embedder_hash import HashEmbedder
from pg_helpers import StallProxy


def test_index_move_is_not_refused_by_its_own_copys_session_still_ending(
    tmp_path: Path, pg_server: Any, pg_dsn: str
) -> None:
    """A field test, the first step of docs/TEAM.md on a fresh database: `index move`
    failed, `has a writer already: another process`. The move copies the vectors as a
    writer, closes, and opens again as a writer to sync; a closed session's advisory
    lock goes only once its backend has exited (a loaded server: 1 in 200 here), and the
    second open does not wait. The proxy keeps the closed session alive, as that backend
    is for a moment."""
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    proxy = StallProxy(pg_server, linger=True)
    try:
        config = VaultConfig.load(root)
        target = with_store(config, "postgres", proxy.dsn())
        report = move_index(config, target, HashEmbedder())
        assert report.embedded == 0 and report.chunks > 0
    finally:
        proxy.close()
