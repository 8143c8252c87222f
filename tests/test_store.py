"""memvault.index.store.Store (with link_tables.py and rows.py) on real SQLite files.

What the store promises, table by table: the schema and its version, rows that
round-trip, deletes that take everything derived with them, a keyword search that no
query can break, the vector lane's queue, the link state, the embedding cache, and a
damaged file reported as ``IndexCorrupt`` (never a raw ``sqlite3`` error).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import sqlite_pages
from memvault.core.changes import Known, Seen
from memvault.core.ranking import fts_query
from memvault.errors import IndexCorrupt
from memvault.index import vector_cache
from memvault.index.rows import ChunkRow, LinkRow, NewChunk, NoteRow
from memvault.index.schema import FTS_TABLE, SCHEMA
from memvault.index.store import SCHEMA_VERSION, Store

MODEL = "test-model"

# The schema of version 1 (before the pending table), as memvault wrote it.
SCHEMA_V1 = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notes(
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL, kind TEXT NOT NULL, skip_reason TEXT,
    title TEXT NOT NULL DEFAULT '', summary TEXT NOT NULL DEFAULT '',
    category TEXT NOT NULL DEFAULT '', date TEXT, updated TEXT,
    tags TEXT NOT NULL DEFAULT '[]', aliases TEXT NOT NULL DEFAULT '[]',
    frontmatter TEXT NOT NULL DEFAULT '{}', headings TEXT NOT NULL DEFAULT '[]',
    warnings TEXT NOT NULL DEFAULT '[]', lines INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX notes_category ON notes(category);
CREATE TABLE chunks(
    label INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, ord INTEGER NOT NULL,
    heading TEXT NOT NULL, line_start INTEGER NOT NULL, line_end INTEGER NOT NULL,
    text TEXT NOT NULL, sha TEXT NOT NULL, tokens INTEGER NOT NULL
);
CREATE INDEX chunks_path ON chunks(path, ord);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    text, title, headings, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE links(
    source TEXT NOT NULL, line INTEGER NOT NULL, target TEXT NOT NULL, anchor TEXT,
    kind TEXT NOT NULL, embed INTEGER NOT NULL, verdict TEXT NOT NULL, resolved TEXT,
    candidates TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX links_source ON links(source);
CREATE INDEX links_resolved ON links(resolved);
CREATE TABLE memory_owned(section TEXT NOT NULL, line TEXT NOT NULL);
"""


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def open_store(tmp_path: Path) -> Store:
    return Store(tmp_path / "index.db", tmp_path / "cache.db")


def row(path: str, **kw) -> NoteRow:
    kw.setdefault("size", 10)
    kw.setdefault("mtime_ns", 1)
    kw.setdefault("sha256", sha(path))
    kw.setdefault("kind", "note")
    kw.setdefault("category", path.split("/", 1)[0] if "/" in path else "")
    return NoteRow(path=path, **kw)


def chunk(text: str, ord: int = 0, title: str = "", heading: tuple[str, ...] = ()) -> NewChunk:
    return NewChunk(ord, heading, ord + 1, ord + 1, text, sha(f"{title}\n{text}"), 3, title)


def add_note(
    store: Store, path: str, *texts: str, title: str = "", pending: bool = False
) -> list[int]:
    """A note with one chunk per text; its labels (queued for vectors with ``pending``)."""
    with store.transaction() as conn:
        store.put_note(conn, row(path, title=title))
        new = [chunk(t, i, title) for i, t in enumerate(texts)]
        labels = store.insert_chunks(conn, path, new)
        if pending:
            store.add_pending(
                conn, [(lb, c.sha, f"E {c.text}") for lb, c in zip(labels, new, strict=True)], 100.0
            )
    return labels


def search(store: Store, *terms: str) -> list[int]:
    return [label for label, _ in store.fts(fts_query(list(terms)), 50)]


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


# -- opening, schema, meta -----------------------------------------------------------


def test_a_new_index_has_every_table_and_its_schema_version(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    assert store.meta("schema_version") == str(SCHEMA_VERSION)
    assert store.counts() == {"notes": 0, "index_notes": 0, "skipped": 0, "chunks": 0}
    assert store.pending_state() == (0, None)
    store.close()
    wanted = {"meta", "notes", "chunks", "chunks_fts", "links", "pending"}
    wanted |= {"memory_owned", "attachments", "relink_pending"}
    assert wanted <= tables(tmp_path / "index.db")


def test_an_empty_index_file_is_a_new_index_not_a_damaged_one(tmp_path: Path) -> None:
    (tmp_path / "index.db").write_bytes(b"")
    store = open_store(tmp_path)
    assert store.meta("schema_version") == str(SCHEMA_VERSION)
    store.close()


def test_meta_is_set_replaced_and_kept_across_a_reopen(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    assert store.meta("model_id") is None
    store.set_meta("model_id", "first")
    store.set_meta("model_id", "sentence-transformers/all-MiniLM-L6-v2")
    store.close()
    store = open_store(tmp_path)
    assert store.meta("model_id") == "sentence-transformers/all-MiniLM-L6-v2"
    store.close()


def test_the_engine_records_its_model_in_the_index(tmp_path: Path) -> None:
    from helpers import make_vault, open_vault
    from memvault.index.embedder import HashEmbedder

    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    store = Store(root / ".memvault" / "index.db", root / ".memvault" / "cache.db")
    assert store.meta("model_id") == HashEmbedder().model_id
    assert store.meta("schema_version") == str(SCHEMA_VERSION)
    store.close()


def test_reopening_keeps_rows_and_a_label_is_never_handed_out_twice(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    first = add_note(store, "people/ana.md", "Ana runs the kafka cluster", "second part")
    with store.transaction() as conn:
        assert store.delete_note(conn, "people/ana.md") == first
    store.close()
    store = open_store(tmp_path)
    again = add_note(store, "people/ana.md", "Ana runs the kafka cluster")
    # hnswlib is corrupted by a re-used label: AUTOINCREMENT never re-uses one
    assert min(again) > max(first)
    assert [c.label for c in store.chunks_of("people/ana.md")] == again
    assert search(store, "kafka") == again
    store.close()


def test_a_version_1_index_is_migrated_keeping_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA_V1)
        db.execute("INSERT INTO meta VALUES('schema_version', '1')")
        db.execute("INSERT INTO meta VALUES('model_id', 'old-model')")
        db.execute(
            "INSERT INTO notes(path, size, mtime_ns, sha256, kind, title) "
            "VALUES('projects/x.md', 5, 7, 'abc', 'note', 'Project X')"
        )
        db.execute(
            "INSERT INTO chunks(path, ord, heading, line_start, line_end, text, sha, tokens) "
            "VALUES('projects/x.md', 0, '[\"Intro\"]', 1, 3, 'postgres migration plan', ?, 4)",
            (sha("t"),),
        )
        db.execute(
            "INSERT INTO chunks_fts(rowid, text, title, headings) "
            "VALUES(1, 'postgres migration plan', 'Project X', 'Intro')"
        )
    db.close()
    store = open_store(tmp_path)
    assert store.meta("schema_version") == str(SCHEMA_VERSION)
    assert store.meta("model_id") == "old-model"
    # stale (version 3 cuts notes differently): the next sync reads it again; its category
    # its top folder (version 14: MEMORY.md's lists read a folder's notes by it)
    assert store.note("projects/x.md") == NoteRow(
        path="projects/x.md",
        size=5,
        mtime_ns=-1,
        sha256="",
        kind="note",
        title="Project X",
        category="projects",
    )
    assert [(c.label, c.heading, c.text) for c in store.chunks_of("projects/x.md")] == [
        (1, ("Intro",), "postgres migration plan")
    ]
    assert search(store, "postgres") == [1]
    # every chunk of a version-1 index was embedded before it was written: none is pending
    assert store.pending_state() == (0, None)
    assert store.embedded_labels() == {1}
    store.close()
    assert {"pending", "attachments", "relink_pending"} <= tables(path)


def test_a_version_2_index_gets_the_about_column_keeping_its_rows_and_its_notes_go_stale(
    tmp_path: Path,
) -> None:
    path = tmp_path / "index.db"
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA_V1)
        db.execute("CREATE TABLE pending(label INTEGER PRIMARY KEY, sha TEXT NOT NULL, "
                   "text TEXT NOT NULL, since REAL NOT NULL)")  # fmt: skip
        db.execute("INSERT INTO meta VALUES('schema_version', '2')")
        db.execute(
            "INSERT INTO notes(path, size, mtime_ns, sha256, kind, title) VALUES"
            "('projects/x.md', 5, 7, 'abc', 'note', 'Project X'),"
            "('MEMORY.md', 3, 4, 'def', 'index', 'Memory')"
        )
        for label, text in ((1, "postgres migration plan"), (2, "## Context")):
            db.execute(
                "INSERT INTO chunks(label, path, ord, heading, line_start, line_end, text, sha, "
                "tokens) VALUES(?, 'projects/x.md', ?, '[\"Intro\"]', ?, ?, ?, ?, 4)",
                (label, label - 1, label, label, text, sha(text)),
            )
            db.execute(
                "INSERT INTO chunks_fts(rowid, text, title, headings) VALUES(?, ?, 'Project X', "
                "'Intro')",
                (label, text),
            )
        db.execute("INSERT INTO pending VALUES(2, ?, 'E ## Context', 9.0)", (sha("## Context"),))
    db.close()
    store = open_store(tmp_path)
    assert store.meta("schema_version") == str(SCHEMA_VERSION) == "19"
    with sqlite3.connect(path) as db:
        columns = [r[1] for r in db.execute("PRAGMA table_info(chunks_fts)")]
    db.close()
    assert columns == ["text", "title", "headings", "about"]
    # every keyword row came across, by text, title and heading
    assert search(store, "postgres") == [1]
    assert sorted(search(store, "project")) == [1, 2]
    assert search(store, "intro", "context") == [2, 1]
    assert store.pending_state() == (1, 9.0)
    # notes (not MEMORY.md, which has no chunks) are read again by the next sync
    assert store.manifest() == {
        "projects/x.md": Known(5, -1, ""),
        "MEMORY.md": Known(3, 4, "def"),
    }
    with store.transaction() as conn:  # the next sync read it again
        store.put_note(conn, row("projects/x.md", size=5, mtime_ns=8, sha256="abd"))
    store.close()
    # once migrated, opening again migrates nothing
    again = open_store(tmp_path)
    assert again.manifest()["projects/x.md"] == Known(5, 8, "abd")
    assert search(again, "postgres") == [1]
    again.close()


def test_an_index_another_process_migrates_meanwhile_is_not_migrated_twice(
    tmp_path: Path,
) -> None:
    """Two processes open a version-2 index at once: the one that waits for the write
    lock must not make stale again the notes the other has since read anew."""
    path = tmp_path / "index.db"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(SCHEMA)  # every table of today but the keyword one (made below)
        db.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(text, title, headings, "
                   "tokenize = 'porter unicode61 remove_diacritics 2')")  # fmt: skip
        db.execute("INSERT INTO meta VALUES('schema_version', '2')")
        db.execute("INSERT INTO notes(path, size, mtime_ns, sha256, kind) "
                   "VALUES('x.md', 5, 7, 'abc', 'note')")  # fmt: skip
    db.close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the other process holds the write lock...
    opened: list[Store] = []
    thread = threading.Thread(target=lambda: opened.append(open_store(tmp_path)))
    thread.start()
    time.sleep(1.0)  # ...while this one reads version 2 and waits for the lock
    other.execute("DROP TABLE chunks_fts")  # ...and migrates, then reads x.md again
    other.execute(FTS_TABLE)
    other.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    other.execute("UPDATE notes SET sha256 = 'fresh', mtime_ns = 9 WHERE path = 'x.md'")
    other.execute("COMMIT")
    other.close()
    thread.join(timeout=60)
    (store,) = opened
    assert store.manifest() == {"x.md": Known(5, 9, "fresh")}
    store.close()


def test_a_first_chunk_is_found_by_its_notes_description_and_a_kept_chunk_follows_it(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path)
    first = NewChunk(0, (), 1, 1, "body words", sha("b"), 2, "T", "the event store\nledger")
    with store.transaction() as conn:
        store.put_note(conn, row("a.md"))
        (label,) = store.insert_chunks(conn, "a.md", [first])
    assert search(store, "ledger") == [label]
    with store.transaction() as conn:  # the description changed, the chunk's text did not
        store.move_chunk(conn, label, NewChunk(0, (), 1, 1, "body words", sha("b"), 2, "T", "x"))
    assert search(store, "ledger") == []
    assert search(store, "x") == [label]
    store.close()


def test_an_index_from_a_newer_memvault_is_refused_and_left_alone(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    add_note(store, "a.md", "kept words")
    store.set_meta("schema_version", str(SCHEMA_VERSION + 1))
    store.close()
    before = (tmp_path / "index.db").read_bytes()
    with pytest.raises(IndexCorrupt, match="newer than this memvault") as caught:
        open_store(tmp_path)
    # no path: the engine deletes and rebuilds only a file named as damaged
    assert caught.value.path is None
    assert (tmp_path / "index.db").read_bytes() == before


# -- damaged files ------------------------------------------------------------------------


def test_an_index_of_garbage_is_index_corrupt_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "index.db").write_bytes(b"this is not a database\n" * 500)
    with pytest.raises(IndexCorrupt) as caught:
        open_store(tmp_path)
    assert not isinstance(caught.value, sqlite3.Error)
    assert caught.value.path == str(tmp_path / "index.db")


def test_a_truncated_index_is_index_corrupt(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    for i in range(200):
        add_note(store, f"logs/{i:03}.md", f"day {i} " + "words of the log " * 40)
    store.close()
    path = tmp_path / "index.db"
    data = path.read_bytes()
    assert len(data) > 100_000
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(IndexCorrupt) as caught:
        open_store(tmp_path)
    assert caught.value.path == str(path)


def test_a_damaged_page_no_open_reads_is_found_on_open_not_by_a_later_query(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path)
    for i in range(200):
        add_note(store, f"logs/{i:03}.md", f"day {i} " + "words of the log " * 40)
    store.close()
    path = tmp_path / "index.db"
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 // 4096 * 4096  # a whole page of the chunks, far from page 1
    data[middle : middle + 4096] = b"\xff" * 4096
    path.write_bytes(bytes(data))
    with pytest.raises(IndexCorrupt) as caught:
        open_store(tmp_path)
    assert caught.value.path == str(path)


def test_a_damaged_cache_is_index_corrupt_naming_the_cache(tmp_path: Path) -> None:
    open_store(tmp_path).close()
    (tmp_path / "cache.db").write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(IndexCorrupt) as caught:
        open_store(tmp_path)
    assert caught.value.path == str(tmp_path / "cache.db")


# -- reading writes nothing ------------------------------------------------------------------


def test_opening_reading_and_closing_an_index_writes_nothing(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    labels = add_note(store, "people/ana.md", "Ana runs the kafka cluster", pending=True)
    add_note(store, "projects/x.md", "postgres plan", title="X")
    store.put_embeddings(MODEL, {sha("v"): np.ones(4, np.float32)})
    store.close()
    # the stamps a close leaves (index/integrity.py) are files too: none written again
    files = [tmp_path / n for n in ("index.db", "cache.db", "index.db.checked", "cache.db.checked")]
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in files]

    store = open_store(tmp_path)
    assert store.notes() and store.manifest() and store.links() == []
    assert search(store, "kafka") == labels
    assert store.term_docs("kafka") == 1
    assert store.pending(10) and store.pending_state()[0] == 1
    assert store.cached(MODEL, [sha("v")])
    store.vectors_for(MODEL, labels, 4)
    store.close()

    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in files] == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in files)


def test_an_in_memory_store_creates_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = Store.in_memory()
    add_note(store, "a.md", "held in memory")
    assert search(store, "memory") == [1]
    store.close()
    assert list(tmp_path.iterdir()) == []


# -- notes -------------------------------------------------------------------------------


def test_every_field_of_a_note_row_round_trips(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    full = NoteRow(
        path="decisions/café – naïve.md",
        size=1234,
        mtime_ns=1_700_000_000_123_456_789,
        sha256=sha("x"),
        kind="note",
        skip_reason=None,
        title="Café — naïve «choice» 東京",
        summary='Why we chose "Postgres"',
        category="decisions",
        date="2024-03-12",
        updated="2024-04-01",
        tags=("db", "архитектура"),
        aliases=("Postgres choice", "PG"),
        frontmatter={"status": "accepted", "nested": {"n": [1, 2.5, None, True]}, "é": "ü"},
        headings=((1, "Café", 5), (2, "Why", 9)),
        warnings=("frontmatter: unknown status",),
        lines=42,
    )
    skipped = NoteRow(
        path="big.md", size=9, mtime_ns=2, sha256="", kind="skipped", skip_reason="too large"
    )
    with store.transaction() as conn:
        store.put_note(conn, full)
        store.put_note(conn, skipped)
    store.close()
    store = open_store(tmp_path)
    assert store.note(full.path) == full
    assert store.note("big.md") == skipped
    assert store.note("nowhere.md") is None
    assert store.notes() == [skipped, full]  # by path
    assert store.notes("skipped") == [skipped]
    assert store.manifest() == {
        full.path: Known(1234, full.mtime_ns, full.sha256),
        "big.md": Known(9, 2, ""),
    }
    paths, aliases = store.paths_and_aliases()
    assert sorted(paths) == sorted([full.path, "big.md"])
    assert aliases == {full.path: ("Postgres choice", "PG")}
    store.close()


def test_a_frontmatter_date_is_kept_as_its_iso_text(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with store.transaction() as conn:
        store.put_note(conn, row("a.md", frontmatter={"date": dt.date(2024, 3, 12)}))
    note = store.note("a.md")
    assert note is not None and note.frontmatter == {"date": "2024-03-12"}
    store.close()


def test_putting_a_note_again_replaces_its_row_and_touch_changes_only_stat(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with store.transaction() as conn:
        store.put_note(conn, row("a.md", title="Old"))
        store.put_note(conn, row("a.md", title="New", size=20))
    assert [(n.title, n.size) for n in store.notes()] == [("New", 20)]
    store.touch_note("a.md", 99, 12345)
    note = store.note("a.md")
    assert note is not None
    assert (note.size, note.mtime_ns, note.title, note.sha256) == (99, 12345, "New", sha("a.md"))
    store.close()


def test_counts_folders_tokens_and_labels_by_path(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    a = add_note(store, "people/ana.md", "one", "two")
    b = add_note(store, "people/bo.md", "three")
    c = add_note(store, "top.md", "four")
    with store.transaction() as conn:
        store.put_note(conn, row("MEMORY.md", kind="index"))
        store.put_note(conn, row("huge.md", kind="skipped", skip_reason="too large"))
    assert store.counts() == {"notes": 3, "index_notes": 1, "skipped": 1, "chunks": 4}
    assert store.folder_counts() == {"people": 2, "(root)": 1}
    assert store.note_tokens(["people/ana.md", "top.md", "people/ana.md", "none.md"]) == {
        "people/ana.md": 6,
        "top.md": 3,
    }
    assert store.labels_of(["people/bo.md", "top.md"]) == set(b + c)
    assert store.labels() == set(a + b + c)
    assert store.chunk_count() == 4
    assert sorted(store.chunk_texts()) == ["four", "one", "three", "two"]
    # more paths than one IN (...) list holds
    assert store.labels_of([f"x{i}.md" for i in range(1200)] + ["top.md"]) == set(c)
    store.close()


# -- chunks, and what goes with them ---------------------------------------------------------


def test_chunk_rows_come_back_by_label_with_their_heading_path(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with store.transaction() as conn:
        store.put_note(conn, row("a.md"))
        new = [chunk("intro text", 0, "A", ("A",)), chunk("deep text", 1, "A", ("A", "B › C"))]
        labels = store.insert_chunks(conn, "a.md", new)
    rows = store.chunk_rows([labels[1], 999_999, labels[0]])
    assert set(rows) == set(labels)
    got = rows[labels[1]]
    assert (got.path, got.ord, got.heading, got.text, got.sha) == (
        "a.md",
        1,
        ("A", "B › C"),
        "deep text",
        new[1].sha,
    )
    assert store.chunk_shas(labels) == {labels[0]: new[0].sha, labels[1]: new[1].sha}
    assert store.label_shas() == store.chunk_shas(labels)
    store.close()


def test_deleting_a_note_takes_its_chunks_fts_rows_links_and_queue_with_it(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    gone = add_note(store, "people/ana.md", "kafka owner", "kafka backups", pending=True)
    kept = add_note(store, "people/bo.md", "kafka reader", pending=True)
    with store.transaction() as conn:
        store.put_links(conn, "people/ana.md", [link(3, "people/bo")])
        store.put_links(conn, "people/bo.md", [link(1, "people/ana")])
        assert store.delete_note(conn, "people/ana.md") == gone
    assert store.note("people/ana.md") is None
    assert store.chunks_of("people/ana.md") == []
    assert store.chunk_rows(gone) == {}
    assert search(store, "kafka") == kept
    assert store.term_docs("kafka") == 1
    assert store.pending_among(gone + kept) == set(kept)
    assert [lk.source for lk in store.links()] == ["people/bo.md"]
    store.close()


def test_replacing_some_chunks_of_a_note_removes_only_those(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    old, kept = add_note(store, "a.md", "stale paragraph", "kept paragraph", pending=True)
    with store.transaction() as conn:
        store.delete_chunks(conn, [old])
        [new] = store.insert_chunks(conn, "a.md", [chunk("fresh paragraph", 2)])
    assert [c.label for c in store.chunks_of("a.md")] == [kept, new]
    assert search(store, "stale") == [] and search(store, "fresh") == [new]
    assert set(search(store, "paragraph")) == {kept, new}
    assert store.pending_among([old, kept, new]) == {kept}
    store.close()


def test_renaming_a_note_moves_its_chunks_and_links_and_replaces_the_target(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    labels = add_note(store, "a.md", "moving words")
    add_note(store, "b.md", "stale words")  # the target of the rename, already known
    with store.transaction() as conn:
        store.put_links(conn, "a.md", [link(1, "c")])
        store.rename_note(conn, "a.md", "b.md")
    assert store.note("a.md") is None
    note = store.note("b.md")
    assert note is not None and note.sha256 == sha("a.md")
    assert [c.label for c in store.chunks_of("b.md") if c.text == "moving words"] == labels
    assert [lk.source for lk in store.links()] == ["b.md"]
    store.close()


def test_a_kept_chunk_keeps_its_label_and_takes_its_new_place(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    [label] = add_note(store, "a.md", "the same words", title="A")
    with store.transaction() as conn:
        assert store.chunk_labels_by_sha(conn, "a.md") == {
            chunk("the same words", 0, "A").sha: [label]
        }
        moved = NewChunk(3, ("Later",), 20, 24, "the same words", sha("A\nthe same words"), 3, "A")
        store.move_chunk(conn, label, moved)
    [c] = store.chunks_of("a.md")
    assert (c.label, c.ord, c.heading, c.line_start, c.line_end) == (label, 3, ("Later",), 20, 24)
    store.close()


def test_a_kept_chunk_is_found_by_its_new_title_and_heading_not_the_old(tmp_path: Path) -> None:
    """With ``index.embed_context`` leaving out the title and headings, a retitled
    note's chunks keep their embedded text (and their vectors); the keyword index
    must still follow the new title and heading."""
    store = open_store(tmp_path)
    with store.transaction() as conn:
        store.put_note(conn, row("a.md", title="Zanzibar"))
        [label] = store.insert_chunks(
            conn, "a.md", [NewChunk(0, ("Ferries",), 1, 2, "body", sha("body"), 1, "Zanzibar")]
        )
    with store.transaction() as conn:
        store.move_chunk(
            conn, label, NewChunk(0, ("Harbours",), 1, 2, "body", sha("body"), 1, "Kilimanjaro")
        )
    assert search(store, "kilimanjaro") == [label]
    assert search(store, "harbours") == [label]
    assert search(store, "zanzibar") == []
    assert search(store, "ferries") == []
    store.close()


def test_a_retitled_note_is_found_by_its_new_title_when_titles_are_not_embedded(
    tmp_path: Path,
) -> None:
    from helpers import make_vault, open_vault, write

    root = make_vault(tmp_path)
    body = "Ferries leave at dawn.\n"
    write(root, "logs/trip.md", f"---\ntitle: Zanzibar\n---\n{body}")
    with open_vault(root, overrides={"index": {"embed_context": []}}) as v:
        v.sync()
        store = v.engine.store
        [label] = store.labels_of(["logs/trip.md"])
        write(root, "logs/trip.md", f"---\ntitle: Kilimanjaro\n---\n{body}")
        v.sync()
        assert store.labels_of(["logs/trip.md"]) == {label}  # the vector is kept
        assert search(store, "kilimanjaro") == [label]
        assert search(store, "zanzibar") == []


def test_a_new_model_queues_every_chunk_keeps_its_keywords_and_recuts_only_what_it_must(
    tmp_path: Path,
) -> None:
    # was: "a new model drops every chunk" -- keyword search then found nothing until a
    # reconcile (issue 21 item 7); the chunks and their keyword rows now stay
    store = open_store(tmp_path)
    [a] = add_note(store, "a.md", "kafka", pending=True)
    [b] = add_note(store, "b.md", "zebra")
    with store.transaction() as conn:
        store.put_note(conn, row("MEMORY.md", kind="index", mtime_ns=5))
    store.set_meta("vectors_sha", "abc")
    store.set_meta("dim", "64")

    def texts(note: NoteRow, chunks: list[ChunkRow]) -> tuple[list[str], bool]:
        return [f"new {c.text}" for c in chunks], note.path == "b.md"

    assert store.requeue_all(texts, "b", "model: a -> b", 200.0) == (2, 1)
    assert store.counts()["chunks"] == 2
    assert search(store, "kafka") == [a] and search(store, "zebra") == [b]
    assert store.pending_state() == (2, 200.0)
    assert {p.label: (p.sha, p.embed_text) for p in store.pending(10)} == {
        a: (sha("new kafka"), "new kafka"),
        b: (sha("new zebra"), "new zebra"),
    }
    assert store.label_shas() == {a: sha("new kafka"), b: sha("new zebra")}
    assert store.manifest()["a.md"] == Known(10, 1, sha("a.md"))  # not cut again
    assert store.manifest()["b.md"] == Known(10, -1, "")  # cut again by the next sync
    assert store.manifest()["MEMORY.md"] == Known(10, 5, sha("MEMORY.md"))
    assert store.meta("model_changed") == "model: a -> b"
    assert store.meta("model_id") == "b"
    assert store.meta("vectors_sha") == "" and store.meta("dim") == ""
    # a step that embedded a's old text does not take its new one off the queue
    assert store.finish_pending([a, b], {a: sha("E kafka"), b: sha("new zebra")}) == [b]
    assert store.pending_state()[0] == 1
    store.close()


def test_a_failed_transaction_leaves_nothing_behind(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with pytest.raises(RuntimeError), store.transaction() as conn:
        store.put_note(conn, row("a.md"))
        store.insert_chunks(conn, "a.md", [chunk("half written")])
        store.journal_relink(conn, {"a.md": "b.md"})
        raise RuntimeError("killed midway")
    assert store.notes() == [] and store.labels() == set()
    assert search(store, "half") == [] and store.pending_relink() == {}
    store.close()


# -- keyword search ---------------------------------------------------------------------------


def test_more_occurrences_rank_higher_and_scores_are_higher_is_better(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    [once] = add_note(store, "a.md", "kafka and the other words here")
    [thrice] = add_note(store, "b.md", "kafka kafka kafka words here")
    add_note(store, "c.md", "nothing relevant at all")
    hits = store.fts(fts_query(["kafka"]), 10)
    assert [label for label, _ in hits] == [thrice, once]
    assert hits[0][1] > hits[1][1] > 0
    assert len(store.fts(fts_query(["kafka"]), 1)) == 1
    store.close()


def test_title_and_headings_are_searched_too(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with store.transaction() as conn:
        store.put_note(conn, row("a.md"))
        [label] = store.insert_chunks(
            conn, "a.md", [chunk("body only", 0, "Zanzibar", ("Ferries",))]
        )
    assert search(store, "zanzibar") == [label]
    assert search(store, "ferries") == [label]
    store.close()


def test_any_of_the_words_matches(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    [a] = add_note(store, "a.md", "kafka cluster")
    [b] = add_note(store, "b.md", "postgres replica")
    assert set(search(store, "kafka", "postgres", "absent")) == {a, b}
    assert store.fts("", 10) == []
    store.close()


HOSTILE = [
    '"',
    '""',
    'a"b',
    "'",
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "NEAR(kafka cluster, 2)",
    "*",
    "kafka*",
    "-kafka",
    "+kafka",
    "^kafka",
    "text:kafka",
    "{text title}: kafka",
    "(kafka",
    "kafka)",
    ":",
    "\\",
    "%_",
    "\x00",
    "",
    " ",
    "🙂",
    "kafka" * 500,
]


@pytest.mark.parametrize("term", HOSTILE)
def test_no_query_term_breaks_the_keyword_search(tmp_path: Path, term: str) -> None:
    store = open_store(tmp_path)
    add_note(store, "a.md", "kafka cluster AND NOT or near")
    assert isinstance(store.fts(fts_query([term]), 10), list)
    assert isinstance(store.fts(fts_query([term, "kafka"]), 10), list)
    assert store.term_docs(term) in (0, 1)
    store.close()


@pytest.mark.parametrize("term", ['"kafka"', "kafka)", "(kafka", "-kafka", "kafka*", "'kafka'"])
def test_a_word_wrapped_in_syntax_is_still_found(tmp_path: Path, term: str) -> None:
    store = open_store(tmp_path)
    [label] = add_note(store, "a.md", "the kafka cluster")
    assert search(store, term) == [label]
    store.close()


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("Café in Zürich", "cafe"),
        ("Café in Zürich", "ZURICH"),
        ("resume of the naive plan", "résumé"),
        ("Привет, мир", "привет"),
        ("Straße nach ΑΘΗΝΑ", "αθηνα"),
        ("the migrations ran", "migration"),
        ("deployed twice", "deploying"),
    ],
)
def test_case_diacritics_and_word_forms_are_folded(tmp_path: Path, text: str, query: str) -> None:
    store = open_store(tmp_path)
    [label] = add_note(store, "a.md", text)
    add_note(store, "b.md", "unrelated")
    assert search(store, query) == [label]
    assert store.term_docs(query) == 1
    store.close()


# -- the vector lane's queue --------------------------------------------------------------------


def test_pending_chunks_come_oldest_first_with_both_texts(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    done = add_note(store, "a.md", "embedded already")
    first = add_note(store, "b.md", "one", "two", pending=True)
    with store.transaction() as conn:
        store.put_note(conn, row("c.md"))
        [later] = store.insert_chunks(conn, "c.md", [chunk("three")])
        store.add_pending(conn, [(later, chunk("three").sha, "E three")], 200.0)
    assert [(p.label, p.embed_text, p.text) for p in store.pending(2)] == [
        (first[0], "E one", "one"),
        (first[1], "E two", "two"),
    ]
    assert store.pending(10)[-1].sha == chunk("three").sha
    assert store.pending_state() == (3, 100.0)
    assert store.pending_among(done + first + [12345]) == set(first)
    assert store.embedded_labels() == set(done)
    store.close()


def test_finishing_returns_only_what_was_still_queued(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    labels = add_note(store, "a.md", "one", "two", pending=True)
    assert store.finish_pending([labels[1], 999]) == [labels[1]]
    assert store.finish_pending([labels[1]]) == []
    assert store.pending_state() == (1, 100.0)
    assert store.embedded_labels() == {labels[1]}
    store.close()


def test_a_chunk_deleted_while_pending_leaves_the_queue(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    labels = add_note(store, "a.md", "doomed", pending=True)
    batch = store.pending(10)  # the vector lane took it ...
    with store.transaction() as conn:
        store.delete_note(conn, "a.md")  # ... and the note went meanwhile
    assert store.finish_pending([p.label for p in batch]) == []  # its vector is not added
    assert store.pending_state() == (0, None)
    assert store.pending(10) == [] and store.pending_among(labels) == set()
    store.close()


def test_the_pending_state_stays_exact_under_a_sequence_of_steps(tmp_path: Path) -> None:
    """The queue's length is kept, not counted (triggers): after every add, re-queue of a
    label already waiting, step finished and note deleted, it equals a count of the
    table, and so does the oldest (read through the index on ``since``)."""
    store = open_store(tmp_path)
    rng = random.Random(4)
    truth = sqlite3.connect(tmp_path / "index.db")
    notes: dict[str, list[int]] = {}
    for step in range(300):
        op = rng.random()
        if op < 0.45 or not notes:
            path = f"n{step}.md"
            with store.transaction() as conn:
                store.put_note(conn, row(path))
                new = [chunk(f"text {step} {i}", i) for i in range(rng.randint(1, 4))]
                labels = store.insert_chunks(conn, path, new)
                items = [(lb, c.sha, c.text) for lb, c in zip(labels, new, strict=True)]
                store.add_pending(conn, items, float(step))
            notes[path] = labels
        elif op < 0.6:  # queued again (a re-embed): an upsert, counted once
            path = rng.choice(sorted(notes))
            with store.transaction() as conn:
                store.add_pending(conn, [(lb, "s", "t") for lb in notes[path]], float(step))
        elif op < 0.85:  # a vector-lane step
            store.finish_pending([p.label for p in store.pending(rng.randint(1, 6))])
        else:
            path = rng.choice(sorted(notes))
            with store.transaction() as conn:
                store.delete_note(conn, path)
            del notes[path]
        count, oldest = truth.execute("SELECT COUNT(*), MIN(since) FROM pending").fetchone()
        assert store.pending_state() == (count, oldest), step
        assert truth.execute("SELECT n FROM pending_count").fetchone() == (count,), step
    plan = " ".join(
        str(r) for r in truth.execute("EXPLAIN QUERY PLAN SELECT MIN(since) FROM pending")
    )
    assert "pending_since" in plan  # the oldest is one b-tree step, not a scan
    truth.close()
    store.close()


def test_a_version_3_index_counts_its_queue_once_and_keeps_the_count(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA)
        db.execute(FTS_TABLE)  # version 3's keyword table kept its own copy of the text
        db.executescript("DROP TRIGGER pending_added; DROP TRIGGER pending_removed; "
                         "DROP TABLE pending_count; DROP INDEX pending_since;")  # fmt: skip
        db.execute("INSERT INTO meta VALUES('schema_version', '3')")
        db.execute("INSERT INTO notes(path, size, mtime_ns, sha256, kind) "
                   "VALUES('a.md', 5, 7, 'abc', 'note')")  # fmt: skip
        for label in (1, 2, 3):
            db.execute("INSERT INTO chunks(label, path, ord, heading, line_start, line_end, "
                       "text, sha, tokens) VALUES(?, 'a.md', ?, '[]', 1, 1, 't', 's', 1)",
                       (label, label))  # fmt: skip
            db.execute("INSERT INTO pending VALUES(?, 's', 't', ?)", (label, 50.0 + label))
    db.close()
    store = open_store(tmp_path)
    assert store.meta("schema_version") == str(SCHEMA_VERSION) == "19"
    assert store.pending_state() == (3, 51.0)
    assert store.manifest() == {"a.md": Known(5, 7, "abc")}  # nothing made stale
    store.finish_pending([1])
    assert store.pending_state() == (2, 52.0)
    store.close()


def test_the_queue_survives_a_reopen(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    labels = add_note(store, "a.md", "queued", pending=True)
    store.close()
    store = open_store(tmp_path)
    assert [p.label for p in store.pending(10)] == labels
    store.close()


# -- link tables ------------------------------------------------------------------------------


def link(line: int, target: str, resolved: str | None = None, **kw) -> LinkRow:
    return LinkRow(
        kw.get("source", ""),
        line,
        target,
        kw.get("anchor"),
        kw.get("kind", "wikilink"),
        kw.get("embed", False),
        kw.get("verdict", "ok" if resolved else "broken"),
        resolved,
        tuple(kw.get("candidates", ())),
    )


def test_links_round_trip_and_putting_a_source_again_replaces_its_links(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with store.transaction() as conn:
        store.put_links(conn, "b.md", [link(7, "x", "x.md")])
        store.put_links(conn, "a.md", [link(9, "old")])
        store.put_links(
            conn,
            "a.md",
            [
                link(5, "img.png", "assets/img.png", embed=True, kind="markdown"),
                link(
                    2,
                    "Ana",
                    None,
                    anchor="#^block",
                    verdict="ambiguous",
                    candidates=["p/ana.md", "q/ana.md"],
                ),
            ],
        )
    assert store.links("a.md") == [
        LinkRow(
            "a.md",
            2,
            "Ana",
            "#^block",
            "wikilink",
            False,
            "ambiguous",
            None,
            ("p/ana.md", "q/ana.md"),
        ),
        LinkRow("a.md", 5, "img.png", None, "markdown", True, "ok", "assets/img.png", ()),
    ]
    assert [(lk.source, lk.line) for lk in store.links()] == [("a.md", 2), ("a.md", 5), ("b.md", 7)]
    with store.transaction() as conn:
        store.put_links(conn, "a.md", [])
    assert [lk.source for lk in store.links()] == ["b.md"]
    store.close()


def test_putting_links_again_writes_only_the_lines_that_change(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    ten = [link(i, f"n{i}", f"n{i}.md", source="a.md") for i in range(10)]
    two = [link(20, "p", "p.md", source="a.md"), link(20, "q", None, source="a.md")]
    with store.transaction() as conn:
        store.put_links(conn, "a.md", ten + two)
    conn = store._db
    before = conn.total_changes
    with store.transaction() as conn:
        store.put_links(conn, "a.md", ten + two)  # the same links: nothing written
    assert conn.total_changes == before
    # one link re-targeted (a relink): its line's row deleted and inserted, no other
    moved = [*ten[:3], link(3, "x/n3", "x/n3.md", source="a.md"), *ten[4:]]
    with store.transaction() as conn:
        store.put_links(conn, "a.md", moved + two)
    assert conn.total_changes == before + 2
    assert store.links("a.md") == moved + two
    # a line's links swapped in place: the line written again, in the order given
    with store.transaction() as conn:
        store.put_links(conn, "a.md", moved + two[::-1])
    assert store.links("a.md") == moved + two[::-1]
    assert store.sources_linking(["x/n3.md"], ["q"]) == {"a.md"}
    assert store.sources_linking(["n3.md"], []) == set()  # its old row is gone
    # a line gone, a line new
    with store.transaction() as conn:
        store.put_links(conn, "a.md", [*moved[1:], link(30, "z", None, source="a.md")])
    assert store.links("a.md") == [*moved[1:], link(30, "z", None, source="a.md")]
    store.close()


def test_a_note_whose_lines_all_shift_has_its_links_written_again_in_one_pass(
    tmp_path: Path,
) -> None:
    """A line added at the top of a note of many links (an agent's 50,000-line MEMORY.md
    of ``- [Topic](topic.md) — hook``, memvault's section growing by one line above it)
    moves every link to another line: each line's rows were deleted one line at a time,
    each DELETE reading the note's rows again (the links table has no index on a line),
    so the work grew with the square of the note's links (20,000 of them: 14 s of a
    `memvault add`, 35-53 s through the daemon). Counted here in SQLite's own steps
    (its progress handler), not timed: the rewrite reads the note's rows a few times,
    not once per line."""
    n = 3000
    store = open_store(tmp_path)
    lines = [link(i, f"t{i}", f"t{i}.md", source="MEMORY.md") for i in range(1, n + 1)]
    with store.transaction() as conn:
        store.put_links(conn, "MEMORY.md", lines)
        store.put_links(conn, "b.md", [link(1, "t1", "t1.md", source="b.md")])
    shifted = [link(lk.line + 1, lk.target, lk.resolved, source="MEMORY.md") for lk in lines]
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    with store.transaction() as conn:
        conn.set_progress_handler(count, 1000)  # once per 1,000 of SQLite's VM steps
        store.put_links(conn, "MEMORY.md", [link(1, "new", None, source="MEMORY.md"), *shifted])
        conn.set_progress_handler(None, 0)
    assert store.links("MEMORY.md") == [link(1, "new", None, source="MEMORY.md"), *shifted]
    assert [lk.source for lk in store.links("b.md")] == ["b.md"]
    # linear: ~n rows read, deleted and inserted with their three indexes' entries
    # (before: ~n * n / 2 rows read, 4.5 million here, 25,000+ thousand steps)
    assert steps[0] * 1000 < 400 * n, steps[0]
    store.close()


def test_sources_linking_by_resolved_path_or_by_name(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with store.transaction() as conn:
        store.put_links(conn, "a.md", [link(1, "people/Ana", "people/ana.md")])
        store.put_links(conn, "b.md", [link(1, "ANA.md")])  # broken, names the note
        store.put_links(conn, "c.md", [link(1, "Bo", "people/bo.md")])
        store.put_links(conn, "d.md", [link(1, "anastasia")])
    assert store.sources_linking(["people/ana.md"], []) == {"a.md"}
    assert store.sources_linking([], ["ana"]) == {"a.md", "b.md"}
    assert store.sources_linking(["people/bo.md"], ["ana"]) == {"a.md", "b.md", "c.md"}
    assert store.sources_linking([], []) == set()
    store.close()


def test_attachments_are_added_replaced_and_forgotten(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with store.transaction() as conn:
        store.put_attachments(conn, {"img/b.png": Seen(5, 50), "a.pdf": Seen(9, 90)}, [])
    with store.transaction() as conn:
        store.put_attachments(conn, {"a.pdf": Seen(10, 100)}, ["img/b.png", "never.png"])
    assert store.attachment_manifest() == {"a.pdf": Seen(10, 100)}
    assert store.attachment_paths() == ["a.pdf"]
    store.close()


def test_the_relink_journal_is_kept_until_cleared(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with store.transaction() as conn:
        store.journal_relink(conn, {"a.md": "b.md", "c.md": "d/c.md"})
        store.journal_relink(conn, {"a.md": "e.md"})
    store.close()
    store = open_store(tmp_path)  # a relink a kill interrupted is found again
    assert store.pending_relink() == {"a.md": "e.md", "c.md": "d/c.md"}
    store.clear_relink()
    assert store.pending_relink() == {}
    store.close()


def test_owned_lines_keep_their_order_move_when_rewritten_and_are_capped(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.add_owned_lines({"projects": ["- [[a]]", "- [[b]]"], "people": ["- [[p]]"]})
    store.add_owned_lines({"projects": ["- [[a]]", "- [[c]]"]})
    assert store.owned_lines() == {
        "projects": ("- [[b]]", "- [[a]]", "- [[c]]"),
        "people": ("- [[p]]",),
    }
    store.add_owned_lines({"projects": [f"- [[n{i}]]" for i in range(5)]}, keep=3)
    assert store.owned_lines()["projects"] == ("- [[n2]]", "- [[n3]]", "- [[n4]]")
    assert store.owned_lines()["people"] == ("- [[p]]",)
    store.close()


# -- the embedding cache ------------------------------------------------------------------------


def test_cached_vectors_come_back_and_missing_ones_are_left_out(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    labels = add_note(store, "a.md", "one", "two", "three")
    shas = store.chunk_shas(labels)
    rng = np.random.default_rng(1)
    vecs = {shas[labels[0]]: rng.random(8, np.float32), shas[labels[2]]: rng.random(8, np.float32)}
    store.put_embeddings(MODEL, vecs)
    got = store.cached(MODEL, [*shas.values(), sha("unknown")])
    assert set(got) == set(vecs)
    kept = {k: vector_cache.decode(vector_cache.encode(v)) for k, v in vecs.items()}  # int8
    assert all(np.array_equal(got[k], kept[k]) and got[k].dtype == np.float32 for k in got)
    assert store.cached("other-model", shas.values()) == {}
    found, matrix = store.vectors_for(MODEL, labels, 8)
    assert found == [labels[0], labels[2]]
    assert matrix.shape == (2, 8)
    assert np.array_equal(matrix[1], kept[shas[labels[2]]])
    assert store.cache_count(MODEL) == 2
    store.put_embeddings(MODEL, {shas[labels[1]]: rng.random(5, np.float32)})  # not 8
    found, matrix = store.vectors_for(MODEL, labels, 8)  # left out, not a ragged stack
    assert found == [labels[0], labels[2]] and matrix.shape == (2, 8)
    store.close()


def test_prune_keeps_live_chunks_and_the_given_shas_only(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    [live] = add_note(store, "a.md", "live")
    [dead] = add_note(store, "b.md", "dead")
    shas = store.chunk_shas([live, dead])
    v = np.ones(4, np.float32)
    store.put_embeddings(MODEL, {shas[live]: v, shas[dead]: v, sha("a line"): v})
    store.put_embeddings("old-model", {shas[live]: v})
    with store.transaction() as conn:
        store.delete_note(conn, "b.md")
    assert store.prune_cache(MODEL, keep=[sha("a line")]) == 2  # the dead chunk, the old model
    assert set(store.cached(MODEL, [shas[live], shas[dead], sha("a line")])) == {
        shas[live],
        sha("a line"),
    }
    assert store.cache_count("old-model") == 0
    assert store.prune_cache(MODEL, keep=[sha("a line")]) == 0
    store.close()


@pytest.mark.parametrize("made_before", [False, True])
def test_free_pages_go_back_to_the_disk_when_the_queue_empties(
    tmp_path: Path, made_before: bool
) -> None:
    """Issue 27: the pending queue holds every new chunk's embedded text until its vector
    is made; once it empties the index gives its free pages back (a third of index.db
    was free after a first index). An index made before (no auto_vacuum) is converted."""
    index = tmp_path / "index.db"
    if made_before:  # as an older memvault made it: no auto_vacuum
        sqlite3.connect(index).execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    store = Store(index, tmp_path / "cache.db")
    try:
        labels = list(range(1, 3001))
        with store.transaction() as conn:
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in labels), 1.0)
        full, _ = sqlite_pages(index)
        store.finish_pending(labels[:1500])
        assert sqlite_pages(index)[0] >= full  # half still queued: nothing given back yet
        store.finish_pending(labels[1500:])
        pages, free = sqlite_pages(index)
        assert store.pending_state()[0] == 0
        assert pages < full / 2, (pages, full)
        assert free * 5 < pages
    finally:
        store.close()


def test_whether_a_folder_holds_notes_is_sought_by_its_top_folder_not_a_scan(
    tmp_path: Path,
) -> None:
    """``has_notes_under`` (asked on every update of a section that lists no note) reads
    the notes of the folder's top folder by the category index, not every note: with
    note_order's indexes SQLite scanned one of them and read each row from the table."""
    store = open_store(tmp_path)
    for path in ("people/a.md", "Archive/old/b.md", "Archive/new.md", "root.md", "logs/c.md"):
        add_note(store, path, "x")
    asked: list[str] = []
    store._db.set_trace_callback(asked.append)
    try:
        found = {
            f: store.has_notes_under(f)
            for f in ("people", "people/", "Archive/old", "Archive/new", "archive", "nothing")
        }
    finally:
        store._db.set_trace_callback(None)
    assert found == {
        "people": True,
        "people/": True,
        "Archive/old": True,
        "Archive/new": False,
        "archive": False,
        "nothing": False,
    }
    with sqlite3.connect(tmp_path / "index.db") as db:
        plans = {s: [r[3] for r in db.execute("EXPLAIN QUERY PLAN " + s)] for s in set(asked)}
    assert plans and all(
        any(step.startswith("SEARCH notes USING") and "category=?" in step for step in plan)
        and not any(step.startswith("SCAN notes") for step in plan)
        for plan in plans.values()
    ), plans
    store.close()


def test_the_embedded_label_array_is_every_embedded_label_in_order(tmp_path: Path) -> None:
    """Read off the (path, ord) index, whose order is not the labels': sorted after."""
    store = open_store(tmp_path)
    assert store.embedded_label_array().tolist() == []
    early = add_note(store, "z.md", "one", "two", "three")
    waiting = add_note(store, "m.md", "four", pending=True)
    late = add_note(store, "a.md", "five")
    assert late[0] > waiting[0] > early[-1]
    got = store.embedded_label_array()
    assert got.dtype == np.int64
    assert got.tolist() == [*early, *late] == sorted(store.embedded_labels())
    assert store.embedded_label_array(first=True).tolist() == [early[0]]
    store.close()


_TOPS = ["people", "People", "PEOPLE", "peopl\u00e9", "people\u0301", "Stra\u00dfe", "STRASSE"]
_TOPS += [
    "\ufb00",
    "ff",
    "\u0130x",
    "i\u0307x",
    "\u039f\u0394\u039f\u03a3",
    "\u03bf\u03b4\u03bf\u03c2",
    "",
]
_PATHS = st.builds(
    lambda parts, name: "/".join([*filter(None, parts), name]),
    st.lists(st.sampled_from(_TOPS), max_size=3),
    st.sampled_from(["x.md", "Y.md"]),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sets(_PATHS, max_size=10), st.lists(st.sampled_from(_TOPS), min_size=1, max_size=2))
def test_the_titles_of_a_folder_are_those_of_every_note_under_it_in_any_case(
    tmp_path_factory: pytest.TempPathFactory, paths: set[str], parts: list[str]
) -> None:
    """``note_titles(folder)`` reads the notes whose top folder casefolds as the folder's
    first part (by the folder index): among them every note an add's name lookup takes
    from all the titles (its path casefolded under the folder's), ß, ﬀ, İ and a final
    sigma, which casefold into other lengths, and a name in NFD alike."""
    store = open_store(tmp_path_factory.mktemp("titles"))
    with store.transaction() as conn:
        for path in paths:
            store.put_note(conn, row(path, title=path.upper()))
    folder = "/".join(parts)
    inside = folder.casefold() + "/"
    under = sorted(t for t in store.note_titles() if t[0].casefold().startswith(inside))
    assert (
        sorted(t for t in store.note_titles(folder) if t[0].casefold().startswith(inside)) == under
    )
    store.close()
