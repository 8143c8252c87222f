"""Keywords on PostgreSQL ranked exactly as the SQLite index ranks them: FTS5's BM25.

PostgreSQL's own text search would stem and drop stop words its way (``english``) and
rank without IDF (``ts_rank``): other hits than FTS5's. So the tokens are FTS5's own —
each chunk's columns are tokenized by an in-memory SQLite FTS5 table with the index's
tokenizer (``porter unicode61 remove_diacritics 2``; ``fts5vocab`` lists the token
instances) — and stored as a ``tsvector`` whose lexemes are those tokens, each position
weighted by its column (A title, B headings, C about, D text), with the chunk's token
count (``ntok``). A Chinese or Japanese character is a token of its own (a traditional
one as simplified), a Cyrillic word has its stem beside it (``core/cjk.keyword_form``,
as the SQLite index's keyword table is given it). The GIN index
finds the candidates; BM25 is computed here, above the database, from what it returns:
each term's document count, the candidates' per-column term frequencies (the weights of
a lexeme's positions) and lengths, the table's row count and total length — FTS5's
formula and constants (k1 = 1.2, b = 0.75, IDF floored at 1e-6, column weights text 1,
title 2, headings 1.5, about 1).
"""

from __future__ import annotations

import atexit
import math
import sqlite3
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from memvault.core.cjk import keyword_form
from memvault.index.fts import FTS_TABLE

K1 = 1.2
B = 0.75
COLUMNS = ("text", "title", "headings", "about")
WEIGHT_LETTER = {"text": "D", "title": "A", "headings": "B", "about": "C"}
LETTER_WEIGHT = {"D": 1.0, "A": 2.0, "B": 1.5, "C": 1.0}  # bm25(chunks_fts, 1.0, 2.0, 1.5, 1.0)


class Tokenizer:
    """FTS5's tokens of text, from an in-memory SQLite table (thread-safe)."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(FTS_TABLE)
        self._db.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(chunks_fts, 'instance')")
        self._lock = threading.Lock()

    def columns(
        self,
        text: str,
        title: str,
        headings: str,
        about: str,
        *,
        cjk: bool = True,
        stems: bool = True,
    ) -> list[tuple[str, str, int]]:
        """(token, column, offset) of each token instance of a chunk's four columns
        (``cjk``: each CJK character a token, else a run of them one, as before schema 7;
        ``stems``: a Cyrillic word with its stem, Han simplified; else as before 14)."""
        put = partial(keyword_form, stems=stems) if cjk else str
        with self._lock:
            self._db.execute(
                "INSERT INTO chunks_fts(rowid, text, title, headings, about) VALUES(1, ?, ?, ?, ?)",
                (put(text), put(title), put(headings), put(about)),
            )
            rows = self._db.execute("SELECT term, col, offset FROM vocab").fetchall()
            self._db.execute("DELETE FROM chunks_fts")
        return [(str(t), str(c), int(o)) for t, c, o in rows]

    def columns_many(
        self, rows: Sequence[tuple[str, str, str, str]]
    ) -> list[list[tuple[str, str, int]]]:
        """``columns`` of many chunks at once: one insert and one read of the table's
        token instances for the lot (a chunk at a time, the SQL around each cost more
        than its tokenizing)."""
        out: list[list[tuple[str, str, int]]] = [[] for _ in rows]
        if not rows:
            return out
        with self._lock:
            self._db.executemany(
                "INSERT INTO chunks_fts(rowid, text, title, headings, about) VALUES(?, ?, ?, ?, ?)",
                [(i + 1, *map(keyword_form, r)) for i, r in enumerate(rows)],
            )
            found = self._db.execute("SELECT doc, term, col, offset FROM vocab").fetchall()
            self._db.execute("DELETE FROM chunks_fts")
        for doc, term, col, offset in found:
            out[int(doc) - 1].append((str(term), str(col), int(offset)))
        return out

    def close(self) -> None:
        self._db.close()

    def tokens(self, text: str, *, cjk: bool = True, stems: bool = True) -> list[str]:
        """The tokens of a query term, in order (``cjk``, ``stems``: as ``columns``)."""
        found = self.columns(text, "", "", "", cjk=cjk, stems=stems)
        return [t for t, _, _ in sorted(found, key=lambda r: r[2])]


TOKENIZER = Tokenizer()
# closed as Python ends: 3.13 warns of a connection never closed (ResourceWarning)
atexit.register(TOKENIZER.close)


def quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_of(text: str, title: str, headings: str, about: str) -> tuple[str, int]:
    """A ``tsvector`` literal of the chunk's FTS5 tokens (positions weighted by column)
    and its token count. Positions are numbered across the columns, one left empty
    between two (1-based, at most 16,383: PostgreSQL's cap; a chunk is a few hundred
    tokens)."""
    return _literal(TOKENIZER.columns(text, title, headings, about))


def tsvectors_of(rows: Sequence[tuple[str, str, str, str]]) -> list[tuple[str, int]]:
    """``tsvector_of`` of many chunks (text, title, headings, about) at once."""
    return [_literal(instances) for instances in TOKENIZER.columns_many(rows)]


def _literal(instances: list[tuple[str, str, int]]) -> tuple[str, int]:
    last = dict.fromkeys(COLUMNS, -1)
    for _, col, offset in instances:
        if offset > last[col]:
            last[col] = offset
    base = {}
    start = 1
    for col in COLUMNS:  # a position left between columns: FTS5's phrases never cross one
        base[col] = start
        start += 2 + last[col]
    lexemes: dict[str, list[str]] = {}
    for token, col, offset in instances:
        pos = min(base[col] + offset, 16383)
        entry = f"{pos}{WEIGHT_LETTER[col]}"
        if token in lexemes:
            lexemes[token].append(entry)
        else:
            lexemes[token] = [entry]
    literal = " ".join([f"{quote(t)}:{','.join(lexemes[t])}" for t in sorted(lexemes)])
    return literal, len(instances)


def term_query(term: str, *, cjk: bool = True, stems: bool = True) -> str | None:
    """A ``tsquery`` literal matching what FTS5's ``"term"`` matches (its tokens as a
    phrase; ``cjk``, ``stems``: as ``Tokenizer.columns``); None when it has no token."""
    tokens = TOKENIZER.tokens(term, cjk=cjk, stems=stems)
    if not tokens:
        return None
    return " <-> ".join(quote(t) for t in tokens)


def idf(total: int, docs: int) -> float:
    """FTS5's IDF, at its floor (1e-6) for a term in at least half the chunks, and for
    one counted in more than ``total`` (the writer deleted chunks between the counts)."""
    value = math.log((max(total - docs, 0) + 0.5) / (docs + 0.5))
    return value if value > 0 else 1e-6


def bm25(freqs: Sequence[float], idfs: Sequence[float], length: int, avg_length: float) -> float:
    """FTS5's bm25 of one row: ``freqs[i]`` the weighted frequency of term i in it."""
    norm = K1 * (1 - B + B * length / avg_length) if avg_length > 0 else K1
    return sum(w * (f * (K1 + 1)) / (f + norm) for f, w in zip(freqs, idfs, strict=True) if f)


def ranked(
    rows: Sequence[tuple[int, int, str, Sequence[int], Sequence[str]]],
    phrases: Sequence[Sequence[str]],
    docs: Sequence[int],
    totals: tuple[int, int],
) -> list[tuple[int, float]]:
    """(label, BM25: higher is better), best first, as FTS5 ranks ``"a" OR "b"``: from
    ``rows`` (label, its token count, a lexeme with its positions and their weight
    letters) of the chunks that hold a phrase, each phrase's chunk count ``docs``, and
    the chunks' count and token total ``totals``."""
    found: dict[int, tuple[int, dict[str, dict[int, str]]]] = {}
    for label, ntok, lexeme, positions, weights in rows:
        entry = found.setdefault(int(label), (int(ntok), {}))
        entry[1][lexeme] = dict(zip(positions, weights, strict=True))
    total, length = totals
    idfs = [idf(total, n) for n in docs]
    avg = length / total if total else 0.0
    scored = [
        (label, bm25([phrase_freq(p, lexemes) for p in phrases], idfs, ntok, avg))
        for label, (ntok, lexemes) in found.items()
    ]
    scored.sort(key=lambda x: (-x[1], x[0]))
    return scored


def phrase_freq(tokens: Sequence[str], lexemes: dict[str, dict[int, str]]) -> float:
    """The column-weighted count of a phrase's instances in a chunk (FTS5's per-phrase
    frequency): positions of its first token followed by the others, one step each."""
    first = lexemes.get(tokens[0], {})
    freq = 0.0
    for pos, letter in first.items():
        if all(pos + i in lexemes.get(t, {}) for i, t in enumerate(tokens[1:], 1)):
            freq += LETTER_WEIGHT[letter]
    return freq


def phrases(
    terms: Sequence[str], *, cjk: bool, stems: bool = True
) -> tuple[list[list[str]], list[str]]:
    """Each term's lexemes (a phrase; a term with none left out), and the term of each. A
    term whose lexemes are another's (``files`` beside ``file``: one stem) is a phrase
    again, as FTS5 scores ``"file" OR "files"``: BM25 sums over the OR's phrases, each
    counted (it was left out, and such a query ranked otherwise than on SQLite)."""
    out: list[list[str]] = []
    named: list[str] = []
    for term in (t.replace("\x00", "") for t in terms):
        tokens = TOKENIZER.tokens(term, cjk=cjk, stems=stems)
        if tokens:
            out.append(tokens)
            named.append(term)
    return out, named


def ranked_by(
    raw: Callable[..., Any],
    phrases: list[list[str]],
    docs: list[int] | None,
    totals: bool,
) -> list[tuple[int, float]]:
    """The chunks holding any of ``phrases``, best first by BM25 (``ranked``), asked of
    the server with ``raw`` (``_PgSql.raw``): ``docs``, each phrase's chunks (None: counted
    here, a statement each); ``totals``: the index keeps ``chunk_totals`` (else counted)."""
    queries = [" <-> ".join(quote(t) for t in p) for p in phrases]
    total, length = raw(
        "SELECT n, ntok FROM chunk_totals"
        if totals
        else "SELECT count(*), coalesce(sum(ntok), 0) FROM chunks"
    ).fetchone()
    if docs is None:
        docs = [
            int(
                raw("SELECT count(*) FROM chunks WHERE keywords @@ %s::tsquery", (q,)).fetchone()[0]
            )
            for q in queries
        ]
    rows = raw(
        "SELECT c.label, c.ntok, u.lexeme, u.positions, u.weights "
        "FROM chunks c, unnest(c.keywords) u "
        "WHERE c.keywords @@ %s::tsquery AND u.lexeme = ANY(%s)",
        (" | ".join(f"({q})" for q in queries), sorted({t for p in phrases for t in p})),
    ).fetchall()
    return ranked(rows, phrases, docs, (int(total), int(length)))


__all__ = [
    "TOKENIZER",
    "bm25",
    "idf",
    "phrase_freq",
    "phrases",
    "ranked",
    "ranked_by",
    "term_query",
    "tsvector_of",
    "tsvectors_of",
]
