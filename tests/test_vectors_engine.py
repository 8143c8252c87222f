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


def test_an_open_survives_chunks_deleted_while_it_reads_their_vectors(tmp_path: Path) -> None:
    """The labels an open wants are read first, their vectors later: a writer's sync
    can delete chunks in between (its ``forget`` waits for the open). The open gives a
    placeholder for each, not a ValueError that left the daemon's vector lane without
    an index for good (review of stop 32)."""
    from memvault.index.vectors import VectorIndex, VectorsWanted

    root = make_vault(tmp_path)
    for i in range(30):
        write(root, f"people/p{i:02}.md", note(f"Person {i}", f"works on topic {i % 7}"))
    with open_vault(root) as v:
        v.sync()
        store, embedding = v.engine.store, v.engine.embedding
        wanted = store.embedded_labels()  # read before the delete, as an open does
        gone = {c.label for c in store.chunks_of("people/p03.md")}
        assert gone and gone <= set(wanted)
        (root / "people/p03.md").unlink()
        v.sync()
        assert not gone & set(store.embedded_labels())
        vi = VectorIndex(tmp_path / "other.bin", embedding.dim())
        vi.open(VectorsWanted(None, wanted, embedding.vectors_for))  # a build: every vector
        sha = vi.save()
        again = VectorIndex(tmp_path / "other.bin", embedding.dim())
        report = again.open(VectorsWanted(sha, wanted, embedding.vectors_for))  # graph form
        assert report.loaded and report.rebuilt_reason is None
        kept = sorted(set(wanted) - gone)
        hits = again.query(embedding.vectors_for(kept[:1])[0], 3)
        assert hits[0][0] == kept[0]
