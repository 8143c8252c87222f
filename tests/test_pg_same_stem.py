"""A query whose words share a stem (``file.md files``, ``links link``) ranks on PostgreSQL
as FTS5 ranks it on SQLite: FTS5's BM25 sums over the OR's phrases, two of one stem
counted twice; PostgreSQL's keywords left the second out (a team field test: the
obsidian-help vault's reader answered 5 of 40 questions otherwise than a fresh local
index of the same commit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from keyword_helpers import keyword_answers

NOTES = {
    "guides/files.md": "# Files\n\nA file is kept as it is. Other words here, and more words.\n",
    "guides/markdown.md": "# Markdown\n\nNotes in md: md tables, md lists, md quotes.\n",
    "guides/links.md": "# Links\n\nA link to a note, and a wikilink.\n",
    "people/ivan.md": "# Иван\n\nИван живёт в Москве.\n",
    "logs/day.md": "# Day\n\nNothing of files or links today, only a walk in md town.\n",
}
QUERIES = ["file.md files", "links link", "Москва Москвой", "file"]


def test_words_of_one_stem_rank_on_postgres_as_on_sqlite(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = keyword_answers(tmp_path / "local", NOTES, QUERIES)
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    got = keyword_answers(tmp_path / "pg", NOTES, QUERIES)
    assert got == local
    # the stem of `file` and `files` counted twice puts the note about files first
    # (counted once, the day's log of `files` and `md` came first on PostgreSQL)
    assert [p for p, _ in got["file.md files"]][:2] == ["guides/files.md", "logs/day.md"]
