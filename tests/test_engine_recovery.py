"""Damaged index files are detected on open and rebuilt; hard notes are indexed as far as possible."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import make_vault, note, open_vault, rebuilt_snapshot, snapshot, write


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
        # vectors whose cache is gone are re-embedded from the stored text when needed
        v.engine.embedding.vectors.compact(v.engine.embedding.vectors_for)
        assert v.engine.embedding.vectors.labels() == v.engine.store.labels()


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


def test_notes_the_model_cannot_embed_are_indexed_as_far_as_possible(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    write(root, "logs/empty.md", "")
    write(root, "logs/only-frontmatter.md", "---\ndate: 2024-01-01\ntype: log\n---\n")
    # fields that describe it are what it says: searched (tests/test_search_descriptions.py)
    write(root, "logs/only-fields.md", "---\ntitle: Nothing here\nsummary: Just fields.\n---\n")
    big = "Firstwordsunique " + ("lorem ipsum dolor sit amet " * 200_000)  # ~5.4 MB, one line
    write(root, "logs/huge.md", big)
    with open_vault(root, overrides={"vault": {"max_note_bytes": 200_000}}) as v:
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
        assert v.search("Firstwordsunique", k=1)[0].path == "logs/huge.md"
        assert "logs/only-frontmatter.md" in {n.path for n in v.engine.store.notes()}
        status = v.status()
        assert status["notes"] >= 7


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
