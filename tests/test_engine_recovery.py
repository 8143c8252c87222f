"""Damaged index files are detected on open and rebuilt; hard notes are indexed as far as possible."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import make_vault, note, open_vault, rebuilt_snapshot, run_on_tmpfs, snapshot, write
from memvault.api import Vault
from memvault.interfaces.cli import app

runner = CliRunner()


def indexed(tmp_path: Path) -> Path:
    root = make_vault(tmp_path)
    write(
        root,
        "decisions/zebra.md",
        note("Zebra crossings", "Unique zebra words.", body="Zebras cross here."),
    )
    with open_vault(root) as v:
        v.sync()
    return root


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_damaged_index_db_is_rebuilt_from_the_vault_and_the_cache(
    tmp_path: Path, damage: str
) -> None:
    root = indexed(tmp_path)
    db = root / ".memvault" / "index.db"
    data = db.read_bytes()
    db.write_bytes(
        {"garbage": b"not a database " * 500, "truncated": data[: len(data) // 3], "empty": b""}[
            damage
        ]
    )
    for extra in ("index.db-wal", "index.db-shm"):
        (root / ".memvault" / extra).unlink(missing_ok=True)
    with open_vault(root) as v:
        report = v.sync()
        if damage != "empty":  # an empty file is a valid (new) SQLite database
            assert v.engine.store_rebuilt == str(db)
        assert report.embedded_chunks == 0, "the embedding cache survived: no model calls"
        assert [h.path for h in v.search("zebra crossings", k=1)] == ["decisions/zebra.md"]
        mine = snapshot(v)
    assert mine == rebuilt_snapshot(root, tmp_path)


def test_a_damaged_cache_db_costs_re_embedding_only(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    (root / ".memvault" / "cache.db").write_bytes(b"\x00garbage" * 1000)
    (root / ".memvault" / "cache.db-wal").unlink(missing_ok=True)
    with open_vault(root) as v:
        v.sync()
        assert v.engine.store_rebuilt and v.engine.store_rebuilt.endswith("cache.db")
        assert [h.path for h in v.search("zebra crossings", k=1)] == ["decisions/zebra.md"]
        # vectors whose cache is gone are queued for the lane (the next test), then
        # embedded from the stored text
        v.engine.embed_pending()
        v.engine.embedding.vectors.compact(v.engine.embedding.vectors_for)
        assert v.engine.embedding.vectors.labels() == v.engine.store.labels()


@pytest.mark.parametrize("loss", ["deleted", "damaged"])
def test_a_lost_cache_is_queued_for_the_lane_not_embedded_while_a_search_waits(
    tmp_path: Path, loss: str
) -> None:
    """cache.db deleted (it looks like a cache) or rebuilt after damage: the vector index's
    open re-embedded every chunk inline, and each search waited for it (82 s on the help
    vault with the real model, found by a field test). Every chunk is queued instead,
    as for a new model; a search answers at once from keywords; the lane's catch-up
    brings the vectors back, as a fresh index has them."""
    root = indexed(tmp_path)
    state = root / ".memvault"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{state / 'cache.db'}{suffix}").unlink(missing_ok=True)
    if loss == "damaged":
        (state / "cache.db").write_bytes(b"\x00garbage" * 1000)
    with open_vault(root) as v:
        chunks = len(v.engine.store.labels())
        calls = []
        embedder = v.engine.embedding.embedder
        real = embedder.embed
        embedder.embed = lambda texts: calls.append(len(texts)) or real(texts)  # type: ignore[method-assign]
        hits = v.search("zebra crossings", k=1)
        assert [h.path for h in hits] == ["decisions/zebra.md"]  # keywords meanwhile
        assert calls == [1]  # the question only: nothing embedded inside the open
        assert v.pending_vectors()[0] == chunks
        assert v.status()["index"]["model_changed"] == "the embedding cache was lost"
        v.engine.embed_pending()
        assert v.pending_vectors()[0] == 0
        assert v.engine.embedding.vectors.labels() == v.engine.store.labels()
        mine = snapshot(v)
    assert mine == rebuilt_snapshot(root, tmp_path)


def test_status_says_a_lost_cache_before_anything_opens_the_vector_index(tmp_path: Path) -> None:
    """Status before a search or a start said "0 vectors cached" and nothing more (a
    field test): the re-embed is queued only when the vector index opens."""
    root = indexed(tmp_path)
    with open_vault(root) as v:
        assert v.status()["index"]["cache_lost"] is False
    for suffix in ("", "-wal", "-shm"):
        Path(f"{root / '.memvault' / 'cache.db'}{suffix}").unlink(missing_ok=True)
    with open_vault(root) as v:
        idx = v.status()["index"]
        assert idx["cache_lost"] is True and idx["embedded"] == 0 and idx["chunks"] > 0
        result = runner.invoke(app, ["status", "--vault", str(root)])
        assert "the embedding cache is empty" in result.output
        v.search("zebra crossings", k=1)  # opens the vector index: every chunk queued
        idx = v.status()["index"]
        assert idx["cache_lost"] is False and idx["model_changed"] == "the embedding cache was lost"
        v.engine.embed_pending()
        idx = v.status()["index"]
        assert idx["cache_lost"] is False and idx["embedded"] > 0


def test_the_daemons_lane_re_embeds_a_lost_cache_by_itself(tmp_path: Path) -> None:
    """The lane's warm-up opens the vector index, which queues every chunk: the lane is
    woken by it (nothing else would: no file changed) and catches up."""
    import threading

    from memvault.service.vector_lane import VectorLane

    root = indexed(tmp_path)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{root / '.memvault' / 'cache.db'}{suffix}").unlink(missing_ok=True)
    with open_vault(root) as v:
        idle = threading.Event()
        lane = VectorLane(v, on_idle=idle.set)
        lane.start()  # no wake: the warm-up's own queueing must wake it
        try:
            assert idle.wait(30), "the lost cache's chunks were never embedded"
            assert v.pending_vectors()[0] == 0
            assert v.engine.embedding.vectors.labels() == v.engine.store.labels()
        finally:
            assert lane.stop(10)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "zeroed-header"])
def test_a_damaged_vectors_file_is_rebuilt_from_the_cache_never_loaded(
    tmp_path: Path, damage: str
) -> None:
    root = indexed(tmp_path)
    vec = root / ".memvault" / "vectors.bin"
    data = vec.read_bytes()
    vec.write_bytes(
        {
            "truncated": data[: len(data) // 2],
            "garbage": b"\xff" * len(data),
            "zeroed-header": b"\x00" * 96 + data[96:],
        }[damage]
    )
    with open_vault(root) as v:
        report = v.sync()
        assert report.embedded_chunks == 0
        assert [h.path for h in v.search("zebra crossings", k=1)] == ["decisions/zebra.md"]
        assert v.engine.embedding.vectors.labels() == v.engine.store.labels()


def test_a_folder_where_the_vectors_file_goes_is_named_exit_7_and_nothing_lost(
    tmp_path: Path,
) -> None:
    # found in a field test: `search` exited 1 naming a temp file ("Is a directory")
    root = indexed(tmp_path)
    vec = root / ".memvault" / "vectors.bin"
    vec.unlink()
    vec.mkdir()
    (vec / "mine.txt").write_text("a person's file")
    result = runner.invoke(app, ["search", "--vault", str(root), "zebra crossings"])
    assert result.exit_code == 7, result.output
    assert f"{vec}: a folder is where the vector index goes" in result.output
    assert (vec / "mine.txt").read_text() == "a person's file"
    (vec / "mine.txt").unlink()
    vec.rmdir()
    with open_vault(root) as v:  # moved away: rebuilt from the cache
        assert [h.path for h in v.search("zebra crossings", k=1)] == ["decisions/zebra.md"]


def test_status_says_index_db_was_deleted_under_the_open_index(tmp_path: Path) -> None:
    # found in a field test: `rm .memvault/index.db` under a running daemon, and status
    # went on saying "index matches the files on disk" (its writes went to a file no
    # one opens again); a restart rebuilds it
    root = indexed(tmp_path)
    with open_vault(root) as v:
        assert not [p for p in v.status()["problems"] if p["kind"] == "index"]
        (root / ".memvault" / "index.db").unlink()
        problems = [p for p in v.status()["problems"] if p["kind"] == "index"]
        assert [p["path"] for p in problems] == [".memvault/index.db"]
        assert "restart the daemon" in problems[0]["reason"]
        result = runner.invoke(app, ["status", "--vault", str(root)])  # another process
        assert ".memvault/index.db" not in result.output  # its own index: a new one
    with open_vault(root) as v:  # restarted: rebuilt, and nothing to say
        v.sync()
        assert [h.path for h in v.search("zebra crossings", k=1)] == ["decisions/zebra.md"]
        assert not [p for p in v.status()["problems"] if p["kind"] == "index"]


def hard_notes(tmp_path: Path) -> Path:
    """The example vault, with notes that have nothing to embed and one of 5.4 MB."""
    root = make_vault(tmp_path)
    write(root, "logs/empty.md", "")
    write(root, "logs/only-frontmatter.md", "---\ndate: 2024-01-01\ntype: log\n---\n")
    # fields that describe it are what it says: searched (tests/test_search_descriptions.py)
    write(root, "logs/only-fields.md", "---\ntitle: Nothing here\nsummary: Just fields.\n---\n")
    big = "Firstwordsunique " + ("lorem ipsum dolor sit amet " * 200_000)  # ~5.4 MB, one line
    write(root, "logs/huge.md", big)
    return root


HUGE_CAP = {"vault": {"max_note_bytes": 200_000}}


def test_notes_the_model_cannot_embed_are_indexed_as_far_as_possible(tmp_path: Path) -> None:
    root = hard_notes(tmp_path)
    with open_vault(root, overrides=HUGE_CAP) as v:
        report = v.sync()
        warnings = "\n".join(report.warnings)
        assert "logs/empty.md: nothing to embed" in warnings
        assert "logs/only-frontmatter.md: nothing to embed" in warnings
        assert "logs/only-fields.md" not in warnings
        assert [c.text for c in v.engine.store.chunks_of("logs/only-fields.md")] == [
            "summary: Just fields."
        ]
        assert "logs/huge.md" in warnings and "only the first" in warnings
        assert not report.problems
        # the huge note's first words are indexed: the one chunk holding them is its first
        store = v.engine.store
        (label, _), *rest = store.keywords(["firstwordsunique"], 10)
        assert not rest
        assert store.chunk_rows([label])[label].path == "logs/huge.md"
        assert store.chunk_rows([label])[label].ord == 0
        chunks = store.chunks_of("logs/huge.md")
        assert len(chunks) > 200 and sum(len(c.text) for c in chunks) <= 200_000
        assert "logs/only-frontmatter.md" in {n.path for n in store.notes()}
        status = v.status()
        assert status["notes"] >= 7


@pytest.mark.model
def test_a_note_cut_at_max_note_bytes_is_found_first_by_its_first_words(tmp_path: Path) -> None:
    # The ranking, with the real model: the hash embedder's nearest chunk to a made-up
    # word is noise (every cosine near 0), which the fusion weighs like a real match.
    root = hard_notes(tmp_path)
    with Vault.open(root, overrides=HUGE_CAP) as v:
        v.sync()
        assert v.search("Firstwordsunique", k=1)[0].path == "logs/huge.md"


# -- the vault folder itself goes away ------------------------------------------------------------


@pytest.mark.parametrize("how", ["moved", "deleted", "replaced"])
def test_a_vault_folder_gone_while_open_fails_the_sync_and_changes_nothing(
    tmp_path: Path, how: str
) -> None:
    """Obsidian's "Manage vaults" renames the folder; a person moves or deletes it. Read
    as an empty vault it would drop every note from the index, and MEMORY.md's write
    would make a new folder (with a MEMORY.md) at the old path."""
    import shutil

    from memvault.errors import VaultNotFound

    root = indexed(tmp_path)
    moved = tmp_path / "moved"
    with open_vault(root) as v:
        before = snapshot(v)
        shutil.move(root, moved)
        if how == "replaced":  # another folder at the old path is not the vault opened
            root.mkdir()
        elif how == "deleted":
            shutil.rmtree(moved)
        for paths in (None, ["people/sarah-chen.md"]):
            with pytest.raises(VaultNotFound, match="gone"):
                v.sync(paths)
        with pytest.raises(VaultNotFound, match="gone"):
            v.add("people", "Ghost", body="written into nowhere")
        with pytest.raises(VaultNotFound, match="gone"):
            v.log("a log line with no vault")
        assert snapshot(v) == before
    if how == "replaced":
        assert list(root.iterdir()) == []
    else:
        assert not root.exists()
    if how == "moved":
        assert "Zebra" in (moved / "decisions" / "zebra.md").read_text(encoding="utf-8")


# -- a full disk ----------------------------------------------------------------------------------

FULL_DISK = r"""
import errno, hashlib, json, os, subprocess, sys
from pathlib import Path
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
from memvault.vault.template import init_vault

disk = Path(sys.argv[1])
root = disk / "vault"
init_vault(root, example=True)
with Vault.open(root, embedder=HashEmbedder()) as v:
    v.sync()
    found = [h.path for h in v.search("pgvector", k=3)]
state = root / ".memvault"
def digests():
    return {n: hashlib.sha256((state / n).read_bytes()).hexdigest() for n in ("index.db", "vectors.bin")}
before = digests()
filler = disk / "filler"
def fill():
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)  # the disk full, to the last block
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc
    os.close(fd)
fill()
out = {}
for what in ("sync", "search"):
    try:
        with Vault.open(root, embedder=HashEmbedder(), read_only=what == "search") as v:
            v.sync() if what == "sync" else v.search("PostgreSQL")
        out[what] = None
    except Exception as exc:
        out[what] = [type(exc).__name__, str(exc)]
cli = subprocess.run([sys.executable, "-m", "memvault", "sync", "--vault", str(root)],
                     capture_output=True, text=True, env={**os.environ, "MEMVAULT_INDEX_MODEL": "hash"})
out["cli"] = [cli.returncode, cli.stderr]
out["kept"] = digests() == before
filler.unlink()  # space again
with Vault.open(root, embedder=HashEmbedder()) as v:
    report = v.sync()
    out["after"] = [len(report.created), len(report.deleted)]
    out["found"] = [h.path for h in v.search("pgvector", k=3)] == found != []
    log = v.log("the day begins").path
    text = (root / log).read_bytes()
    fill()  # while it is open, as a daemon has it
    try:
        v.log("an entry the disk has no room for")
        out["log"] = None
    except OSError as exc:
        out["log"] = [exc.errno, exc.filename, exc.strerror]
    out["log_kept"] = (root / log).read_bytes() == text
    out["litter"] = [n for n in os.listdir(root / "logs") if n.startswith(".")]
    out["log_path"] = str(root / log)
print(json.dumps(out))
"""


def test_a_full_disk_never_deletes_the_index_and_it_works_again_with_space(
    tmp_path: Path,
) -> None:
    """A full disk fails SQLite's open (the -shm file, the WAL): taken for a damaged
    index, index.db and vectors.bin were deleted -- by any command, even a search -- and
    the rebuild failed on the same full disk. A real 4 MB tmpfs (a mount namespace of
    its own, so no root is needed outside it)."""
    out = run_on_tmpfs(tmp_path, "4m", FULL_DISK)
    for what in ("sync", "search"):
        assert out[what] is not None and out[what][0] == "StorageError", out
        assert "nothing was deleted" in out[what][1]
    # exit 7 ("the index cannot be loaded"), not 1, which a service manager never restarts
    assert out["cli"][0] == 7 and "nothing was deleted" in out["cli"][1], out["cli"]
    assert out["kept"]  # index.db and vectors.bin byte for byte
    assert out["after"] == [0, 0]  # nothing to rebuild
    assert out["found"]  # the same hits as before the disk filled
    # a write with the disk full names the note (the temp file's write named no file:
    # "error: : No space left on device") and leaves it whole, with no temp file beside
    assert out["log"] == [28, out["log_path"], os.strerror(28)]
    assert out["log_kept"] and out["litter"] == []


def test_a_write_whose_indexing_fails_is_reported_written_so_it_is_never_sent_twice(
    tmp_path: Path,
) -> None:
    """The note was on disk, then the index's commit failed (its disk full; here its
    files made immutable) and the write answered with an error: an agent that retried
    logged the entry twice. The write is reported done, with a warning; the next sync
    indexes it."""
    import subprocess

    root = indexed(tmp_path)
    state = root / ".memvault"
    frozen = [str(state / "index.db"), str(state / "index.db-wal")]
    with open_vault(root) as v:
        v.sync()
        subprocess.run(["chattr", "+i", *frozen], check=True)
        try:
            result = v.log("met the quokka keepers")
            added = v.add("people", "Quinn Quokka", body="Keeps quokkas.")
        finally:
            subprocess.run(["chattr", "-i", *frozen], check=True)
        for r in (result, added):
            assert len(r.report.warnings) == 1 and "not indexed yet" in r.report.warnings[0]
        assert (root / result.path).read_text(encoding="utf-8").count("quokka keepers") == 1
        report = v.sync()
        assert {result.path, added.path} <= set(report.created) | set(report.modified)
        assert {h.path for h in v.search("quokka", k=5)} >= {result.path, added.path}


def test_a_chunk_deleted_while_a_rebuild_reads_is_no_lost_vector(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A graph rebuild (a compaction) reads its labels' vectors a batch at a time, for
    minutes at 100,000 notes, while syncs go on: a note deleted meanwhile leaves labels
    with neither a chunk nor a vector. The log said "re-embedding 1 chunks whose cached
    vectors are gone" (the soak's first compaction), though no vector was lost and none
    re-embedded; a live chunk whose vector is gone is still said, and embedded again."""
    root = indexed(tmp_path)
    write(root, "people/ann.md", note("Ann", "Ann leads the data team."))
    with open_vault(root) as v:
        v.sync()
        store, embedding = v.engine.store, v.engine.embedding
        labels = sorted(store.label_shas())  # what a rebuild's build reads, in batches
        (root / "decisions" / "zebra.md").unlink()
        v.sync()  # a sync while it builds
        with caplog.at_level("WARNING", logger="memvault"):
            assert len(embedding.vectors_for(labels)) == len(labels)  # placeholders
        assert "cached vectors are gone" not in caplog.text
        live = sorted(store.label_shas())
        store._cache.prune(embedding.model_id(), set())  # the cache lost under a live one
        with caplog.at_level("WARNING", logger="memvault"):
            embedding.vectors_for(live)
        assert f"re-embedding {len(live)} chunks whose cached vectors are gone" in caplog.text
        assert len(store.vectors_for(embedding.model_id(), live, embedding.dim())[0]) == len(live)
