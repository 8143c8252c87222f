"""vectors.bin's graph form through the engine: what a sync saves, what the next open loads."""

from __future__ import annotations

from pathlib import Path

from helpers import make_vault, note, open_vault, write
from memvault.index.vectors_file import inspect_index_file


def test_a_synced_vault_saves_the_graph_and_the_next_open_gives_the_same_hits(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    for i in range(40):
        write(root, f"people/p{i:02}.md", note(f"Person {i}", f"works on topic {i % 7}"))
    queries = ["topic 3", "person 12", "works on", "zebra"]
    with open_vault(root) as v:
        v.sync()
        before = [[(h.path, h.score) for h in v.search(q, k=8)] for q in queries]
        labels = v.engine.store.labels()
        dim = v.engine.embedding.dim()
    vec = root / ".memvault" / "vectors.bin"
    info = inspect_index_file(vec.read_bytes(), dim)
    assert info.graph_only and set(int(x) for x in info.labels) == labels
    assert vec.stat().st_size < len(labels) * dim * 4  # not even the vectors alone
    with open_vault(root) as v:
        report = v.sync()
        assert report.embedded_chunks == 0
        assert [[(h.path, h.score) for h in v.search(q, k=8)] for q in queries] == before
        assert not v.engine.embedding.vectors.dirty  # loaded as saved
