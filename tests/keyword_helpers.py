"""What the keyword tests share (tests/test_cjk_keywords.py, tests/test_marked_scripts.py,
tests/test_russian_keywords.py, tests/test_han_keywords.py): a vault's keyword hits alone,
the same questions asked of a vault of given notes, FTS5's integrity check, and a chunk's
keywords as an older PostgreSQL schema held them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from contextlib import closing
from pathlib import Path

from helpers import new_vault, open_vault, write
from memvault.api import Vault
from memvault.core.ranking import keyword_terms, query_terms
from memvault.index import pg_keywords
from memvault.index.schema import register

# the keyword table's tokenizer before index schema 9 (PostgreSQL 8): every mark a separator
OLD_TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2'"


def by_keywords(vault: Vault, query: str) -> list[str]:
    """The paths of the keyword hits alone, best first (vectors always answer something)."""
    store = vault.engine.store
    found = store.keywords(keyword_terms(query_terms(query), store.term_docs), 50)
    rows = store.chunk_rows([label for label, _ in found])
    return list(dict.fromkeys(rows[label].path for label, _ in found))


def synced_vault(tmp_path: Path, notes: Mapping[str, str], name: str = "vault") -> Path:
    """A new vault at ``tmp_path/name`` holding ``notes``, synced."""
    root = new_vault(tmp_path, name)
    for rel, text in notes.items():
        write(root, rel, text)
    with open_vault(root) as v:
        v.sync()
    return root


def keyword_answers(
    root: Path, notes: Mapping[str, str], queries: Iterable[str]
) -> dict[str, list[tuple[str, float]]]:
    """``notes`` written into the vault at ``root`` and synced; each query's keyword hits
    (path, BM25 to 6 places): both backends must give the same."""
    for rel, text in notes.items():
        write(root, rel, text)
    with open_vault(root) as v:
        v.sync()
        store = v.engine.store
        out = {}
        for q in queries:
            found = store.keywords(keyword_terms(query_terms(q), store.term_docs), 50)
            rows = store.chunk_rows([label for label, _ in found])
            out[q] = [(rows[label].path, round(score, 6)) for label, score in found]
        return out


def integrity(root: Path) -> None:
    """FTS5's check of its index against the rows it reads through the view (rank 1)."""
    with sqlite3.connect(root / ".memvault" / "index.db") as db:
        register(db)
        db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)")
    db.close()


def old_tsvector(text: str, title: str, headings: str, about: str) -> tuple[str, int]:
    """A chunk's keywords as PostgreSQL held them before its schema 8 (of 6 and 7, given
    the columns as that schema keyed them): ``OLD_TOKENIZE``'s tokens."""
    db = sqlite3.connect(":memory:")
    db.execute(
        f"CREATE VIRTUAL TABLE chunks_fts USING fts5(text, title, headings, about, {OLD_TOKENIZE})"
    )
    db.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(chunks_fts, 'instance')")
    db.execute(
        "INSERT INTO chunks_fts(rowid, text, title, headings, about) VALUES(1, ?, ?, ?, ?)",
        (text, title, headings, about),
    )
    instances = [
        (str(t), str(c), int(o)) for t, c, o in db.execute("SELECT term, col, offset FROM vocab")
    ]
    db.close()
    return pg_keywords._literal(instances)


PG_ROWS = 'SELECT path, ord, keywords::text, xmin::text FROM "{schema}".chunks'


def pg_as_schema_13(dsn: str, schema: str) -> dict[tuple[str, int], tuple[str, str]]:
    """A PostgreSQL index's keywords put back as its schema 13 keyed them (no stems, no
    Han folding) and its version set to 13; each chunk's (keywords, xmin) by (path, ord)
    then, to tell the rows an upgrade rewrites (``pg_rows``)."""
    import psycopg

    with closing(pg_keywords.Tokenizer()) as tok, psycopg.connect(dsn, autocommit=True) as conn:
        for label, *columns in conn.execute(
            f'SELECT label, text, title, headings, about FROM "{schema}".chunks'
        ).fetchall():
            old = pg_keywords._literal(tok.columns(*columns, stems=False))  # as 13 keyed it
            conn.execute(
                f'UPDATE "{schema}".chunks SET keywords = %s::tsvector, ntok = %s WHERE label = %s',
                (*old, label),
            )
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '13' WHERE key = 'schema_version'")
    return pg_rows(dsn, schema)


def pg_rows(dsn: str, schema: str) -> dict[tuple[str, int], tuple[str, str]]:
    """Each chunk's (keywords, xmin) by (path, ord)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(PG_ROWS.format(schema=schema)).fetchall()
    return {(p, o): (k, x) for p, o, k, x in rows}


def as_schema_15(index: Path) -> None:
    """The index as memvault of schema 15 left it: every note's key by updated kept, and
    indexed whole (tests/test_order_updated_once.py, tests/test_upgrade_said.py)."""
    with closing(sqlite3.connect(index)) as db, db:
        db.execute("UPDATE notes SET ord_updated = ord_date WHERE length(ord_updated) = 0")
        db.execute("DROP INDEX notes_ord_updated")
        db.execute(
            "CREATE INDEX notes_ord_updated ON notes(category, listed, ord_updated) "
            "WHERE kind = 'note'"
        )
        db.execute("UPDATE meta SET value = '15' WHERE key = 'schema_version'")
