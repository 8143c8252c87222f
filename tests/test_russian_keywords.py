"""Russian found by keywords in another case or number: a word of Cyrillic letters is
keyed by its Snowball stem (``core/cjk.stemmed``), the note's and the query's alike, on
both backends; an index of the schema before is given those rows again, and only those.
"""

from __future__ import annotations

import random
import sqlite3
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers import new_vault, open_vault, write
from keyword_helpers import (
    by_keywords,
    integrity,
    keyword_answers,
    pg_as_schema_13,
    pg_rows,
    synced_vault,
)
from memvault.core.cjk import STEM_MARK, keyword_form, simplified, stem
from memvault.core.ranking import MAX_QUERY_TERMS
from memvault.index.fts import FTS_TABLE
from memvault.index.pg_schema import PG_SCHEMA_VERSION
from memvault.index.schema import SCHEMA_VERSION

NOTES = {
    "people/ivan.md": "# Иван\n\nИван живёт в Москве и работает программистом.\n",
    "projects/games.md": "# Настольные игры\n\nНа выходные: каркассон и билет на поезд.\n",
    "logs/river.md": "# Река\n\nВода́ в реке холодная, купались утром.\n",
    "logs/english.md": "# Running notes\n\nThe runner ran quickly through the park.\n",
    "logs/mixed.md": "# Formats\n\nA talk in Berlin about XMLфайл and 学习 trips.\n",
}
# a query in another form than the note's: (query, the note it finds)
FORMS = [
    ("Москва", "people/ivan.md"),
    ("МОСКВОЙ", "people/ivan.md"),
    ("программисты", "people/ivan.md"),
    ("настольная", "projects/games.md"),
    ("игра", "projects/games.md"),
    ("воды", "logs/river.md"),
]


def _vault(tmp_path: Path, name: str = "vault") -> Path:
    return synced_vault(tmp_path, NOTES, name)


@pytest.mark.parametrize(("query", "path"), FORMS)
def test_a_russian_word_in_another_case_or_number_finds_the_note(
    tmp_path: Path, query: str, path: str
) -> None:
    with open_vault(_vault(tmp_path)) as v:
        assert by_keywords(v, query) == [path]


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("Москве", "people/ivan.md"),  # as written
        ("вода", "logs/river.md"),  # the note's stress mark is no part of the word
        ("XMLфайл", "logs/mixed.md"),  # a word mixing scripts: as written
        ("runners", "logs/english.md"),  # English: porter's, as before
    ],
)
def test_a_word_as_written_still_finds_its_note(tmp_path: Path, query: str, path: str) -> None:
    with open_vault(_vault(tmp_path)) as v:
        assert by_keywords(v, query) == [path]


def _tokens(db: sqlite3.Connection, text: str) -> list[str]:
    db.execute(
        "INSERT INTO chunks_fts(rowid, text, title, headings, about) VALUES(1, ?, '', '', '')",
        (text,),
    )
    got = [t for (t,) in db.execute("SELECT term FROM vocab ORDER BY offset")]
    db.execute("DELETE FROM chunks_fts")
    return got


def test_stemming_never_parts_two_tokens_fts5_held_equal() -> None:
    """Token by token: each token FTS5 kept before is kept, followed by one stem for
    each token FTS5 held equal (case, NFD, stress and other marks, ё, Ukrainian letters,
    words mixing scripts, CJK beside), on a note's side and a query's alike: so a query
    finds every chunk its exact form found, as the same phrase."""
    db = sqlite3.connect(":memory:")
    db.execute(FTS_TABLE)
    db.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(chunks_fts, 'instance')")
    letters = [*"абвгдеёжзийклмнопрстуфхцчшщъыьэюяЁЙЯіїєґўђ", "\u0301", "\u0306", "\u0483"]
    letters += [*"abX9_-.東α", "\u200b", "ы", "о", "а"]
    endings = ["", "а", "ы", "ой", "ами", "ов", "ого", "ая", "ение", "ться", "ешь", "нн", "ь"]
    rng = random.Random(53)
    stems: dict[str | None, str | None] = {}  # (None: a token of a lone mark)
    for _ in range(3000):
        words = []
        for _ in range(rng.randint(1, 5)):
            w = "".join(rng.choice(letters) for _ in range(rng.randint(1, 6)))
            w += rng.choice(endings)
            w = unicodedata.normalize("NFD", w) if rng.random() < 0.2 else w
            words.append(w.upper() if rng.random() < 0.2 else w)
        text = " ".join(words)
        before = _tokens(db, keyword_form(text, stems=False))
        after = _tokens(db, keyword_form(text))
        i = 0
        for old in before:
            assert after[i] == (old and simplified(old)), text  # the word as FTS5 kept it
            i += 1
            new = None
            if i < len(after) and (after[i] or "").endswith(STEM_MARK):
                new, i = after[i], i + 1
            assert stems.setdefault(old, new) == new, (text, old)
        assert i == len(after), text
    kept = [s for s in stems.values() if s is not None]
    assert len(set(kept)) < len(kept)  # some forms share a stem: that is the point


def _keyword_rows(root: Path) -> dict[str, list[tuple[str, str, int]]]:
    """Each chunk's keyword tokens (term, column, offset), by its note and place."""
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


def test_an_index_of_schema_14_gives_only_its_stemmed_rows_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _vault(tmp_path)
    db = sqlite3.connect(root / ".memvault" / "index.db")
    # as schema 14 gave them: unstemmed
    db.create_function(
        "memvault_keywords", 1, lambda v: keyword_form(v, stems=False), deterministic=True
    )
    with db:
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')")
        db.execute("UPDATE meta SET value = '14' WHERE key = 'schema_version'")
    db.close()
    before = _keyword_rows(root)
    with caplog.at_level("INFO", logger="memvault"), open_vault(root) as v:
        assert v.engine.store.meta("schema_version") == str(SCHEMA_VERSION) == "19"
        assert by_keywords(v, "Москва") == ["people/ivan.md"]
    after = _keyword_rows(root)
    integrity(root)  # taken out with the values they were given
    changed = sorted(k for k in before if before[k] != after[k])
    # the chunks holding a Cyrillic word: Иван's, the games', the river's (not XMLфайл's)
    assert {k.split("#")[0] for k in changed} == {
        "people/ivan.md",
        "projects/games.md",
        "logs/river.md",
    }
    assert f"index schema 14 -> 15: {len(changed)} chunks keyed again" in caplog.text
    english = [k for k in before if k.startswith(("logs/english.md", "logs/mixed.md"))]
    assert english and all(before[k] == after[k] for k in english)  # byte for byte
    assert after == _keyword_rows(_vault(tmp_path, "fresh"))  # as a fresh index keys them


def test_both_backends_give_the_same_keyword_hits_for_russian(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = [q for q, _ in FORMS]
    local = keyword_answers(tmp_path / "local", NOTES, queries)
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    assert keyword_answers(tmp_path / "pg", NOTES, queries) == local
    assert [local[q][0][0] for q, _ in FORMS] == [p for _, p in FORMS]


def test_a_postgres_index_of_schema_13_gets_its_cyrillic_rows_keyed_again(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = _vault(tmp_path)
    with open_vault(root) as v:
        schema = v.engine.store.schema
    before = pg_as_schema_13(pg_dsn, schema)
    with open_vault(root) as v:
        assert v.engine.store.meta("schema_version") == str(PG_SCHEMA_VERSION) == "18"
        assert by_keywords(v, "Москва") == ["people/ivan.md"]
    after = pg_rows(pg_dsn, schema)
    touched = {p for p, o in before if before[p, o][1] != after[p, o][1]}  # rewritten
    assert touched == {"people/ivan.md", "projects/games.md", "logs/river.md", "logs/mixed.md"}
    assert all(before[k] == after[k] for k in before if k[0] == "logs/english.md")


def test_an_index_rebuilt_by_an_older_step_is_not_given_its_rows_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Schema 10 -> 15 with ß in a chunk: the table is built again from the rows (ß as
    ss), stemmed already: they are not taken out as unstemmed and put in again."""
    root = new_vault(tmp_path)
    for rel, text in {**NOTES, "logs/strasse.md": "# Straße\n\nDie Straße ist lang.\n"}.items():
        write(root, rel, text)
    with open_vault(root) as v:
        v.sync()
    db = sqlite3.connect(root / ".memvault" / "index.db")
    db.create_function(
        "memvault_keywords", 1, lambda v: keyword_form(v, stems=False), deterministic=True
    )
    with db:
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')")
        db.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
    db.close()
    with caplog.at_level("INFO", logger="memvault"), open_vault(root) as v:
        assert by_keywords(v, "Москва") == ["people/ivan.md"]
        assert by_keywords(v, "Strasse") == ["logs/strasse.md"]
    integrity(root)
    assert "-> 11: the keyword table built again" in caplog.text
    assert "-> 15" not in caplog.text


def test_words_stemmed_at_once_by_several_threads_get_their_own_stems() -> None:
    """The daemon's search threads and its indexer stem at once: Snowball's stemmer
    keeps the word it works on in itself (``cjk.stem`` shares one), so each word must
    still get its own stem, the one a stemmer of its own gives."""
    import sys
    import threading

    import snowballstemmer

    rng = random.Random(7)
    letters = "абвгдежзийклмнопрстуфхцчшщыьэюя"
    endings = ["ами", "ого", "ейший", "ость", "ение", "ировали", "ться", "ов", "ая"]
    words = [
        [
            "".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) + rng.choice(endings)
            for _ in range(4000)
        ]
        for _ in range(4)
    ]
    alone = snowballstemmer.stemmer("russian")
    want = [[alone.stemWord(w) or w for w in ws] for ws in words]
    got: list[list[str]] = [[] for _ in words]
    stem.cache_clear()
    start = threading.Barrier(len(words))

    def run(i: int) -> None:
        start.wait()
        got[i] = [stem(w) for w in words[i]]

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads swap often, as a busy daemon's may
    try:
        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(words))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
        stem.cache_clear()
    assert got == want


def test_a_long_russian_query_asks_for_each_of_its_words(tmp_path: Path) -> None:
    """A query's stems take no word's place: a query of as many Russian words as an
    English one may ask for (``MAX_QUERY_TERMS``) finds a note holding only its last,
    as the English one does."""
    rng = random.Random(11)
    words = list(
        dict.fromkeys(
            "".join(rng.choice("бвгдклмнпрст") + rng.choice("аоуиэ") for _ in range(4))
            for _ in range(MAX_QUERY_TERMS + 20)
        )
    )[:MAX_QUERY_TERMS]
    notes = {"logs/last.md": f"# Заметка\n\nСегодня {words[-1]}.\n"}
    english = [f"word{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(MAX_QUERY_TERMS)]
    notes["logs/english.md"] = f"# Note\n\nToday {english[-1]}.\n"
    root = new_vault(tmp_path)
    for rel, text in notes.items():
        write(root, rel, text)
    with open_vault(root) as v:
        v.sync()
        assert by_keywords(v, " ".join(english)) == ["logs/english.md"]
        assert by_keywords(v, " ".join(words)) == ["logs/last.md"]


# The note holding the word as asked, the note holding only another form of it, and
# notes near the query in the embedder's space that hold neither (a program, programs,
# a grammar: the trigrams of программистом without its stem)
SEARCHED = {
    "people/ivan.md": "# Иван\n\nИван работает программистом.\n",
    "team/hiring.md": (
        "# Найм\n\nВ этом году нам нужны программисты, дизайнер и бухгалтер; собеседования"
        " по вторникам, тестовое задание на неделю, решение через месяц.\n"
    ),
    **{
        f"misc/program-{i}.md": f"# Программа {i}\n\nПрограмма и программой, грамматика {i}.\n"
        for i in range(8)
    },
}


def test_a_note_holding_only_another_form_of_a_rare_word_comes_in_the_first_hits(
    tmp_path: Path,
) -> None:
    """A rare Russian word asked in one form keeps the notes holding it in another form on
    the first page, after those holding the form asked (``rare_lines.forms``): its
    keyword score, its stem's alone, was a fraction of the note's holding the form asked,
    and notes nearer in the vectors ranked above it."""
    with open_vault(synced_vault(tmp_path, SEARCHED)) as v:
        found = list(dict.fromkeys(h.path for h in v.search("программистом", k=3)))
        assert by_keywords(v, "программистом") == ["people/ivan.md", "team/hiring.md"]
        assert found[:2] == ["people/ivan.md", "team/hiring.md"]


def test_postgres_keeps_the_note_holding_another_form_in_the_first_hits(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    test_a_note_holding_only_another_form_of_a_rare_word_comes_in_the_first_hits(tmp_path)


# SEARCHED with the stem common: six long day notes mention a programmer once each, so
# the stem of программистом is held by 8 chunks, more than search.rare_chunks (5)
COMMON_STEM = {
    **SEARCHED,
    **{
        f"logs/day-{i}.md": (
            f"# День {i}\n\nУтром разбирали почту, потом планировали спринт, обсуждали"
            f" бюджет, отпуск и ремонт офиса; вечером звонил знакомый программиста {i}"
            " искал, долго говорили о погоде, о поездах, о книгах и о новом проекте.\n"
        )
        for i in range(6)
    },
}


def test_a_rare_word_whose_stem_is_common_keeps_its_best_other_form_in_the_first_hits(
    tmp_path: Path,
) -> None:
    """A rare word whose stem more than ``search.rare_chunks`` chunks hold (a common stem
    of a rare form) keeps the stem's best chunks not holding the word (its BM25 alone,
    ``rare_lines.forms``) after those holding the form asked: such a stem was skipped,
    and the note holding only another form ranked below the notes near in the vectors
    (bench/RESULTS.md "stop 55"): it was not among the first 10 (the eight notes near in
    the hash embedder's vectors were). The keyword lane ranks it second already. The
    stem's best 6 chunks are the form asked's and five others (hiring, four days), kept
    in the fused ranking's order after the note holding the form asked."""
    with open_vault(synced_vault(tmp_path, COMMON_STEM)) as v:
        assert v.engine.store.term_docs(f"программист{STEM_MARK}") == 8
        assert by_keywords(v, "программистом")[:2] == ["people/ivan.md", "team/hiring.md"]
        found = list(dict.fromkeys(h.path for h in v.search("программистом", k=6)))
        assert found[0] == "people/ivan.md"
        assert "team/hiring.md" in found
        assert not any(p.startswith("misc/") for p in found)


def test_postgres_keeps_the_best_other_form_of_a_common_stem_in_the_first_hits(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    test_a_rare_word_whose_stem_is_common_keeps_its_best_other_form_in_the_first_hits(tmp_path)


# a rare word whose chunks rank low on its stem alone: three long notes say программистом
# once each, ten short team notes say программисты (the stem held by 13 chunks)
LOW_HOLDERS = {
    **{
        f"logs/week-{i}.md": (
            f"# Неделя {i}\n\nУтром разбирали почту, потом планировали спринт, обсуждали"
            f" бюджет, отпуск и ремонт офиса; вечером звонил знакомый, он работает"
            f" программистом {i}, долго говорили о погоде, о поездах и о книгах.\n"
        )
        for i in range(3)
    },
    **{f"team/crew-{i}.md": f"# Команда {i}\n\nПрограммисты команды {i}.\n" for i in range(10)},
    **{k: v for k, v in SEARCHED.items() if k.startswith("misc/")},
}


def test_a_common_stem_keeps_at_most_rare_chunks_other_forms(tmp_path: Path) -> None:
    """The chunks kept for a rare word's other forms are its stem's best
    ``search.rare_chunks`` chunks not holding the word (``rare_lines.forms``), however
    the word's own chunks rank on the stem: asking the stem's best rare_chunks + the
    word's count and leaving the word's out kept 8 here (the word's three chunks, long,
    rank below the ten short ones), up to 2 x rare_chunks notes put on the first page
    after those holding the form asked."""
    from memvault.engine.rare_lines import rare_word

    with open_vault(synced_vault(tmp_path, LOW_HOLDERS)) as v:
        store, cfg = v.engine.store, v.engine.config.search
        stem_term = f"программист{STEM_MARK}"
        assert store.term_docs(stem_term) == 13
        rare = rare_word(cfg, store, "программистом", other_forms=True)
        assert rare is not None
        rows = store.chunk_rows(list(rare.holders))
        assert sorted(r.path for r in rows.values()) == [f"logs/week-{i}.md" for i in range(3)]
        ranked = [lab for lab, _ in store.keywords([stem_term], 50)]
        best = [lab for lab in ranked if lab not in rare.holders][: cfg.rare_chunks]
        assert cfg.rare_chunks == 5
        assert rare.other_forms == frozenset(best)


def test_postgres_keeps_at_most_rare_chunks_other_forms(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    test_a_common_stem_keeps_at_most_rare_chunks_other_forms(tmp_path)


def _stem_alone_asked(v: Any, stem: str, ask: Callable[[], object]) -> list[str]:
    """The keyword rankings asking for ``stem`` alone (``rare_lines.forms``'s) while
    ``ask`` runs: the statements SQLite runs, as it runs them."""
    ran: list[str] = []
    db = v.engine.store._db
    db.set_trace_callback(ran.append)
    try:
        ask()
    finally:
        db.set_trace_callback(None)
    return [s for s in ran if "bm25(" in s and f"MATCH '\"{stem}{STEM_MARK}\"' " in s]


def test_a_rare_word_held_in_one_form_only_asks_for_no_other_forms(tmp_path: Path) -> None:
    """The stem of a rare word no note holds in another form is held by the chunks
    holding the word, and only them (its term is the phrase of the word and its stem):
    search asked for them again, a keyword ranking each search (a round trip to a team's
    PostgreSQL); when another form is held it still asks, and keeps that note."""
    notes = {**SEARCHED, "team/hiring.md": "# Найм\n\nСобеседования по вторникам.\n"}
    with open_vault(synced_vault(tmp_path, notes)) as v:
        assert _stem_alone_asked(v, "программист", lambda: v.search("программистом", k=3)) == []
    with open_vault(synced_vault(tmp_path, SEARCHED, "forms")) as v:
        asked = _stem_alone_asked(v, "программист", lambda: v.search("программистом", k=3))
        assert len(asked) == 1


def test_a_context_asks_for_no_other_forms_of_its_rare_word(tmp_path: Path) -> None:
    """A context keeps the lines holding the form asked first (``rare_lines.holding``)
    and asks search without the evidence: it never reads the other forms, which
    ``rare_word`` asked for on each context all the same."""
    with open_vault(synced_vault(tmp_path, SEARCHED)) as v:
        got: list[Any] = []
        asked = _stem_alone_asked(v, "программист", lambda: got.append(v.context("программистом")))
        assert asked == []
        assert "программистом" in got[0].text


def test_a_reader_of_a_postgres_index_before_stems_asks_for_no_other_forms(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newer reader of a schema 13 index (a team's writer not upgraded yet) asks for a
    stem no chunk of it holds: the other forms' keyword ranking found nothing, two round
    trips each search. The search is the one before stems."""
    from memvault.index import pg_conn

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = synced_vault(tmp_path, SEARCHED)
    with open_vault(root) as v:
        schema = v.engine.store.schema
    pg_as_schema_13(pg_dsn, schema)
    said: list[Any] = []
    raw = pg_conn._PgSql._raw

    def recorded(self: Any, sql: str, args: Any = None) -> Any:
        said.append((sql, args))
        return raw(self, sql, args)

    with open_vault(root, read_only=True) as v:
        assert not v.engine.store.stems
        v.search("программистом", k=3)  # opened, warmed
        monkeypatch.setattr(pg_conn._PgSql, "_raw", recorded)
        found = list(dict.fromkeys(h.path for h in v.search("программистом", k=3)))
    alone = [f"программист{STEM_MARK}"]  # the lexemes a ranking of the stem alone reads
    rankings = [a for s, a in said if "u.lexeme = ANY" in s]
    assert rankings  # (the keyword side's, the form asked's)
    assert [a for a in rankings if a[1] == alone] == []
    assert found[0] == "people/ivan.md"
