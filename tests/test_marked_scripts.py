"""Words whose letters carry marks, found by keywords (core/cjk.py, index schema 9,
PostgreSQL schema 8).

FTS5's ``unicode61`` makes every combining mark a separator: हिन्दी was indexed as ह, न,
द (a Hindi, Bengali or Tamil word cut at each vowel sign), a Thai run as the pieces
between its vowel and tone signs, كَتَبَ (Arabic with its vowel points) as ك, ت, ب, and a
query's words were cut the same way by Python's ``\\w``. Checked on a real vault (real
SQLite, the hash embedder: the keyword side is what is tested), on an index of schema 8
opened by this code, and on both backends (a real PostgreSQL) with the same hits."""

from __future__ import annotations

import sqlite3
import unicodedata
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from helpers import new_vault, open_vault, write
from keyword_helpers import OLD_TOKENIZE, by_keywords, integrity, keyword_answers, old_tsvector
from memvault.core.cjk import keyword_form, pairs, plain, terms, units, unpointed, words
from memvault.index import pg_keywords
from memvault.index.pg_schema import PG_SCHEMA_VERSION
from memvault.index.schema import SCHEMA_VERSION, register

NOTES = {
    "people/priya.md": "# प्रिया\n\nप्रिया हिन्दी बोलती है और दिल्ली में रहती है।\n",
    "people/river.md": "# नदी\n\nहम नदी के किनारे दौड़ते हैं।\n",  # न, द, ह: the old pieces
    "projects/rice.md": "# อาหาร\n\nผมชอบกินข้าวผัดกับไก่ย่างทุกวัน\n",
    "projects/mango.md": "# ของหวาน\n\nข้าวเหนียวมะม่วงอร่อยมาก\n",
    "projects/khmer.md": "# ភាសា\n\nខ្ញុំស្រលាញ់ភាសាខ្មែរណាស់\n",
    "logs/lesson.md": "# درس\n\nكَتَبَ الوَلَدُ الدَّرْسَ فِي المَدْرَسَةِ\n",
    "logs/shalom.md": "# ברכה\n\nשָׁלוֹם עוֹלָם מִן הַסֵּפֶר\n",
    "logs/tamil.md": "# மொழி\n\nநான் தமிழ் பேசுவேன் சென்னையில்\n",
    "logs/cafe.md": "# Café\n\nA café au lait at the station.\n",
    "logs/noir.md": "# Noir\n\nA cafe\u0301 noir, decomposed.\n",  # é as e + U+0301
    "logs/greek.md": "# Σημειώσεις\n\nΗ βάση δεδομένων του λόγος μας.\n",
    "logs/hedgehog.md": "# Ёжик\n\nЁжик пришёл в туман.\n",
    "logs/pasted.md": "# Pasted\n\nThe data\u200bbase was re\u00adindexed.\n",
    "logs/books.md": "# کتاب\n\nکتاب\u200cها روی میز هستند و می\u200cخواهم بخوانم.\n",
    "places/katsushika.md": "# 区\n\n葛\U000e0100飾区に住む。神\ufe00社へ行く。\n",
    "logs/status.md": "# Status\n\nRelease status \u2714\ufe0f shipped, step 1\ufe0f\u20e3 done.\n",
    "people/ana.md": "# Ana\n\nAna runs the night shift ledger in Lisbon.\n",
}


# a note committed with git's markers in it (index schema 9 warns of it)
CONFLICTED = "# Merged\n\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> other\n"


@pytest.fixture
def vault_root(tmp_path: Path) -> Path:
    root = new_vault(tmp_path)
    for rel, text in NOTES.items():
        write(root, rel, text)
    return root


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("मैं हिन्दी बोलता हूँ", ["मैं", "हिन्दी", "बोलता", "हूँ"]),
        ("நான் தமிழ் பேசுவேன்", ["நான்", "தமிழ்", "பேசுவேன்"]),
        ("ข้าวผัด, ok", ["ข้าวผัด", "ok"]),
        ("cafe\u0301 naïve", ["cafe\u0301", "naïve"]),
        ("snake_case x2", ["snake_case", "x2"]),
    ],
)
def test_a_word_keeps_the_marks_of_its_letters(text: str, want: list[str]) -> None:
    assert words(text) == want


def test_thai_khmer_and_myanmar_are_spaced_by_letter_and_its_marks() -> None:
    assert units("ข้าวผัด") == ["ข้", "า", "ว", "ผั", "ด"]
    assert keyword_form("กินข้าว") == " กิ  น  ข้  า  ว "
    assert units("ខ្ញុំ") == ["ខ្", "ញុំ"]
    assert units("မြန်မာ") == ["မြ", "န်", "မာ"]
    assert pairs("ข้าวผัด") == ["ข้า", "าว", "วผั", "ผัด"]
    assert terms("ข้าวผัดok") == ["ข้าวผัด", "ok"]


def test_arabic_and_hebrew_points_are_left_out_of_the_keyword_form() -> None:
    assert unpointed("كَتَبَ") == "كتب" == keyword_form("كَتَبَ")
    assert unpointed("عـــربي") == "عربي"  # the tatweel
    assert unpointed("שָׁלוֹם") == "שלום"
    text = "Ana, café, naïve, русский, українська, हिन्दी, தமிழ்"
    # nothing else changes (the tokenizer keeps marks; a Cyrillic word's stem follows it)
    assert keyword_form(text, stems=False) == text


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("δεδομένων", "δεδομενων"),  # Greek accents: FTS5 folds Latin letters only
        ("ἀρχή", "αρχη"),  # polytonic
        ("λόγος", "λογοσ"),  # final sigma as FTS5 lowercases Σ
        ("пришёл Ёжик", "пришел Ежик"),
        (
            "data\u200bbase joi\u200dned soft\u00adhyphen \ufeffbom",
            "database joined softhyphen bom",
        ),
        ("й ї café", "й ї café"),  # not Cyrillic's other letters; Latin left to FTS5
    ],
)
def test_what_no_one_types_alike_is_left_out_of_the_keywords(text: str, want: str) -> None:
    assert plain(text) == want == keyword_form(text, stems=False)
    assert words("data\u200bbase") == ["database"]  # a query's word is not cut there


def test_a_word_is_found_whole_and_not_by_the_pieces_between_its_marks(
    vault_root: Path,
) -> None:
    with open_vault(vault_root) as v:
        v.sync()
        # the old pieces of हिन्दी (ह, न, द) stand in the river note too: not a match now
        assert by_keywords(v, "हिन्दी") == ["people/priya.md"]
        assert by_keywords(v, "नदी") == ["people/river.md"]
        assert by_keywords(v, "தமிழ்") == ["logs/tamil.md"]
        # a Thai word inside a run without spaces; a run no chunk holds: its pairs
        assert set(by_keywords(v, "ข้าว")) == {"projects/rice.md", "projects/mango.md"}
        assert by_keywords(v, "ข้าวผัด") == ["projects/rice.md"]
        assert by_keywords(v, "มะม่วง") == ["projects/mango.md"]
        assert by_keywords(v, "อยากกินข้าวผัดกับไก่")[0] == "projects/rice.md"
        assert by_keywords(v, "ភាសា") == ["projects/khmer.md"]
        assert by_keywords(v, "ស្រលាញ់") == ["projects/khmer.md"]
        # Arabic and Hebrew written without their points find the pointed text, and back
        assert by_keywords(v, "كتب") == ["logs/lesson.md"]
        assert by_keywords(v, "المدرسة") == ["logs/lesson.md"]
        assert by_keywords(v, "שלום") == ["logs/shalom.md"]
        assert by_keywords(v, "שָׁלוֹם") == ["logs/shalom.md"]
        # é composed or decomposed, in the note or the query: both notes
        for query in ("café", "cafe\u0301", "cafe"):
            assert set(by_keywords(v, query)) == {"logs/cafe.md", "logs/noir.md"}, query
        assert by_keywords(v, "ledger") == ["people/ana.md"]
        # Greek with or without accents, in capitals; ё typed as е; invisible characters
        for query in ("δεδομένων", "δεδομενων", "ΔΕΔΟΜΕΝΩΝ", "ΛΟΓΟΣ"):
            assert by_keywords(v, query) == ["logs/greek.md"], query
        for query in ("ежик", "пришел", "пришёл"):
            assert by_keywords(v, query) == ["logs/hedgehog.md"], query
        assert by_keywords(v, "database") == ["logs/pasted.md"]
        assert by_keywords(v, "reindexed") == ["logs/pasted.md"]
        # a Persian word's pieces, parted by the zero-width non-joiner, found each
        assert by_keywords(v, "کتاب") == ["logs/books.md"]
        assert by_keywords(v, "خواهم") == ["logs/books.md"]
        # a name's variation selector is no token between its characters
        assert by_keywords(v, "葛飾") == ["places/katsushika.md"]
        assert by_keywords(v, "神社") == ["places/katsushika.md"]
        # an emoji's selector or keycap is no keyword; the digit under a keycap is one
        assert by_keywords(v, "\u26a0\ufe0f") == []
        assert by_keywords(v, "1") == ["logs/status.md"]
        hits = [h.path for h in v.search("ข้าวผัด", k=3)]
        assert hits[0] == "projects/rice.md"


def test_edits_and_deletes_keep_the_keyword_table_true(vault_root: Path) -> None:
    with open_vault(vault_root) as v:
        v.sync()
        write(vault_root, "projects/rice.md", "# อาหาร\n\nวันนี้กินต้มยำกุ้ง\n")
        (vault_root / "logs" / "lesson.md").unlink()
        v.sync()
        integrity(vault_root)
        assert by_keywords(v, "ผัด") == []
        # no chunk holds ข้าวผัด now: its pairs (ข้า, าว) find the mango note's ข้าว
        assert by_keywords(v, "ข้าวผัด") == ["projects/mango.md"]
        assert by_keywords(v, "ต้มยำ") == ["projects/rice.md"]
        assert by_keywords(v, "كتب") == []


@pytest.mark.parametrize("version", ["8", None])
def test_an_index_of_schema_8_is_given_its_keywords_again(
    vault_root: Path, version: str | None
) -> None:
    """``None``: schema 8's tables without their version (an older memvault killed on its
    first open between the two). A note an older memvault indexed with a merge conflict
    left in it (no warning then) is read again, and warned about."""
    write(vault_root, "logs/merged.md", CONFLICTED)
    with open_vault(vault_root) as v:
        v.sync()
        before = {q: by_keywords(v, q) for q in ("ledger", "café", "Lisbon")}
    db = sqlite3.connect(vault_root / ".memvault" / "index.db", isolation_level=None)
    register(db)
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    db.execute("BEGIN")
    db.execute("UPDATE notes SET warnings = '[]' WHERE path = 'logs/merged.md'")  # schema 8's
    db.execute("DROP TABLE chunks_fts")
    db.execute(sql[: sql.index("tokenize")] + OLD_TOKENIZE + "\n)")
    db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')")
    if version is None:
        db.execute("DELETE FROM meta WHERE key = 'schema_version'")
    else:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    db.execute("COMMIT")
    pieces = db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'ह'").fetchone()
    assert pieces != (0,)  # schema 8: हिन्दी's pieces were tokens
    db.close()
    with open_vault(vault_root) as v:
        assert v.engine.store.meta("schema_version") == str(SCHEMA_VERSION) == "19"
        integrity(vault_root)
        assert by_keywords(v, "हिन्दी") == ["people/priya.md"]
        assert by_keywords(v, "ข้าวผัด") == ["projects/rice.md"]
        assert by_keywords(v, "كتب") == ["logs/lesson.md"]
        assert {q: by_keywords(v, q) for q in before} == before
        report = v.sync()  # the conflicted note read again, nothing embedded
        assert report.embedded_chunks == 0 and report.modified == ("logs/merged.md",)
        assert any("unresolved merge conflict" in w for w in report.warnings)
        assert not v.sync().changed


def test_both_backends_give_the_same_keyword_hits(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = ["हिन्दी", "नदी", "ข้าว", "ข้าวผัด", "อยากกินข้าวผัด", "ស្រលាញ់", "كتب", "שלום"]
    queries += ["café", "cafe\u0301", "தமிழ்", "ledger", "ΔΕΔΟΜΕΝΩΝ", "ежик", "database"]
    queries += ["کتاب", "葛飾", "\u26a0\ufe0f", "1"]

    def answers(root: Path) -> dict[str, list[tuple[str, float]]]:
        return keyword_answers(root, NOTES, queries)

    expected = answers(new_vault(tmp_path, "sqlite_vault"))
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    got = answers(new_vault(tmp_path, "pg_vault"))
    assert got == expected  # the same chunks, the same BM25 scores
    assert [p for p, _ in expected["हिन्दी"]] == ["people/priya.md"]


def test_a_postgres_index_of_schema_7_gets_these_keywords_again(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = new_vault(tmp_path)
    for rel, text in NOTES.items():
        write(root, rel, text)
    write(root, "logs/merged.md", CONFLICTED)
    with open_vault(root) as v:
        v.sync()
        schema = v.engine.store.schema
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"UPDATE \"{schema}\".notes SET warnings = '[]' WHERE path = 'logs/merged.md'")
        for label, *columns in conn.execute(
            f'SELECT label, text, title, headings, about FROM "{schema}".chunks'
        ).fetchall():
            conn.execute(
                f'UPDATE "{schema}".chunks SET keywords = %s::tsvector, ntok = %s WHERE label = %s',
                (*old_tsvector(*columns), label),
            )
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '7' WHERE key = 'schema_version'")
        ana = conn.execute(
            f"SELECT label, keywords::text FROM \"{schema}\".chunks WHERE path = 'people/ana.md'"
        ).fetchall()
    with open_vault(root) as v:
        assert v.engine.store.meta("schema_version") == str(PG_SCHEMA_VERSION) == "18"
        assert by_keywords(v, "हिन्दी") == ["people/priya.md"]
        assert by_keywords(v, "ข้าวผัด") == ["projects/rice.md"]
        assert by_keywords(v, "كتب") == ["logs/lesson.md"]
        assert by_keywords(v, "ΔΕΔΟΜΕΝΩΝ") == ["logs/greek.md"]
        assert by_keywords(v, "database") == ["logs/pasted.md"]
        kept = v.engine.store._pg.raw(
            "SELECT label, keywords::text FROM chunks WHERE path = 'people/ana.md'"
        ).fetchall()
        assert ana and kept == ana  # a chunk with no such character is not touched
        report = v.sync()  # the conflicted note read again, nothing embedded
        assert report.embedded_chunks == 0 and report.modified == ("logs/merged.md",)
        assert any("unresolved merge conflict" in w for w in report.warnings)


def test_nfc_and_nfd_notes_tokenize_alike() -> None:
    """The tokenizer keeps marks in a token and folds Latin diacritics: é composed or
    decomposed is one token, e."""
    nfd = unicodedata.normalize("NFD", "café naïve")
    with closing(pg_keywords.Tokenizer()) as tok:
        assert tok.tokens(nfd) == tok.tokens("café naïve") == ["cafe", "naiv"]
