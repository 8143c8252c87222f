"""What a first-day user searches for and finds: a note's summary, aliases and tags are
searched; a heading with nothing under it is never a hit (core/about.py, core/chunks.py,
engine/indexer.py, index/schema.py), on a real vault, SQLite, hnswlib and the CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import new_vault, open_vault, rebuilt_snapshot, snapshot, write
from memvault.api import Vault
from memvault.core.ranking import fts_query, query_terms
from memvault.core.text import split_lines
from memvault.errors import NoteNotFound
from memvault.index.schema import SCHEMA_VERSION, register
from memvault.interfaces.cli import app

runner = CliRunner()
SUMMARY = "We chose PostgreSQL for the event store"


def file_lines(root: Path, rel: str, start: int, end: int) -> str:
    return "\n".join(split_lines((root / rel).read_text(encoding="utf-8"))[start - 1 : end])


def assert_hits_quote_the_file(root: Path, hits) -> None:
    """A hit's text is its lines of the file (a piece of them when one line is too long
    for the window: then it starts on its first line and ends on its last)."""
    for h in hits:
        lines = file_lines(root, h.path, h.line_start, h.line_end)
        assert h.text in lines, h
        assert h.text.split("\n")[0] in lines.split("\n")[0], h
        assert h.text.split("\n")[-1] in lines.split("\n")[-1], h


def by_keywords(vault: Vault, query: str) -> list[tuple[str, int]]:
    """(path, chunk ord) of the keyword hits alone (vectors always answer something)."""
    store = vault.engine.store
    rows = store.chunk_rows([label for label, _ in store.fts(fts_query(query_terms(query)), 50)])
    return sorted((r.path, r.ord) for r in rows.values())


def heading_only(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and all(line.lstrip().startswith("#") for line in lines)


# -- a note added with a summary and the template's empty headings ------------------------------


def test_a_decision_added_with_a_summary_is_one_hit_its_summary_line(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    with open_vault(root) as vault:
        rel = vault.add("decisions", "Use PostgreSQL", summary=SUMMARY).path
        vault.sync()
        for query in ("postgres", "event store", "We chose PostgreSQL"):
            hits = vault.search(query, k=20)
            assert [(h.path, h.line_start, h.line_end, h.heading) for h in hits] == [
                (rel, 7, 7, ())
            ], query
            assert hits[0].text == f"summary: {SUMMARY}"
            assert_hits_quote_the_file(root, hits)
        # the structure the template gave it is there, and none of it is a chunk
        assert "## Context" in (root / rel).read_text(encoding="utf-8")
        assert not any(heading_only(c.text) for c in vault.engine.store.chunks_of(rel))


def test_a_person_added_with_a_title_only_is_found_by_the_title_line(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    with open_vault(root) as vault:
        rel = vault.add("people", "Alice Smith").path
        vault.sync()
        hits = vault.search("alice", k=20)
    assert [(h.path, h.text) for h in hits] == [(rel, 'title: "Alice Smith"')]
    assert_hits_quote_the_file(root, hits)


def test_the_cli_search_shows_no_empty_heading(tmp_path: Path, monkeypatch) -> None:
    """The README walk: `memvault init`, `add decisions --summary`, `search postgres`."""
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "v"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    args = ["add", "decisions", "--title", "Use PostgreSQL", "--summary", SUMMARY]
    assert runner.invoke(app, [*args, "--vault", str(root)]).exit_code == 0
    result = runner.invoke(app, ["search", "postgres", "--vault", str(root), "--json"])
    assert result.exit_code == 0, result.stderr
    hits = json.loads(result.stdout)["hits"]
    assert [(h["line_start"], h["text"]) for h in hits] == [(7, f"summary: {SUMMARY}")]


def test_the_context_of_a_note_with_only_a_summary_quotes_that_line(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    with open_vault(root) as vault:
        rel = vault.add("decisions", "Use PostgreSQL", summary=SUMMARY).path
        vault.sync()
        ctx = vault.context("what did we choose for the event store?", budget=400)
    (source,) = [s for s in ctx.sources if s.why != "index"]
    assert (source.path, source.line_start, source.line_end) == (rel, 7, 7)
    stem = rel.removesuffix(".md")
    assert f"[[{stem}]] L7\nsummary: {SUMMARY}" in ctx.text
    for heading in ("## Context", "## Decision", "## Consequences"):
        assert heading not in ctx.text


def test_related_reads_a_summary_only_note_and_refuses_a_note_with_nothing(
    tmp_path: Path,
) -> None:
    root = new_vault(tmp_path)
    write(root, "projects/empty.md", "# Empty\n\n## Goals\n\n## Notes\n%% fill in %%\n")
    write(root, "projects/store.md", "---\nsummary: the event store\n---\n# Store\n\nLedger.\n")
    with open_vault(root) as vault:
        rel = vault.add("decisions", "Use PostgreSQL", summary=SUMMARY).path
        vault.sync()
        assert "projects/store.md" in [h.path for h in vault.related(rel)]
        with pytest.raises(NoteNotFound, match="nothing to embed"):
            vault.related("projects/empty.md")
        assert vault.engine.store.chunks_of("projects/empty.md") == []
        assert all(h.path != "projects/empty.md" for h in vault.search("goals notes empty"))


# -- the description of a note with a body ----------------------------------------------------


def test_a_word_only_in_the_summary_finds_the_note_by_its_first_chunk(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    text = (
        "---\ntitle: Storage\nsummary: the append-only ledger\n---\n# Storage\n\n"
        "We keep every order in one table.\n\n## Later\n\nArchive yearly.\n"
    )
    write(root, "projects/storage.md", text)
    with open_vault(root) as vault:
        vault.sync()
        assert by_keywords(vault, "ledger") == [("projects/storage.md", 0)]
        hits = vault.search("ledger", k=20)
        assert (hits[0].path, hits[0].ord, hits[0].line_start) == ("projects/storage.md", 0, 5)
        assert_hits_quote_the_file(root, hits)  # the chunk's text is the file's, not the summary
        assert "ledger" not in hits[0].text
        ctx = vault.context("the ledger", budget=300)
        assert "We keep every order in one table." in ctx.text
        assert "summary:" not in ctx.text  # the context shows the body's lines, as cited

        # a new summary: found by its words, no longer by the old ones, as a rebuild would be
        write(root, "projects/storage.md", text.replace("append-only ledger", "journal of sales"))
        vault.sync()
        assert by_keywords(vault, "ledger") == []
        assert by_keywords(vault, "journal") == [("projects/storage.md", 0)]
        assert snapshot(vault) == rebuilt_snapshot(root, tmp_path)


@pytest.mark.parametrize(
    ("frontmatter", "query"),
    [
        pytest.param("aliases: [Pat, Patricia Quinn]", "Patricia", id="alias"),
        pytest.param("alias: Pq-7", "pq-7", id="one-alias"),
        pytest.param('tags: ["#project/alpha", nested/tags]', "alpha", id="hash-and-nested-tag"),
        pytest.param("tags: [infra]", "#infra", id="a-tag-searched-with-its-hash"),
        pytest.param("description: about the xylophone", "xylophone", id="description"),
        pytest.param("summary: 8675309", "8675309", id="a-number"),
        pytest.param("summary:\n  - first point\n  - quokka habitat", "quokka", id="a-list"),
    ],
)
def test_frontmatter_words_are_found(tmp_path: Path, frontmatter: str, query: str) -> None:
    root = new_vault(tmp_path)
    write(root, "people/pat.md", f"---\n{frontmatter}\n---\n# Someone\n\nWorks on things.\n")
    with open_vault(root) as vault:
        vault.sync()
        assert by_keywords(vault, query) == [("people/pat.md", 0)]
        assert_hits_quote_the_file(root, vault.search(query, k=20))


# -- hostile and careless notes -----------------------------------------------------------------


def test_a_summary_of_100_kb_is_indexed_within_the_window_and_its_last_word_is_found(
    tmp_path: Path,
) -> None:
    root = new_vault(tmp_path)
    summary = " ".join(f"word{i}" for i in range(12_000)) + " zanzibar"  # ~110 KB
    assert len(summary) > 100_000
    write(root, "decisions/long.md", f"---\nsummary: {summary}\n---\n# Long\n\n## Context\n")
    write(root, "decisions/body.md", f"---\nsummary: {summary}\n---\n# Body\n\nShort body.\n")
    with open_vault(root) as vault:
        report = vault.sync()
        assert not report.skipped
        window = vault.engine.embedding.max_tokens
        for rel in ("decisions/long.md", "decisions/body.md"):
            chunks = vault.engine.store.chunks_of(rel)
            assert chunks and all(c.tokens <= window for c in chunks)
        found = by_keywords(vault, "zanzibar")
        assert ("decisions/body.md", 0) in found  # its first chunk, by its description
        assert {p for p, _ in found} == {"decisions/long.md", "decisions/body.md"}
        body = vault.engine.store.chunks_of("decisions/body.md")
        assert [c.text for c in body] == ["# Body\n\nShort body."]
        pending = vault.engine.store.pending(1000)
        assert all(vault.engine.embedding.count_tokens(p.embed_text) <= window for p in pending)
        assert_hits_quote_the_file(root, vault.search("word5000 zanzibar", k=50))


def test_an_alias_bomb_in_the_frontmatter_is_text_and_is_not_expanded(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    write(root, "people/bomb.md", f"---\n{bomb}summary: kaboom\n---\n# Bomb\n")
    with open_vault(root) as vault:
        report = vault.sync()
        assert any("people/bomb.md" in w and "frontmatter ignored" in w for w in report.warnings)
        assert [p for p, _ in by_keywords(vault, "kaboom")] == ["people/bomb.md"]
        assert_hits_quote_the_file(root, vault.search("kaboom", k=20))
        assert sum(len(c.text) for c in vault.engine.store.chunks_of("people/bomb.md")) < 2_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "---\ntitle: Bare\nsummary: no body at all\n---",
            [(3, "summary: no body at all")],
            id="frontmatter-and-no-body-nor-newline",
        ),
        pytest.param(
            "---\nsummary: under comments\n---\n%% a hint %%\n\n%%\nmore\n%%\n",
            [(2, "summary: under comments")],
            id="only-comments",
        ),
        pytest.param("%% a hint %%\n\n%%\nlong hint\n%%\n", [], id="only-comments-no-fm"),
        pytest.param("# T\n\n## A\n\n## B\n", [], id="only-headings"),
        pytest.param(
            "## A\n## B\n\nreal words\n", [(2, "## B\n\nreal words")], id="a-heading-then-a-heading"
        ),
        pytest.param(
            "## A\n```\n# fenced\n```\n",
            [(1, "## A\n```\n# fenced\n```")],
            id="a-fenced-heading-is-text",
        ),
    ],
)
def test_careless_notes_make_the_chunks_they_should(
    tmp_path: Path, text: str, expected: list[tuple[int, str]]
) -> None:
    root = new_vault(tmp_path)
    write(root, "notes/n.md", text)
    with open_vault(root) as vault:
        report = vault.sync()
        chunks = vault.engine.store.chunks_of("notes/n.md")
        assert [(c.line_start, c.text) for c in chunks] == expected
        for c in chunks:
            assert c.text == file_lines(root, "notes/n.md", c.line_start, c.line_end)
        if not expected:
            assert "notes/n.md: nothing to embed (empty note)" in report.warnings


# -- an index an older memvault wrote --------------------------------------------------------


def test_an_index_of_version_2_is_migrated_and_reindexed_by_the_next_sync(tmp_path: Path) -> None:
    """Version 2 indexed each empty heading as a chunk and had no `about` column. Opening
    it must need no manual step: the next sync gives the same index a fresh one has."""
    root = new_vault(tmp_path)
    with open_vault(root) as vault:
        rel = vault.add("decisions", "Use PostgreSQL", summary=SUMMARY).path
        write(root, "people/pat.md", "---\naliases: [Patricia]\n---\n# Pat\n\nRuns the team.\n")
        vault.sync()
    db = sqlite3.connect(root / ".memvault" / "index.db")
    register(db)  # the keyword table's view calls it (schema 8)
    with db:  # what version 2 held: the 3-column keyword table, a chunk per empty heading
        rows = db.execute("SELECT rowid, text, title, headings FROM chunks_fts").fetchall()
        db.execute("DROP TABLE chunks_fts")
        for trigger in ("removed", "changed"):  # schema 6's: version 2 had none
            db.execute(f"DROP TRIGGER chunks_fts_{trigger}")
        db.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(text, title, headings, "
                   "tokenize = 'porter unicode61 remove_diacritics 2')")  # fmt: skip
        db.executemany("INSERT INTO chunks_fts(rowid, text, title, headings) VALUES(?,?,?,?)", rows)
        for i, heading in enumerate(("Context", "Decision"), 1):
            cur = db.execute(
                "INSERT INTO chunks(path, ord, heading, line_start, line_end, text, sha, tokens) "
                "VALUES(?, ?, ?, ?, ?, ?, ?, 2)",
                (rel, i, json.dumps(["Use PostgreSQL", heading]), 10 + 2 * i, 10 + 2 * i,
                 f"## {heading}", f"{i:064x}"),
            )  # fmt: skip
            db.execute(
                "INSERT INTO chunks_fts(rowid, text, title, headings) VALUES(?, ?, ?, ?)",
                (cur.lastrowid, f"## {heading}", "Use PostgreSQL", heading),
            )
            db.execute(
                "INSERT INTO pending VALUES(?, ?, ?, 1.0)", (cur.lastrowid, f"{i:064x}", "x")
            )
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    db.close()
    with open_vault(root) as vault:
        assert vault.engine.store.meta("schema_version") == str(SCHEMA_VERSION)  # migrated
        report = vault.sync()
        assert set(report.modified) >= {rel, "people/pat.md"}
        assert [c.text for c in vault.engine.store.chunks_of(rel)] == [f"summary: {SUMMARY}"]
        assert by_keywords(vault, "postgresql") == [(rel, 0)]
        assert by_keywords(vault, "patricia") == [("people/pat.md", 0)]
        assert vault.engine.store.pending_state()[0] == 0
        assert snapshot(vault) == rebuilt_snapshot(root, tmp_path)
        vault.sync()
        again = vault.sync()  # nothing left to do: not re-read on every sync
        assert not again.modified


# -- by meaning, with the real model -----------------------------------------------------------


@pytest.mark.model
def test_a_note_is_found_by_the_meaning_of_its_summary_with_the_real_model(tmp_path: Path) -> None:
    """The titles and bodies say nothing of it: only the summaries carry the meaning."""
    root = new_vault(tmp_path)
    for name, body in (
        ("garden", "Tomatoes need sun and water every day."),
        ("cars", "The van needs new tyres before winter."),
        ("party", "Ana brings the cake, Bo the music."),
        ("office", "The plants on the third floor are dying."),
        ("travel", "Trains to Lyon leave at seven."),
    ):
        write(root, f"projects/{name}.md", f"# {name.title()}\n\n{body}\n")
    with Vault.open(root) as vault:
        chosen = vault.add("decisions", "Choice 7", summary="Events live in PostgreSQL").path
        write(root, "projects/alpha.md", "---\nsummary: invoices are emailed to customers "
              "monthly\n---\n# Alpha\n\nRun by Ana.\n")  # fmt: skip
        vault.sync()
        for query, want in (
            ("which relational database holds our events?", chosen),
            ("how do customers get their bills?", "projects/alpha.md"),
        ):
            assert vault.search(query, k=3, group=True)[0].path == want, query
