"""A first sync of many notes: its link rows, and its two lanes side by side."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

from helpers import (
    DAEMON_DIR,
    eventually,
    new_vault,
    note,
    open_vault,
    rebuilt_snapshot,
    snapshot,
    write,
)
from memvault.core.wikilinks import LinkIndex
from memvault.engine import indexer

NOTES = 450  # more than two batches of BATCH_NOTES (200): links cross batches both ways


def _links_vault(tmp_path: Path) -> Path:
    """Notes each linking the one before and the one after (by name, by path), the last
    through an alias the first note gives itself, and a name two folders share."""
    root = new_vault(tmp_path)
    for i in range(NOTES):
        body = f"Before [[n{(i - 1) % NOTES:03}]], after [[people/n{(i + 1) % NOTES:03}]]."
        if i == NOTES - 1:
            body += " Back to [[the first]]."
        if i == 0:
            body += " Twin [[twin]]."
        fields = {"aliases": "[the first]"} if i == 0 else {}
        write(root, f"people/n{i:03}.md", note(f"N {i}", f"note {i}", body, **fields))
    write(root, "projects/twin.md", note("Twin", "one twin"))
    write(root, "decisions/twin.md", note("Twin", "the other twin"))
    return root


def _stored(v: object) -> dict[tuple[str, int, str], tuple[str, str | None, tuple[str, ...]]]:
    rows = v.engine.store.links()  # type: ignore[attr-defined]
    return {(r.source, r.line, r.target): (r.verdict, r.resolved, r.candidates) for r in rows}


def _truth(v: object) -> dict[tuple[str, int, str], tuple[str, str | None, tuple[str, ...]]]:
    """Each stored link resolved afresh against every file of the vault as it is."""
    store = v.engine.store  # type: ignore[attr-defined]
    paths, aliases = store.paths_and_aliases()
    idx = LinkIndex(paths + store.attachment_paths(), aliases)
    out = {}
    for r in store.links():
        res = idx.resolve(r.target, r.source)
        out[(r.source, r.line, r.target)] = (res.verdict, res.path, res.candidates)
    return out


def test_first_sync_resolves_links_into_later_batches(tmp_path: Path) -> None:
    root = _links_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        stored = _stored(v)
        mine = [k for k in stored if k[0].startswith("people/")]
        assert len(mine) == 2 * NOTES + 2
        assert stored == _truth(v)
        # concretely: into the same batch, a later one, an earlier one, by alias, a tie
        first = "people/n000.md"
        assert stored[(first, 8, "people/n001")] == ("resolved", "people/n001.md", ())
        assert stored[(first, 8, "n449")] == ("resolved", "people/n449.md", ())
        assert stored[("people/n449.md", 7, "people/n000")] == ("resolved", first, ())
        assert stored[("people/n449.md", 7, "the first")] == ("alias", first, ())
        assert stored[("people/n250.md", 7, "n249")] == ("resolved", "people/n249.md", ())
        assert stored[(first, 8, "twin")] == (
            "ambiguous",
            None,
            ("decisions/twin.md", "projects/twin.md"),
        )


def test_new_notes_of_one_save_resolve_each_other(tmp_path: Path) -> None:
    """A save of notes that link each other (a small sync: one batch, no pause)."""
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        write(root, "people/ana.md", note("Ana", "ana", "Works with [[bo]]."))
        write(root, "people/bo.md", note("Bo", "bo", "Works with [[ana]] and [[people/bo]]."))
        v.sync(["people/ana.md", "people/bo.md"])
        stored = _stored(v)
        assert stored[("people/ana.md", 7, "bo")] == ("resolved", "people/bo.md", ())
        assert stored[("people/bo.md", 7, "ana")] == ("resolved", "people/ana.md", ())
        assert stored[("people/bo.md", 7, "people/bo")] == ("resolved", "people/bo.md", ())
        assert stored == _truth(v)


def test_an_alias_given_in_a_later_batch_resolves_links_of_earlier_ones(
    tmp_path: Path, monkeypatch: object
) -> None:
    """An alias a note gives itself in the sync's last batch: the links naming it that
    earlier batches stored are resolved to it too."""
    monkeypatch.setattr(indexer, "BATCH_NOTES", 3)  # type: ignore[attr-defined]
    root = new_vault(tmp_path)
    for i in range(8):
        write(root, f"logs/l{i}.md", note(f"L {i}", f"log {i}", "See [[Boss]]."))
    write(root, "people/zed.md", note("Zed", "zed", "Me.", aliases="[Boss]"))
    with open_vault(root) as v:
        v.sync()
        stored = _stored(v)
        for i in range(8):
            assert stored[(f"logs/l{i}.md", 7, "Boss")] == ("alias", "people/zed.md", ())
        assert stored == _truth(v)


# -- the vector lane beside the structure lane -----------------------------------------


def test_a_first_sync_runs_its_vector_lane_beside_its_structure_lane(
    tmp_path: Path, monkeypatch: object
) -> None:
    """Steps of the vector lane run on a thread of their own while the notes are read
    (the second core), and the index at the end is the one a sync in turn makes:
    every chunk, each under its label with its cached vector, nothing pending."""
    from memvault.engine.embedding import Embedding

    ran: list[tuple[str, int]] = []  # (thread, chunks indexed) of each step
    real = Embedding.embed_pending

    def spied(self: Embedding, *args: object, **kw: object) -> object:
        step = real(self, *args, **kw)  # type: ignore[arg-type]
        ran.append((threading.current_thread().name, step.indexed))
        return step

    monkeypatch.setattr(Embedding, "embed_pending", spied)  # type: ignore[attr-defined]
    monkeypatch.setattr(indexer, "BATCH_NOTES", 20)  # type: ignore[attr-defined]
    root = _links_vault(tmp_path)
    with open_vault(root) as v:
        report = v.sync()
        store = v.engine.store
        chunks = store.label_shas()
        assert store.pending_state() == (0, None)
        assert v.engine.embedding.vectors.labels() == set(chunks)
        assert report.embedded_chunks + report.reused_chunks == len(chunks)
        beside = sum(n for name, n in ran if name == "memvault-vectors-beside")
        assert beside > 0, ran
        # each label's vector in the index is its own text's cached vector
        labels = sorted(chunks)
        cached = v.engine.embedding.vectors_for(labels)
        held = np.asarray(v.engine.embedding.vectors._require_open().get_items(labels))
        kept = cached.astype(np.float16).astype(np.float32)  # the index keeps float16 (_checked)
        want = kept / np.linalg.norm(kept, axis=1, keepdims=True)  # cosine: normalized
        assert np.allclose(held, want, atol=1e-6)
    assert not [t for t in threading.enumerate() if t.name == "memvault-vectors-beside"]


def test_a_chunk_deleted_while_its_vector_goes_in_outside_the_lock_leaves_the_index(
    tmp_path: Path,
) -> None:
    """The lane beside a sync takes chunks off the queue under the engine's lock and
    puts them into hnswlib after it: a sync that deletes one of them in between (the
    lock free) must not leave its vector behind."""
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        write(root, "people/ana.md", note("Ana", "ana", "Ana works on the search."))
        v.sync()
        write(root, "people/bo.md", note("Bo", "bo", "Bo works on the vectors."))
        v.sync(["people/bo.md"], vectors=False)
        emb = v.engine.embedding
        bo = store_labels = v.engine.store.labels_of(["people/bo.md"])
        assert bo and v.engine.store.pending_state()[0] == len(bo)
        vi = emb.vectors
        real_add = vi.add

        def add_after_a_delete(labels: object, vectors: object) -> None:
            (root / "people/bo.md").unlink()
            v.sync(["people/bo.md"], vectors=False)  # deletes bo's chunks: forget()
            real_add(labels, vectors)  # type: ignore[arg-type]

        vi.add = add_after_a_delete  # type: ignore[method-assign]
        step = emb.embed_pending(v.engine._lock, add_outside=True)
        vi.add = real_add  # type: ignore[method-assign]
        assert step.indexed == len(store_labels)
        assert not v.engine.store.labels_of(["people/bo.md"])
        assert not vi.labels() & bo
        assert vi.labels() == v.engine.store.labels()


KILLED_SYNC = """
import sys, time
from memvault.api import Vault
from memvault.engine import indexer
from memvault.index.embedder import HashEmbedder
indexer.BATCH_NOTES = 10  # many batches, each a pause where the lane beside indexes
with Vault.open(sys.argv[1], embedder=HashEmbedder()) as v:
    v.sync(progress=lambda p: time.sleep(0.05))  # slowed: killed well before its end
"""


def test_a_first_sync_killed_while_both_lanes_run_resumes_whole(tmp_path: Path) -> None:
    """kill -9 while the structure lane is mid-way and the lane beside it has indexed
    chunks: the next sync finishes, and the index is the one a sync from nothing makes
    (every chunk once, its vector in the index, nothing pending)."""
    root = _links_vault(tmp_path)
    (root / ".memvault").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["PYTHONPATH"] = str(DAEMON_DIR)
    proc = subprocess.Popen([sys.executable, "-c", KILLED_SYNC, str(root)], env=env)
    db = root / ".memvault" / "index.db"

    def midway() -> bool:
        if not db.exists():
            return False
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                notes = conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
                chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
                pending = conn.execute("SELECT COUNT(*) FROM pending").fetchone()[0]
        except sqlite3.Error:  # the tables not made yet
            return False
        return 100 < notes < NOTES and chunks > pending

    try:
        eventually(midway, what="a first sync midway, with chunks indexed beside it")
    finally:
        proc.kill()
        proc.wait()
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0] < NOTES
    with open_vault(root) as v:
        v.sync()
        got = snapshot(v)  # asserts the vector index holds exactly the db's chunks
        assert v.engine.store.pending_state() == (0, None)
    assert rebuilt_snapshot(root, tmp_path) == got
