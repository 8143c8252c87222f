"""A write in a process that is no daemon (the CLI, the Python API, the MCP server
without one) costs its own change, not the vault's vector index (issue 27: `memvault
log` on 10,000 notes opened the whole hnswlib graph to take one chunk out of it, ~1 s,
and its close wrote vectors.bin again; the next `memvault search` opened it again to put
the new chunk in). The graph saved is left as it is: the chunks embedded since are in
cache.db, the cold reader searches them exactly, and the next full open (a daemon's)
puts them in and takes the deleted ones out."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import new_vault, note, open_vault, write
from memvault.engine import held_vectors


def _vault(tmp_path: Path) -> Path:
    root = new_vault(tmp_path)
    for i in range(40):
        folder = ("projects", "people", "decisions", "topics")[i % 4]
        body = f"## Plan {i}\n\nThe harbour budget {i} is reviewed with crew {i % 7}.\n"
        write(root, f"{folder}/n{i:02d}.md", note(f"Harbour {i}", f"plan {i}", body))
    with open_vault(root) as v:
        v.sync()
    return root


def _answers(v) -> list[list[tuple[str, int, float, bool]]]:  # type: ignore[no-untyped-def]
    queries = ("kelp harvest at the pier", "seaweed drying racks", "harbour budget 3")
    return [
        [(h.path, h.line_start, round(h.score, 5), h.pending) for h in v.search(q, k=5)]
        for q in queries
    ]


def test_writes_and_the_search_after_them_leave_the_saved_graph_as_it_is(
    tmp_path: Path,
) -> None:
    root = _vault(tmp_path)
    graph = root / ".memvault" / "vectors.bin"
    saved = graph.read_bytes()
    with open_vault(root) as v:
        v.log("kelp harvest at the pier")
        v.log("seaweed drying racks")  # today's log changed: its old chunk deleted
        v.add("projects", "Kelp farm", summary="seaweed", body="Kelp harvest at the pier.\n")
        assert v.engine.embedding.held.opened is None  # no whole graph opened
    assert graph.read_bytes() == saved  # nor written again
    with open_vault(root, mode="query") as cold:  # as `memvault search` opens it
        answers = _answers(cold)  # the chunks just written embedded by its catch-up
        assert cold.engine.embedding.held.opened is None
    assert graph.read_bytes() == saved
    assert answers[0][0][:2] == ("projects/kelp-farm.md", 10)
    assert answers[1][0][0].startswith("logs/")
    assert not any(hit[3] for hits in answers for hit in hits)  # none pending: by meaning
    with open_vault(root) as full:  # as a daemon holds it: the chunks put in, and saved
        assert full.engine.embedding.vectors is not None
        assert _answers(full) == answers
    assert graph.read_bytes() != saved
    with open_vault(root, mode="query") as cold:  # the graph saved whole, cold: alike
        assert _answers(cold) == answers
        assert cold.engine.embedding.held.opened is None


def test_past_the_chunks_left_out_the_full_index_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process embedding more than ``LEFT_OUT_MOST`` chunks (a `memvault sync` after a
    migration) opens the graph and puts them in, as before; its close saves it."""
    root = _vault(tmp_path)
    graph = root / ".memvault" / "vectors.bin"
    saved = graph.read_bytes()
    monkeypatch.setattr(held_vectors, "LEFT_OUT_MOST", 1)
    for i in range(6):
        write(root, f"topics/kelp{i}.md", note(f"Kelp {i}", "kelp", f"Kelp rope {i}.\n"))
    with open_vault(root) as v:
        v.sync()
        assert v.engine.embedding.held.opened is not None
        assert v.search("kelp rope 4", k=1)[0].path == "topics/kelp4.md"
    assert graph.read_bytes() != saved
