"""What one search asks a team index's PostgreSQL (a real server, pgserver): each query
term's chunks counted once, and the chunks' number read from ``chunk_totals``, never a
count of every chunk. The team index is across a network: each statement is a round
trip, and a count of 500,000 chunks took 24-91 ms."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest

from helpers import make_vault, open_vault, write
from memvault.core.ranking import MAX_QUERY_TERMS, informative_terms, query_terms
from memvault.index import pg_conn

# twelve distinct words, none a stopword, most held by a few chunks
QUESTION = (
    "kafka events sarah database postgres decision refactor assistant status prefer why choose"
)


def _statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    said: list[str] = []
    raw = pg_conn._PgSql._raw

    def recorded(self: Any, sql: str, args: Any = None) -> Any:
        said.append(" ".join(sql.split()))
        return raw(self, sql, args)

    monkeypatch.setattr(pg_conn._PgSql, "_raw", recorded)
    return said


@pytest.mark.parametrize("large", [False, True])
def test_a_search_counts_each_term_once_and_never_every_chunk(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch, large: bool
) -> None:
    """The rare word's rule (core/ranking.rare_term) counted every query term again
    under 1,000 chunks (the keyword side had counted them: its BM25's IDF), a round trip
    each, and the chunks' number again with ``count(*)``; past 1,000 chunks the keyword
    side counted each term twice (``informative_terms``, then its BM25)."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path, "team")
    if large:  # past COMMON_DOCS chunks: informative_terms counts the terms too
        monkeypatch.setattr(
            "memvault.engine.reader.informative_terms", partial(informative_terms, min_docs=5)
        )
        for i in range(8):
            write(root, f"more/n{i}.md", f"# Note {i}\n\nKafka events and the database {i}.\n")
    with open_vault(root) as vault:
        vault.sync()
        vault.search(QUESTION, k=5)  # opened, warmed
        said = _statements(monkeypatch)
        hits = vault.search(QUESTION, k=5)
    assert hits
    counts = [s for s in said if s.startswith("SELECT count(*) FROM chunks")]
    every = [s for s in counts if "WHERE" not in s]
    assert not every, every
    terms = len(QUESTION.split())
    assert len(counts) <= terms, (len(counts), terms)


def test_a_page_pasted_without_spaces_counts_as_many_terms_as_the_search_reads(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of Japanese pasted as a query (no space in it, its phrases parted by 、):
    the rare words' rule (core/rare_words.query_words) counted the chunks holding each
    of its phrases to the page's end, a round trip each (290 for 3,000 characters, 77,084
    for a MB, where f4d227c counted 128); a search reads its first 64 terms only."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path, "team")
    write(root, "ja/kawasemi.md", "# カワセミ計画\n\n勅使河原さんがカワセミ計画の担当です。\n")
    phrases = ["".join(chr(0x4E00 + 5 * i + j) for j in range(5)) for i in range(400)]
    with open_vault(root) as vault:
        vault.sync()
        vault.search("kafka", k=5)  # opened, warmed
        said = _statements(monkeypatch)
        vault.search("、".join(phrases), k=5)
    counts = [s for s in said if s.startswith("SELECT count(*) FROM chunks")]
    # each phrase looked up as written, then its pairs, as far as the first 64 terms
    assert len(counts) <= 2 * MAX_QUERY_TERMS, len(counts)


def test_a_term_counted_in_more_chunks_than_the_total_has_the_floor_idf() -> None:
    """The terms are counted before the chunks' total is read, each its own statement:
    a writer deleting chunks in between left a term in more chunks than the total, and
    its IDF the log of a negative number (the search failed)."""
    from memvault.index.pg_keywords import idf

    assert idf(200, 3000) == 1e-6
    assert idf(0, 1) == 1e-6
    assert idf(2000, 1) > 7


def test_a_context_counts_each_term_once_when_it_ranks_again_without_common_words(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question's word found in most candidates (a name in every note) has the context
    rank its candidates again without it (``Reader._rescored``), which counted the chunks
    of each term again, a round trip each to the team's PostgreSQL: 6 counts for this
    question's 3 terms (a Japanese question's review: 22 for 11)."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path, "team")
    for i in range(40):  # the wombat in most of a context's candidates
        write(root, f"zoo/w{i}.md", f"# W{i}\n\nThe wombat ate carrot {i}.\n\nThe wombat slept.\n")
    question = "when did the wombat eat the carrot"
    with open_vault(root) as vault:
        vault.sync()
        vault.context("kafka", budget=300)  # opened, warmed
        said = _statements(monkeypatch)
        vault.context(question, budget=300)
    counts = [s for s in said if s.startswith("SELECT count(*) FROM chunks")]
    terms = len(query_terms(question))  # its words but the stopwords
    assert 0 < len(counts) <= terms, (len(counts), terms)
