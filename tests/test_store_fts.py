"""The keyword table reads its columns from ``chunks`` (index schema 6: FTS5 external
content). FTS5 keeps no copy of the text, so every path that writes a chunk must give
it the exact old values of what it takes out: checked here by FTS5's own
``integrity-check`` (the index against the rows) and by the scores, which must be the
ones a table with its own copy of the same rows gives, after random edits through the
store and through a vault's syncs."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from pathlib import Path

from helpers import sqlite_pages
from memvault.core.ranking import fts_query
from memvault.index.rows import ChunkRow, NewChunk, NoteRow
from memvault.index.schema import FTS_TABLE, SCHEMA, register
from memvault.index.store import SCHEMA_VERSION, Store

WORDS = [
    "kafka",
    "ledger",
    "zebra",
    "postgres",
    "plan",
    "event",
    "store",
    "river",
    "cloud",
    "apple",
    "migration",
    "night",
]


# the tables as schema 5 and before made them: chunks without title and about
OLD_SCHEMA = SCHEMA.replace(
    ",\n    title TEXT NOT NULL DEFAULT '',  -- the keyword title (chunks_fts reads it from here)\n"
    "    about TEXT NOT NULL DEFAULT ''   -- the note's description, on its first chunk only\n",
    "\n",
)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def open_store(tmp_path: Path) -> Store:
    return Store(tmp_path / "index.db", tmp_path / "cache.db")


def note(path: str) -> NoteRow:
    return NoteRow(path=path, size=1, mtime_ns=1, sha256=sha(path), kind="note")


def integrity(db: sqlite3.Connection) -> None:
    """FTS5's check of its index against the rows it reads (rank 1: the content too)."""
    db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)")


def reference(rows: dict[int, tuple[str, str, str, str]], match: str) -> list[tuple[int, float]]:
    """The scores a keyword table with its own copy of these rows gives (the old shape)."""
    db = sqlite3.connect(":memory:")
    db.execute(FTS_TABLE)
    db.executemany(
        "INSERT INTO chunks_fts(rowid, text, title, headings, about) VALUES(?, ?, ?, ?, ?)",
        [(label, *cols) for label, cols in rows.items()],
    )
    found = db.execute(
        "SELECT rowid, bm25(chunks_fts, 1.0, 2.0, 1.5, 1.0) AS s FROM chunks_fts "
        "WHERE chunks_fts MATCH ? ORDER BY s, rowid",
        (match,),
    ).fetchall()
    db.close()
    return [(int(label), -float(s)) for label, s in found]


def scores(store: Store, match: str) -> list[tuple[int, float]]:
    return sorted(store.fts(match, 1000), key=lambda r: (-r[1], r[0]))


def keyword_rows(db: sqlite3.Connection) -> dict[int, tuple[str, str, str, str]]:
    """What each chunk's keyword row should hold, from the chunk rows themselves."""
    return {
        label: (text, title, " ".join(json.loads(heading)), about)
        for label, text, title, heading, about in db.execute(
            "SELECT label, text, title, heading, about FROM chunks"
        )
    }


def phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def new_chunk(rng: random.Random, ord: int, first: bool) -> NewChunk:
    text = phrase(rng, rng.randint(1, 8))
    heading = tuple(phrase(rng, rng.randint(1, 2)) for _ in range(rng.randint(0, 2)))
    return NewChunk(
        ord, heading, ord + 1, ord + 1, text, sha(text), 3, phrase(rng, 2),
        phrase(rng, 2) if first and rng.random() < 0.5 else "",
    )  # fmt: skip


def test_a_new_index_keeps_no_copy_of_the_chunk_text(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.close()
    db = sqlite3.connect(tmp_path / "index.db")
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    db.close()
    assert "chunks_fts_content" not in names
    assert "content = 'chunks_fts_source'" in sql


def test_random_edits_through_the_store_keep_the_keyword_table_exact(tmp_path: Path) -> None:
    rng = random.Random(27)
    store = open_store(tmp_path)
    truth = sqlite3.connect(tmp_path / "index.db", isolation_level=None)
    register(truth)  # the view calls it (schema 8)
    paths: list[str] = []
    for step in range(300):
        op = rng.random()
        with store.transaction() as conn:
            if op < 0.35 or not paths:  # a new note
                path = f"n{step}.md"
                store.put_note(conn, note(path))
                store.insert_chunks(
                    conn, path, [new_chunk(rng, i, i == 0) for i in range(rng.randint(1, 4))]
                )
                paths.append(path)
            elif op < 0.65:  # an edit keeps some chunks (moved, retitled...), replaces others
                path = rng.choice(paths)
                chunks: list[ChunkRow] = store.chunks_of(path)
                keep = [c for c in chunks if rng.random() < 0.6]
                store.delete_chunks(conn, [c.label for c in chunks if c not in keep])
                for i, c in enumerate(keep):
                    moved = new_chunk(rng, i, i == 0)
                    if rng.random() < 0.5:  # text unchanged: only where and under what
                        moved = NewChunk(
                            i, moved.heading, i + 1, i + 1, c.text, c.sha, 3, moved.title
                        )
                    elif rng.random() < 0.3:  # nothing changed at all
                        moved = NewChunk(i, c.heading, i + 1, i + 1, c.text, c.sha, 3, "")
                    store.move_chunk(conn, c.label, moved)
                store.insert_chunks(conn, path, [new_chunk(rng, len(keep), not keep)])
            elif op < 0.8:  # a rename (onto another note, at times)
                old = rng.choice(paths)
                new = rng.choice(paths) if rng.random() < 0.3 else f"r{step}.md"
                if new != old:
                    if new in paths:
                        store.delete_note(conn, new)
                        paths.remove(new)
                    store.rename_note(conn, old, new)
                    paths[paths.index(old)] = new
            else:  # a delete
                path = rng.choice(paths)
                store.delete_note(conn, path)
                paths.remove(path)
        integrity(truth)
        if step % 10 == 0:
            rows = keyword_rows(truth)
            for words in (["kafka"], ["ledger", "night"], ["zebra", "plan", "cloud"]):
                match = fts_query(words)
                assert scores(store, match) == reference(rows, match), (step, words)
    assert {p for (p,) in truth.execute("SELECT DISTINCT path FROM chunks")} == set(paths)
    truth.close()
    store.close()


def test_a_new_model_requeue_keeps_the_keyword_table_exact(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    rng = random.Random(5)
    with store.transaction() as conn:
        for n in range(20):
            store.put_note(conn, note(f"{n}.md"))
            store.insert_chunks(conn, f"{n}.md", [new_chunk(rng, i, i == 0) for i in range(3)])
    truth = sqlite3.connect(tmp_path / "index.db", isolation_level=None)
    register(truth)  # the view calls it (schema 8)
    before = keyword_rows(truth)
    store.requeue_all(lambda r, cs: ([f"new {c.text}" for c in cs], False), "b", "x", 1.0)
    integrity(truth)
    assert keyword_rows(truth) == before
    match = fts_query(["kafka", "plan"])
    assert scores(store, match) == reference(before, match)
    truth.close()
    store.close()


def test_a_version_4_index_drops_its_copy_and_keeps_every_keyword_row(tmp_path: Path) -> None:
    """Schema 4 -> 5 in place: the title and description come across from the old
    keyword table, nothing goes stale, nothing is queued, the scores are the same."""
    path = tmp_path / "index.db"
    rng = random.Random(4)
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        assert "about" not in {r[1] for r in db.execute("PRAGMA table_info(chunks)")}
        db.execute(FTS_TABLE)
        db.execute("INSERT INTO meta VALUES('schema_version', '4')")
        db.execute("INSERT INTO pending_count VALUES(0)")  # the trigger counts
        rows: dict[int, tuple[str, str, str, str]] = {}
        for label in range(1, 41):
            c = new_chunk(rng, label % 3, label % 3 == 0)
            db.execute(
                "INSERT INTO chunks(label, path, ord, heading, line_start, line_end, text, sha, "
                "tokens) VALUES(?, ?, ?, ?, 1, 1, ?, ?, 3)",
                (label, f"{label // 3}.md", c.ord, json.dumps(list(c.heading)), c.text, c.sha),
            )
            rows[label] = (c.text, c.title, " ".join(c.heading), c.about)
            db.execute(
                "INSERT INTO chunks_fts(rowid, text, title, headings, about) VALUES(?, ?, ?, ?, ?)",
                (label, *rows[label]),
            )
        for n in range(14):
            db.execute(
                "INSERT INTO notes(path, size, mtime_ns, sha256, kind) VALUES(?, 1, 2, 'h', 'note')",
                (f"{n}.md",),
            )
        db.execute("INSERT INTO pending VALUES(3, 's', 't', 9.0)")
    db.close()
    store = open_store(tmp_path)
    assert store.meta("schema_version") == str(SCHEMA_VERSION) == "19"
    truth = sqlite3.connect(path, isolation_level=None)
    register(truth)  # the view calls it (schema 8)
    assert "chunks_fts_content" not in {
        r[0] for r in truth.execute("SELECT name FROM sqlite_master")
    }
    integrity(truth)
    assert keyword_rows(truth) == rows
    for words in (["kafka"], ["ledger", "night"], ["zebra", "plan", "cloud"], ["apple"]):
        match = fts_query(words)
        assert scores(store, match) and scores(store, match) == reference(rows, match)
    assert all(k.mtime_ns == 2 for k in store.manifest().values())  # nothing stale
    assert store.pending_state() == (1, 9.0)
    # a kept chunk is found by its new title, no longer by its old one
    [first] = [c for c in store.chunks_of("0.md") if c.label == 1]
    title = rows[1][1].split()[0]
    with store.transaction() as conn:
        store.move_chunk(conn, 1, NewChunk(0, (), 1, 1, first.text, first.sha, 3, "quasar"))
    integrity(truth)
    assert [label for label, _ in store.fts(fts_query(["quasar"]), 10)] == [1]
    assert 1 not in {lb for lb, _ in store.fts(fts_query([title]), 100)} or title in first.text
    truth.close()
    store.close()
    again = open_store(tmp_path)  # once migrated, opening again migrates nothing
    assert [label for label, _ in again.fts(fts_query(["quasar"]), 10)] == [1]
    again.close()


def test_syncing_editing_renaming_and_deleting_notes_keeps_the_keyword_table_exact(
    tmp_path: Path,
) -> None:
    from helpers import make_vault, open_vault

    root = make_vault(tmp_path)
    rng = random.Random(9)
    db_path = root / ".memvault" / "index.db"
    with open_vault(root) as v:
        v.sync()
        for step in range(12):
            notes = sorted(p for p in root.rglob("*.md") if ".memvault" not in p.parts)
            target = rng.choice(notes)
            op = step % 4
            if op == 0:  # an edit
                target.write_text(
                    target.read_text(encoding="utf-8") + f"\n\n## More {step}\n{phrase(rng, 9)}\n",
                    encoding="utf-8",
                )
            elif op == 1:  # a rename into another folder
                dest = root / "projects" / f"moved-{step}.md"
                target.rename(dest)
            elif op == 2 and target.name != "MEMORY.md":  # a delete
                target.unlink()
            else:  # a new note
                (root / "logs" / f"new-{step}.md").write_text(
                    f"# New {step}\n\n{phrase(rng, 12)}\n", encoding="utf-8"
                )
            v.sync()
            truth = sqlite3.connect(db_path, isolation_level=None)
            register(truth)  # the view calls it (schema 8)
            integrity(truth)
            rows = keyword_rows(truth)
            truth.close()
            match = fts_query(["kafka", "postgres", "sarah"])
            store = Store(db_path, root / ".memvault" / "cache.db")
            assert scores(store, match) == reference(rows, match)
            store.close()


def test_a_small_index_gives_its_free_pages_back_too_but_not_after_every_save(
    tmp_path: Path,
) -> None:
    """Issue 27: under 4 MB of free pages were kept for good (a fifth of a 3,000
    short-note index.db). A queue of ~600 KB of texts now goes back once it empties;
    a save's few freed pages (under a fifth of the file) stay for the next one."""
    index = tmp_path / "index.db"
    store = Store(index, tmp_path / "cache.db")
    try:
        with store.transaction() as conn:  # a small index: 200 notes of short text
            for n in range(200):
                store.put_note(conn, note(f"{n}.md"))
                store.insert_chunks(conn, f"{n}.md", [new_chunk(random.Random(n), 0, True)])
        labels = list(range(1, 201))
        with store.transaction() as conn:
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in labels), 1.0)
        full, _ = sqlite_pages(index)
        store.finish_pending(labels)
        pages, free = sqlite_pages(index)
        assert store.pending_state()[0] == 0
        assert pages < full * 0.6 and free * 5 < pages, (pages, free, full)
        with store.transaction() as conn:  # a save's worth: queued, then embedded
            store.add_pending(conn, ((n, "a" * 64, "y" * 3000) for n in labels[:20]), 2.0)
        store.finish_pending(labels[:20])
        after, free = sqlite_pages(index)
        assert free > 0 and after >= pages  # kept: not a vacuum after every save
    finally:
        store.close()


def test_tables_an_older_memvault_made_without_a_version_get_the_new_keyword_table(
    tmp_path: Path,
) -> None:
    """An older memvault's first open killed between making its tables and writing the
    version: the file holds the old chunks (no title, no about) and a keyword table
    with its own copy. Opened now, it must not be taken for a new index of this code
    (version 6 written over the old shape: every insert failed, on every sync)."""
    path = tmp_path / "index.db"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        db.execute(FTS_TABLE)
    db.close()
    store = open_store(tmp_path)
    assert store.meta("schema_version") == str(SCHEMA_VERSION)
    rng = random.Random(6)
    with store.transaction() as conn:
        store.put_note(conn, note("a.md"))
        store.insert_chunks(conn, "a.md", [new_chunk(rng, i, i == 0) for i in range(3)])
    truth = sqlite3.connect(path, isolation_level=None)
    register(truth)  # the view calls it (schema 8)
    integrity(truth)
    assert len(keyword_rows(truth)) == 3
