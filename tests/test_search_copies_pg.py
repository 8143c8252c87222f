"""Copies on a team index (PostgreSQL + pgvector): a folder's search keeps ``k`` as the
SQLite index does when copies send it past its candidates (engine/reader's further look).
A real server (pgserver), never a mock; the hash embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import open_vault, write
from memvault.core.copies import copy_key

FACT = "The deploy window is Tuesday 10:00 UTC.\n"


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "postgres":
        monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", request.getfixturevalue("pg_dsn"))
    return str(request.param)


def test_a_folders_further_look_past_copies_keeps_k_on_both_indexes(
    tmp_path: Path, backend: str
) -> None:
    """Thirty copies of one fact fill a folder's twenty candidates; the folder's eight
    other notes come from the further look. On PostgreSQL that look asked the whole
    index's nearest chunks, growing to 1,280 as the 1,300 nearer ones outside the folder
    were none of its own, and pgvector refused the search ('1280 is outside the valid
    range for parameter "hnsw.ef_search"'); the SQLite index's page held nine. A page of
    300 with no folder, copies leaving it short, went the same way."""
    root = tmp_path / "v"
    for i in range(30):
        write(root, f"team/fact-{i}.md", FACT)
    for i in range(8):
        write(root, f"team/svc-{i}.md", f"Service {i} rolls out on Tuesday after review.\n")
    for i in range(1300):
        write(root, f"other/o-{i}.md", f"The deploy window is Tuesday {i}:00 UTC here.\n")
    with open_vault(root, overrides={"search": {"candidates": 20}}) as vault:
        vault.sync()
        hits = vault.search("deploy window is Tuesday", 10, folder="team")
        wide = vault.search("deploy window is Tuesday", 300)
    assert all(h.path.startswith("team/") for h in hits)
    assert len({copy_key(h.text) for h in hits}) == len(hits) == 9, [h.path for h in hits]
    (fact,) = [h for h in hits if h.path.startswith("team/fact-")]
    assert fact.copies == 29
    assert len({copy_key(h.text) for h in wide}) == len(wide) == 300
    assert [h.score for h in wide] == sorted((h.score for h in wide), reverse=True)
