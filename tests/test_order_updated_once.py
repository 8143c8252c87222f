"""A note's key by ``updated`` kept only when it is not its key by date (issue 27, schema
16, PostgreSQL 15: ``note_order.OWN_UPDATED``): a note with no ``updated`` of its own kept
the same key twice, in its row and in ``notes_ord_updated``. A section by updated still
lists as every note sorted does, a page at a time; an index an older memvault wrote (the
keys twice, the full index) is given the new form at its open and lists the same."""

from __future__ import annotations

import random
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from helpers import new_vault, note, open_vault, sqlite_pages, write
from keyword_helpers import as_schema_15
from memvault.core.memory_order import sort_key

SECTIONS = """
[[memory.sections]]
name = "projects"
title = "Active Projects"
folder = "projects"
order = "updated"
limit = 4

[[memory.sections]]
name = "people"
title = "Key People"
folder = "people"
order = "date"
limit = 3

[[memory.sections]]
name = "topics"
title = "Topics"
folder = ""
order = "updated"
limit = 3

"""
FOLDERS = ("projects", "people", "projects/deep", "")


def _sections(root: Path) -> None:
    config = root / ".memvault" / "config.toml"
    text = config.read_text("utf-8")
    start, end = text.index("[[memory.sections]]"), text.index("\n[index]")
    config.write_text(text[:start] + SECTIONS.lstrip() + text[end + 1 :], "utf-8")


def _fields(rng: random.Random) -> dict[str, str]:
    """No dates, a date, an updated (alone, after the date, the date itself), a bad one."""
    fields: dict[str, str] = {}
    if rng.random() < 0.6:
        fields["date"] = f"2025-{1 + rng.randrange(12):02}-{1 + rng.randrange(28):02}"
    roll = rng.random()
    if roll < 0.25:
        fields["updated"] = f"2026-0{1 + rng.randrange(9)}-{1 + rng.randrange(28):02}"
    elif roll < 0.35 and "date" in fields:
        fields["updated"] = fields["date"]  # its key by updated is its key by date
    elif roll < 0.4:
        fields["updated"] = "someday"  # no date: read as none
    return fields


def _vault(tmp_path: Path, seed: int, count: int = 90) -> Path:
    rng = random.Random(seed)
    root = new_vault(tmp_path)
    _sections(root)
    for i in range(count):
        folder = rng.choice(FOLDERS)
        rel = f"{folder}/n{i:03}.md" if folder else f"n{i:03}.md"
        write(root, rel, note(f"Note {rng.randrange(20)}", f"about {i}", **_fields(rng)))
    with open_vault(root) as v:
        v.sync(vectors=False)
    return root


def _listings(root: Path) -> dict[str, str]:
    out = {"MEMORY.md": (root / "MEMORY.md").read_text("utf-8")}
    for folder in ("projects", "people"):
        out[folder] = (root / folder / f"{folder}.md").read_text("utf-8")
    return out


def _fresh(root: Path, tmp_path: Path) -> dict[str, str]:
    """MEMORY.md and the folder notes a fresh index of the same files writes, every note's
    row read and sorted (as a daemon sorts them), not read by the kept keys."""
    copy = tmp_path / "fresh"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    shutil.copy(root / ".memvault" / "config.toml", copy / ".memvault" / "config.toml")
    with open_vault(copy) as fresh:
        fresh.engine.catalogue.notes()
        fresh.sync(vectors=False)
    return _listings(copy)


def _paths(store: Any, folder: str) -> list[str]:
    """The notes of ``folder`` by updated, read a page of 3 at a time past the last key."""
    out: list[str] = []
    after = None
    while page := store.ordered_notes(folder, "updated", after=after, limit=3):
        out += [e.path for _, e in page]
        after = page[-1][0]
    return out


def _bytes(index: Path, *names: str) -> int:
    with closing(sqlite3.connect(index)) as db:
        marks = ", ".join("?" * len(names))
        (n,) = db.execute(f"SELECT SUM(pgsize) FROM dbstat WHERE name IN ({marks})", names)
        return int(n[0])


@pytest.mark.parametrize("folder", ["projects", "", "projects/deep"])
def test_a_section_by_updated_pages_through_its_notes_as_every_note_sorted(
    tmp_path: Path, folder: str
) -> None:
    """Notes with an updated of their own, the same as their date, none or a bad one: read
    a page of 1, 2 or 5 at a time past the last key, the two kinds merged, in the order
    ``sort_key`` gives every note of the folder."""
    root = _vault(tmp_path, 1)
    with open_vault(root) as v:
        store = v.engine.store
        every = [e for _, e in store.ordered_notes(folder, "title")]
        expected = [e.path for e in sorted(every, key=lambda e: sort_key(e, "updated"))]
        assert len(expected) > 10
        with closing(sqlite3.connect(root / ".memvault" / "index.db")) as db:
            own, none = db.execute(
                "SELECT SUM(length(ord_updated) > 0), SUM(length(ord_updated) = 0) FROM notes "
                "WHERE kind = 'note'"
            ).fetchone()
        assert own > 10 and none > 10  # both kinds there
        for size in (1, 2, 5):
            walked: list[str] = []
            after = None
            while page := store.ordered_notes(folder, "updated", after=after, limit=size):
                walked += [e.path for _, e in page]
                after = page[-1][0]
            assert walked == expected, size
        lines = [p for p, _, _ in store.folder_lines_of(folder, "updated")]
        assert [p for p in lines if p in expected] == expected


def test_an_index_of_schema_15_is_kept_once_and_lists_as_a_fresh_index(tmp_path: Path) -> None:
    """An index written with every key by updated kept (schema 15) opened by this memvault:
    upgraded once at its open (the equal keys emptied, the index made partial), the pages
    they took given back by a VACUUM; MEMORY.md and the folder notes as a fresh index."""
    root = _vault(tmp_path, 2, count=400)
    index = root / ".memvault" / "index.db"
    new_bytes = _bytes(index, "notes", "notes_ord_updated")
    new_index = _bytes(index, "notes_ord_updated")
    with closing(sqlite3.connect(index)) as db:
        (keyed,) = db.execute(
            "SELECT SUM(length(ord_date)) FROM notes WHERE length(ord_updated) = 0"
        ).fetchone()
    as_schema_15(index)
    old_bytes = _bytes(index, "notes", "notes_ord_updated")
    # each such key was kept twice: in its row and in the index (its length and more)
    assert old_bytes - new_bytes >= 1.5 * keyed
    with closing(sqlite3.connect(index)) as db, closing(sqlite3.connect(tmp_path / "old")) as old:
        db.backup(old)
    with open_vault(root) as v:  # upgraded at its open
        v.add("projects", "Harbour", summary="active one")
    with closing(sqlite3.connect(index)) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            "19",
        )
        assert not db.execute(
            "SELECT 1 FROM notes WHERE ord_updated = ord_date AND kind = 'note'"
        ).fetchall()
        (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'notes_ord_updated'")
        assert "length(ord_updated) > 0" in sql[0]
    # the index made again over the others; the rows' pages keep their room until a
    # VACUUM (or rows written again) gives it back
    assert _bytes(index, "notes_ord_updated") <= new_index + 4096
    for db_path in (index, tmp_path / "old"):
        with closing(sqlite3.connect(db_path)) as db:
            db.execute("VACUUM")
            (size,) = db.execute("PRAGMA page_size").fetchone()
    saved = (sqlite_pages(tmp_path / "old")[0] - sqlite_pages(index)[0]) * size
    assert saved >= 1.5 * keyed - 2 * size
    assert _fresh(root, tmp_path) == _listings(root)


def test_postgres_upgrades_from_14_and_lists_as_sqlite(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PgStore shares the SQL (bytea keys): an index of version 14 (every key by updated
    kept, indexed whole) is read in the same order by a reader (its writer not upgraded
    yet), is given the new form at the writer's open and lists as a fresh SQLite index
    does."""
    import psycopg

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = _vault(tmp_path, 3, count=60)
    with open_vault(root) as v:
        schema = v.engine.store.schema  # type: ignore[attr-defined]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        notes = f'"{schema}".notes'
        conn.execute(f"UPDATE {notes} SET ord_updated = ord_date WHERE length(ord_updated) = 0")
        conn.execute(f'DROP INDEX "{schema}".notes_ord_updated')
        conn.execute(
            f"CREATE INDEX notes_ord_updated ON {notes}(category, listed, ord_updated) "
            "WHERE kind = 'note'"
        )
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '14' WHERE key = 'schema_version'")
    with open_vault(root, mode="read") as reader:  # a reader of a writer still at 14
        assert reader.engine.store.meta("schema_version") == "14"
        read = {f: _paths(reader.engine.store, f) for f in FOLDERS}
        assert all(len(paths) > 5 for paths in read.values())
    with open_vault(root) as v:
        assert {f: _paths(v.engine.store, f) for f in FOLDERS} == read  # upgraded: the same
        v.add("projects", "Harbour", summary="active one")
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        row = conn.execute(f"SELECT value FROM \"{schema}\".meta WHERE key = 'schema_version'")
        assert row.fetchone() == ("18",)
        same = conn.execute(
            f"SELECT COUNT(*) FROM {notes} WHERE ord_updated = ord_date AND kind = 'note'"
        )
        assert same.fetchone() == (0,)
        (sql,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = %s "
            "AND indexname = 'notes_ord_updated'",
            (schema,),
        ).fetchone()
        assert "length(ord_updated) > 0" in sql
    monkeypatch.delenv("MEMVAULT_INDEX_STORE")
    assert _fresh(root, tmp_path) == _listings(root)


def _steps(store: Any, folder: str, order: str) -> int:
    """SQLite's virtual machine steps of one page of 3 of ``folder`` in ``order`` (the
    work of the query: a seek and three rows, or every note of the folder read)."""
    counted = [0]

    def step() -> int:
        counted[0] += 1
        return 0

    db = store._db
    db.set_progress_handler(step, 1)
    try:
        page = store.ordered_notes(folder, order, limit=3)
    finally:
        db.set_progress_handler(None, 1)
    assert len(page) == 3
    return counted[0]


def _folders_of_own(tmp_path: Path) -> Path:
    """A vault of two folders, 300 and 30 notes, each note with an ``updated`` of its own."""
    root = new_vault(tmp_path)
    for folder, count in (("big", 300), ("small", 30)):
        for i in range(count):
            day = f"2025-{1 + i % 12:02}-{1 + i % 28:02}"
            fields = {"date": day, "updated": "2026-" + day[5:]}
            write(root, f"{folder}/n{i:03}.md", note(f"N {i}", "x", **fields))
    with open_vault(root) as v:
        v.sync(vectors=False)
    return root


@pytest.mark.parametrize("order", ["updated", "date"])
def test_a_page_reads_no_more_notes_in_a_folder_ten_times_bigger(
    tmp_path: Path, order: str
) -> None:
    """Two folders, every note with an ``updated`` of its own (an Obsidian plugin that
    stamps each edit): the notes of the other kind, none here, are found at a seek of the
    date index, not by reading every note of the folder in date order to learn it has its
    own key (the merge asks that arm for its first row before the first row is out). A
    page of 3 costs the same in a folder of 300 notes as in one of 30."""
    root = _folders_of_own(tmp_path)
    with open_vault(root) as v:
        store = v.engine.store
        small, big = _steps(store, "small", order), _steps(store, "big", order)
    assert big < 1.5 * small, (small, big)


def _rows_read(plan: dict[str, Any]) -> int:
    """The rows the scans of a plan (EXPLAIN ANALYZE's JSON) read from the notes table."""
    own = plan.get("Actual Rows", 0) * plan.get("Actual Loops", 1)
    read = own if plan.get("Relation Name") == "notes" else 0
    return read + sum(_rows_read(p) for p in plan.get("Plans", []))


@pytest.mark.parametrize("order", ["updated", "date"])
def test_postgres_reads_a_page_not_the_folder(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch, order: str
) -> None:
    """On PostgreSQL a union's order is not a merge unless each part is limited: a page
    of 3 of a folder of 3,000 notes, a third with an ``updated`` of their own, read only
    the notes the page needs (an Append and a top-N sort read all 3,000, each page)."""
    import psycopg

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = new_vault(tmp_path)
    write(root, "big/n0.md", note("N 0", "x", date="2025-01-01", updated="2026-01-01"))
    with open_vault(root) as v:
        v.sync(vectors=False)
        store = v.engine.store
        schema = store.schema  # type: ignore[attr-defined]
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{schema}"')
            # 3,000 more rows of the note, each its own path and keys (a third with an
            # updated of its own): the planner picks by the table's size
            conn.execute(
                "INSERT INTO notes SELECT (jsonb_populate_record(NULL::notes, to_jsonb(n) || "
                "jsonb_build_object('path', 'big/g' || i || '.md', 'ord_date', "
                "ord_date || int4send(i), 'ord_updated', CASE WHEN i % 3 = 0 THEN "
                "ord_updated || int4send(i) ELSE ''::bytea END))).* "
                "FROM notes n, generate_series(1, 3000) i WHERE n.path = 'big/n0.md'"
            )
            conn.execute("ANALYZE notes")
            asked: list[tuple[str, Any]] = []
            execute = store._db.execute

            def spy(sql: str, args: Any = ()) -> Any:
                asked.append((sql, args))
                return execute(sql, args)

            setattr(store._db, "execute", spy)  # noqa: B010  (the store's own, recorded)
            try:
                page = store.ordered_notes("big", order, limit=3)
            finally:
                delattr(store._db, "execute")
            assert len(page) == 3 and len(asked) == 1
            sql, args = asked[0]
            (plan,) = conn.execute(
                "EXPLAIN (ANALYZE, FORMAT JSON) " + sql.replace("?", "%s"), args
            ).fetchone()
    read = _rows_read(plan[0]["Plan"])
    assert 3 <= read <= 6, read
