"""Chinese found by keywords whichever characters it is written in: a traditional
character is keyed as its simplified one (``core/cjk.simplified``), the note's and the
query's alike, on both backends; an index of the schema before is given those rows
again, and only those."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from helpers import open_vault
from keyword_helpers import (
    by_keywords,
    integrity,
    keyword_answers,
    pg_as_schema_13,
    pg_rows,
    synced_vault,
)
from memvault.core.cjk import keyword_form

NOTES = {
    "notes/simplified.md": "# 读书\n\n今天整理了学习笔记和数据库迁移计划。\n",
    "notes/traditional.md": "# 旅行\n\n下週去臺灣，記得帶護照與雨傘。\n",
    "notes/japanese.md": "# 天気\n\n東京都に住んでいます。後で電話します。\n",
    "notes/english.md": "# Plans\n\nThe database migration plan is ready.\n",
}
# a query in the other script than the note's: (query, the note it finds)
FORMS = [
    ("學習筆記", "notes/simplified.md"),
    ("數據庫", "notes/simplified.md"),
    ("雨伞", "notes/traditional.md"),
    ("台湾", "notes/traditional.md"),
    ("护照", "notes/traditional.md"),
    ("东京", "notes/japanese.md"),
]


def _vault(tmp_path: Path, name: str = "vault") -> Path:
    return synced_vault(tmp_path, NOTES, name)


@pytest.mark.parametrize(("query", "path"), FORMS)
def test_a_word_in_the_other_characters_finds_the_note(
    tmp_path: Path, query: str, path: str
) -> None:
    with open_vault(_vault(tmp_path)) as v:
        assert by_keywords(v, query) == [path]


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("学习笔记", "notes/simplified.md"),
        ("護照", "notes/traditional.md"),
        ("東京", "notes/japanese.md"),
    ],
)
def test_a_word_as_written_still_finds_its_note(tmp_path: Path, query: str, path: str) -> None:
    with open_vault(_vault(tmp_path)) as v:
        assert by_keywords(v, query) == [path]


def _rows(root: Path) -> dict[str, list[tuple[str, str, int]]]:
    db = sqlite3.connect(root / ".memvault" / "index.db")
    db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, chunks_fts, 'instance')")
    rows: dict[str, list[tuple[str, str, int]]] = {}
    for path, ord_, term, col, offset in db.execute(
        "SELECT c.path, c.ord, v.term, v.col, v.offset FROM temp.v AS v "
        "JOIN chunks AS c ON c.label = v.doc ORDER BY c.path, c.ord, v.col, v.offset"
    ):
        rows.setdefault(f"{path}#{ord_}", []).append((term, col, offset))
    db.close()
    return rows


def test_an_index_of_schema_14_gives_only_its_traditional_rows_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _vault(tmp_path)
    db = sqlite3.connect(root / ".memvault" / "index.db")
    db.create_function(
        "memvault_keywords", 1, lambda v: keyword_form(v, stems=False), deterministic=True
    )
    with db:
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')")
        db.execute("UPDATE meta SET value = '14' WHERE key = 'schema_version'")
    db.close()
    before = _rows(root)
    with caplog.at_level(logging.INFO, logger="memvault"), open_vault(root) as v:
        assert by_keywords(v, "台湾") == ["notes/traditional.md"]
    after = _rows(root)
    integrity(root)
    changed = {k.split("#")[0] for k in before if before[k] != after[k]}
    assert changed == {"notes/traditional.md", "notes/japanese.md"}  # 東, 後, 電 are in it
    assert "index schema 14 -> 15" in caplog.text
    assert after == _rows(_vault(tmp_path, "fresh"))


def test_both_backends_give_the_same_keyword_hits_for_either_script(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = [q for q, _ in FORMS]
    local = keyword_answers(tmp_path / "local", NOTES, queries)
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    assert keyword_answers(tmp_path / "pg", NOTES, queries) == local
    assert [local[q][0][0] for q, _ in FORMS] == [p for _, p in FORMS]


def test_a_postgres_index_of_schema_13_gets_its_traditional_rows_keyed_again(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = _vault(tmp_path)
    with open_vault(root) as v:
        schema = v.engine.store.schema
    before = pg_as_schema_13(pg_dsn, schema)
    with open_vault(root) as v:
        assert by_keywords(v, "台湾") == ["notes/traditional.md"]
    after = pg_rows(pg_dsn, schema)
    touched = {p for p, o in before if before[p, o][1] != after[p, o][1]}  # rewritten
    assert touched == {"notes/traditional.md", "notes/japanese.md"}
    assert all(before[k] == after[k] for k in before if k[0] not in touched)
